"""Conversation structure: tool exchanges, safe cut points, validation and repair.

This is the one place that knows how tool calls pair with their results. Every strategy
cuts where :class:`Structure` says it may, so no strategy can separate a tool use from
its result.

A *tool exchange* is an assistant message with tool uses plus the messages after it up to
the last ``TOOL`` message before the next ``USER`` or ``ASSISTANT`` message (system
messages in between belong to it). A *cut* at index ``i`` splits a conversation into
``messages[:i]`` and ``messages[i:]``; it is *safe* when it does not fall inside an
exchange and ``messages[i]`` is not a tool message.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import attrs

from .._errors import InvalidConversationError
from .content import ToolResult, ToolUse
from .message import Message, Role

__all__ = ["Exchange", "Structure", "cut_keeping_last", "next_safe_cut", "repair", "validate"]

INTERRUPTED = "[no result: the call was interrupted]"


@attrs.frozen
class Exchange:
    """One assistant message with tool uses and the tool messages answering it."""

    start: int
    """Index of the assistant message."""
    stop: int
    """One past the last tool message of the exchange (``start + 1`` when none)."""
    tool_messages: tuple[int, ...]
    """Indices of its tool messages."""


@attrs.frozen
class Structure:
    """A conversation split into tool exchanges, computed once in O(n)."""

    messages: Sequence[Message]
    exchanges: tuple[Exchange, ...]
    # next_safe[i] is the smallest safe cut >= i (len(messages) is always safe).
    next_safe: tuple[int, ...] = attrs.field(repr=False)
    # exchange_of[i] is the index into `exchanges` of the exchange holding message i, or -1.
    exchange_of: tuple[int, ...] = attrs.field(repr=False)

    @classmethod
    def of(cls, messages: Sequence[Message]) -> Structure:
        """Split ``messages`` into exchanges."""
        n = len(messages)
        exchanges: list[Exchange] = []
        exchange_of = [-1] * n
        open_start = -1
        open_tools: list[int] = []

        def close() -> None:
            nonlocal open_start, open_tools
            if open_start >= 0:
                stop = open_tools[-1] + 1 if open_tools else open_start + 1
                index = len(exchanges)
                exchanges.append(Exchange(open_start, stop, tuple(open_tools)))
                for i in range(open_start, stop):
                    exchange_of[i] = index
            open_start, open_tools = -1, []

        for i, message in enumerate(messages):
            role = message.role
            if role is Role.TOOL:
                if open_start >= 0:
                    open_tools.append(i)
            elif role is Role.ASSISTANT:
                close()
                if any(isinstance(block, ToolUse) for block in message.content):
                    open_start = i
            elif role is Role.USER:
                close()
        close()

        safe = [True] * (n + 1)
        for exchange in exchanges:
            for i in range(exchange.start + 1, exchange.stop):
                safe[i] = False
        for i, message in enumerate(messages):
            if message.role is Role.TOOL:
                safe[i] = False
        next_safe = [n] * (n + 1)
        upcoming = n
        for i in range(n, -1, -1):
            if safe[i]:
                upcoming = i
            next_safe[i] = upcoming
        return cls(messages, tuple(exchanges), tuple(next_safe), tuple(exchange_of))

    def safe_cut(self, index: int) -> int:
        """The first safe cut at or after ``index`` (clamped to ``0..len``)."""
        index = max(0, min(index, len(self.messages)))
        return self.next_safe[index]

    def cut_keeping_last(self, n: int, *, skip_summaries: bool = False) -> int:
        """The safe cut that keeps at most the last ``n`` non-system messages after it.

        The cut starts at the ``n``-th newest non-system message and moves forward past
        any exchange it would split, so what follows it is never more than asked. With
        ``skip_summaries``, messages holding a :class:`Compaction` do not count.
        """
        messages = self.messages
        if n <= 0:
            return len(messages)
        counted = 0
        for i in range(len(messages) - 1, -1, -1):
            message = messages[i]
            if message.role is Role.SYSTEM or (skip_summaries and message.is_compaction):
                continue
            counted += 1
            if counted == n:
                return self.safe_cut(i)
        return 0

    def tool_use_for(self, message_index: int, result: ToolResult) -> ToolUse | None:
        """The tool use that ``result`` (in the tool message at ``message_index``) answers."""
        exchange = self.exchange_of[message_index] if message_index < len(self.messages) else -1
        if exchange < 0:
            return None
        assistant = self.messages[self.exchanges[exchange].start]
        for block in assistant.content:
            if isinstance(block, ToolUse) and block.id == result.tool_use_id:
                return block
        return None


# -- the tail alone -----------------------------------------------------------------
# Performance: a window only needs the cut near the end of a long history, and whether a
# cut is safe depends only on the tool exchange around it, so these find the same cut as
# Structure.of(messages) while looking at the tail and that exchange alone (O(window)
# instead of O(len(messages)) per turn). tests/test_counter_cache.py checks that they
# agree with Structure on any conversation, well formed or not.


def _opens_exchange(message: Message) -> bool:
    return message.role is Role.ASSISTANT and any(
        isinstance(block, ToolUse) for block in message.content
    )


def next_safe_cut(messages: Sequence[Message], index: int) -> int:
    """``Structure.of(messages).safe_cut(index)``, from the messages around ``index``."""
    length = len(messages)
    index = max(0, min(index, length))
    # The first user or assistant message at or after `index` is always a safe cut; only
    # system messages before it can be safe earlier (tool messages never are).
    turn = index
    while turn < length and messages[turn].role not in (Role.USER, Role.ASSISTANT):
        turn += 1
    if turn == index:
        return index
    # Inside an exchange iff the nearest user/assistant message before is an assistant
    # with tool uses and a tool message of that exchange still follows.
    opened = False
    for before in range(index - 1, -1, -1):
        role = messages[before].role
        if role is Role.USER or role is Role.ASSISTANT:
            opened = _opens_exchange(messages[before])
            break
    last_tool = -1
    if opened:
        for after in range(turn - 1, index - 1, -1):
            if messages[after].role is Role.TOOL:
                last_tool = after
                break
    for candidate in range(max(index, last_tool + 1), turn):
        if messages[candidate].role is Role.SYSTEM:
            return candidate
    return turn


def cut_keeping_last(messages: Sequence[Message], n: int, *, skip_summaries: bool = False) -> int:
    """``Structure.of(messages).cut_keeping_last(n, ...)``, from the tail alone."""
    if n <= 0:
        return len(messages)
    counted = 0
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message.role is Role.SYSTEM or (skip_summaries and message.is_compaction):
            continue
        counted += 1
        if counted == n:
            return next_safe_cut(messages, i)
    return 0


# -- validation and repair ----------------------------------------------------------


@attrs.frozen
class _Problems:
    orphans: list[tuple[int, int, str]]  # (message index, block index, id)
    duplicates: list[tuple[int, int, str]]
    dangling: list[tuple[int, str]]  # (exchange index, id)
    exchange_starts: list[int] = attrs.field(factory=list)


def _scan(messages: Sequence[Message]) -> tuple[Structure, _Problems]:
    structure = Structure.of(messages)
    problems = _Problems([], [], [])
    last = len(structure.exchanges) - 1
    for e_index, exchange in enumerate(structure.exchanges):
        uses = [b.id for b in messages[exchange.start].content if isinstance(b, ToolUse)]
        wanted = set(uses)
        answered: set[str] = set()
        for m_index in exchange.tool_messages:
            for b_index, block in enumerate(messages[m_index].content):
                if not isinstance(block, ToolResult):
                    continue
                if block.tool_use_id not in wanted:
                    problems.orphans.append((m_index, b_index, block.tool_use_id))
                elif block.tool_use_id in answered:
                    problems.duplicates.append((m_index, b_index, block.tool_use_id))
                else:
                    answered.add(block.tool_use_id)
        # A trailing assistant message whose calls are still running is allowed.
        trailing = e_index == last and all(
            m.role not in (Role.USER, Role.ASSISTANT) for m in messages[exchange.stop :]
        )
        if not trailing:
            seen: set[str] = set()
            for use_id in uses:
                if use_id not in answered and use_id not in seen:
                    problems.dangling.append((e_index, use_id))
                seen.add(use_id)
    for m_index, message in enumerate(messages):
        if message.role is Role.TOOL and structure.exchange_of[m_index] < 0:
            for b_index, block in enumerate(message.content):
                if isinstance(block, ToolResult):
                    problems.orphans.append((m_index, b_index, block.tool_use_id))
    problems.orphans.sort()
    problems.exchange_starts.extend(e.start for e in structure.exchanges)
    return structure, problems


def validate(messages: Sequence[Message]) -> None:
    """Raise :class:`InvalidConversationError` unless ``messages`` is well formed.

    Well formed: every tool result answers a tool use of the nearest preceding assistant
    message with tool uses, no id is answered twice within that exchange, and every tool
    use is answered before the next user or assistant message (a trailing assistant
    message whose calls are still running is allowed). The error names every offending id.
    """
    _, problems = _scan(messages)
    parts: list[str] = []
    ids: list[str] = []
    if problems.orphans:
        found = [f"{i} (message {m})" for m, _, i in problems.orphans]
        parts.append("tool results answering no call of their exchange: " + ", ".join(found))
        ids.extend(i for _, _, i in problems.orphans)
    if problems.duplicates:
        found = [f"{i} (message {m})" for m, _, i in problems.duplicates]
        parts.append("tool calls answered twice: " + ", ".join(found))
        ids.extend(i for _, _, i in problems.duplicates)
    if problems.dangling:
        starts = problems.exchange_starts
        found = [f"{i} (called in message {starts[e]})" for e, i in problems.dangling]
        parts.append("tool calls never answered: " + ", ".join(found))
        ids.extend(i for _, i in problems.dangling)
    if parts:
        msg = "conversation is not well formed: " + "; ".join(parts)
        raise InvalidConversationError(msg, ids=ids)


def repair(messages: Sequence[Message]) -> list[Message]:
    """Return a well-formed copy of ``messages``.

    Drops orphan results and second answers (and tool messages left empty), and closes
    every dangling call with an error result in a tool message right after its exchange.
    Deterministic and idempotent; a well-formed input comes back as an equal list.
    """
    structure, problems = _scan(messages)
    drop: dict[int, set[int]] = {}
    for m_index, b_index, _ in (*problems.orphans, *problems.duplicates):
        drop.setdefault(m_index, set()).add(b_index)
    closing: dict[int, list[str]] = {}
    for e_index, use_id in problems.dangling:
        exchange = structure.exchanges[e_index]
        closing.setdefault(exchange.stop - 1, []).append(use_id)

    repaired: list[Message] = []
    for m_index, message in enumerate(messages):
        if m_index in drop:
            kept = tuple(b for i, b in enumerate(message.content) if i not in drop[m_index])
            if kept:
                repaired.append(attrs.evolve(message, content=kept))
        else:
            repaired.append(message)
        if m_index in closing:
            results = tuple(
                ToolResult(tool_use_id=use_id, content=INTERRUPTED, is_error=True)
                for use_id in closing[m_index]
            )
            repaired.append(Message(role=Role.TOOL, content=results))
    return repaired


def iter_tool_results(messages: Sequence[Message]) -> Iterator[tuple[int, int, ToolResult]]:
    """Every tool result as ``(message index, block index, result)``, oldest first."""
    for m_index, message in enumerate(messages):
        if message.role is Role.TOOL:
            for b_index, block in enumerate(message.content):
                if isinstance(block, ToolResult):
                    yield m_index, b_index, block
