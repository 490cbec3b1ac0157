"""Segment choice: a text too big for its space cut to the whole segments that hold its
facts, kept verbatim in their order, with a marker in each gap (the largest in full, the
others a one-token ``…``).

A cut in the middle keeps a head and a tail and loses everything between, however much of
it the next step needs (the reservation in the middle of a list, the failing test above
the summary). An agent reuses facts, and facts live in segments: an element of a JSON
result (a record with its keys), a row of a table under its header, a line of a listing
or a log. So the text is split into segments
(:func:`~neuron_context._messages.partition.partition`), each is weighed by the
caller (:data:`Weigh`: what an agent reuses of it: identifiers and numbers with their
labels, definitions, errors, paths), and the best that fit are kept, the head and the
tail first among equals (the head says what the text is, the tail how it ended), and
the elements of a list of scalars the more the nearer its start (:data:`_WALK`: an
agent takes a list's items in order, the first one next); the
largest gap gets the full marker, every other gap a one-token
:data:`~neuron_context._messages.markers.SHORT_GAP`::

    {"reservations": [{"reservation_id": "MFRB94", "status": "confirmed", ...},
    …
    {"reservation_id": "K67C4W", "status": "confirmed", ...},
    [... 12 items cut ...]
    {"reservation_id": "PUNERT", "status": "cancelled", ...}]}

A kept segment keeps what gives it its meaning: a JSON element is kept with the openers of
the containers around it (``{"reservations": [``: the key it stands under), a field of a
record cut into its fields with the record's first field (``"flight_number": "HAT170"``
beside its ``"price": 117``), a table row
with its header, an indented line with the line it is indented under (a body line with
its definition's header), a line of prose with its paragraph's first line and its
section's heading, a piece of a long line with the line's start. A line holding names
beside a kept line is worth one name more: a hit is kept with its neighbours, as
``grep -C`` shows it, where they hold names too, and two kept lines together cost one
gap less (:mod:`.kept_segments` takes them). A blank line is never kept for
itself, nor a table's header (it names the columns: it is kept with a row), nor the
marker of an earlier cut (a gap counts the lines that one stood for)::

        1→defmodule SpotterWeb.SubagentLive do
    …
       55→  def handle_event("clear_selection", _params, socket) do
    [... 89 lines cut ...]
      293→end

Everything is linear-ish in the text: one scan for its segments, one pricing of each
segment, one weighing of each (the caller's, bounded by the segment's length; of a text
of thousands of segments, of a bounded number of them: :func:`_weighed`), one heap of
the segments (each checked again a bounded number of times as the names it holds are
kept by others: :func:`~.kept_segments.greedy`), and the output is priced by the
caller's counter and shrunk until it costs no more than its cap. A text with no
segments worth keeping (one long line, a JSON string of a whole file) gets ``""``: the
caller cuts it in the middle instead.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias

import attrs

from .kept_segments import drop_orphans, greedy
from .markers import SHORT_GAP, gap_marker
from .partition import Partition, is_blank, partition

if TYPE_CHECKING:  # the counter is a parameter: no import of a higher room at run time
    from .._counting.counter import BaseCounter

__all__ = ["Choice", "Weigh", "choose_segments"]

Weigh: TypeAlias = Callable[[str], Mapping[str, float]]
"""Given a segment's text, the names an agent may reuse of it, each with its weight (a
name held by two segments is worth something only in the first one kept)."""

_SPLIT = 4
"""A segment longer than ``1/_SPLIT`` of the characters that fit is split into its own
segments (a JSON element into its elements, a long line at spaces)."""
_HEAD, _TAIL = 0.15, 0.10
"""The shares of the space where the first and the last segments are preferred."""
_EDGE = 3.0
"""How much more a segment at the head or the tail is worth than one in the middle."""
_ENOUGH = 0.35
"""The least share of the space the kept segments must fill (else ``""``)."""
_TRIES = 8
_WEIGHED = 2_048
"""The most segments weighed by the caller: a text of more (a listing of megabytes)
has its segments weighed only where their hints are densest (:func:`_weighed`)."""
_PER_FIT = 4
"""... or this many times the segments that fit its space, where that is more."""
_HINT = re.compile(r"\d+|[_/]|[a-z][A-Z]")
"""What marks the names an agent reuses (ids and numbers, snake_case, paths,
camelCase), counted by one C scan per segment."""


@attrs.frozen
class Choice:
    """What :func:`choose_segments` kept of a text."""

    text: str
    """The kept segments and the markers of the gaps (``""``: no choice)."""
    worth: float
    """What the names the kept segments hold weigh together (each name once)."""
    unit: str = ""
    """What its segments are: ``items`` (a JSON text's elements) or ``lines``."""


def choose_segments(
    text: str,
    max_tokens: int,
    counter: BaseCounter,
    *,
    weigh: Weigh,
    reference: str = "",
) -> Choice:
    """``text`` if it costs at most ``max_tokens``, else the segments of it worth most
    that fit, verbatim and in order, a :func:`~neuron_context._messages.markers.gap_marker`
    in the largest gap (with ``reference``) and a
    :data:`~neuron_context._messages.markers.SHORT_GAP` in each other, costing at most
    ``max_tokens``; no
    text when the segments that fit would fill less than 35% of it (the caller cuts the
    text in the middle instead)."""
    cost = counter.estimate_text(text)
    if max_tokens <= 0 or not text:
        return Choice("", 0.0)
    density = cost / len(text)  # tokens per character
    parts = partition(text, max(64, int(max_tokens / density) // _SPLIT))
    starts = parts.starts
    count = len(starts) - 1
    pieces = [text[starts[i] : starts[i + 1]] for i in range(count)]
    if cost <= max_tokens:
        return Choice(text, _worth([weigh(piece) for piece in pieces], range(count)), parts.unit)
    costs = [max(1, c) for c in counter.estimate_texts(pieces)]
    edge = _edges(costs, max_tokens)
    _walk_order(pieces, parts.parents, edge)
    names, unweighed = _weighed(pieces, costs, edge, weigh, max_tokens)
    # One full marker (the largest gap's, with the reference), a short gap for the others.
    full = counter.estimate_text(gap_marker(9_999, parts.unit) + "\n\n")
    extra = full + (counter.estimate_text(f"; {reference}") if reference else 0)
    mark = counter.estimate_text(SHORT_GAP + "\n\n")
    kept, order = greedy(
        names,
        costs,
        edge=edge,
        fillers={  # never kept for themselves: they hold no facts (or were not weighed)
            *parts.closers,
            *parts.closers.values(),
            *parts.stood,
            *parts.headers,
            *(i for i in range(count) if parts.unit == "lines" and is_blank(pieces[i])),
            *unweighed,
        },
        parts=parts,
        mark=mark,
        space=max_tokens - extra,
    )
    for _ in range(_TRIES):
        if sum(costs[i] for i in range(count) if kept[i]) < _ENOUGH * max_tokens:
            break
        out = _assemble(text, parts, kept, costs, reference)
        over = counter.estimate_text(out) - max_tokens
        if over <= 0:
            return Choice(out, _worth(names, (i for i in range(count) if kept[i])), parts.unit)
        # Drop the segments kept last by the overshoot (not one a kept segment needs:
        # a header goes with its last row), then what needed them.
        drop = int(over * 1.1) + 1
        needed = {parts.parents[i] for i in range(count) if kept[i]}
        for index in reversed(order):
            if drop <= 0:
                break
            if kept[index] and index not in needed:
                kept[index] = False
                drop -= costs[index]
        drop_orphans(kept, parts)
    return Choice("", 0.0)


def _weighed(
    pieces: list[str],
    costs: list[int],
    edge: list[float],
    weigh: Weigh,
    space: int,
) -> tuple[list[Mapping[str, float]], set[int]]:
    """The names of each segment by ``weigh``, and the segments left unweighed (never
    kept for themselves). A text of more than :data:`_WEIGHED` segments (and more than
    :data:`_PER_FIT` times those that fit ``space``) has only that many weighed: those
    at its head and tail, then those where :data:`_HINT` marks are densest per token.
    The choice keeps a small share of such a text (a listing of megabytes), and
    weighing every segment of it (each word read and classified) would cost several
    times its cut in the middle."""
    count = len(pieces)
    fit = space * count // max(1, sum(costs))  # the segments that fit, at the mean cost
    limit = max(_WEIGHED, _PER_FIT * fit)
    if count <= limit:
        return [weigh(piece) for piece in pieces], set()
    hints = _HINT.findall
    middle = [i for i in range(count) if edge[i] == 1.0]
    chosen = set(range(count)).difference(middle)  # the head and the tail
    chosen.update(
        heapq.nlargest(
            max(0, limit - len(chosen)), middle, key=lambda i: len(hints(pieces[i])) / costs[i]
        )
    )
    names = [weigh(pieces[i]) if i in chosen else {} for i in range(count)]
    return names, set(range(count)).difference(chosen)


def _worth(names: list[Mapping[str, float]], indices: Iterable[int]) -> float:
    seen: dict[str, float] = {}
    for index in indices:
        seen.update(names[index])
    return sum(seen.values())


def _edges(costs: list[int], space: int) -> list[float]:
    """How much more each segment is worth for where it stands: the first segments
    within :data:`_HEAD` of ``space`` (what the text is) and the last within
    :data:`_TAIL` (how it ended) more than those in the middle."""
    count = len(costs)
    edge = [1.0] * count
    used = 0
    for index in range(count):
        if used > _HEAD * space:
            break
        edge[index] = _EDGE * 2  # the head: first among equals
        used += costs[index]
    used = 0
    for index in range(count - 1, -1, -1):
        if used > _TAIL * space:
            break
        edge[index] = max(edge[index], _EDGE)
        used += costs[index]
    return edge


_SCALAR = re.compile(r'\s*(?:"(?:[^"\\\n]|\\.){0,200}"|-?\d[\d.eE+-]{0,30}|true|false)\s*,?\s*')
_WALK = 1.0
"""How much more the first element of a JSON list of scalars (a segment that is one
scalar under a ``[``) is worth than one in the middle, the second half as much more,
...: an agent takes a list's items in order, so a cut keeps its start."""


_WALKED = 16
"""The elements weighed by their place (beyond, under 6%; the rest stay middle ones)."""


def _walk_order(pieces: list[str], parents: Sequence[int], edge: list[float]) -> None:
    """Weigh each of the first :data:`_WALKED` elements of a list of scalars by its
    place in it, into ``edge``."""
    places: dict[int, int] = {}
    for index, piece in enumerate(pieces):
        parent = parents[index]
        if parent >= 0 and pieces[parent].rstrip().endswith("[") and _SCALAR.fullmatch(piece):
            places[parent] = place = places.get(parent, -1) + 1
            if place < _WALKED:
                edge[index] *= 1 + _WALK / (1 + place)


def _assemble(
    text: str, parts: Partition, kept: list[bool], costs: list[int], reference: str
) -> str:
    """The kept segments in order, a marker in each gap: the largest gap's (first among
    equals) :func:`~neuron_context._messages.markers.gap_marker` with ``reference``, the
    others a :data:`~neuron_context._messages.markers.SHORT_GAP`."""
    starts = parts.starts
    count = len(kept)
    gaps: list[tuple[int, int, int]] = []  # (first segment, end, how many cut)
    index = 0
    while index < count:
        if kept[index]:
            index += 1
            continue
        end = index
        while end < count and not kept[end]:
            end += 1
        cut = end - index
        if parts.unit == "lines":  # pieces of a long line are one line
            cut = max(1, text.count("\n", starts[index], starts[end] - 1) + 1)
            cut += sum(parts.stood.get(i, 1) - 1 for i in range(index, end))
        gaps.append((index, end, cut))
        index = end
    telling = max(range(len(gaps)), key=lambda g: (gaps[g][2], -g), default=-1)
    out: list[str] = []
    index = 0
    for number, (start, end, cut) in enumerate(gaps):
        out.extend(text[starts[i] : starts[i + 1]] for i in range(index, start))
        line = gap_marker(cut, parts.unit, reference=reference) if number == telling else SHORT_GAP
        if out and not out[-1].endswith("\n"):
            line = "\n" + line
        if end < count or not out:
            line += "\n"
        out.append(line)
        index = end
    out.extend(text[starts[i] : starts[i + 1]] for i in range(index, count))
    return "".join(out)
