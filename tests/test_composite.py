"""Examples for CompositeStrategy and FallbackStrategy (CONTRACT §3)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import well_formed_conversations

from neuron_context import (
    CompactionError,
    CompositeStrategy,
    ConfigurationError,
    ContextStrategy,
    FallbackStrategy,
    Message,
    SlidingWindowStrategy,
    StripToolCallsStrategy,
    SummarizationError,
    TokenCounter,
    ToolResultClearingStrategy,
    ToolUse,
)


class Recorder(ContextStrategy):
    """Drops its ``drop`` oldest messages (or raises ``error``), logging each call."""

    def __init__(
        self,
        name: str,
        log: list[tuple[str, Sequence[Message]]],
        *,
        drop: int = 0,
        error: BaseException | None = None,
        max_tokens: int = 0,
    ) -> None:
        self.name = name
        self.log = log
        self.drop = drop
        self.error = error
        self.max_tokens = max_tokens

    def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
        """Its own trigger."""
        return token_count > self.max_tokens

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Record the call, then fail or drop the oldest messages."""
        self.log.append((self.name, messages))
        if self.error is not None:
            raise self.error
        return list(messages[self.drop :])

    def token_estimate(self, messages: Sequence[Message]) -> int:
        """A recognisable estimate."""
        return 1000 + len(messages)


# Five messages of 14 tokens each: 70 in all.
MESSAGES = [Message.user(f"{i}" * 40) for i in range(5)]


class TestCompositeStrategy:
    """CompositeStrategy."""

    @pytest.mark.anyio
    async def test_runs_in_order(self) -> None:
        """Each strategy runs on the previous one's output, in order."""
        log: list[tuple[str, Sequence[Message]]] = []
        first, second = Recorder("first", log, drop=1), Recorder("second", log, drop=2)
        output = await CompositeStrategy([first, second], 0).compact(MESSAGES)
        assert [name for name, _ in log] == ["first", "second"]
        assert log[0][1] == MESSAGES
        assert log[1][1] == MESSAGES[1:]
        assert output == MESSAGES[3:]

    @pytest.mark.anyio
    async def test_stops_when_within_budget(self) -> None:
        """A strategy is not run once the estimate is <= max_tokens."""
        log: list[tuple[str, Sequence[Message]]] = []
        strategies = [Recorder("first", log, drop=2), Recorder("second", log, drop=2)]
        output = await CompositeStrategy(strategies, 42).compact(MESSAGES)
        assert [name for name, _ in log] == ["first"]
        assert output == MESSAGES[2:]

    @pytest.mark.anyio
    async def test_measures_before_the_first(self) -> None:
        """A history already within budget runs no strategy and comes back equal."""
        log: list[tuple[str, Sequence[Message]]] = []
        composite = CompositeStrategy([Recorder("first", log, drop=2)], 70)
        output = await composite.compact(MESSAGES)
        assert log == []
        assert output == MESSAGES
        assert output is not MESSAGES

    @pytest.mark.anyio
    async def test_over_budget_after_the_last_warns(self, caplog: pytest.LogCaptureFixture) -> None:
        """After the last strategy the result is returned even if over budget, with a warning."""
        log: list[tuple[str, Sequence[Message]]] = []
        strategies = [Recorder("first", log, drop=1), Recorder("second", log, drop=1)]
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            output = await CompositeStrategy(strategies, 10).compact(MESSAGES)
        assert output == MESSAGES[2:]
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1
        assert warnings[0].name == "neuron_context"
        assert "over budget" in warnings[0].getMessage()
        assert "42 > 10" in warnings[0].getMessage()

    @pytest.mark.anyio
    async def test_no_warning_within_budget(self, caplog: pytest.LogCaptureFixture) -> None:
        """A composite that meets its budget logs no warning."""
        log: list[tuple[str, Sequence[Message]]] = []
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            await CompositeStrategy([Recorder("first", log, drop=4)], 14).compact(MESSAGES)
        assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []

    @pytest.mark.anyio
    async def test_children_triggers_are_not_consulted(self) -> None:
        """A child runs even when its own should_compact and max_tokens say no."""
        lazy = SlidingWindowStrategy(1, 10**9)
        output = await CompositeStrategy([lazy], 0).compact(MESSAGES)
        assert output == MESSAGES[-1:]

    @pytest.mark.anyio
    async def test_measures_with_its_own_counter(self) -> None:
        """The budget is checked with the composite's counter."""
        log: list[tuple[str, Sequence[Message]]] = []
        # At 1000 bytes per token each message costs 4 + 1: 25 in all.
        cheap = TokenCounter(1000.0)
        composite = CompositeStrategy([Recorder("first", log, drop=1)], 25, counter=cheap)
        assert await composite.compact(MESSAGES) == MESSAGES
        assert log == []

    @pytest.mark.anyio
    async def test_empty_strategies(self, caplog: pytest.LogCaptureFixture) -> None:
        """With no strategies the history comes back equal (with a warning if over budget)."""
        within = await CompositeStrategy([], 100).compact(MESSAGES)
        assert within == MESSAGES
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            over = await CompositeStrategy([], 10).compact(MESSAGES)
        assert over == MESSAGES
        assert [r.levelno for r in caplog.records] == [logging.WARNING]

    @pytest.mark.anyio
    async def test_real_strategies(self) -> None:
        """Clearing then a window: the window runs only if clearing was not enough."""
        calling = Message.assistant(tool_uses=[ToolUse(id="a", name="read_file")])
        messages = [Message.user("go"), calling, Message.tool_result("a", "x" * 400)]
        messages.append(Message.assistant("done"))
        clearing = ToolResultClearingStrategy(0)
        window = SlidingWindowStrategy(1)
        # Clearing brings 5 + 8 + 104 + 5 = 122 tokens down to 5 + 8 + 10 + 5 = 28.
        assert await CompositeStrategy([clearing, window], 28).compact(messages) == [
            messages[0],
            calling,
            Message.tool_result("a", "[tool result cleared]"),
            messages[3],
        ]
        assert await CompositeStrategy([clearing, window], 27).compact(messages) == [messages[3]]

    @pytest.mark.anyio
    async def test_input_is_not_mutated(self) -> None:
        """The input list is left as it was."""
        messages = list(MESSAGES)
        await CompositeStrategy([SlidingWindowStrategy(1)], 0).compact(messages)
        assert messages == MESSAGES

    def test_flattens_nested_composites_with_the_same_budget_and_counter(self) -> None:
        """A nested composite with equal max_tokens and counter is flattened."""
        log: list[tuple[str, Sequence[Message]]] = []
        a, b, c = Recorder("a", log), Recorder("b", log), Recorder("c", log)
        inner = CompositeStrategy([a, b], 100, counter=TokenCounter(3.0))
        outer = CompositeStrategy([inner, c], 100, counter=TokenCounter(3.0))
        assert outer.strategies == (a, b, c)

    def test_flattens_recursively(self) -> None:
        """Flattening reaches composites nested several levels deep."""
        log: list[tuple[str, Sequence[Message]]] = []
        a, b = Recorder("a", log), Recorder("b", log)
        deep = CompositeStrategy([CompositeStrategy([CompositeStrategy([a], 5), b], 5)], 5)
        assert deep.strategies == (a, b)

    def test_keeps_nested_composites_with_another_budget(self) -> None:
        """A nested composite with another max_tokens is kept whole."""
        log: list[tuple[str, Sequence[Message]]] = []
        inner = CompositeStrategy([Recorder("a", log)], 50)
        assert CompositeStrategy([inner], 100).strategies == (inner,)

    def test_keeps_nested_composites_with_another_counter(self) -> None:
        """A nested composite with another counter is kept whole."""
        log: list[tuple[str, Sequence[Message]]] = []
        inner = CompositeStrategy([Recorder("a", log)], 100, counter=TokenCounter(2.0))
        assert CompositeStrategy([inner], 100).strategies == (inner,)

    @pytest.mark.anyio
    async def test_unflattened_inner_composite_keeps_its_budget(self) -> None:
        """A nested composite with a lower budget keeps compacting to its own budget."""
        log: list[tuple[str, Sequence[Message]]] = []
        inner = CompositeStrategy(
            [Recorder("a", log, drop=1), Recorder("b", log, drop=1), Recorder("c", log, drop=1)],
            28,
        )
        output = await CompositeStrategy([inner], 60).compact(MESSAGES)
        assert output == MESSAGES[3:]
        assert [name for name, _ in log] == ["a", "b", "c"]

    def test_should_compact_is_strict(self) -> None:
        """should_compact is token_count > max_tokens."""
        composite = CompositeStrategy([StripToolCallsStrategy()], 100)
        assert composite.should_compact([], 100) is False
        assert composite.should_compact([], 101) is True

    def test_token_estimate_uses_the_counter(self) -> None:
        """token_estimate is the composite counter's estimate_messages."""
        composite = CompositeStrategy([], 0, counter=TokenCounter(2.0))
        assert composite.token_estimate([Message.user("a" * 20)]) == 14

    def test_accepts_any_iterable(self) -> None:
        """The strategies may be given as any iterable and are stored as a tuple."""
        strip = StripToolCallsStrategy()
        assert CompositeStrategy(iter([strip]), 0).strategies == (strip,)

    @pytest.mark.parametrize(
        "bad", [[StripToolCallsStrategy(), "window"], [None], StripToolCallsStrategy()]
    )
    def test_bad_strategies(self, bad: object) -> None:
        """Anything but a sequence of strategies raises naming the field."""
        with pytest.raises(ConfigurationError, match=r"CompositeStrategy\.strategies"):
            CompositeStrategy(bad, 0)  # type: ignore[arg-type]

    @pytest.mark.parametrize("bad", [-1, 2.5])
    def test_bad_max_tokens(self, bad: object) -> None:
        """A max_tokens that is not a non-negative int raises naming the field."""
        with pytest.raises(ConfigurationError, match="max_tokens"):
            CompositeStrategy([], bad)  # type: ignore[arg-type]


class TestFallbackStrategy:
    """FallbackStrategy."""

    @pytest.mark.anyio
    async def test_primary_success(self) -> None:
        """When the primary succeeds its result is returned and no fallback runs."""
        log: list[tuple[str, Sequence[Message]]] = []
        fallback = FallbackStrategy(Recorder("p", log, drop=1), Recorder("f", log, drop=2))
        assert await fallback.compact(MESSAGES) == MESSAGES[1:]
        assert [name for name, _ in log] == ["p"]

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        "error", [CompactionError("boom"), SummarizationError("bad summary"), ConfigurationError()]
    )
    async def test_fallback_on_the_original_messages(self, error: Exception) -> None:
        """When the primary raises a NeuronContextError the fallback runs on the input."""
        log: list[tuple[str, Sequence[Message]]] = []
        fallback = FallbackStrategy(Recorder("p", log, error=error), Recorder("f", log, drop=2))
        assert await fallback.compact(MESSAGES) == MESSAGES[2:]
        assert [name for name, _ in log] == ["p", "f"]
        assert log[1][1] is MESSAGES

    @pytest.mark.anyio
    async def test_each_fallback_gets_the_original(self) -> None:
        """Every fallback in the chain receives the original messages."""
        log: list[tuple[str, Sequence[Message]]] = []
        fallback = FallbackStrategy(
            Recorder("p", log, error=CompactionError("1")),
            Recorder("f1", log, error=CompactionError("2")),
            Recorder("f2", log, drop=4),
        )
        assert await fallback.compact(MESSAGES) == MESSAGES[4:]
        assert [name for name, _ in log] == ["p", "f1", "f2"]
        assert all(messages is MESSAGES for _, messages in log)

    @pytest.mark.anyio
    async def test_all_failing_reraises_the_last(self) -> None:
        """When every strategy fails the last error is re-raised."""
        log: list[tuple[str, Sequence[Message]]] = []
        last = CompactionError("last")
        fallback = FallbackStrategy(
            Recorder("p", log, error=SummarizationError("first")), Recorder("f", log, error=last)
        )
        with pytest.raises(CompactionError, match="last") as info:
            await fallback.compact(MESSAGES)
        assert info.value is last

    @pytest.mark.anyio
    async def test_primary_alone_reraises(self) -> None:
        """Without fallbacks the primary's error propagates."""
        log: list[tuple[str, Sequence[Message]]] = []
        error = CompactionError("only")
        with pytest.raises(CompactionError) as info:
            await FallbackStrategy(Recorder("p", log, error=error)).compact(MESSAGES)
        assert info.value is error

    @pytest.mark.anyio
    async def test_other_errors_propagate_immediately(self) -> None:
        """An error that is not a NeuronContextError skips the fallbacks."""
        log: list[tuple[str, Sequence[Message]]] = []
        fallback = FallbackStrategy(
            Recorder("p", log, error=RuntimeError("bug")), Recorder("f", log, drop=1)
        )
        with pytest.raises(RuntimeError, match="bug"):
            await fallback.compact(MESSAGES)
        assert [name for name, _ in log] == ["p"]

    @pytest.mark.anyio
    async def test_logs_a_warning_on_fallback(self, caplog: pytest.LogCaptureFixture) -> None:
        """Falling back is logged as a warning naming the failed strategy."""
        log: list[tuple[str, Sequence[Message]]] = []
        fallback = FallbackStrategy(
            Recorder("p", log, error=CompactionError("boom")), Recorder("f", log)
        )
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            await fallback.compact(MESSAGES)
        assert len(caplog.records) == 1
        assert "Recorder failed (boom)" in caplog.records[0].getMessage()

    def test_delegates_should_compact_to_the_primary(self) -> None:
        """should_compact is the primary's."""
        log: list[tuple[str, Sequence[Message]]] = []
        fallback = FallbackStrategy(
            Recorder("p", log, max_tokens=10), Recorder("f", log, max_tokens=1000)
        )
        assert fallback.should_compact([], 10) is False
        assert fallback.should_compact([], 11) is True

    def test_delegates_token_estimate_to_the_primary(self) -> None:
        """token_estimate is the primary's."""
        log: list[tuple[str, Sequence[Message]]] = []
        fallback = FallbackStrategy(Recorder("p", log), SlidingWindowStrategy(1))
        assert fallback.token_estimate(MESSAGES) == 1005

    def test_equality(self) -> None:
        """Fallbacks of equal strategies are equal."""
        assert FallbackStrategy(SlidingWindowStrategy(1), StripToolCallsStrategy()) == (
            FallbackStrategy(SlidingWindowStrategy(1), StripToolCallsStrategy())
        )
        assert FallbackStrategy(SlidingWindowStrategy(1)) != FallbackStrategy(
            SlidingWindowStrategy(2)
        )

    @pytest.mark.parametrize(
        ("arguments", "field"),
        [(("window",), "primary"), ((SlidingWindowStrategy(1), None), r"fallbacks\[0\]")],
    )
    def test_bad_strategies(self, arguments: tuple[object, ...], field: str) -> None:
        """Anything but a strategy raises naming the argument."""
        with pytest.raises(ConfigurationError, match=rf"FallbackStrategy\.{field}"):
            FallbackStrategy(*arguments)  # type: ignore[arg-type]


class TestSynchronousApply:
    """apply: the same work as compact, without an event loop."""

    def test_composite_of_pure_strategies(self) -> None:
        """A composite of pure strategies applies synchronously, as compact would."""
        strategy = CompositeStrategy(
            [
                ToolResultClearingStrategy(0),
                CompositeStrategy([StripToolCallsStrategy(), SlidingWindowStrategy(2)], 5),
            ],
            30,
        )
        assert strategy.synchronous
        assert strategy.apply(MESSAGES) == MESSAGES[-2:]

    def test_async_only_child_is_a_clear_error(self) -> None:
        """A composite holding an async-only strategy says so and names it."""
        strategy = CompositeStrategy([SlidingWindowStrategy(2), Recorder("r", [])], 0)
        assert not strategy.synchronous
        with pytest.raises(ConfigurationError, match=r"strategies\[1\] \(Recorder\)"):
            strategy.apply(MESSAGES)

    def test_fallback_of_pure_strategies(self) -> None:
        """A fallback of pure strategies applies synchronously."""
        strategy = FallbackStrategy(SlidingWindowStrategy(1), StripToolCallsStrategy())
        assert strategy.synchronous
        assert strategy.apply(MESSAGES) == MESSAGES[-1:]
        with pytest.raises(ConfigurationError, match=r"fallbacks\[0\]"):
            FallbackStrategy(SlidingWindowStrategy(1), Recorder("r", [])).apply(MESSAGES)


class TestMixedCounters:
    """A composite measures with its own counter, whatever its children's."""

    @pytest.mark.anyio
    async def test_a_child_that_makes_it_worse_is_undone(self) -> None:
        """A child's bigger result (by the composite's counter) is not kept."""

        class Grow(ContextStrategy):
            """Adds a long message."""

            def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
                """Always."""
                return True

            async def compact(self, messages: Sequence[Message]) -> list[Message]:
                """The messages and one more."""
                return [*messages, Message.user("x" * 400)]

            def token_estimate(self, messages: Sequence[Message]) -> int:
                """Nothing."""
                return 0

        strategy = CompositeStrategy([Grow(), SlidingWindowStrategy(1)], 1)
        assert await strategy.compact(MESSAGES) == MESSAGES[-1:]


class PlainWindow(SlidingWindowStrategy):
    """The window under another class: the composite runs it as its own step (no fusion)."""


class TestFusedClearingAndWindow:
    """A leading clearing and window run as one step give the composite's plain result."""

    @given(well_formed_conversations(min_turns=1, max_turns=10), st.data())
    def test_equal_to_the_steps_run_in_turn(
        self, messages: list[Message], data: st.DataObject
    ) -> None:
        """Over growing prefixes: output and token_estimate equal the unfused composite's."""
        keep = data.draw(st.integers(0, 4))
        size = data.draw(st.integers(0, 12))
        start_on_user = data.draw(st.booleans())
        budget = data.draw(st.integers(0, 4 * len(messages)))
        counter = TokenCounter()

        def composite(window: type[SlidingWindowStrategy]) -> CompositeStrategy:
            return CompositeStrategy(
                [
                    ToolResultClearingStrategy(keep, counter=counter),
                    window(size, start_on_user=start_on_user),
                ],
                budget,
                counter=counter,
            )

        fused = composite(SlidingWindowStrategy)
        cuts = sorted(data.draw(st.lists(st.integers(0, len(messages)), max_size=3)))
        for cut in [*cuts, len(messages), len(messages)]:
            prefix = messages[:cut]
            assert fused.token_estimate(prefix) == counter.estimate_messages(prefix)
            assert fused.apply(prefix) == composite(PlainWindow).apply(prefix)

    @pytest.mark.anyio
    async def test_the_benchmark_shape(self) -> None:
        """A long history over budget: clearing 2 and a window of 6, fused, as in turn."""
        messages = [Message.user("go")]
        for turn in range(60):
            use = ToolUse(id=f"c{turn}", name="read", input={"turn": turn})
            messages += [
                Message.assistant(tool_uses=[use]),
                Message.tool_result(f"c{turn}", "r" * 200),
            ]
            fused = CompositeStrategy(
                [ToolResultClearingStrategy(2), SlidingWindowStrategy(6)], 100
            )
            plain = CompositeStrategy([ToolResultClearingStrategy(2), PlainWindow(6)], 100)
            assert await fused.compact(messages) == await plain.compact(messages)

    def test_estimate_of_an_iterator_is_not_remembered(self) -> None:
        """token_estimate of a one-shot iterator, then of a list: each is its own count."""
        messages = [Message.user("a" * 40), Message.assistant("b" * 40)]
        strategy = CompositeStrategy([ToolResultClearingStrategy(1), SlidingWindowStrategy(3)], 10)
        counter = TokenCounter()
        assert strategy.token_estimate(iter(messages)) == counter.estimate_messages(messages)  # type: ignore[arg-type]
        assert strategy.token_estimate(messages[:1]) == counter.estimate_messages(messages[:1])
