"""Property tests: the invariants of every built-in strategy and their composites.

CONTRACT.md §3, "Invariants of every built-in strategy" 1-6, plus what each strategy
promises on its own. Leaf strategies are driven through their synchronous ``apply``
(fast); composites, and ``compact`` of every strategy, run under anyio.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence

import anyio
import attrs
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from strategies import (
    Case,
    cases,
    clearings,
    counters,
    malformed_conversations,
    mixed_counter_composites,
    strategy_stacks,
    strips,
    tool_exchanges,
    user_first_stacks,
    well_formed_conversations,
    windows,
)

from neuron_context import (
    CompositeStrategy,
    ContextStrategy,
    Message,
    Role,
    SlidingWindowStrategy,
    StripToolCallsStrategy,
    Text,
    TokenCounter,
    ToolResult,
    ToolResultClearingStrategy,
    ToolUse,
    start_on_user,
    validate,
)
from neuron_context.testing import RecordingStrategy

# -- helpers ----------------------------------------------------------------------------


def _compact_json(value: object) -> str:
    """The compact JSON the counting rules price (CONTRACT §2)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@attrs.frozen
class Snapshot:
    """A strategy's input as it was before the call, to prove nothing changed it."""

    messages: Sequence[Message]
    objects: tuple[Message, ...]
    copies: list[Message]

    @classmethod
    def of(cls, messages: Sequence[Message]) -> Snapshot:
        """Remember ``messages``: the sequence, its message objects and deep copies."""
        return cls(messages, tuple(messages), copy.deepcopy(list(messages)))

    def assert_unchanged(self) -> None:
        """The sequence holds the same objects, and each still equals its deep copy."""
        assert len(self.messages) == len(self.objects)
        assert all(a is b for a, b in zip(self.messages, self.objects, strict=True))
        assert list(self.messages) == self.copies


def run(strategy: ContextStrategy, messages: Sequence[Message]) -> list[Message]:
    """Compact ``messages``: ``apply`` where the strategy has it, else ``compact``."""
    apply: Callable[[Sequence[Message]], list[Message]] | None = getattr(strategy, "apply", None)
    if apply is not None:
        return apply(messages)
    return anyio.run(strategy.compact, messages)


def _edited_block(new: object, old: object) -> bool:
    """Whether ``new`` is ``old``, a cleared copy of a result, or a call with no input."""
    if new == old:
        return True
    if isinstance(new, ToolResult) and isinstance(old, ToolResult):
        return (
            new.tool_use_id == old.tool_use_id
            and new.is_error == old.is_error
            and len(new.content) == 1
            and isinstance(new.content[0], Text)
        )
    if isinstance(new, ToolUse) and isinstance(old, ToolUse):
        return (new.id, new.name, new.input) == (old.id, old.name, {})
    return False


def derives(new: Message, old: Message) -> bool:
    """Whether a strategy may have made ``new`` from ``old``.

    ``new`` is ``old`` itself, or ``old`` with tool results cleared, tool inputs emptied
    and tool uses removed (what clearing and stripping do), and nothing else.
    """
    if new is old:
        return True
    if new.role is not old.role:
        return False
    remaining = iter(old.content)
    for block in new.content:
        for candidate in remaining:
            if _edited_block(block, candidate):
                break
            if not isinstance(candidate, ToolUse):
                return False
        else:
            return False
    return all(isinstance(block, ToolUse) for block in remaining)


def origins(
    before: Sequence[Message],
    after: Sequence[Message],
    relation: Callable[[Message, Message], bool] = derives,
) -> list[int]:
    """For each message of ``after``, the index of the input message it comes from.

    Matches greedily left to right, which finds an order-preserving match whenever one
    exists; fails when there is none, so ``after`` kept the relative order of ``before``.
    """
    indices: list[int] = []
    start = 0
    for message in after:
        for index in range(start, len(before)):
            if relation(message, before[index]):
                break
        else:
            msg = f"{message!r} comes from no later input message (order or content changed)"
            raise AssertionError(msg)
        indices.append(index)
        start = index + 1
    return indices


def systems(messages: Sequence[Message]) -> list[Message]:
    """The system messages, in order."""
    return [m for m in messages if m.role is Role.SYSTEM]


def non_systems(messages: Sequence[Message]) -> list[Message]:
    """The other messages, in order."""
    return [m for m in messages if m.role is not Role.SYSTEM]


def check_invariants(
    strategy: ContextStrategy,
    snapshot: Snapshot,
    output: object,
    *,
    well_formed: bool = True,
) -> list[Message]:
    """Assert invariants 1-5 of CONTRACT.md §3 (1 only for a well-formed input)."""
    assert type(output) is list
    assert all(isinstance(m, Message) for m in output)
    snapshot.assert_unchanged()
    before = snapshot.messages
    if well_formed:
        validate(output)
    assert systems(output) == systems(before)
    origins(before, output)
    assert strategy.token_estimate(output) <= strategy.token_estimate(before)
    return output


def caller_of(messages: Sequence[Message], index: int) -> Message | None:
    """The assistant message a tool message at ``index`` answers (nearest preceding turn)."""
    for message in reversed(messages[:index]):
        if message.role is Role.ASSISTANT:
            return message
        if message.role is Role.USER:
            return None
    return None


def clean_cut(messages: Sequence[Message], start: int) -> int:
    """The first cut at or after ``start`` leaving no tool message apart from its call.

    An oracle independent of ``Structure``: a cut is clean when every tool message after
    it has its calling turn (the nearest preceding user or assistant message) after it.
    """
    turn_before: list[int] = []
    last = -1
    for index, message in enumerate(messages):
        turn_before.append(last)
        if message.role in (Role.USER, Role.ASSISTANT):
            last = index
    tools = [i for i, m in enumerate(messages) if m.role is Role.TOOL]
    for cut in range(start, len(messages) + 1):
        if all(turn_before[t] >= cut for t in tools if t >= cut):
            return cut
    msg = "unreachable: the end is always a clean cut"
    raise AssertionError(msg)


def results(messages: Sequence[Message]) -> list[tuple[int, int, ToolResult]]:
    """Every tool result as ``(message index, block index, result)``, oldest first."""
    return [
        (i, j, block)
        for i, message in enumerate(messages)
        if message.role is Role.TOOL
        for j, block in enumerate(message.content)
        if isinstance(block, ToolResult)
    ]


# -- leaf strategies --------------------------------------------------------------------


class TestSlidingWindowStrategy:
    """Properties of SlidingWindowStrategy."""

    @given(cases(windows))
    def test_output_is_input_minus_dropped_messages(
        self, case: Case[SlidingWindowStrategy]
    ) -> None:
        """The output is the system messages before the window's clean cut plus all after it."""
        strategy, messages = case.strategy, case.messages
        snapshot = Snapshot.of(messages)
        output = check_invariants(strategy, snapshot, strategy.apply(messages))
        size = strategy.window_size
        others = [i for i, m in enumerate(messages) if m.role is not Role.SYSTEM]
        if size == 0:
            start = len(messages)
        elif size >= len(others):
            start = 0
        else:
            start = others[-size]
        cut = clean_cut(messages, start)
        kept = [m for m in messages[:cut] if m.role is Role.SYSTEM]
        rest = non_systems(messages[cut:])
        if strategy.start_on_user and rest and rest[0].role is not Role.USER:
            users = [i for i, m in enumerate(messages[:cut]) if m.role is Role.USER]
            if users:  # the request that opened the kept turn is pinned
                kept = [
                    m
                    for i, m in enumerate(messages[:cut])
                    if m.role is Role.SYSTEM or i == users[-1]
                ]
        expected = [*kept, *messages[cut:]]
        assert len(output) == len(expected)
        assert all(a is b for a, b in zip(output, expected, strict=True))
        assert len(non_systems(output)) <= size + strategy.start_on_user
        estimate = case.estimate
        assert strategy.should_compact(messages, estimate) == (estimate > strategy.max_tokens)

    @given(
        counters(),
        well_formed_conversations(running=False),
        tool_exchanges(),
        well_formed_conversations(summaries=False),
    )
    def test_window_beginning_in_tool_results_keeps_only_what_follows(
        self,
        counter: TokenCounter,
        before: list[Message],
        exchange: list[Message],
        after: list[Message],
    ) -> None:
        """A window whose last n messages begin with tool results keeps only what follows."""
        messages = [*before, *exchange, *after]
        first_tool = len(before) + next(i for i, m in enumerate(exchange) if m.is_tool)
        stop = len(before) + max(i for i, m in enumerate(exchange) if m.is_tool) + 1
        size = len(non_systems(messages[first_tool:]))
        output = SlidingWindowStrategy(size, counter=counter).apply(messages)
        assert output == [*systems(messages[:stop]), *messages[stop:]]
        validate(output)

    @given(cases(windows))
    def test_nothing_to_drop_returns_an_equal_list(self, case: Case[SlidingWindowStrategy]) -> None:
        """A window at least as large as the non-system messages returns an equal list."""
        size = len(non_systems(case.messages)) + case.strategy.window_size
        output = attrs.evolve(case.strategy, window_size=size).apply(case.messages)
        assert type(output) is list
        assert output == list(case.messages)


class TestToolResultClearingStrategy:
    """Properties of ToolResultClearingStrategy."""

    @given(cases(clearings))
    def test_clears_exactly_the_old_results_worth_clearing(
        self, case: Case[ToolResultClearingStrategy]
    ) -> None:
        """Exactly the old, non-excluded results costing more than the placeholder are cleared."""
        strategy = attrs.evolve(case.strategy, min_reclaim_tokens=0)
        messages = case.messages
        snapshot = Snapshot.of(messages)
        output = check_invariants(strategy, snapshot, strategy.apply(messages))
        assert [m.role for m in output] == [m.role for m in messages]
        counter = case.counter
        placeholder = (Text(text=strategy.placeholder),)
        placeholder_cost = counter.estimate_text(strategy.placeholder)
        found = results(messages)
        old = found[: max(0, len(found) - strategy.keep_recent_n)]
        cleared: set[tuple[int, int]] = set()
        cleared_calls: set[tuple[int, str]] = set()
        for i, j, result in old:
            caller = caller_of(messages, i)
            assert caller is not None  # well formed
            call = next(u for u in caller.tool_uses if u.id == result.tool_use_id)
            if (
                call.name not in strategy.exclude_tools
                and result.content != placeholder
                and counter.estimate_content(result.content) > placeholder_cost
            ):
                cleared.add((i, j))
                cleared_calls.add((id(caller), call.id))
        for i, j, result in found:
            expected = attrs.evolve(result, content=placeholder) if (i, j) in cleared else result
            assert output[i].content[j] == expected
        empty_cost = counter.estimate_text("{}")
        for message, new in zip(messages, output, strict=True):
            if message.role is Role.TOOL:
                continue
            assert len(new.content) == len(message.content)
            for block, new_block in zip(message.content, new.content, strict=True):
                if (
                    strategy.clear_tool_inputs
                    and isinstance(block, ToolUse)
                    and (id(message), block.id) in cleared_calls
                    and counter.estimate_text(_compact_json(block.input)) > empty_cost
                ):
                    assert new_block == attrs.evolve(block, input={})
                else:
                    assert new_block == block

    @given(cases(clearings), st.data())
    def test_respects_min_reclaim_tokens(
        self, case: Case[ToolResultClearingStrategy], data: st.DataObject
    ) -> None:
        """Either nothing changes or at least min_reclaim_tokens are reclaimed."""
        messages = case.messages
        full = attrs.evolve(case.strategy, min_reclaim_tokens=0).apply(messages)
        reclaimable = case.estimate - case.counter.estimate_messages(full)
        minimum = data.draw(
            st.sampled_from((0, max(0, reclaimable - 1), reclaimable, reclaimable + 1))
            | st.integers(0, 2 * reclaimable + 10),
            label="min_reclaim_tokens",
        )
        strategy = attrs.evolve(case.strategy, min_reclaim_tokens=minimum)
        snapshot = Snapshot.of(messages)
        output = check_invariants(strategy, snapshot, strategy.apply(messages))
        if reclaimable >= minimum:
            assert output == full
        else:
            assert output == list(messages)
        if output != list(messages):
            assert case.estimate - case.counter.estimate_messages(output) >= minimum

    @given(cases(clearings))
    def test_nothing_to_clear_returns_an_equal_list(
        self, case: Case[ToolResultClearingStrategy]
    ) -> None:
        """keep_recent_n at least the number of results returns an equal list."""
        keep = len(results(case.messages)) + case.strategy.keep_recent_n
        output = attrs.evolve(case.strategy, keep_recent_n=keep).apply(case.messages)
        assert type(output) is list
        assert output == list(case.messages)


class TestStripToolCallsStrategy:
    """Properties of StripToolCallsStrategy."""

    @given(cases(strips))
    def test_removes_tool_calls_and_nothing_else(self, case: Case[StripToolCallsStrategy]) -> None:
        """Tool messages, tool uses and assistant messages left empty go; everything else stays."""
        messages = case.messages
        snapshot = Snapshot.of(messages)
        output = check_invariants(case.strategy, snapshot, case.strategy.apply(messages))
        assert not any(m.role is Role.TOOL for m in output)
        assert not any(isinstance(b, ToolUse) for m in output for b in m.content)

        def empty(ms: Sequence[Message]) -> list[Message]:
            return [m for m in ms if m.role is Role.ASSISTANT and not m.content]

        assert len(empty(output)) == len(empty(messages))
        expected = []
        for message in messages:
            if message.role is Role.TOOL:
                continue
            kept = tuple(b for b in message.content if not isinstance(b, ToolUse))
            if len(kept) == len(message.content):
                expected.append(message)
            elif kept:
                expected.append(attrs.evolve(message, content=kept))
        assert output == expected

    @given(cases(strips, well_formed_conversations(tools=False)))
    def test_nothing_to_strip_returns_an_equal_list(
        self, case: Case[StripToolCallsStrategy]
    ) -> None:
        """A conversation without tool calls comes back as an equal list."""
        output = case.strategy.apply(case.messages)
        assert type(output) is list
        assert output == list(case.messages)


# -- composites ---------------------------------------------------------------------------


@attrs.frozen
class Recorded:
    """A composite of recorded children, and the conversation it is given."""

    composite: CompositeStrategy
    recorders: list[RecordingStrategy]
    messages: Sequence[Message]
    counter: TokenCounter


@st.composite
def recorded_composites(draw: st.DrawFn) -> Recorded:
    """A composite of 1-4 recorded random stacks, its budget around the conversation's
    estimate."""
    case = draw(cases(strategy_stacks))
    children = draw(st.lists(strategy_stacks(case.counter), min_size=1, max_size=4))
    recorders = [RecordingStrategy(child) for child in children]
    composite = CompositeStrategy(recorders, case.strategy.max_tokens, counter=case.counter)
    return Recorded(composite, recorders, case.messages, case.counter)


class TestCompositeStrategy:
    """Properties of CompositeStrategy over random nested stacks."""

    @given(recorded_composites())
    def test_stops_as_soon_as_the_history_fits(self, recorded: Recorded) -> None:
        """Children run in order on the previous output, each only while over budget."""
        composite, recorders = recorded.composite, recorded.recorders
        snapshot = Snapshot.of(recorded.messages)
        output = check_invariants(
            composite, snapshot, anyio.run(composite.compact, recorded.messages)
        )
        ran = [r for r in recorders if r.calls]
        assert recorders[: len(ran)] == ran
        assert all(len(r.calls) == 1 for r in ran)
        current = list(recorded.messages)
        for recorder in ran:
            (call,) = recorder.calls
            assert call.messages == current
            assert recorded.counter.estimate_messages(call.messages) > composite.max_tokens
            assert call.result is not None
            current = call.result
        assert output == current
        if len(ran) < len(recorders):
            assert recorded.counter.estimate_messages(output) <= composite.max_tokens

    @given(cases(strategy_stacks), st.integers(0, 1000))
    def test_under_budget_returns_an_equal_list_without_calling_children(
        self, case: Case[ContextStrategy], margin: int
    ) -> None:
        """A history already within budget comes back as an equal list, no child called."""
        recorder = RecordingStrategy(case.strategy)
        budget = case.estimate + margin
        composite = CompositeStrategy([recorder], budget, counter=case.counter)
        output = anyio.run(composite.compact, case.messages)
        assert type(output) is list
        assert output == list(case.messages)
        assert recorder.calls == []

    @given(recorded_composites(), st.data())
    def test_nested_composites_flatten_without_changing_the_result(
        self, recorded: Recorded, data: st.DataObject
    ) -> None:
        """A nested composite with the same budget and counter is flattened, same result."""
        budget, counter = recorded.composite.max_tokens, recorded.counter
        children = [r.inner for r in recorded.recorders if r.inner is not None]
        split = data.draw(st.integers(0, len(children)), label="split")
        inner = CompositeStrategy(children[split:], budget, counter=counter)
        flat = CompositeStrategy([*children[:split], inner], budget, counter=counter)
        nested = CompositeStrategy(
            [*children[:split], RecordingStrategy(inner)], budget, counter=counter
        )
        expected: list[ContextStrategy] = []
        for child in children:
            if (
                isinstance(child, CompositeStrategy)
                and child.max_tokens == budget
                and child.counter == counter
            ):
                expected.extend(child.strategies)
            else:
                expected.append(child)
        assert len(flat.strategies) == len(expected)
        assert all(a is b for a, b in zip(flat.strategies, expected, strict=True))
        messages = recorded.messages
        assert anyio.run(flat.compact, messages) == anyio.run(nested.compact, messages)

    @given(counters(), st.data())
    def test_keeps_a_nested_composite_with_another_budget_or_counter(
        self, counter: TokenCounter, data: st.DataObject
    ) -> None:
        """A nested composite with a different budget or counter is not flattened."""
        budget = data.draw(st.integers(0, 10_000), label="budget")
        other = data.draw(counters().filter(lambda c: c != counter), label="other counter")
        child = data.draw(strategy_stacks(counter), label="child")
        for inner in (
            CompositeStrategy([child], budget + 1, counter=counter),
            CompositeStrategy([child], budget, counter=other),
        ):
            outer = CompositeStrategy([inner], budget, counter=counter)
            assert len(outer.strategies) == 1
            assert outer.strategies[0] is inner


class TestStartOnUser:
    """Every strategy with start_on_user set (and those that keep it by construction)
    keeps a conversation that starts on a user message starting on one."""

    @given(cases(user_first_stacks))
    def test_first_message_stays_a_user_message(self, case: Case[ContextStrategy]) -> None:
        """The first non-system message of the output is a user message when the input's
        was; the output is well formed."""
        messages = case.messages
        output = anyio.run(case.strategy.compact, messages)
        validate(output)
        first = non_systems(messages)[:1]
        after = non_systems(output)[:1]
        if first and first[0].role is Role.USER and after:
            assert after[0].role is Role.USER


_EDITED_EXCHANGE = [
    Message.user("Fix the build."),
    Message.assistant(tool_uses=[ToolUse(id="c1", name="read_file", input={"path": "a.py"})]),
    Message.system("Be brief."),
    Message.tool_result("c1", "x = 1\n" * 100),
]
"""A window that drops the task and keeps the exchange, then a clearing that edits both
its call (``clear_tool_inputs``) and its result: the put-back task has no kept object
to stand before but the system message inside the exchange."""


@given(cases(strategy_stacks))
@example(
    Case(
        strategy=CompositeStrategy(
            [SlidingWindowStrategy(2, 0), ToolResultClearingStrategy(0, 0, clear_tool_inputs=True)],
            0,
        ),
        messages=_EDITED_EXCHANGE,
        counter=TokenCounter(),
    )
)
def test_start_on_user_keeps_the_pairs(case: Case[ContextStrategy]) -> None:
    """``start_on_user`` of any strategy's output (what the compaction step sends) is as
    well formed as the output, wherever the task it puts back lands, however the
    strategy edited the messages around it (reused tool-use ids included)."""
    messages = case.messages
    output = anyio.run(case.strategy.compact, messages)
    result = start_on_user(output, messages)
    validate(result)


class TestMixedCounters:
    """A composite measures with its own counter, whatever its children's counters."""

    @given(cases(mixed_counter_composites))
    def test_never_worse_by_the_composites_counter(self, case: Case[ContextStrategy]) -> None:
        """Invariant 5 holds for a composite whose children price with other counters."""
        strategy, messages = case.strategy, case.messages
        check_invariants(strategy, Snapshot.of(messages), anyio.run(strategy.compact, messages))


# -- compact under both anyio backends ---------------------------------------------------


@pytest.mark.anyio
class TestCompact:
    """The async compact of every strategy, under asyncio and trio."""

    @given(cases(strategy_stacks))
    async def test_compact_keeps_the_invariants(self, case: Case[ContextStrategy]) -> None:
        """compact keeps invariants 1-5 and, for a leaf, does what apply does."""
        strategy, messages = case.strategy, case.messages
        snapshot = Snapshot.of(messages)
        output = check_invariants(strategy, snapshot, await strategy.compact(messages))
        if not isinstance(strategy, CompositeStrategy):
            assert output == run(strategy, messages)


# -- malformed input ---------------------------------------------------------------------


class TestMalformedInput:
    """Strategies given a malformed conversation raise nothing and do their best."""

    @given(cases(strategy_stacks, malformed_conversations()))
    def test_strategies_return_messages_and_keep_invariants_2_to_5(
        self, case: Case[ContextStrategy]
    ) -> None:
        """Strategies return a list of messages and keep invariants 2-5 on malformed input."""
        snapshot = Snapshot.of(case.messages)
        output = run(case.strategy, case.messages)
        check_invariants(case.strategy, snapshot, output, well_formed=False)

    @given(cases(clearings, malformed_conversations(faults=("duplicate",))), st.data())
    def test_clearing_counts_a_call_answered_twice_once(
        self, case: Case[ToolResultClearingStrategy], data: st.DataObject
    ) -> None:
        """Clearing reclaims at least min_reclaim_tokens or nothing, even with second answers."""
        messages = case.messages
        strategy = attrs.evolve(
            case.strategy, keep_recent_n=0, clear_tool_inputs=True, placeholder=""
        )
        full = attrs.evolve(strategy, min_reclaim_tokens=0).apply(messages)
        reclaimable = case.estimate - case.counter.estimate_messages(full)
        minimum = data.draw(
            st.sampled_from((max(0, reclaimable - 1), reclaimable, reclaimable + 1))
            | st.integers(0, 2 * reclaimable + 10),
            label="min_reclaim_tokens",
        )
        output = attrs.evolve(strategy, min_reclaim_tokens=minimum).apply(messages)
        if output != list(messages):
            assert case.estimate - case.counter.estimate_messages(output) >= minimum


class TestUnusualText:
    """Strategies count and keep text that cannot be encoded as UTF-8."""

    @given(cases(strategy_stacks))
    def test_lone_surrogates(self, case: Case[ContextStrategy]) -> None:
        """A lone surrogate (a tool output cut mid-emoji) raises nothing and keeps 1-5."""
        cut = json.loads('"cut emoji \\ud83d"')
        messages = [
            Message.user(cut),
            Message.assistant(tool_uses=[ToolUse(id="s", name="read_file", input={"q": cut})]),
            Message.tool_result("s", cut),
            *case.messages,
        ]
        snapshot = Snapshot.of(messages)
        check_invariants(case.strategy, snapshot, run(case.strategy, messages))
