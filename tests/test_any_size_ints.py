"""Budgets, windows, counts and priorities are ints of any size (a Python int does not
overflow): the crate's ``usize::MAX`` idioms, ported, and huge values everywhere."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import huge_ints, well_formed_conversations

from neuron_context import (
    CompositeStrategy,
    ConfigurationError,
    ContextSection,
    ContextStrategy,
    ExtractiveSummarizer,
    InjectionTrigger,
    Message,
    NeuronContextError,
    PersistentContext,
    SlidingWindowStrategy,
    StripProcessedImagesStrategy,
    StripToolCallsStrategy,
    SummarizationStrategy,
    SupersededToolCallsStrategy,
    SystemInjector,
    ToolResultClearingStrategy,
    ToolRetryMiddleware,
    ToolUse,
    default_stack,
    validate,
)
from neuron_context.strategies import (
    CollapseRepeatedCallsStrategy,
    DedupeFetchesStrategy,
    StaleFileReadsStrategy,
    TruncateLargeResultsStrategy,
)
from neuron_context.testing import FunctionProvider

USIZE_MAX = 2**64 - 1
"""The largest ``usize`` on a 64-bit machine: the crate's "never compact"."""

LARGE = 10**6
"""More tokens, messages or turns than any generated conversation holds."""


def summarizer() -> FunctionProvider:
    """A provider that always answers with a short summary."""
    return FunctionProvider(lambda request: "A summary.")


async def outcome(strategy: ContextStrategy, messages: list[Message]) -> list[Message] | str:
    """What ``strategy`` makes of ``messages``: the compacted list, or the name of the
    library error it raised."""
    try:
        return await strategy.compact(messages)
    except NeuronContextError as exc:
        return type(exc).__name__


def history() -> list[Message]:
    """A conversation with a tool exchange, a few turns and a long result."""
    use = ToolUse(id="id1", name="read_file", input={"path": "src/a.py"})
    return [
        Message.system("You are terse."),
        Message.user("Port the parser."),
        Message.assistant("Reading.", tool_uses=[use]),
        Message.tool_result("id1", "line\n" * 2_000),
        Message.user("Now the tests."),
        Message.assistant("Done."),
    ]


BUDGETS: dict[str, Callable[[int], ContextStrategy]] = {
    "SlidingWindowStrategy": lambda n: SlidingWindowStrategy(1, n),
    "ToolResultClearingStrategy": lambda n: ToolResultClearingStrategy(0, n),
    "SummarizationStrategy": lambda n: SummarizationStrategy(summarizer(), 0, n),
    "CompositeStrategy": lambda n: CompositeStrategy([SlidingWindowStrategy(1)], n),
    "StripToolCallsStrategy": StripToolCallsStrategy,
    "SupersededToolCallsStrategy": lambda n: SupersededToolCallsStrategy({}, max_tokens=n),
    "StripProcessedImagesStrategy": lambda n: StripProcessedImagesStrategy(max_tokens=n),
    "CollapseRepeatedCallsStrategy": lambda n: CollapseRepeatedCallsStrategy(max_tokens=n),
    "DedupeFetchesStrategy": lambda n: DedupeFetchesStrategy(max_tokens=n),
    "StaleFileReadsStrategy": lambda n: StaleFileReadsStrategy(max_tokens=n),
    "TruncateLargeResultsStrategy": lambda n: TruncateLargeResultsStrategy(max_tokens=n),
}
"""Every strategy with the trigger ``token_count > max_tokens``, given its budget."""

INTS: dict[str, Callable[[int], ContextStrategy]] = {
    **{f"{name}.max_tokens": build for name, build in BUDGETS.items()},
    "default_stack": default_stack,
    "default_stack(summarizer=)": lambda n: default_stack(n, summarizer=summarizer()),
    "SlidingWindowStrategy.window_size": SlidingWindowStrategy,
    "ToolResultClearingStrategy.keep_recent_n": ToolResultClearingStrategy,
    "ToolResultClearingStrategy.min_reclaim_tokens": lambda n: ToolResultClearingStrategy(
        0, min_reclaim_tokens=n
    ),
    "SummarizationStrategy.preserve_recent": lambda n: SummarizationStrategy(summarizer(), n),
    "SummarizationStrategy.max_summary_tokens": lambda n: SummarizationStrategy(
        ExtractiveSummarizer(), 1, max_summary_tokens=n
    ),
    "SummarizationStrategy.retries": lambda n: SummarizationStrategy(summarizer(), 1, retries=n),
    "ExtractiveSummarizer.max_mentions": lambda n: SummarizationStrategy(
        ExtractiveSummarizer(max_mentions=n), 1
    ),
    "ExtractiveSummarizer.read_per_token": lambda n: SummarizationStrategy(
        ExtractiveSummarizer(read_per_token=n), 1
    ),
    "CollapseRepeatedCallsStrategy.min_repeats": lambda n: CollapseRepeatedCallsStrategy(
        min_repeats=n
    ),
    "StaleFileReadsStrategy.max_age": lambda n: StaleFileReadsStrategy(max_age=n),
    "TruncateLargeResultsStrategy.max_result_tokens": lambda n: TruncateLargeResultsStrategy(
        max_result_tokens=n
    ),
    "TruncateLargeResultsStrategy.keep_recent": lambda n: TruncateLargeResultsStrategy(
        keep_recent=n
    ),
    "TruncateLargeResultsStrategy.recent_turns": lambda n: TruncateLargeResultsStrategy(
        recent_turns=n
    ),
}
"""Every int parameter of the built-in strategies, by where it goes."""


class TestCrateIdioms:
    """The crate's own tests use ``usize::MAX`` for "never": so can we."""

    @pytest.mark.anyio
    async def test_composite_with_the_largest_budget_never_compacts(self) -> None:
        """A composite whose budget is usize::MAX runs none of its strategies."""
        strategy = CompositeStrategy(
            [ToolResultClearingStrategy(0, 1), SlidingWindowStrategy(1, 1)], USIZE_MAX
        )
        messages = [
            Message.assistant(tool_uses=[ToolUse(id="id1", name="my_tool", input={})]),
            Message.tool_result("id1", "result"),
            Message.user("question"),
            Message.assistant("answer"),
        ]
        assert await strategy.compact(messages) == messages
        assert not strategy.should_compact(messages, USIZE_MAX)
        assert strategy.should_compact(messages, USIZE_MAX + 1)

    def test_section_with_the_largest_priority_sorts_last(self) -> None:
        """A section of priority usize::MAX renders after every other."""
        context = PersistentContext()
        context.add_section(ContextSection("Last", "z", USIZE_MAX))
        context.add_section(ContextSection("First", "a", 0))
        context.add_section(ContextSection("Middle", "m", 2**53 + 1))
        assert context.render() == "## First\na\n\n## Middle\nm\n\n## Last\nz"

    @pytest.mark.anyio
    async def test_default_stack_with_the_largest_budget(self) -> None:
        """default_stack(usize::MAX) builds, never triggers on a real count, and leaves a
        history as it is."""
        stack = default_stack(USIZE_MAX)
        messages = history()
        assert not stack.should_compact(messages, stack.token_estimate(messages))
        assert not stack.should_compact(messages, 2**63)
        assert await stack.compact(messages) == messages


class TestHugeInts:
    """Huge values work wherever an int is taken, with exact arithmetic."""

    @given(name=st.sampled_from(sorted(BUDGETS)), budget=huge_ints())
    def test_budget_is_the_trigger(self, name: str, budget: int) -> None:
        """``should_compact`` is ``token_count > max_tokens``, exactly, at any size."""
        strategy = BUDGETS[name](budget)
        messages = history()
        assert not strategy.should_compact(messages, budget)
        assert strategy.should_compact(messages, budget + 1)

    @given(budget=huge_ints())
    def test_default_stack_reserve_is_exact(self, budget: int) -> None:
        """default_stack triggers over the budget less its reserve, computed exactly
        (no float rounding of a budget beyond 2**53)."""
        stack = default_stack(budget)
        limit = budget - int(budget * Fraction(stack.reserve))
        messages = [Message.user("hi")]
        assert not stack.should_compact(messages, limit)
        assert stack.should_compact(messages, limit + 1)

    @pytest.mark.anyio
    @given(
        name=st.sampled_from(sorted(INTS)),
        value=huge_ints(),
        messages=well_formed_conversations(max_turns=6),
    )
    async def test_every_int_parameter(
        self, name: str, value: int, messages: list[Message]
    ) -> None:
        """A huge value acts as a large one (more than a generated conversation holds or
        costs): the same trigger and the same compaction, or the same library error."""
        strategy, large = INTS[name](value), INTS[name](LARGE)
        cost = strategy.token_estimate(messages)
        assert strategy.should_compact(messages, cost) == large.should_compact(messages, cost)
        result = await outcome(strategy, messages)
        assert result == await outcome(large, messages)
        if isinstance(result, list):
            validate(result)

    @given(n=huge_ints(), turn=huge_ints())
    def test_injection(self, n: int, turn: int) -> None:
        """Triggers and turns of any size fire as documented; the state round-trips."""
        assert InjectionTrigger.every_n_turns(n).fires(turn, 0) == (turn % n == 0)
        assert InjectionTrigger.on_token_threshold(n).fires(0, turn) == (turn >= n)
        injector = SystemInjector()
        injector.add_rule(InjectionTrigger.on_token_threshold(n), "x")
        assert injector.check(turn, turn) == (["x"] if turn >= n else [])
        again = SystemInjector()
        again.add_rule(InjectionTrigger.on_token_threshold(n), "x")
        again.restore(injector.state())
        assert again.state() == injector.state()

    def test_retry_delay_after_many_attempts(self) -> None:
        """The delay after a huge number of retries is the cap, not a float overflow."""
        retry = ToolRetryMiddleware(USIZE_MAX, initial_delay=1.0, max_delay=60.0, jitter=0)
        assert retry.delay(5_000) == 60.0
        assert retry.delay(2**64) == 60.0


class TestStillRefused:
    """Bools, negative numbers and non-ints are still ConfigurationErrors."""

    @pytest.mark.parametrize("name", sorted(INTS))
    @pytest.mark.parametrize("value", [True, -1, -(2**64), 1.0, float("inf"), "1", b"1"])
    def test_bad_values(self, name: str, value: object) -> None:
        """Each int parameter refuses a value that is not a non-negative int."""
        with pytest.raises(ConfigurationError):
            INTS[name](value)  # type: ignore[arg-type]

    @pytest.mark.parametrize("value", [True, 1.0, "1", None])
    def test_bad_priorities(self, value: object) -> None:
        """A priority may be negative, but must be an int."""
        assert ContextSection("a", "b", -USIZE_MAX).priority == -USIZE_MAX
        with pytest.raises(ConfigurationError, match=r"ContextSection\.priority"):
            ContextSection("a", "b", value)  # type: ignore[arg-type]
