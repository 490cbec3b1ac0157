"""SummarizationStrategy (CONTRACT §3, §6): the request, the cut, failures, invariants."""

from __future__ import annotations

import copy
import logging
import unicodedata
from collections.abc import Callable, Sequence

import anyio
import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import texts, well_formed_conversations

from neuron_context import (
    Compaction,
    CompletionRequest,
    CompletionResponse,
    ConfigurationError,
    Document,
    ExtractiveSummarizer,
    FallbackStrategy,
    Image,
    Message,
    Provider,
    Role,
    SlidingWindowStrategy,
    StopReason,
    SummarizationError,
    SummarizationStrategy,
    Text,
    Thinking,
    TokenCounter,
    ToolDefinition,
    ToolResult,
    ToolUse,
    validate,
)
from neuron_context.errors import ProviderError
from neuron_context.strategies import Structure
from neuron_context.testing import FunctionProvider

DEFAULT_INSTRUCTIONS = str(attrs.fields(SummarizationStrategy).instructions.default)
"""The default instructions, as the public class declares them."""
HEADINGS = (
    "## Goal and constraints",
    "## Decisions",
    "## Artifacts",
    "## Errors and fixes",
    "## Next steps",
)
SUMMARIZE = "Summarize the conversation below."
UPDATE = (
    "Update the previous summary with the new messages below: keep everything in it "
    "that still holds (above all the user's goal and constraints), correct what the new "
    "messages change, and add what they add."
)

# -- helpers ----------------------------------------------------------------------------

LONG = "lorem ipsum dolor sit amet " * 20
"""A text long enough that replacing it with a short summary saves tokens."""


def call(use_id: str, name: str = "read_file", **arguments: str) -> Message:
    """An assistant message calling ``name`` once."""
    return Message.assistant(tool_uses=[ToolUse(id=use_id, name=name, input=arguments)])


def summary(text: str) -> Message:
    """An existing summary message."""
    return Message(role=Role.USER, content=(Compaction(content=text),))


def summaries(messages: Sequence[Message]) -> list[str]:
    """The text of every Compaction block in ``messages``."""
    return [b.content for m in messages for b in m.content if isinstance(b, Compaction)]


def replying(text: str) -> FunctionProvider:
    """A provider that always answers ``text``."""
    return FunctionProvider(lambda request: text)


@attrs.frozen
class Snapshot:
    """The caller's list as it was: the same objects, equal to a deep copy."""

    messages: Sequence[Message]
    objects: tuple[Message, ...]
    copies: list[Message]

    @classmethod
    def of(cls, messages: Sequence[Message]) -> Snapshot:
        """Remember ``messages``."""
        return cls(messages, tuple(messages), copy.deepcopy(list(messages)))

    def assert_unchanged(self) -> None:
        """Nothing was changed."""
        assert tuple(self.messages) == self.objects
        assert all(a is b for a, b in zip(self.messages, self.objects, strict=True))
        assert list(self.messages) == self.copies


SYS = Message.system("You are a coding agent.")
U1 = Message.user("Fix the failing test in tests/test_io.py. " + LONG)
A1 = Message.assistant("Let me read it.")
C1 = call("c1", path="tests/test_io.py")
R1 = Message.tool_result("c1", "def test_read(): ...\n" + LONG)
U2 = Message.user("Now run it.")
A2 = Message.assistant("Done: all tests pass.")
HISTORY = [SYS, U1, A1, C1, R1, U2, A2]


# -- construction -----------------------------------------------------------------------


class TestConstruction:
    """SummarizationStrategy's fields."""

    def test_defaults(self) -> None:
        """The defaults are the documented ones."""
        strategy = SummarizationStrategy(replying("s"), 4)
        assert strategy.max_tokens == 0
        assert strategy.counter == TokenCounter()
        assert strategy.instructions == DEFAULT_INSTRUCTIONS
        assert (strategy.max_summary_tokens, strategy.model, strategy.timeout) == (1024, None, None)
        assert (strategy.retries, strategy.retry_delay) == (2, 0.5)

    def test_should_compact_is_strict(self) -> None:
        """The trigger is ``token_count > max_tokens``."""
        strategy = SummarizationStrategy(replying("s"), 4, 100)
        assert not strategy.should_compact([], 100)
        assert strategy.should_compact([], 101)

    def test_token_estimate_uses_the_counter(self) -> None:
        """The estimate is the counter's."""
        counter = TokenCounter(2.0)
        strategy = SummarizationStrategy(replying("s"), 4, counter=counter)
        assert strategy.token_estimate(HISTORY) == counter.estimate_messages(HISTORY)

    @pytest.mark.parametrize(
        ("kwargs", "field"),
        [
            ({"provider": "openai"}, "provider"),
            ({"preserve_recent": -1}, "preserve_recent"),
            ({"max_tokens": 1.5}, "max_tokens"),
            ({"instructions": "  "}, "instructions"),
            ({"max_summary_tokens": 0}, "max_summary_tokens"),
            ({"model": ""}, "model"),
            ({"timeout": 0}, "timeout"),
            ({"timeout": float("inf")}, "timeout"),
            ({"retries": -1}, "retries"),
            ({"retry_delay": -0.1}, "retry_delay"),
            ({"max_retry_delay": float("nan")}, "max_retry_delay"),
        ],
    )
    def test_bad_values_name_the_field(self, kwargs: dict[str, object], field: str) -> None:
        """Bad values raise ConfigurationError naming the field."""
        arguments: dict[str, object] = {"provider": replying("s"), "preserve_recent": 2}
        arguments.update(kwargs)
        with pytest.raises(ConfigurationError, match=rf"SummarizationStrategy\.{field}"):
            SummarizationStrategy(**arguments)  # type: ignore[arg-type]

    def test_default_instructions_ask_for_the_sections(self) -> None:
        """The default instructions ask for every section, in order, and for updates."""
        positions = [DEFAULT_INSTRUCTIONS.index(heading) for heading in HEADINGS]
        assert positions == sorted(positions)
        assert "previous summary" in DEFAULT_INSTRUCTIONS
        for word in ("goal", "constraints", "decided", "paths", "URLs", "commands", "Error"):
            assert word in DEFAULT_INSTRUCTIONS


# -- the request ------------------------------------------------------------------------


class TestRequest:
    """What SummarizationStrategy sends."""

    @pytest.mark.anyio
    async def test_request_fields(self) -> None:
        """One user message, the instructions as system, no tools, the summary options."""
        provider = replying("The user wants tests/test_io.py fixed.")
        strategy = SummarizationStrategy(
            provider, 2, instructions="Summarize tersely.", max_summary_tokens=300, model="small"
        )
        await strategy.compact(HISTORY)
        (request,) = provider.requests
        assert len(request.messages) == 1
        assert request.messages[0].role is Role.USER
        assert request.system == "Summarize tersely."
        assert request.tools == ()
        assert (request.max_tokens, request.model, request.temperature) == (300, "small", 0)

    @pytest.mark.anyio
    async def test_default_request(self) -> None:
        """By default the request carries DEFAULT_INSTRUCTIONS and no model."""
        provider = replying("s")
        await SummarizationStrategy(provider, 2).compact(HISTORY)
        (request,) = provider.requests
        assert request.system == DEFAULT_INSTRUCTIONS
        assert (request.max_tokens, request.model) == (1024, None)

    @pytest.mark.anyio
    async def test_transcript(self) -> None:
        """The transcript shows roles, text, calls with JSON arguments, results with ids
        and error marks, and placeholders; thinking and system messages are left out."""
        messages = [
            SYS,
            Message(
                role=Role.USER,
                content=(
                    Text(text="Look at this\nscreenshot"),
                    Image(media_type="image/png", data="iVBO"),
                    Document(media_type="application/pdf", data="JVBE"),
                ),
            ),
            Message(
                role=Role.ASSISTANT,
                content=(
                    Thinking(thinking="secret reasoning", signature="sig"),
                    Text(text="Checking."),
                    ToolUse(id="c1", name="bash", input={"command": "ls -la", "n": 2}),
                    ToolUse(id="c2", name="read_file", input={"path": "é.txt"}),
                ),
            ),
            Message(
                role=Role.TOOL,
                content=(
                    ToolResult(tool_use_id="c2", content="héllo"),
                    ToolResult(tool_use_id="c1", content="boom\n\nexit 1", is_error=True),
                ),
            ),
            Message.system("A reminder."),
            Message.assistant("I see the problem."),
            Message.user("kept"),
        ]
        provider = replying("s")
        await SummarizationStrategy(provider, 1).compact(messages)
        assert provider.requests[0].messages[0].text == "\n".join(
            [
                SUMMARIZE,
                "",
                "<transcript>",
                "user:",
                "  Look at this",
                "  screenshot",
                "  [image: image/png]",
                "  [document: application/pdf]",
                "assistant:",
                "  Checking.",
                'tool call bash [c1]: {"command": "ls -la", "n": 2}',
                'tool call read_file [c2]: {"path": "é.txt"}',
                "tool result read_file [c2]:",
                "  héllo",
                "tool error bash [c1]:",
                "  boom",
                "",
                "  exit 1",
                "assistant:",
                "  I see the problem.",
                "</transcript>",
            ]
        )

    @pytest.mark.anyio
    async def test_previous_summary_is_sent_for_update(self) -> None:
        """A summary in the history is sent as the previous summary, with the ask to
        update it, and is not in the transcript."""
        provider = replying("new summary")
        messages = [SYS, summary("## Goal and constraints\n- fix io"), U2, A2, U1]
        await SummarizationStrategy(provider, 1).compact(messages)
        text = provider.requests[0].messages[0].text
        assert text.startswith(UPDATE + "\n\nPrevious summary:\n<previous_summary>\n")
        assert "<previous_summary>\n## Goal and constraints\n- fix io\n</previous_summary>" in text
        assert "\n\nNew messages:\n<transcript>\nuser:\n  Now run it.\nassistant:\n" in text
        assert text.count("fix io") == 1

    @pytest.mark.anyio
    async def test_summary_request_matches_compact(self) -> None:
        """``summary_request`` is the request ``compact`` sends, or None."""
        provider = replying("s")
        strategy = SummarizationStrategy(provider, 2)
        expected = strategy.summary_request(HISTORY)
        await strategy.compact(HISTORY)
        assert provider.requests == [expected]
        assert strategy.summary_request(HISTORY[:4]) is not None
        assert strategy.summary_request(HISTORY[:3]) is None
        assert SummarizationStrategy(provider, 10).summary_request(HISTORY) is None


# -- the result -------------------------------------------------------------------------


class TestPlacement:
    """Where the summary goes and what is kept."""

    @pytest.mark.anyio
    async def test_summary_between_system_and_kept(self) -> None:
        """Older system messages first, then the summary, then the kept messages as they are."""
        sys2 = Message.system("Be careful.")
        messages = [SYS, U1, sys2, A1, C1, R1, U2, A2]
        output = await SummarizationStrategy(replying(" the summary \n"), 2).compact(messages)
        assert output == [SYS, sys2, summary("the summary"), U2, A2]
        assert output[-1] is A2
        assert output[-2] is U2

    @pytest.mark.anyio
    async def test_system_messages_in_kept_part_stay(self) -> None:
        """A system message among the kept ones stays where it is."""
        sys2 = Message.system("Later rule.")
        messages = [SYS, U1, A1, U2, sys2, A2]
        output = await SummarizationStrategy(replying("s"), 2).compact(messages)
        assert output == [SYS, summary("s"), U2, sys2, A2]

    @pytest.mark.anyio
    async def test_cut_moves_past_an_exchange(self) -> None:
        """When the newest messages begin with tool results, the cut moves after them."""
        c3 = Message.assistant(
            tool_uses=[ToolUse(id="a", name="read_file"), ToolUse(id="b", name="read_file")]
        )
        ra, rb = Message.tool_result("a", LONG), Message.tool_result("b", LONG)
        history = [SYS, U1, c3, ra, rb, A2]
        provider = replying("s")
        # The last three non-system messages start at ``ra``, inside the exchange.
        output = await SummarizationStrategy(provider, 3).compact(history)
        assert output == [SYS, summary("s"), A2]
        validate(output)
        transcript = provider.requests[0].messages[0].text
        assert "tool result read_file [a]:" in transcript
        assert "tool result read_file [b]:" in transcript

    @pytest.mark.anyio
    async def test_running_calls_are_kept_whole(self) -> None:
        """A trailing assistant message whose calls are still running is kept with its results."""
        running = Message.assistant(
            tool_uses=[ToolUse(id="x", name="bash"), ToolUse(id="y", name="bash")]
        )
        rx = Message.tool_result("x", "done")
        history = [SYS, U1, A1, U2, running, rx]
        output = await SummarizationStrategy(replying("s"), 1).compact(history)
        assert output == [SYS, summary("s")]
        output = await SummarizationStrategy(replying("s"), 3).compact(history)
        assert output == [SYS, summary("s"), U2, running, rx]

    @pytest.mark.anyio
    async def test_second_compaction_updates_the_first(self) -> None:
        """A second compaction hands the first summary over and leaves exactly one."""
        provider = FunctionProvider(lambda r: f"summary {len(provider.requests)}")
        strategy = SummarizationStrategy(provider, 2)
        first = await strategy.compact(HISTORY)
        assert summaries(first) == ["summary 1"]
        second = await strategy.compact([*first, Message.user(LONG), Message.assistant("ok")])
        assert summaries(second) == ["summary 2"]
        assert "<previous_summary>\nsummary 1\n</previous_summary>" in (
            provider.requests[1].messages[0].text
        )
        assert second[0] is SYS
        validate(second)

    @pytest.mark.anyio
    async def test_summary_does_not_count_toward_preserve_recent(self) -> None:
        """An existing summary among the newest messages is not one of the kept ones."""
        provider = replying("merged")
        history = [SYS, U1, A1, summary("old"), U2, A2]
        output = await SummarizationStrategy(provider, 2).compact(history)
        assert output == [SYS, summary("merged"), U2, A2]
        assert "<previous_summary>\nold\n</previous_summary>" in (
            provider.requests[0].messages[0].text
        )

    @pytest.mark.anyio
    async def test_summaries_anywhere_are_folded_in(self) -> None:
        """Several summaries, one among the kept messages, become one."""
        provider = replying("merged")
        history = [SYS, summary("first"), U1, A1, U2, summary("second"), A2]
        output = await SummarizationStrategy(provider, 2).compact(history)
        assert output == [SYS, summary("merged"), U2, A2]
        text = provider.requests[0].messages[0].text
        assert "<previous_summary>\nfirst\n\nsecond\n</previous_summary>" in text

    @pytest.mark.anyio
    async def test_summary_sharing_a_kept_message(self) -> None:
        """A summary block in a kept message with other content: the rest is kept."""
        odd = Message(role=Role.USER, content=(Compaction(content="old"), Text(text="and hi")))
        history = [U1, A1, U2, odd, A2]
        provider = replying("new")
        output = await SummarizationStrategy(provider, 2).compact(history)
        assert output == [summary("new"), U2, Message.user("and hi"), A2]
        assert "<previous_summary>\nold\n</previous_summary>" in (
            provider.requests[0].messages[0].text
        )

    @pytest.mark.anyio
    async def test_summary_sharing_a_summarized_message(self) -> None:
        """A summary block in an older message with other content: both are summarized."""
        odd = Message(role=Role.USER, content=(Compaction(content="old"), Text(text="and hi")))
        provider = replying("new")
        output = await SummarizationStrategy(provider, 1).compact([U1, odd, A2])
        assert output == [summary("new"), A2]
        text = provider.requests[0].messages[0].text
        assert "<previous_summary>\nold\n</previous_summary>" in text
        assert "user:\n  and hi\n" in text


class TestNothingToDo:
    """No provider call when nothing would be summarized."""

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        ("history", "preserve_recent"),
        [
            ([], 0),
            ([], 3),
            ([SYS], 0),
            (HISTORY, 6),
            (HISTORY, 100),
            ([SYS, summary("old"), U2, A2], 2),
            ([SYS, summary("old"), Message.system("x"), U2, A2], 2),
            ([SYS, summary("a"), summary("b")], 0),
        ],
    )
    async def test_no_call_and_equal_list(
        self, history: list[Message], preserve_recent: int
    ) -> None:
        """Nothing new before the cut: no request, and an equal new list."""
        provider = replying("never")
        snapshot = Snapshot.of(history)
        output = await SummarizationStrategy(provider, preserve_recent).compact(history)
        assert output == history
        assert output is not history
        assert provider.requests == []
        snapshot.assert_unchanged()


# -- failures ---------------------------------------------------------------------------


def fails_with(error: BaseException) -> Callable[[CompletionRequest], str]:
    """A provider function that always raises ``error``."""

    def fail(request: CompletionRequest) -> str:
        raise error

    return fail


class TestFailures:
    """Failures raise SummarizationError and leave the caller's messages untouched."""

    async def expect_failure(
        self, strategy: SummarizationStrategy, messages: list[Message] | None = None
    ) -> SummarizationError:
        """Compact, expect a SummarizationError, check the input is intact."""
        history = messages if messages is not None else list(HISTORY)
        snapshot = Snapshot.of(history)
        with pytest.raises(SummarizationError) as caught:
            await strategy.compact(history)
        snapshot.assert_unchanged()
        return caught.value

    @pytest.mark.anyio
    async def test_provider_raises(self) -> None:
        """Any exception becomes a SummarizationError chaining it; it is not retried."""
        cause = RuntimeError("connection reset")
        provider = FunctionProvider(fails_with(cause))
        error = await self.expect_failure(SummarizationStrategy(provider, 2, retry_delay=0))
        assert error.__cause__ is cause
        assert "connection reset" in str(error)
        assert len(provider.requests) == 1

    @pytest.mark.anyio
    async def test_non_retryable_provider_error(self) -> None:
        """A ProviderError not marked retryable is not retried."""
        cause = ProviderError("bad request", status_code=400)
        provider = FunctionProvider(fails_with(cause))
        error = await self.expect_failure(SummarizationStrategy(provider, 2, retry_delay=0))
        assert error.__cause__ is cause
        assert len(provider.requests) == 1

    @pytest.mark.anyio
    async def test_retryable_then_success(self) -> None:
        """Retryable errors are retried, and a later success is used."""

        def flaky(request: CompletionRequest) -> str:
            if len(provider.requests) < 3:
                msg = "overloaded"
                raise ProviderError(msg, retryable=True, status_code=529)
            return "s"

        provider = FunctionProvider(flaky)
        snapshot = Snapshot.of(HISTORY)
        output = await SummarizationStrategy(provider, 2, retry_delay=0).compact(HISTORY)
        assert summaries(output) == ["s"]
        assert len(provider.requests) == 3
        snapshot.assert_unchanged()

    @pytest.mark.anyio
    async def test_retries_exhausted(self) -> None:
        """After ``retries`` retries the last error is chained."""
        cause = ProviderError("rate limited", retryable=True, status_code=429)
        provider = FunctionProvider(fails_with(cause))
        strategy = SummarizationStrategy(provider, 2, retries=3, retry_delay=0)
        error = await self.expect_failure(strategy)
        assert error.__cause__ is cause
        assert "4 attempts" in str(error)
        assert len(provider.requests) == 4

    @pytest.mark.anyio
    async def test_backoff_doubles_and_honours_retry_after(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Waits double from ``retry_delay``; a longer ``retry_after`` wins."""
        waits: list[float] = []

        async def no_sleep(seconds: float) -> None:
            waits.append(seconds)

        monkeypatch.setattr(anyio, "sleep", no_sleep)
        errors = [
            ProviderError("a", retryable=True),
            ProviderError("b", retryable=True, retry_after=5.0),
            ProviderError("c", retryable=True),
        ]

        def reply(request: CompletionRequest) -> str:
            if errors:
                raise errors.pop(0)
            return "s"

        provider = FunctionProvider(reply)
        strategy = SummarizationStrategy(provider, 2, retries=3, retry_delay=0.25)
        await strategy.compact(HISTORY)
        assert waits == [0.25, 5.0, 1.0]

    @pytest.mark.anyio
    async def test_backoff_stops_at_max_retry_delay(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The doubling stops at ``max_retry_delay``."""
        waits: list[float] = []

        async def no_sleep(seconds: float) -> None:
            waits.append(seconds)

        monkeypatch.setattr(anyio, "sleep", no_sleep)
        provider = FunctionProvider(fails_with(ProviderError("busy", retryable=True)))
        strategy = SummarizationStrategy(
            provider, 2, retries=4, retry_delay=1.0, max_retry_delay=3.0
        )
        await self.expect_failure(strategy)
        assert waits == [1.0, 2.0, 3.0, 3.0]

    @pytest.mark.anyio
    async def test_retry_after_beyond_the_limit_fails_at_once(self) -> None:
        """A server asking to wait longer than ``max_retry_delay`` is not waited for."""
        cause = ProviderError("slow down", retryable=True, retry_after=3600.0)
        provider = FunctionProvider(fails_with(cause))
        strategy = SummarizationStrategy(provider, 2, retry_delay=0, max_retry_delay=10.0)
        error = await self.expect_failure(strategy)
        assert error.__cause__ is cause
        assert len(provider.requests) == 1

    @pytest.mark.anyio
    async def test_timeout(self) -> None:
        """A call that hangs past ``timeout`` fails with the TimeoutError chained."""

        async def hang(request: CompletionRequest) -> str:
            await anyio.sleep_forever()
            return "never"  # pragma: no cover

        provider = FunctionProvider(hang)
        strategy = SummarizationStrategy(provider, 2, timeout=0.05, retries=0)
        error = await self.expect_failure(strategy)
        assert isinstance(error.__cause__, TimeoutError)
        assert "timed out after 0.05 s" in str(error)
        assert len(provider.requests) == 1

    @pytest.mark.anyio
    async def test_timeout_is_retried(self) -> None:
        """A timeout is retryable: a second, quick attempt succeeds."""

        async def slow_once(request: CompletionRequest) -> str:
            if len(provider.requests) == 1:
                await anyio.sleep_forever()
            return "s"

        provider = FunctionProvider(slow_once)
        strategy = SummarizationStrategy(provider, 2, timeout=0.05, retry_delay=0)
        output = await strategy.compact(HISTORY)
        assert summaries(output) == ["s"]
        assert len(provider.requests) == 2

    @pytest.mark.anyio
    async def test_cancelled_mid_call(self) -> None:
        """Cancelling while the provider awaits propagates as cancellation, not as an error."""
        called = anyio.Event()

        async def wait(request: CompletionRequest) -> str:
            called.set()
            await anyio.sleep_forever()
            return "never"  # pragma: no cover

        provider = FunctionProvider(wait)
        strategy = SummarizationStrategy(provider, 2, timeout=10, retry_delay=0)
        history = list(HISTORY)
        snapshot = Snapshot.of(history)
        outputs: list[list[Message]] = []

        async def run() -> None:
            outputs.append(await strategy.compact(history))

        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as group:
                group.start_soon(run)
                await called.wait()
                scope.cancel()
        assert scope.cancelled_caught
        assert outputs == []
        assert len(provider.requests) == 1
        snapshot.assert_unchanged()

    @pytest.mark.anyio
    @pytest.mark.parametrize("text", ["", " ", "\n\t  \n"])
    async def test_empty_summary(self, text: str) -> None:
        """An empty or whitespace summary is unusable, and is not retried."""
        provider = replying(text)
        error = await self.expect_failure(SummarizationStrategy(provider, 2, retry_delay=0))
        assert "empty" in str(error)
        assert len(provider.requests) == 1

    @pytest.mark.anyio
    async def test_truncated_summary(self) -> None:
        """A summary cut off at max_tokens is unusable, and is not retried."""
        response = CompletionResponse(
            Message.assistant("## Goal and constraints\n- the user wa"),
            stop_reason=StopReason.MAX_TOKENS,
        )
        provider = FunctionProvider(lambda r: response)
        error = await self.expect_failure(SummarizationStrategy(provider, 2, retry_delay=0))
        assert "max_tokens" in str(error)
        assert len(provider.requests) == 1

    @pytest.mark.anyio
    async def test_not_a_response(self) -> None:
        """A provider that returns something else than a CompletionResponse fails cleanly."""

        class Broken(Provider):
            async def complete(self, request: CompletionRequest) -> CompletionResponse:
                return None  # type: ignore[return-value]

        error = await self.expect_failure(SummarizationStrategy(Broken(), 2))
        assert "NoneType" in str(error)


class TestNeverWorse:
    """A summary that does not make the history smaller is not used."""

    @pytest.mark.anyio
    async def test_oversized_summary_keeps_the_messages(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """The input comes back unchanged (a new, equal list) and it is logged at INFO."""
        history = [SYS, U2, A1, U2, A2]
        snapshot = Snapshot.of(history)
        provider = replying(LONG * 3)
        with caplog.at_level(logging.INFO, logger="neuron_context"):
            output = await SummarizationStrategy(provider, 1).compact(history)
        assert output == history
        assert output is not history
        assert len(provider.requests) == 1
        snapshot.assert_unchanged()
        (record,) = [r for r in caplog.records if "would not make" in r.getMessage()]
        assert record.levelno == logging.INFO

    @pytest.mark.anyio
    async def test_equal_cost_is_not_used(self) -> None:
        """A summary costing exactly what it replaces is not used either."""
        history = [U2, A2]
        counter = TokenCounter()
        # The summary message must cost what U2 costs: same text length.
        output = await SummarizationStrategy(replying(U2.text), 1, counter=counter).compact(history)
        assert output == history

    @pytest.mark.anyio
    async def test_logs_the_compaction(self, caplog: pytest.LogCaptureFixture) -> None:
        """A used summary is logged with what was summarized and kept."""
        with caplog.at_level(logging.INFO, logger="neuron_context"):
            await SummarizationStrategy(replying("s"), 2).compact(HISTORY)
        (record,) = [r for r in caplog.records if r.getMessage().startswith("Summarization")]
        assert record.__dict__["nc_summarized"] == 4
        assert record.__dict__["nc_kept"] == 2
        assert record.__dict__["nc_summary_tokens"] == 1


class TestFallback:
    """FallbackStrategy degrades a failed summary to a cheaper strategy."""

    @pytest.mark.anyio
    async def test_degrades_to_the_window(self) -> None:
        """A failing summarizer falls back to the sliding window on the original messages."""
        failing = FunctionProvider(fails_with(ProviderError("down", retryable=True)))
        window = SlidingWindowStrategy(2)
        strategy = FallbackStrategy(SummarizationStrategy(failing, 2, retry_delay=0), window)
        snapshot = Snapshot.of(HISTORY)
        output = await strategy.compact(HISTORY)
        assert output == [SYS, U2, A2]
        assert len(failing.requests) == 3
        snapshot.assert_unchanged()


# -- properties -------------------------------------------------------------------------


def _subsequence(part: Sequence[Message], whole: Sequence[Message]) -> bool:
    """Whether ``part`` is ``whole`` minus some messages (by identity), in order."""
    iterator = iter(whole)
    return all(any(m is n for n in iterator) for m in part)


def _nothing_to_summarize(messages: Sequence[Message], preserve_recent: int) -> bool:
    """The definition: no non-system, non-summary message before the cut."""
    cut = Structure.of(messages).cut_keeping_last(preserve_recent, skip_summaries=True)
    return all(m.role is Role.SYSTEM or m.is_compaction for m in messages[:cut])


class TestProperties:
    """Invariants 1-6 over generated conversations."""

    @given(
        messages=well_formed_conversations(max_turns=12),
        preserve_recent=st.integers(0, 8),
        reply=st.one_of(texts(), st.just("ok"), st.just(LONG)),
    )
    def test_invariants(self, messages: list[Message], preserve_recent: int, reply: str) -> None:
        """Well formed in and out, no mutation, systems kept, order, never worse, no idle call."""
        provider = replying(reply)
        strategy = SummarizationStrategy(provider, preserve_recent)
        snapshot = Snapshot.of(messages)
        try:
            output = anyio.run(strategy.compact, messages)
        except SummarizationError:
            # Only a reply with nothing visible in it (blank, controls, format
            # characters) may fail.
            assert not any(
                not char.isspace() and unicodedata.category(char)[0] not in "CZ" for char in reply
            )
            snapshot.assert_unchanged()
            return
        snapshot.assert_unchanged()
        validate(output)  # 1
        systems = [m for m in messages if m.role is Role.SYSTEM]
        assert [m for m in output if m.role is Role.SYSTEM] == systems  # 3
        assert all(a is b for a, b in zip(systems, [m for m in output if m.is_system], strict=True))
        assert strategy.token_estimate(output) <= strategy.token_estimate(messages)  # 5
        if _nothing_to_summarize(messages, preserve_recent):  # 6
            assert provider.requests == []
            assert output == messages
            return
        assert len(provider.requests) == 1
        if output == messages:  # the summary would not have helped
            return
        compactions = [m for m in output if m.is_compaction]
        assert compactions == [summary(reply.strip())]
        kept = [m for m in output if m is not compactions[0]]
        assert _subsequence(kept, messages)  # 4
        previous = summaries(messages)
        request_text = provider.requests[0].messages[0].text
        assert all(text in request_text for text in previous if text.strip())

    @given(
        messages=well_formed_conversations(
            min_turns=2, max_turns=10, summaries=False, running=False
        ),
        more=well_formed_conversations(min_turns=1, max_turns=6, systems=False, summaries=False),
        preserve_recent=st.integers(0, 3),
    )
    def test_second_compaction_updates_the_first(
        self, messages: list[Message], more: list[Message], preserve_recent: int
    ) -> None:
        """Compacting again hands the first summary over and leaves exactly one summary."""
        provider = FunctionProvider(lambda r: f"summary number {len(provider.requests)}")
        strategy = SummarizationStrategy(provider, preserve_recent)
        first = anyio.run(strategy.compact, messages)
        if not any(m.is_compaction for m in first):
            return
        history = [*first, Message.user(LONG), *more]
        second = anyio.run(strategy.compact, history)
        validate(second)
        if len(provider.requests) < 2 or second == history:
            return
        assert "<previous_summary>\nsummary number 1\n</previous_summary>" in (
            provider.requests[1].messages[0].text
        )
        assert summaries(second) == ["summary number 2"]


class TestCacheAligned:
    """cache_aligned=True: the agent's own prefix plus one instruction message."""

    @pytest.mark.anyio
    async def test_request_is_the_agents_prefix(self) -> None:
        """System prompt, tools and messages as they are, then the instructions."""
        tool = ToolDefinition(name="read_file", description="Read.", input_schema={})
        seen: list[CompletionRequest] = []

        def reply(request: CompletionRequest) -> str:
            seen.append(request)
            return "The agent read a file."

        strategy = SummarizationStrategy(
            FunctionProvider(reply), 1, cache_aligned=True, tools=[tool], instructions="Be brief."
        )
        history = [
            Message.system("You are an agent."),
            Message.user("Read a.py"),
            Message.assistant(
                tool_uses=[ToolUse(id="c1", name="read_file", input={"path": "a.py"})]
            ),
            Message.tool_result("c1", "print(1)"),
            Message.assistant("Done."),
        ]
        output = await strategy.compact(history)
        (request,) = seen
        assert request.system == "You are an agent."
        assert request.tools == (tool,)
        assert list(request.messages[:-1]) == history[1:4]
        assert request.messages[-1].text.startswith("[Summary request]\nBe brief.")
        assert output[1].text == "The agent read a file."

    @pytest.mark.anyio
    async def test_extractive_ignores_the_instruction(self) -> None:
        """The offline summarizer reads the prefix and not the instruction as a request."""
        strategy = SummarizationStrategy(ExtractiveSummarizer(), 1, cache_aligned=True)
        history = [Message.user("Fix a.py"), Message.assistant("Looking."), Message.user("ok")]
        output = await strategy.compact(history)
        summary = output[0].text
        assert "Fix a.py" in summary
        assert "Summary request" not in summary

    def test_tools_must_be_definitions(self) -> None:
        """tools holds ToolDefinition objects."""
        with pytest.raises(ConfigurationError, match="tools"):
            SummarizationStrategy(replying("s"), 1, tools=["read_file"])  # type: ignore[list-item]
