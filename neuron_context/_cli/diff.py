"""What a compaction did, message by message, counted against its input.

A stack runs several strategies in turn, and each sees the previous one's output: a
report that counts after the last step would say "0 results cleared" when a summary
later replaced the cleared messages. So the report is computed from the input and the
final output alone, by matching every output message to the input message it came from.

The built-in strategies never reorder and never move a message, they only drop
messages, change one in place (clear a result, strip calls, truncate a text) or put one
summary where the messages it replaced were. So the match walks both lists backwards:
an output message matches the nearest earlier input message of its role (a tool
message: with the same result ids); an input message passed over was dropped, and it
counts as *summarized* when a new summary sits at that place, else as *removed*. A
matched message that changed is *cleared* (a tool result), *stripped* (an assistant
message that lost its calls) or *truncated* (any other text that got shorter).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from .._counting.base import BaseCounter
from .._messages.message import Message, Role

__all__ = ["Change", "Diff", "diff"]

KINDS = ("removed", "summarized", "cleared", "stripped", "truncated")
"""What can happen to an input message, in the order the reports list them."""


@attrs.frozen
class Change:
    """The input messages that one kind of change touched."""

    kind: str
    """One of :data:`KINDS`."""
    messages: int
    """How many input messages."""
    tokens_before: int
    """What they cost in the input."""
    tokens_after: int
    """What is left of them in the output (0 for removed or summarized messages)."""


@attrs.frozen
class Diff:
    """Before and after a compaction."""

    messages_before: int
    """Messages in the input."""
    messages_after: int
    """Messages in the output."""
    tokens_before: int
    """Tokens of the input."""
    tokens_after: int
    """Tokens of the output."""
    kept: int
    """Input messages kept exactly as they were."""
    changes: tuple[Change, ...]
    """What happened to the others, per kind (kinds that did not happen are left out)."""
    summaries: tuple[str, ...]
    """The text of each new summary in the output."""
    summary_tokens: int
    """What the new summaries cost."""


def _ids(message: Message) -> tuple[str, ...]:
    return tuple(result.tool_use_id for result in message.tool_results)


def _matches(out: Message, original: Message) -> bool:
    if out.role is not original.role or out.is_compaction != original.is_compaction:
        return False
    return out.role is not Role.TOOL or _ids(out) == _ids(original)


def _change_kind(out: Message, original: Message) -> str:
    if out.role is Role.TOOL:
        return "cleared"
    if len(out.tool_uses) < len(original.tool_uses):
        return "stripped"
    return "truncated"


def _nearest(out: Message, before: Sequence[Message], cursor: int) -> int:
    """The index of the nearest input message at or before ``cursor`` that ``out`` came
    from, or -1."""
    j = cursor
    while j >= 0 and not _matches(out, before[j]):
        j -= 1
    return j


def diff(before: Sequence[Message], after: Sequence[Message], counter: BaseCounter) -> Diff:
    """Compare a compaction's input ``before`` with its output ``after``."""
    changed: dict[str, list[tuple[int, int]]] = {kind: [] for kind in KINDS}
    summaries: list[Message] = []
    kept = 0
    cursor = len(before) - 1
    for position in range(len(after) - 1, -1, -1):
        out = after[position]
        if out.is_compaction and out not in before:
            # A new summary replaced the input messages between it and the output
            # message before it.
            summaries.append(out)
            stop = _nearest(after[position - 1], before, cursor) if position else -1
            for k in range(cursor, stop, -1):
                changed["summarized"].append((counter.estimate_message(before[k]), 0))
            cursor = stop
            continue
        j = _nearest(out, before, cursor)
        for k in range(cursor, j, -1):
            changed["removed"].append((counter.estimate_message(before[k]), 0))
        cursor = j - 1
        if j < 0:
            continue  # not from the input (a strategy of the user's own): nothing to count
        original = before[j]
        if out == original:
            kept += 1
        else:
            kind = _change_kind(out, original)
            changed[kind].append(
                (counter.estimate_message(original), counter.estimate_message(out))
            )
    for k in range(cursor, -1, -1):
        changed["removed"].append((counter.estimate_message(before[k]), 0))
    changes = tuple(
        Change(kind, len(rows), sum(r[0] for r in rows), sum(r[1] for r in rows))
        for kind, rows in changed.items()
        if rows
    )
    return Diff(
        messages_before=len(before),
        messages_after=len(after),
        tokens_before=counter.estimate_messages(before),
        tokens_after=counter.estimate_messages(after),
        kept=kept,
        changes=changes,
        summaries=tuple(reversed([m.text for m in summaries])),
        summary_tokens=sum(counter.estimate_message(m) for m in summaries),
    )
