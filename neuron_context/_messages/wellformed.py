"""Well-formed conversations: :func:`validate` names what is wrong, :func:`repair` fixes it.

Both read the conversation through :class:`~neuron_context.strategies.Structure` (the one place
that knows how tool calls pair with their results), so "well formed" means exactly what
the strategies' safe cuts assume.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from .._errors import InvalidConversationError, show
from .._log import logger
from .checks import check_messages
from .content import ContentBlock, ToolResult, ToolUse
from .conversation import Structure, first_is_user
from .message import Message, Role

__all__ = [
    "INTERRUPTED",
    "close_pending",
    "pending_start",
    "repair",
    "start_on_user",
    "unique_tool_ids",
    "valid_from",
    "validate",
    "validate_appended",
]

INTERRUPTED = "[no result: the call was interrupted]"
"""The content :func:`repair` gives a call that was never answered."""


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
        if message.role is Role.TOOL and structure.exchange_at(m_index) is None:
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

    Raises:
        InvalidConversationError: ``messages`` is not well formed.
        ConfigurationError: ``messages`` is not a sequence of :class:`Message` objects.
    """
    _, problems = _scan(check_messages(messages, "validate: messages"))
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


def validate_appended(history: Sequence[Message], new: Sequence[Message]) -> None:
    """:func:`validate` of ``history + new``, knowing that ``history`` is well formed.

    A new message can only answer, or leave unanswered, the exchange that ``history``
    ends in, so only that part is read: ``history`` from its last user or assistant
    message on, then ``new`` (O(new), not O(history)). When that part is wrong, the
    whole conversation is validated, so the error names the same indices as
    :func:`validate` would.

    Raises:
        InvalidConversationError: ``history + new`` is not well formed.
        ConfigurationError: ``new`` is not a sequence of :class:`Message` objects.
    """
    start = 0
    for index in range(len(history) - 1, -1, -1):
        if history[index].role in (Role.USER, Role.ASSISTANT):
            start = index
            break
    try:
        validate([*history[start:], *check_messages(new, "validate: messages")])
    except InvalidConversationError:
        validate([*history, *new])


def valid_from(messages: Sequence[Message], start: int) -> bool:
    """Whether ``messages`` is well formed, knowing that ``messages[:start]`` is.

    Reads ``messages`` from the last user or assistant message before ``start`` on (as
    :func:`validate_appended` does): a call that extends a checked conversation costs
    what it added, not the whole conversation.
    """
    begin = 0
    for index in range(min(start, len(messages)) - 1, -1, -1):
        if messages[index].role in (Role.USER, Role.ASSISTANT):
            begin = index
            break
    _, problems = _scan(messages[begin:])
    return not (problems.orphans or problems.duplicates or problems.dangling)


def repair(messages: Sequence[Message]) -> list[Message]:
    """Return a well-formed copy of ``messages``.

    Drops orphan results and second answers (and tool messages left empty), and closes
    every dangling call with an error result in a tool message right after its exchange.
    Deterministic and idempotent; a well-formed input comes back as an equal list.
    """
    structure, problems = _scan(check_messages(messages, "repair: messages"))
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


# -- a request a provider accepts --------------------------------------------------------


def _first_turn(messages: Sequence[Message]) -> int:
    for index, message in enumerate(messages):
        if message.role is not Role.SYSTEM:
            return index
    return len(messages)


def start_on_user(messages: Sequence[Message], original: Sequence[Message]) -> list[Message]:
    """``messages`` (a compaction or an edit of ``original``) starting on a user message.

    Applies only when ``original`` starts on one. Leading non-user messages before the
    first user message of ``messages`` are dropped (a user message always starts a
    turn, so no tool exchange is split); when ``messages`` holds no user message at
    all (or nothing but system messages), the newest user message of ``original`` that
    it dropped (typically the task) is put back where it stood: before the first message
    not known to have come before it (a message the strategy made or edited is not the
    object it was, and counts as later), or before the tool exchange that place would
    split, so the result is as well formed as ``messages``.

    The agent loop and the framework adapters apply it to whatever a strategy returns,
    so a request always starts as Anthropic requires; call it in a loop of your own.

    Examples:
        >>> from neuron_context import Message, start_on_user
        >>> history = [Message.user("Fix the build."), Message.assistant("Done.")]
        >>> [m.role.value for m in start_on_user(history[1:], history)]
        ['user', 'assistant']
    """
    result = list(messages)
    first = _first_turn(result)
    if first < len(result) and result[first].role is Role.USER:
        return result
    if not first_is_user(original):
        return result
    for index in range(first + 1, len(result)):
        if result[index].role is Role.USER:
            kept = [m for m in result[first:index] if m.role is Role.SYSTEM]
            return [*result[:first], *kept, *result[index:]]
    present = {id(message) for message in result}
    for at in range(len(original) - 1, -1, -1):
        message = original[at]
        if message.role is Role.USER and id(message) not in present:
            # Where it stood: before the first message not known to have come before it.
            position = {id(kept): index for index, kept in enumerate(original)}
            unknown = len(original)
            later = (k for k, kept in enumerate(result) if position.get(id(kept), unknown) > at)
            insert = _exchange_start(result, next(later, len(result)))
            return [*result[:insert], message, *result[insert:]]
    return result


def _exchange_start(messages: Sequence[Message], index: int) -> int:
    """``index``, or the index of the assistant message whose tool exchange a message put
    at ``index`` would split (a tool message follows it, system messages aside)."""
    after = next((m for m in messages[index:] if m.role is not Role.SYSTEM), None)
    if after is None or not after.is_tool:
        return index
    for back in range(index - 1, -1, -1):
        role = messages[back].role
        if role is Role.ASSISTANT:
            return back
        if role is not Role.TOOL and role is not Role.SYSTEM:
            break
    return index


# -- calls awaiting their results --------------------------------------------------------


def pending_start(messages: Sequence[Message]) -> int | None:
    """The index of the assistant message whose calls await their results, or ``None``.

    A call is *pending* when it belongs to the conversation's last exchange, nothing but
    tool and system messages follows that exchange, and no result answers it yet: the
    only place a well-formed conversation can hold an unanswered call (a call the
    conversation moved on from is an orphan, which :func:`repair` closes). Reads the
    last exchange only.
    """
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role is Role.USER:
            return None
        if message.role is Role.ASSISTANT:
            uses = message.tool_uses
            answered = {
                result.tool_use_id
                for later in messages[index + 1 :]
                if later.role is Role.TOOL
                for result in later.tool_results
            }
            return index if any(use.id not in answered for use in uses) else None
    return None


def close_pending(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with its pending calls (see :func:`pending_start`) closed as
    :func:`repair` closes a dangling call: one tool message of interrupted error
    results, appended. A conversation with none comes back as an equal list."""
    start = pending_start(messages)
    out = list(messages)
    if start is None:
        return out
    answered = {
        result.tool_use_id
        for later in messages[start + 1 :]
        if later.role is Role.TOOL
        for result in later.tool_results
    }
    closing: list[ToolResult] = []
    for use in messages[start].tool_uses:
        if use.id not in answered:
            answered.add(use.id)
            closing.append(ToolResult(tool_use_id=use.id, content=INTERRUPTED, is_error=True))
    out.append(Message(role=Role.TOOL, content=tuple(closing)))
    return out


def unique_tool_ids(message: Message, owner: str) -> Message:
    """``message`` with every tool-use id distinct: a repeated id gets a suffix
    (``call_1`` again becomes ``call_1_2``), logged as a warning naming ``owner``.

    Two calls with one id cannot both be answered (their results would answer one call
    twice), so an assistant reply is given distinct ids before it is recorded; the ids
    stay valid for every provider (letters, digits, ``_`` and ``-`` are kept as they
    are). A message whose ids are distinct is returned as it is (O(its calls)).
    """
    uses = message.tool_uses
    ids = [use.id for use in uses]
    if len(set(ids)) == len(ids):
        return message
    taken = set(ids)
    seen: set[str] = set()
    content: list[ContentBlock] = []
    renamed: list[str] = []
    for block in message.content:
        if isinstance(block, ToolUse) and block.id in seen:
            number = 2
            while f"{block.id}_{number}" in taken:
                number += 1
            fresh = f"{block.id}_{number}"
            taken.add(fresh)
            renamed.append(f"{show(block.id, 40)} -> {show(fresh, 40)}")
            content.append(attrs.evolve(block, id=fresh))
            continue
        if isinstance(block, ToolUse):
            seen.add(block.id)
        content.append(block)
    logger.warning(
        "%s: a reply called several tools with the same id; renamed %s",
        owner,
        ", ".join(renamed),
    )
    return attrs.evolve(message, content=tuple(content))
