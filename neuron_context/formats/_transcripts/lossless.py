"""Writing a compacted conversation back into its file's units without losing anything.

A file that was not compacted must come back as it was, and a compacted one must keep
every field the compaction did not change — a ``cache_control`` breakpoint above all,
since losing one silently ends the user's prompt caching. So the units of the output are
decided once, for every format, from three facts:

- which input message each output message came from, and whether it is unchanged
  (:func:`~neuron_context.formats._transcripts.alignment.align`);
- which units each input message was read from (:attr:`.Parsed.origins`: one message may
  come from several units — a Claude Code assistant message from one row per block — and
  one unit may hold several messages — an Anthropic user turn holds tool results and
  text, read as a tool message and a user message);
- which units no message was read from (they travel with the message read before them;
  those before the first message are the file's header and always kept).

A unit is written **as it was** when every message read from it is in the output
unchanged; a unit no message was read from is written when the message it travels with
is in the output. Every other output message is **rendered** by the codec, grafted onto
the units its original was read from; consecutive messages that share a unit are
rendered together, so they go back into that one unit. Everything keeps the file's
order: a rendered message stands where its first unit stood, and a new message (a
summary) just before the next message that has a place.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._messages.message import Message
from .alignment import align
from .codec import Codec, Parsed

__all__ = ["rewrite"]


def _owners(parsed: Parsed, count: int) -> list[int]:
    """For each unit, the last message read from it; for a unit no message was read from,
    the message read before it (``-1``: none, the file's header)."""
    last_reader: dict[int, int] = {}
    for message, units in enumerate(parsed.origins):
        for unit in units:
            last_reader[unit] = max(last_reader.get(unit, -1), message)
    owners: list[int] = []
    before = -1
    for unit in range(count):
        before = max(before, last_reader.get(unit, -1))
        owners.append(last_reader.get(unit, before))
    return owners


def _groups(
    after: Sequence[Message], origin: Sequence[int | None], rendered: Sequence[bool], parsed: Parsed
) -> list[tuple[list[int], set[int]]]:
    """The output messages to render, in groups of consecutive messages that share a
    unit, each with the units its messages were read from."""
    groups: list[tuple[list[int], set[int]]] = []
    previous = -2
    for k in range(len(after)):
        if not rendered[k]:
            continue
        index = origin[k]
        sources = set(parsed.origins[index]) if index is not None else set()
        if groups and previous == k - 1 and sources and sources & groups[-1][1]:
            groups[-1][0].append(k)
            groups[-1][1].update(sources)
        else:
            groups.append(([k], sources))
        previous = k
    return groups


def rewrite(
    codec: Codec, parsed: Parsed, units: Sequence[object], after: Sequence[Message]
) -> list[object]:
    """The units of a file that held ``units`` (read as ``parsed``) and now holds the
    conversation ``after``, in the file's order."""
    before = parsed.messages
    origin = align(before, after)
    unchanged = [
        index is not None and (after[k] is before[index] or after[k] == before[index])
        for k, index in enumerate(origin)
    ]
    kept = {index for index, same in zip(origin, unchanged, strict=True) if same}
    present = {index for index in origin if index is not None}
    readers: dict[int, list[int]] = {}
    for message, message_units in enumerate(parsed.origins):
        for unit in message_units:
            readers.setdefault(unit, []).append(message)
    whole = {unit for unit, messages in readers.items() if all(m in kept for m in messages)}
    rendered = [
        not (same and set(parsed.origins[index]) <= whole)  # type: ignore[index]  # same: not None
        for same, index in zip(unchanged, origin, strict=True)
    ]
    owners = _owners(parsed, len(units))
    placed: list[tuple[tuple[int, int, int], list[object]]] = []
    for unit, owner in enumerate(owners):
        if unit in whole or (unit not in readers and (owner == -1 or owner in present)):
            placed.append(((unit, 0, 0), [units[unit]]))
    firsts = [
        min(parsed.origins[index], default=None) if index is not None else None for index in origin
    ]
    for number, (members, sources) in enumerate(_groups(after, origin, rendered, parsed)):
        if sources:
            key = (min(sources), 0, 0)
        else:  # a new message: just before the next message that has a place
            following = (f for f in firsts[members[-1] + 1 :] if f is not None)
            key = (next(following, len(units)), -1, number)
        messages = [after[k] for k in members]
        placed.append((key, codec.render(messages, [units[u] for u in sorted(sources)])))
    placed.sort(key=lambda entry: entry[0])
    return codec.join([unit for _, block in placed for unit in block], units)
