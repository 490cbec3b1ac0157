"""Writing a compacted conversation back into its file's units without losing anything.

A file that was not compacted must come back as it was, and a compacted one must keep
every field the compaction did not change — a ``cache_control`` breakpoint above all,
since losing one silently ends the user's prompt caching. So the units of the output are
decided once, for every format, from three facts:

- which input message each output message came from, and whether it is unchanged
  (:func:`~neuron_context._cli.alignment.align`);
- which units each input message was read from (:attr:`.Parsed.origins`: one message may
  come from several units — a Claude Code assistant message from one row per block — and
  one unit may hold several messages — an Anthropic user turn holds tool results and
  text, read as a tool message and a user message);
- which units no message was read from (they travel with the message read before them;
  those before the first message are the file's header and always kept).

A unit is written **as it was** when every message read from it is in the output
unchanged. Every other output message is **rendered** by the codec, grafted onto the
units its original was read from; consecutive messages that share a unit are rendered
together, so they go back into that one unit. A message that is new (a summary) is
rendered on its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._messages.message import Message
from ..alignment import align
from .codec import Codec, Parsed

__all__ = ["rewrite"]


def _attached(parsed: Parsed, count: int) -> dict[int, list[int]]:
    """Units no message was read from, by the message read before them (-1: none)."""
    owner_of: dict[int, int] = {}
    for message, units in enumerate(parsed.origins):
        for unit in units:
            owner_of[unit] = max(owner_of.get(unit, -1), message)
    attached: dict[int, list[int]] = {}
    last = -1
    for unit in range(count):
        if unit in owner_of:
            last = max(last, owner_of[unit])
        else:
            attached.setdefault(last, []).append(unit)
    return attached


def rewrite(
    codec: Codec, parsed: Parsed, units: Sequence[object], after: Sequence[Message]
) -> list[object]:
    """The units of a file that held ``units`` (read as ``parsed``) and now holds the
    conversation ``after``."""
    before = parsed.messages
    origin = align(before, after)
    unchanged = [
        index is not None and (after[k] is before[index] or after[k] == before[index])
        for k, index in enumerate(origin)
    ]
    kept = {index for index, same in zip(origin, unchanged, strict=True) if same}
    readers: dict[int, list[int]] = {}
    for message, message_units in enumerate(parsed.origins):
        for unit in message_units:
            readers.setdefault(unit, []).append(message)
    whole = {unit for unit, messages in readers.items() if all(m in kept for m in messages)}
    attached = _attached(parsed, len(units))

    out: list[object] = []
    written: set[int] = set()
    group: list[Message] = []
    group_units: set[int] = set()

    def emit(unit: int) -> None:
        if unit not in written:
            written.add(unit)
            out.append(units[unit])

    def flush() -> None:
        if group:
            sources = [units[unit] for unit in sorted(group_units)]
            out.extend(codec.render(list(group), sources))
            written.update(group_units)
            group.clear()
            group_units.clear()

    for unit in attached.get(-1, ()):
        emit(unit)
    for k, current in enumerate(after):
        index = origin[k]
        sources = set(parsed.origins[index]) if index is not None else set()
        if unchanged[k] and sources <= whole:
            flush()
            for unit in sorted(sources):
                emit(unit)
        else:
            if group and not (sources and sources & group_units):
                flush()
            group.append(current)
            group_units.update(sources)
        if index is not None and attached.get(index):
            flush()
            for unit in attached[index]:
                emit(unit)
    flush()
    return codec.join(out)
