"""Hostile input for the strategies and the summarizer (issue 8): a NeuronContextError or
a correct result, never a raw traceback; a bounded summary of pathological text; a summarizer
that never blocks the event loop past its timeout."""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import well_formed_conversations

from neuron_context import (
    CompletionRequest,
    CompositeStrategy,
    ConfigurationError,
    ContextStrategy,
    ExtractiveSummarizer,
    FallbackStrategy,
    Message,
    NeuronContextError,
    SlidingWindowStrategy,
    StripToolCallsStrategy,
    SummarizationError,
    SummarizationStrategy,
    TokenCounter,
    ToolDefinition,
    ToolResultClearingStrategy,
    ToolUse,
    default_stack,
    repair,
    validate,
)
from neuron_context.testing import FunctionProvider

# -- hostile values ---------------------------------------------------------------------

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**30, max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.binary(max_size=10),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    st.just(object()),
    st.just(Message.user("x")),
)
"""Values of every wrong type and extreme size."""


def summarizer() -> FunctionProvider:
    """A provider that always answers with a short summary."""
    return FunctionProvider(lambda request: "A summary.")


CONSTRUCTORS: dict[str, Callable[..., object]] = {
    "ExtractiveSummarizer": lambda *a, **k: ExtractiveSummarizer(**k),
    "SlidingWindowStrategy": SlidingWindowStrategy,
    "ToolResultClearingStrategy": ToolResultClearingStrategy,
    "StripToolCallsStrategy": StripToolCallsStrategy,
    "CompositeStrategy": CompositeStrategy,
    "SummarizationStrategy": lambda *a, **k: SummarizationStrategy(summarizer(), *a, **k),
    "default_stack": default_stack,
    "FallbackStrategy": FallbackStrategy,
}
KEYWORDS = (
    "counter",
    "placeholder",
    "exclude_tools",
    "clear_tool_inputs",
    "min_reclaim_tokens",
    "start_on_user",
    "instructions",
    "max_summary_tokens",
    "model",
    "timeout",
    "retries",
    "retry_delay",
    "max_retry_delay",
    "target",
    "recent",
    "reserve",
    "strict",
    "summarizer",
    "line_chars",
    "max_mentions",
)


def correct_or_library_error(build: Callable[[], object]) -> object | None:
    """``build()``, or ``None`` if it raised a NeuronContextError (anything else fails)."""
    try:
        return build()
    except NeuronContextError:
        return None


class TestConstructors:
    """Every constructor given hostile values: a ConfigurationError or a usable object."""

    @given(
        name=st.sampled_from(sorted(CONSTRUCTORS)),
        positional=st.lists(JUNK, max_size=3),
        keyword=st.sampled_from(KEYWORDS),
        value=JUNK,
    )
    def test_hostile_arguments(
        self, name: str, positional: list[object], keyword: str, value: object
    ) -> None:
        """A library error or a strategy that works on a small conversation."""
        factory = CONSTRUCTORS[name]

        def build() -> object:
            try:
                return factory(*positional, **{keyword: value})
            except TypeError as exc:  # a wrong call shape is Python's, not the library's
                if "argument" in str(exc):
                    return None
                raise

        built = correct_or_library_error(build)
        if isinstance(built, ContextStrategy):
            messages = [Message.user("hello"), Message.assistant("hi")]
            result = correct_or_library_error(lambda: anyio.run(built.compact, messages))
            if result is not None:
                validate(result)  # type: ignore[arg-type]


ENTRY_STRATEGIES = [
    SlidingWindowStrategy(2),
    ToolResultClearingStrategy(0),
    StripToolCallsStrategy(),
    CompositeStrategy([SlidingWindowStrategy(1)], 0),
    SummarizationStrategy(summarizer(), 0),
    default_stack(50),
]


TOOL = ToolDefinition(name="t", description="d", input_schema={"type": "object"})


class TestEntryPoints:
    """Wrong types at the entry points are ConfigurationErrors that say what is wrong."""

    @pytest.mark.parametrize("strategy", ENTRY_STRATEGIES, ids=lambda s: type(s).__name__)
    @pytest.mark.parametrize(
        "messages",
        [
            [Message.user("x"), None],
            "abc",
            None,
            42,
            [{"role": "user", "content": "hi"}],
        ],
        ids=["none-item", "str", "none", "int", "openai-dicts"],
    )
    def test_compact_junk(self, strategy: ContextStrategy, messages: object) -> None:
        """compact of junk raises a ConfigurationError naming the messages."""
        with pytest.raises(ConfigurationError, match="messages"):
            anyio.run(strategy.compact, messages)  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        ("build", "where", "good"),
        [
            (
                lambda v: CompositeStrategy(v, 10),
                "CompositeStrategy.strategies",
                SlidingWindowStrategy(1),
            ),
            (CompletionRequest, "CompletionRequest.messages", Message.user("x")),
            (lambda v: CompletionRequest([], tools=v), "CompletionRequest.tools", TOOL),
            (
                lambda v: SummarizationStrategy(summarizer(), 0, tools=v),
                "SummarizationStrategy.tools",
                TOOL,
            ),
        ],
        ids=["composite", "request-messages", "request-tools", "summary-tools"],
    )
    def test_sequences_name_the_bad_item(
        self, build: Callable[[object], object], where: str, good: object
    ) -> None:
        """Every "sequence of X" entry point rejects one X alone, a str, a mapping and a
        non-iterable, and names the index of the first item that is not an X."""
        for junk in ("abc", {"a": 1}, 42, None):
            with pytest.raises(ConfigurationError, match=f"^{where} must be a sequence of"):
                build(junk)
        with pytest.raises(ConfigurationError, match=rf"^{where}\[1\] must be a \w+, got int"):
            build([good, 5])
        with pytest.raises(ConfigurationError, match=f"^{where} must be a sequence of .*, not one"):
            build(good)

    def test_dicts_point_to_the_readers(self) -> None:
        """Provider dicts get a hint about formats.from_openai."""
        with pytest.raises(ConfigurationError, match="from_openai"):
            SlidingWindowStrategy(2).apply([{"role": "user", "content": "hi"}])  # type: ignore[list-item]

    @pytest.mark.parametrize(
        ("call", "name"),
        [
            (SlidingWindowStrategy(1).apply, "SlidingWindowStrategy: messages"),
            (ToolResultClearingStrategy(0).apply, "ToolResultClearingStrategy: messages"),
            (
                lambda v: anyio.run(SummarizationStrategy(summarizer(), 0).compact, v),
                "SummarizationStrategy: messages",
            ),
            (TokenCounter().estimate_messages, "TokenCounter.estimate_messages: messages"),
            (TokenCounter().cost_table, "TokenCounter.cost_table: messages"),
            (validate, "validate: messages"),
            (repair, "repair: messages"),
            (CompletionRequest, "CompletionRequest.messages"),
        ],
        ids=lambda v: v.split(":")[0] if isinstance(v, str) else "call",
    )
    def test_messages_are_checked_in_one_wording(
        self, call: Callable[[object], object], name: str
    ) -> None:
        """Every entry point that takes messages names itself and the index of the first
        item that is not a Message, with the readers to use for a provider dict."""
        where = re.escape(name)
        with pytest.raises(ConfigurationError, match=f"^{where} must be a sequence of Message"):
            call("abc")
        with pytest.raises(ConfigurationError, match=rf"^{where}\[1\] must be a Message, got int$"):
            call([Message.user("x"), 5])
        hint = r"got dict \(convert provider dicts with neuron_context\.formats\.from_openai"
        with pytest.raises(ConfigurationError, match=rf"^{where}\[1\] must be a Message, {hint}"):
            call([Message.user("x"), {"role": "user", "content": "hi"}])

    @pytest.mark.parametrize("strategy", ENTRY_STRATEGIES, ids=lambda s: type(s).__name__)
    @pytest.mark.parametrize("count", [None, math.nan, math.inf, -1, "12", 1.5])
    def test_should_compact_junk(self, strategy: ContextStrategy, count: object) -> None:
        """should_compact of a count that is not a non-negative int is an error."""
        with pytest.raises(ConfigurationError, match="token_count"):
            strategy.should_compact([], count)  # type: ignore[arg-type]

    def test_should_compact_accepts_an_integral_float(self) -> None:
        """An integral float (from arithmetic) is accepted as the int it is."""
        assert SlidingWindowStrategy(1, 10).should_compact([], 11.0)  # type: ignore[arg-type]

    @pytest.mark.parametrize("junk", ["abc", None, 5, [None], [{"role": "user"}], b"x"])
    def test_validate_and_repair_junk(self, junk: object) -> None:
        """validate and repair of junk raise a library error, never a raw one."""
        with pytest.raises(NeuronContextError):
            validate(junk)  # type: ignore[arg-type]
        with pytest.raises(NeuronContextError):
            repair(junk)  # type: ignore[arg-type]

    @given(well_formed_conversations(max_turns=6), st.lists(JUNK, min_size=1, max_size=2))
    def test_junk_mixed_into_a_conversation(
        self, messages: list[Message], junk: list[object]
    ) -> None:
        """A conversation with junk items is a ConfigurationError for every strategy."""
        mixed: list[object] = [*messages, *junk]
        for strategy in ENTRY_STRATEGIES:
            if all(isinstance(m, Message) for m in mixed):
                continue
            with pytest.raises(ConfigurationError):
                anyio.run(strategy.compact, mixed)  # type: ignore[arg-type]

    @pytest.mark.parametrize("junk", [[None, None], [False], [b""]], ids=repr)
    def test_a_failed_call_leaves_no_memory(self, junk: list[object]) -> None:
        """Junk that failed once fails again: a strategy that continues its previous
        work (clearing, the counter's memo) does not remember the failed call."""
        strategy = ToolResultClearingStrategy(0)
        strategy.apply([])
        for _ in range(3):
            with pytest.raises(ConfigurationError, match="messages"):
                strategy.apply(junk)  # type: ignore[arg-type]
        history = [Message.user("hi")]
        assert strategy.apply(history) == history
        with pytest.raises(ConfigurationError, match=r"messages\[1\]"):
            strategy.apply([*history, *junk])  # type: ignore[list-item]
        assert strategy.apply(history) == history


# -- pathological text ---------------------------------------------------------------------

PATHOLOGICAL = {
    "plus": "+" * 50_000,
    "star": "*" * 50_000,
    "at": "@" * 50_000,
    "table": ("+" + "-" * 98 + "+\n" + "|" + " " * 98 + "|\n") * 250,
    "dots-slashes": "a/" * 25_000,
    "hex": "ab12" * 12_500,
    "markup": "<" + "a" * 50_000,
    "closing-tags": "</a" * 16_000 + ">",
    "error-word": "Error" * 10_000,
    "dotted": "a." * 25_000 + "py",
    "dots": "." * 50_000,
    "hex-run": "0a" * 25_000,
    "brackets": "[" * 50_000,
}


class TestLinearScans:
    """The extractive summarizer reads pathological text within its budget."""

    @pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
    def test_summarizes_50k_characters(self, name: str) -> None:
        """A 50,000-character pathological input summarizes within its budget (its time,
        four times the input against the input, is in benches/test_bench_linear.py)."""
        text = PATHOLOGICAL[name]
        call = ToolUse(id="c1", name="bash", input={"command": text[:5000]})
        messages = [
            Message.user(text),
            Message.assistant(text, tool_uses=[call]),
            Message.tool_result("c1", text),
            Message.tool_result("c1", text, is_error=True),
        ]
        request = SummarizationStrategy(ExtractiveSummarizer(), 0).summary_request(messages)
        assert request is not None
        summary = ExtractiveSummarizer().summarize(request)
        assert request.max_tokens is not None
        assert TokenCounter().estimate_text(summary) <= request.max_tokens


class TestEventLoop:
    """The offline summarizer never blocks the event loop; timeout= holds."""

    @pytest.mark.anyio
    async def test_other_tasks_run_while_it_summarizes(self) -> None:
        """A task ticking beside a long summary keeps ticking."""
        history = [Message.user("x " * 20_000 + "src/a.py " * 5_000)] * 20
        request = CompletionRequest(history, max_tokens=2000)
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await anyio.sleep(0.001)

        async with anyio.create_task_group() as group:
            group.start_soon(tick)
            await ExtractiveSummarizer().complete(request)
            group.cancel_scope.cancel()
        assert ticks > 1

    @pytest.mark.anyio
    async def test_timeout_fires(self) -> None:
        """A summary slower than timeout= is a SummarizationError when the timeout fires."""
        release = threading.Event()
        returned = threading.Event()

        class Slow(ExtractiveSummarizer):
            """The offline summarizer, finishing only once the test releases it."""

            def summarize(
                self,
                request: CompletionRequest,
                *,
                shown: AbstractSet[str] = frozenset(),
                weigh: Callable[[str], Mapping[str, float]] | None = None,
                task_kept: bool = False,
                newest_kept: bool = False,
            ) -> str:
                summary = super().summarize(
                    request,
                    shown=shown,
                    weigh=weigh,
                    task_kept=task_kept,
                    newest_kept=newest_kept,
                )
                release.wait(30.0)
                returned.set()
                return summary

        history = [Message.user("word " * 400 + "src/a.py " * 200)] * 40
        strategy = SummarizationStrategy(Slow(), 0, timeout=0.01, retries=0)
        try:
            with pytest.raises(SummarizationError, match="timed out"):
                await strategy.compact(history)
            assert not returned.is_set()  # the error came while the summary was being written
        finally:
            release.set()


class TestInvisibleSummaries:
    """A summary of only invisible characters is unusable."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("text", ["\u200b\ufeff", "\u200b", " \u2060\u200d ", "\x00\x01"])
    async def test_is_a_summarization_error(self, text: str) -> None:
        """Zero-width spaces, joiners, byte-order marks, controls: SummarizationError."""
        strategy = SummarizationStrategy(FunctionProvider(lambda request: text), 0)
        messages = [Message.user("hi"), Message.assistant("hello")]
        with pytest.raises(SummarizationError, match="empty"):
            await strategy.compact(messages)
