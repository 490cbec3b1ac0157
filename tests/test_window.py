"""Examples for SlidingWindowStrategy (CONTRACT §3)."""

from __future__ import annotations

import pytest

from neuron_context import (
    ConfigurationError,
    Message,
    Role,
    SlidingWindowStrategy,
    TokenCounter,
    ToolResult,
    ToolUse,
    validate,
)


def call(*ids: str) -> Message:
    """An assistant message calling ``get_time`` once per id."""
    return Message.assistant(tool_uses=[ToolUse(id=i, name="get_time") for i in ids])


def result(*ids: str) -> Message:
    """A TOOL message answering each id."""
    return Message(
        role=Role.TOOL,
        content=tuple(ToolResult(tool_use_id=i, content="ok") for i in ids),
    )


SYS = Message.system("rules")
U1, A1 = Message.user("u1"), Message.assistant("a1")
U2, A2 = Message.user("u2"), Message.assistant("a2")
U3 = Message.user("u3")


class TestSlidingWindowStrategy:
    """SlidingWindowStrategy."""

    @pytest.mark.anyio
    async def test_keeps_system_and_last_n(self) -> None:
        """The system message and the last two others are kept."""
        strategy = SlidingWindowStrategy(2, 0)
        assert await strategy.compact([SYS, U1, A1, U2, A2]) == [SYS, U2, A2]

    @pytest.mark.anyio
    async def test_window_zero_keeps_only_system_messages(self) -> None:
        """A window of zero keeps only the system messages."""
        sys2 = Message.system("more rules")
        strategy = SlidingWindowStrategy(0, 0)
        assert await strategy.compact([SYS, U1, A1, sys2, U2]) == [SYS, sys2]

    @pytest.mark.anyio
    async def test_empty_input(self) -> None:
        """An empty conversation stays empty."""
        assert await SlidingWindowStrategy(3, 0).compact([]) == []

    @pytest.mark.anyio
    async def test_only_system_messages(self) -> None:
        """System messages alone are all kept."""
        assert await SlidingWindowStrategy(0, 0).compact([SYS, SYS]) == [SYS, SYS]

    @pytest.mark.anyio
    async def test_scattered_system_messages_stay_in_place(self) -> None:
        """System messages keep their place; one inside the window is not moved to the front."""
        sys1, sys2, sys3 = Message.system("s1"), Message.system("s2"), Message.system("s3")
        messages = [sys1, U1, A1, sys2, U2, A2, sys3, U3]
        assert await SlidingWindowStrategy(2, 0).compact(messages) == [sys1, sys2, A2, sys3, U3]

    @pytest.mark.anyio
    async def test_fewer_messages_than_the_window(self) -> None:
        """A conversation inside the window comes back equal."""
        messages = [SYS, U1, A1]
        output = await SlidingWindowStrategy(5, 0).compact(messages)
        assert output == messages
        assert output is not messages

    @pytest.mark.anyio
    async def test_exactly_the_window(self) -> None:
        """A conversation with exactly window_size non-system messages comes back equal."""
        assert await SlidingWindowStrategy(2, 0).compact([SYS, U1, A1]) == [SYS, U1, A1]

    @pytest.mark.anyio
    async def test_window_inside_an_exchange_moves_forward(self) -> None:
        """A window beginning with tool results keeps only the messages after the exchange."""
        messages = [U1, call("a"), result("a"), A1, U2]
        output = await SlidingWindowStrategy(3, 0).compact(messages)
        assert output == [A1, U2]
        validate(output)

    @pytest.mark.anyio
    async def test_several_results_in_one_exchange(self) -> None:
        """A window that would split an exchange with several results drops all of it."""
        messages = [U1, call("a", "b"), result("a"), result("b"), A1]
        assert await SlidingWindowStrategy(2, 0).compact(messages) == [A1]
        assert await SlidingWindowStrategy(3, 0).compact(messages) == [A1]
        assert await SlidingWindowStrategy(4, 0).compact(messages) == messages[1:]

    @pytest.mark.anyio
    async def test_system_message_inside_a_dropped_exchange_is_kept(self) -> None:
        """A system message between a call and its result survives the drop."""
        note = Message.system("note")
        messages = [U1, call("a"), note, result("a"), A1]
        output = await SlidingWindowStrategy(1, 0).compact(messages)
        assert output == [note, A1]
        validate(output)

    @pytest.mark.anyio
    async def test_window_starting_at_the_call_keeps_the_exchange(self) -> None:
        """A window starting at the assistant call keeps the call and its results."""
        messages = [U1, call("a"), result("a"), A1]
        assert await SlidingWindowStrategy(3, 0).compact(messages) == [call("a"), result("a"), A1]

    @pytest.mark.anyio
    async def test_trailing_running_call(self) -> None:
        """A trailing assistant call with no result yet is kept as the newest message."""
        messages = [U1, A1, U2, call("a")]
        assert await SlidingWindowStrategy(1, 0).compact(messages) == [call("a")]

    @pytest.mark.anyio
    async def test_input_is_not_mutated(self) -> None:
        """The input list is left as it was."""
        messages = [SYS, U1, A1, U2, A2]
        before = list(messages)
        await SlidingWindowStrategy(1, 0).compact(messages)
        assert messages == before

    @pytest.mark.anyio
    async def test_accepts_a_tuple(self) -> None:
        """Any sequence is accepted and a list is returned."""
        assert await SlidingWindowStrategy(1, 0).compact((SYS, U1, A1)) == [SYS, A1]

    def test_should_compact_is_strict(self) -> None:
        """should_compact is token_count > max_tokens."""
        strategy = SlidingWindowStrategy(2, 100)
        assert strategy.should_compact([], 100) is False
        assert strategy.should_compact([], 101) is True
        assert strategy.should_compact([], 0) is False

    def test_default_max_tokens_is_zero(self) -> None:
        """Without max_tokens the strategy fires on any positive count."""
        strategy = SlidingWindowStrategy(2)
        assert strategy.max_tokens == 0
        assert strategy.should_compact([], 0) is False
        assert strategy.should_compact([], 1) is True

    def test_token_estimate_uses_the_counter(self) -> None:
        """token_estimate is the counter's estimate_messages."""
        messages = [Message.user("a" * 20)]
        assert SlidingWindowStrategy(2, 0).token_estimate(messages) == 9
        assert SlidingWindowStrategy(2, 0, counter=TokenCounter(2.0)).token_estimate(messages) == 14

    def test_default_counter(self) -> None:
        """The default counter is the default heuristic."""
        assert SlidingWindowStrategy(2, 0).counter == TokenCounter()

    @pytest.mark.parametrize("bad", [-1, 2.5, "3", True, None])
    def test_bad_window_size(self, bad: object) -> None:
        """A window size that is not a non-negative int raises naming the field."""
        with pytest.raises(ConfigurationError, match="window_size"):
            SlidingWindowStrategy(bad, 0)  # type: ignore[arg-type]

    @pytest.mark.parametrize("bad", [-1, 1.5, False])
    def test_bad_max_tokens(self, bad: object) -> None:
        """A max_tokens that is not a non-negative int raises naming the field."""
        with pytest.raises(ConfigurationError, match="max_tokens"):
            SlidingWindowStrategy(2, bad)  # type: ignore[arg-type]

    def test_bad_counter(self) -> None:
        """A counter that is not a counter raises naming it."""
        with pytest.raises(ConfigurationError, match="counter"):
            SlidingWindowStrategy(2, 0, counter=4.0)  # type: ignore[arg-type]


class TestStartOnUser:
    """SlidingWindowStrategy(start_on_user=True): the output starts on a user message."""

    def test_pins_the_request_of_a_long_tool_session(self) -> None:
        """One request and many tool turns: the request is kept in front of the window."""
        request = Message.user("Fix the build")
        messages = [Message.system("s"), request]
        for turn in range(10):
            messages += [call(f"c{turn}"), result(f"c{turn}")]
        output = SlidingWindowStrategy(4, start_on_user=True).apply(messages)
        assert output == [messages[0], request, *messages[-4:]]
        validate(output)

    def test_default_is_the_crates_window(self) -> None:
        """By default the window may begin on an assistant message, as in the crate."""
        messages = [Message.user("q"), call("a"), result("a"), Message.assistant("done")]
        assert SlidingWindowStrategy(1).apply(messages) == [messages[-1]]

    def test_nothing_pinned_when_the_window_starts_on_a_user_message(self) -> None:
        """A window that already starts on a user message is the crate's window."""
        messages = [Message.user("q"), Message.assistant("a"), Message.user("r")]
        assert SlidingWindowStrategy(1, start_on_user=True).apply(messages) == messages[-1:]

    def test_pins_the_turn_that_the_window_starts_in(self) -> None:
        """The pinned message is the user message that opened the kept turn."""
        first, second = Message.user("first"), Message.user("second")
        messages = [
            first,
            Message.assistant("a"),
            second,
            call("x"),
            result("x"),
            Message.assistant("b"),
        ]
        output = SlidingWindowStrategy(1, start_on_user=True).apply(messages)
        assert output == [second, messages[-1]]

    def test_bad_value(self) -> None:
        """start_on_user must be a bool."""
        with pytest.raises(ConfigurationError, match="start_on_user"):
            SlidingWindowStrategy(1, start_on_user="yes")  # type: ignore[arg-type]
