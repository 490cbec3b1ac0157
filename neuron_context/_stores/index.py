"""Offloading item by item, under an index.

What a compaction removes goes to the store entry by entry, each under its own key
(:mod:`~neuron_context._stores.entries`), and the output holds one **index** message
where a single reference used to be: a line per entry, oldest first, saying what it
holds and its key::

    [original messages, one entry per line, oldest first — recall a key to read it:
    - user: "Fix the failing test in src/app.py" (41 tokens) — recall: 3f2a…
    - read_file src/app.py (2,314 tokens) — recall: 9c41…
    ]

An index has a room in tokens, priced before the keys exist (:func:`index_placeholder`);
when its lines do not fit, the oldest entries roll up (:mod:`~neuron_context._stores.rollup`:
into groups of a page, then keys alone on a line of page keys, then one entry),
so every removed text stays behind a key the output shows. An earlier index that a
compaction removes again is carried line by line, without reading or writing its
entries (the keys are content hashes: an entry removed again has the same key), except
the lines that roll up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._messages.content import Compaction
from .._messages.message import Message, Role
from .batch import offloading
from .entries import PAGE_TOKENS, entries_of
from .lines import INDEX_HEADING, Entry, index_lines
from .offload import holds, offload, short_reference, spare
from .rollup import roll_up
from .serialized import COSTLIEST_KEY
from .store import Store

if TYPE_CHECKING:  # the counter is a parameter: no import of a higher room at run time
    from .._counting.counter import BaseCounter

__all__ = ["index_placeholder", "index_reference", "index_text", "with_reference"]

_LONG_LINE = Entry(
    'assistant: "Let me check the configuration loader for the e…" → read_file '
    "src/package/config_loader.py (12,345 tokens)",
    COSTLIEST_KEY,
)
"""A long index line, as the placeholder prices each line (a longer one makes the
index roll up sooner, never exceed its room)."""


_LINE_TOKENS = 30
"""Fewer tokens than an index line that shows facts costs."""


def _text(entries: Sequence[Entry]) -> str:
    return "\n".join([INDEX_HEADING, *index_lines(entries)]) + "\n]"


def _index_message(entries: Sequence[Entry]) -> Message:
    return Message(role=Role.USER, content=(Compaction(content=_text(entries)),))


def index_placeholder(lines: int, keys: int = 0) -> Message:
    """An index of ``lines`` lines as long as any can be, and ``keys`` page keys (keys
    alone: their words show where the room has them): what a strategy prices to keep
    room for the real one (its keys and counts are known only after the puts)."""
    paged = Entry("", COSTLIEST_KEY, paged=True, words="")
    return _index_message([_LONG_LINE] * max(0, lines) + [paged] * max(0, keys))


def index_reference(
    store: Store,
    removed: Sequence[Message],
    counter: BaseCounter,
    strategy: str,
    *,
    room: int,
    short: bool = False,
    kept: Sequence[Message] = (),
    everything: Sequence[Message] = (),
) -> Message | None:
    """Offload ``removed`` entry by entry and return the index message, at most ``room``
    tokens (the oldest entries rolled up to fit); with ``short``, all entries in one and
    only ``[recall: <key>]`` (the form an index takes too when not even one line fits
    its room). ``None`` when there is nothing to offload or a put failed. ``everything``:
    the whole input, where the calls of
    removed results are found; the entries ``kept`` (the output) references are spared
    from the eviction the puts may cause."""
    if not removed:
        return None
    with offloading():
        lines = 0 if short else room // _LINE_TOKENS  # the most lines that could show facts
        entries = entries_of(removed, counter, everything=everything, facts=lines)
        entries = [e for e in entries if not e.quoted or holds(store, e.key)]
        if not entries:
            return None
        spare(store, [*kept, _index_message(entries)])
        rolled = None
        if not short:
            limit = room
            rolled = roll_up(
                store,
                entries,
                lambda e: counter.estimate_message(_index_message(e)) <= limit,
                counter,
            )
            short = rolled is None  # not even one line fits: the shortest form
        if short:
            rolled = roll_up(store, entries, lambda e: len(e) <= 1, counter, pages=False)
        if rolled is None:
            return None
        for entry in rolled:
            for part in (*entry.holds, entry):
                if part.content is not None and offload(store, part.content, strategy) is None:
                    return None
    if short:
        return Message(
            role=Role.USER, content=(Compaction(content=short_reference(rolled[0].key)),)
        )
    return _index_message(rolled)


def index_text(
    store: Store,
    removed: Sequence[Message],
    counter: BaseCounter,
    strategy: str,
    *,
    kept: Sequence[Message] = (),
    room: int = PAGE_TOKENS,
) -> str | None:
    """The text of :func:`index_reference` for a strategy that does not price it in a
    budget: at most ``room`` tokens (a recall page by default)."""
    message = index_reference(store, removed, counter, strategy, room=room, kept=kept)
    if message is None:
        return None
    return next(b.content for b in message.content if isinstance(b, Compaction))


def with_reference(
    messages: Sequence[Message],
    output: list[Message],
    store: Store | None,
    counter: BaseCounter,
    strategy: str,
) -> list[Message]:
    """``output`` with the input messages it does not hold as they are (dropped, or
    changed: their originals) offloaded to ``store`` entry by entry, and the index of
    them after the output's leading system messages (a summary-like user message of at
    most a recall page, see :func:`index_reference`).

    ``output`` as it is without a store, with nothing removed, or when a put fails (the
    compaction as without a store); ``messages`` as they are (nothing compacted, nothing
    lost) when the index would make the output cost as much as the input."""
    if store is None:
        return output
    kept = {id(message) for message in output}
    removed = [message for message in messages if id(message) not in kept]
    if not removed:
        return output
    note = index_reference(
        store, removed, counter, strategy, room=PAGE_TOKENS, kept=output, everything=messages
    )
    if note is None:
        return output
    at = 0
    while at < len(output) and output[at].role is Role.SYSTEM:
        at += 1
    referenced_output = [*output[:at], note, *output[at:]]
    if counter.estimate_messages(referenced_output) >= counter.estimate_messages(messages):
        return list(messages)
    return referenced_output
