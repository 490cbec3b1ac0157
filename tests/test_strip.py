"""Examples for StripToolCallsStrategy (CONTRACT §3)."""

from __future__ import annotations

import pytest

from neuron_context import (
    ConfigurationError,
    Message,
    Role,
    StripToolCallsStrategy,
    Text,
    Thinking,
    TokenCounter,
    ToolResult,
    ToolUse,
    validate,
)


def _use(id_: str) -> ToolUse:
    return ToolUse(id=id_, name="search", input={"q": id_})


SYS = Message.system("rules")
USER = Message.user("Find cats.")
ANSWER = Message.assistant("Cats found.")


class TestStripToolCallsStrategy:
    """StripToolCallsStrategy."""

    @pytest.mark.anyio
    async def test_removes_tool_messages_and_tool_uses(self) -> None:
        """Tool messages and tool uses go; assistant text and other messages stay."""
        messages = [
            SYS,
            USER,
            Message.assistant("Let me check.", tool_uses=[_use("a")]),
            Message.tool_result("a", "3 cats"),
            Message.assistant(tool_uses=[_use("b"), _use("c")]),
            Message(
                role=Role.TOOL,
                content=(
                    ToolResult(tool_use_id="b", content="x"),
                    ToolResult(tool_use_id="c", content="y"),
                ),
            ),
            ANSWER,
        ]
        output = await StripToolCallsStrategy().compact(messages)
        assert output == [SYS, USER, Message.assistant("Let me check."), ANSWER]
        validate(output)

    @pytest.mark.anyio
    async def test_empty_assistant_message_is_removed(self) -> None:
        """An assistant message holding only tool uses disappears."""
        messages = [USER, Message.assistant(tool_uses=[_use("a")]), Message.tool_result("a", "r")]
        assert await StripToolCallsStrategy().compact(messages) == [USER]

    @pytest.mark.anyio
    async def test_keeps_other_assistant_blocks(self) -> None:
        """Thinking and text blocks of an assistant message are kept in order."""
        thinking = Thinking(thinking="hmm", signature="sig")
        calling = Message(role=Role.ASSISTANT, content=(thinking, _use("a"), Text(text="after")))
        messages = [USER, calling, Message.tool_result("a", "r"), ANSWER]
        output = await StripToolCallsStrategy().compact(messages)
        assert output == [
            USER,
            Message(role=Role.ASSISTANT, content=(thinking, Text(text="after"))),
            ANSWER,
        ]

    @pytest.mark.anyio
    async def test_text_only_assistant_without_content_is_kept(self) -> None:
        """An assistant message that had no tool uses is kept, even if empty."""
        empty = Message.assistant()
        assert await StripToolCallsStrategy().compact([USER, empty]) == [USER, empty]

    @pytest.mark.anyio
    async def test_trailing_running_call(self) -> None:
        """A trailing call with no result is stripped too."""
        messages = [USER, Message.assistant("On it.", tool_uses=[_use("a")])]
        assert await StripToolCallsStrategy().compact(messages) == [
            USER,
            Message.assistant("On it."),
        ]

    @pytest.mark.anyio
    async def test_orphan_tool_message_is_removed(self) -> None:
        """A malformed conversation's orphan result is removed without error."""
        messages = [Message.tool_result("x", "r"), USER]
        assert await StripToolCallsStrategy().compact(messages) == [USER]

    @pytest.mark.anyio
    async def test_nothing_to_strip(self) -> None:
        """A conversation without tool calls comes back as an equal, new list."""
        messages = [SYS, USER, ANSWER]
        output = await StripToolCallsStrategy().compact(messages)
        assert output == messages
        assert output is not messages

    @pytest.mark.anyio
    async def test_empty_input(self) -> None:
        """An empty conversation stays empty."""
        assert await StripToolCallsStrategy().compact([]) == []

    @pytest.mark.anyio
    async def test_input_is_not_mutated(self) -> None:
        """The input list and its messages are left as they were."""
        calling = Message.assistant("x", tool_uses=[_use("a")])
        messages = [USER, calling, Message.tool_result("a", "r")]
        before = list(messages)
        await StripToolCallsStrategy().compact(messages)
        assert messages == before
        assert calling.tool_uses == (_use("a"),)

    def test_should_compact_is_strict(self) -> None:
        """should_compact is token_count > max_tokens."""
        strategy = StripToolCallsStrategy(50)
        assert strategy.should_compact([], 50) is False
        assert strategy.should_compact([], 51) is True

    def test_defaults(self) -> None:
        """max_tokens defaults to 0 and the counter to the default heuristic."""
        strategy = StripToolCallsStrategy()
        assert strategy.max_tokens == 0
        assert strategy.counter == TokenCounter()
        assert strategy.should_compact([], 1) is True

    def test_token_estimate_uses_the_counter(self) -> None:
        """token_estimate is the counter's estimate_messages."""
        strategy = StripToolCallsStrategy(counter=TokenCounter(2.0))
        assert strategy.token_estimate([Message.user("a" * 20)]) == 14

    @pytest.mark.parametrize("bad", [-1, 0.5, "10"])
    def test_bad_max_tokens(self, bad: object) -> None:
        """A max_tokens that is not a non-negative int raises naming the field."""
        with pytest.raises(ConfigurationError, match="max_tokens"):
            StripToolCallsStrategy(bad)  # type: ignore[arg-type]
