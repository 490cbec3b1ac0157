"""What a compaction did, message by message, counted against its input.

A stack runs several strategies in turn, and each sees the previous one's output: a
report that counts after the last step would say "0 results cleared" when a summary
later replaced the cleared messages. So the report is computed from the input and the
final output alone, by matching every output message to the input message it came from.

Each output message is matched to the input message it came from (:mod:`.alignment`).
An input message that nothing matched was dropped: *summarized* when the output holds a new
summary (a window that ran after a summary would have dropped the summary first, as it
is the oldest non-system message), else *removed*; a tool message whose call is still
there was *removed* with that call (strip-tools). A matched message that changed is
*cleared* (a tool result), *stripped* (an assistant message that lost its calls) or
*truncated* (any other text that got shorter).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from .._counting.counter import BaseCounter
from .._messages.message import Message, Role
from ..formats._transcripts.alignment import align

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


def _change_kind(out: Message, original: Message) -> str:
    if out.role is Role.TOOL:
        return "cleared"
    if len(out.tool_uses) < len(original.tool_uses):
        return "stripped"
    return "truncated"


def _caller(before: Sequence[Message], index: int) -> int | None:
    """The index of the assistant message whose calls the tool message ``index`` answers."""
    for k in range(index - 1, -1, -1):
        if before[k].tool_uses:
            return k
    return None


def diff(before: Sequence[Message], after: Sequence[Message], counter: BaseCounter) -> Diff:
    """Compare a compaction's input ``before`` with its output ``after``."""
    origin = align(before, after)
    summaries = [m for m, o in zip(after, origin, strict=True) if o is None and m.is_compaction]
    matched = {o for o in origin if o is not None}
    changed: dict[str, list[tuple[int, int]]] = {kind: [] for kind in KINDS}
    kept = 0
    for out, index in zip(after, origin, strict=True):
        if index is None:
            continue
        original = before[index]
        if out == original:
            kept += 1
        else:
            cost = (counter.estimate_message(original), counter.estimate_message(out))
            changed[_change_kind(out, original)].append(cost)
    for index, message in enumerate(before):
        if index in matched:
            continue
        # A summary replaced the older messages; a tool message whose call survives lost
        # its result with the call (strip-tools), not to a summary.
        caller = _caller(before, index) if message.is_tool else None
        kind = (
            "summarized" if summaries and (caller is None or caller not in matched) else "removed"
        )
        changed[kind].append((counter.estimate_message(message), 0))
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
        summaries=tuple(m.text for m in summaries),
        summary_tokens=sum(counter.estimate_message(m) for m in summaries),
    )
