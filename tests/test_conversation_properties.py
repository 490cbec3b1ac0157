"""Property tests of the conversation structure: validate, repair and safe cuts."""

from __future__ import annotations

import copy
from collections.abc import Sequence

import pytest
from hypothesis import given
from strategies import (
    Broken,
    broken_conversations,
    conversations,
    well_formed_conversations,
)

from neuron_context import (
    InvalidConversationError,
    Message,
    Role,
    ToolResult,
    repair,
    validate,
)
from neuron_context.strategies import Structure

INTERRUPTED = "[no result: the call was interrupted]"


def is_closing(result: ToolResult) -> bool:
    """Whether ``result`` is the error result repair closes a dangling call with."""
    return result == ToolResult(tool_use_id=result.tool_use_id, content=INTERRUPTED, is_error=True)


def turn_before(messages: Sequence[Message]) -> list[int]:
    """For each index, the index of the nearest preceding user or assistant message."""
    found: list[int] = []
    last = -1
    for index, message in enumerate(messages):
        found.append(last)
        if message.role in (Role.USER, Role.ASSISTANT):
            last = index
    return found


def next_turn(messages: Sequence[Message], start: int) -> int:
    """The index of the first user or assistant message at or after ``start``, or the end."""
    return next(
        (i for i in range(start, len(messages)) if messages[i].role in (Role.USER, Role.ASSISTANT)),
        len(messages),
    )


class TestValidate:
    """Properties of validate."""

    @given(well_formed_conversations())
    def test_accepts_well_formed_conversations(self, messages: list[Message]) -> None:
        """Every generated well-formed conversation validates."""
        validate(messages)
        validate(tuple(messages))

    @given(broken_conversations())
    def test_names_every_offending_id(self, broken: Broken) -> None:
        """validate raises InvalidConversationError naming every broken id."""
        with pytest.raises(InvalidConversationError) as raised:
            validate(broken.messages)
        assert isinstance(raised.value, ValueError)
        assert set(broken.ids) <= set(raised.value.ids)
        assert all(use_id in str(raised.value) for use_id in broken.ids)


class TestRepair:
    """Properties of repair."""

    @given(well_formed_conversations())
    def test_returns_an_equal_list_for_well_formed_input(self, messages: list[Message]) -> None:
        """A well-formed conversation comes back as an equal list of the same messages."""
        repaired = repair(tuple(messages))
        assert type(repaired) is list
        assert repaired == messages
        assert all(a is b for a, b in zip(repaired, messages, strict=True))

    @given(conversations())
    def test_is_well_formed_deterministic_idempotent_and_keeps_other_messages(
        self, messages: list[Message]
    ) -> None:
        """The output validates, is deterministic, idempotent and keeps non-tool messages."""
        snapshot = copy.deepcopy(messages)
        repaired = repair(messages)
        assert messages == snapshot
        validate(repaired)
        assert repair(snapshot) == repaired
        assert repair(repaired) == repaired
        kept = [m for m in repaired if m.role is not Role.TOOL]
        others = [m for m in messages if m.role is not Role.TOOL]
        assert len(kept) == len(others)
        assert all(a is b for a, b in zip(kept, others, strict=True))

    @given(broken_conversations())
    def test_closes_dangling_calls_right_after_their_exchange(self, broken: Broken) -> None:
        """Dangling calls get interrupted error results right after their exchange, nothing else."""
        messages = broken.messages
        repaired = repair(messages)
        before = Structure.of(messages)
        after = Structure.of(repaired)
        position = {id(m): i for i, m in enumerate(messages)}
        closed: set[tuple[int, str]] = set()
        for index, message in enumerate(repaired):
            if id(message) in position or message.role is not Role.TOOL:
                continue
            if not all(is_closing(r) for r in message.tool_results):
                continue  # an input tool message without its orphans and second answers
            exchange = after.exchange_at(index)
            assert exchange is not None
            assert exchange.tool_messages[-1] == index
            assistant = repaired[exchange.start]
            old = before.exchange_at(position[id(assistant)])
            assert old is not None
            answered = {r.tool_use_id for i in old.tool_messages for r in messages[i].tool_results}
            calls = {u.id for u in assistant.tool_uses}
            for result in message.tool_results:
                assert result.tool_use_id in calls - answered
                closed.add((id(assistant), result.tool_use_id))
            following = repaired[index + 1 : next_turn(repaired, index + 1)]
            expected = messages[old.stop : next_turn(messages, old.stop)]
            assert len(following) == len(expected)
            assert all(a is b for a, b in zip(following, expected, strict=True))
        for assistant, use_id in broken.dangling:
            assert (id(assistant), use_id) in closed


class TestStructure:
    """Properties of Structure and its safe cuts."""

    @given(conversations())
    def test_safe_cuts_are_first_never_inside_an_exchange_and_monotonic(
        self, messages: list[Message]
    ) -> None:
        """safe_cut(i) is the first index >= i outside exchanges and tool messages."""
        structure = Structure.of(messages)
        n = len(messages)

        def safe(cut: int) -> bool:
            inside = any(e.start < cut < e.stop for e in structure.exchanges)
            return cut == n or (not inside and messages[cut].role is not Role.TOOL)

        cuts = [structure.safe_cut(i) for i in range(-2, n + 3)]
        assert cuts == sorted(cuts)
        for i, cut in zip(range(-2, n + 3), cuts, strict=True):
            start = max(0, min(i, n))
            assert start <= cut <= n
            assert safe(cut)
            assert not any(safe(j) for j in range(start, cut))

    @given(well_formed_conversations())
    def test_safe_cuts_split_well_formed_conversations_into_well_formed_parts(
        self, messages: list[Message]
    ) -> None:
        """A safe cut splits a well-formed conversation into two well-formed parts."""
        structure = Structure.of(messages)
        turns = turn_before(messages)
        for cut in sorted({structure.safe_cut(i) for i in range(len(messages) + 1)}):
            validate(messages[:cut])
            validate(messages[cut:])
            assert all(turns[t] >= cut for t in range(cut, len(messages)) if messages[t].is_tool)
