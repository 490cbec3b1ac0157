"""Which input message each message of a compaction's output came from.

Both the report of what a compaction did (:mod:`.diff`) and the lossless writers
(:mod:`.transcripts`) need it: the report to say what happened to each input message,
the writers to write a kept message back as the very JSON it was read from.

The built-in strategies keep the order of what they keep: they drop messages, change one
in place (clear a result, strip calls, truncate a text) and put a summary among them, and
a message they keep is the very object they were given. So the alignment is made in two
passes over the output, newest first:

1. **Kept messages**: the same object as an input message, at or before the previous
   match. This pins every kept message, and a pinned message bounds where its neighbours
   may come from (a conversation may hold equal messages far apart: a placeholder result
   answering an id that a later exchange reuses).
2. **The others**, between the inputs of their pinned neighbours: an equal input message
   (a copy), else the one of the same role (a tool message: with the same result ids)
   that shares the most blocks with it, the newest on a tie — the message it was changed
   from (a message that lost its calls keeps its text).

A message that neither pass matches is new: a summary, or a message of a caller's own
strategy.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._messages.message import Message, Role

__all__ = ["align"]


def _ids(message: Message) -> tuple[str, ...]:
    return tuple(result.tool_use_id for result in message.tool_results)


def _could_be(out: Message, original: Message) -> bool:
    if out.role is not original.role or out.is_compaction != original.is_compaction:
        return False
    return out.role is not Role.TOOL or _ids(out) == _ids(original)


def _likeliest(out: Message, candidates: Sequence[int], before: Sequence[Message]) -> int | None:
    """Of ``candidates`` (newest first), the message ``out`` shares the most blocks with
    (a stripped message keeps its text and its thinking); the newest on a tie."""
    best, score = None, -1
    for candidate in candidates:
        shared = sum(block in before[candidate].content for block in out.content)
        if shared > score:
            best, score = candidate, shared
    return best


def align(before: Sequence[Message], after: Sequence[Message]) -> list[int | None]:
    """For each message of ``after``, the index of the message of ``before`` it came from
    (``None``: a new message). Origins increase along ``after``."""
    where = {id(message): index for index, message in enumerate(before)}
    origin: list[int | None] = [None] * len(after)
    cursor = len(before) - 1
    for position in range(len(after) - 1, -1, -1):  # 1. the very objects
        index = where.get(id(after[position]))
        if index is not None and index <= cursor and before[index] is after[position]:
            origin[position], cursor = index, index - 1
    lower = [-1] * len(after)  # the pinned origin before each position
    pinned = -1
    for position, index in enumerate(origin):
        lower[position] = pinned
        if index is not None:
            pinned = index
    upper = len(before)
    for position in range(len(after) - 1, -1, -1):  # 2. copies and changed messages
        index = origin[position]
        if index is not None:
            upper = index
            continue
        out = after[position]
        if out.is_compaction and out not in before:
            continue  # a new summary
        window = range(upper - 1, lower[position], -1)
        found = next((c for c in window if before[c] == out), None)
        if found is None:
            found = _likeliest(out, [c for c in window if _could_be(out, before[c])], before)
        if found is not None:
            origin[position] = upper = found
    return origin
