"""Which segments of a text a segment choice keeps in its space
(:func:`~neuron_context._messages.segments.choose_segments`): a lazy greedy by worth per
token, each segment taken with the segments it needs.

The segment worth most per token comes first, a name worth something only in the first
kept segment that holds it; its worth is checked again when it comes up, at most
:data:`_RECHECKS` times, as the names it holds are kept by others. A segment is kept with
what gives it its meaning, its enclosing segments (:attr:`Partition.parents
<neuron_context._messages.partition.Partition.parents>`: the openers of the containers
around a JSON element, a row's header, the line an indented line stands under; up to
:data:`_ANCESTORS`) and their closers. A line holding names is worth one name more
beside a kept line (:data:`_NEIGHBOUR`), as ``grep -C`` shows a hit, and two kept lines
together cost one gap less (:func:`greedy` prices the gaps a keep adds or fills). Once
segments are given up to fit (the overshoot of the priced output), the ones left
without the segment they need go too (:func:`drop_orphans`).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping

from .partition import Partition

__all__ = ["drop_orphans", "greedy"]

_BASE = 0.25
"""What any segment is worth (a line at the head says what the text is, even with no
name in it)."""
_NEIGHBOUR = 1.0
"""What a line holding names is worth more beside a kept line: as much as a name (it
is the kept line's context, and the two cost one gap less). Measured on the shared
transcripts at 10/25/50%: 0.5 and 1.0 hold or gain, 2.0 loses at 10%."""
_ANCESTORS = 8
"""The most enclosing segments (openers, headers, a record's first field; not their
closers) kept with a segment: one nested deeper than this below its nearest kept
parent is not kept."""
_RECHECKS = 3
"""How many times a segment's worth is checked again as the names it holds are kept."""


def greedy(
    names: list[Mapping[str, float]],
    costs: list[int],
    *,
    edge: list[float],
    fillers: set[int],
    parts: Partition,
    mark: int,
    space: int,
) -> tuple[list[bool], list[int]]:
    """The segments kept and the order they were taken in: the one worth most per token
    first, a name worth something only in the first kept segment that holds it (a
    lazy greedy: a segment's worth is checked again when it comes up, at most
    :data:`_RECHECKS` times; a line beside one just kept comes up again at once), each
    with the segments it needs (its enclosing openers, up to :data:`_ANCESTORS`, and
    their closers; one that needs more is never kept), while they and the markers of
    the gaps fit ``space``."""
    parents, closers = parts.parents, parts.closers
    count = len(costs)
    kept = [False] * count
    covered: set[str] = set()

    lines = parts.unit == "lines"

    def score(index: int) -> float:
        fresh = sum(w for name, w in names[index].items() if name not in covered)
        if (
            lines
            and fresh
            and ((index > 0 and kept[index - 1]) or (index < count - 1 and kept[index + 1]))
        ):
            fresh += _NEIGHBOUR  # beside a kept line: its context, as grep -C shows it
        return (fresh + _BASE) * edge[index] / costs[index]

    heap = [(-score(i), i, 0) for i in range(count) if i not in fillers]
    heapq.heapify(heap)
    order: list[int] = []
    used = mark  # the text is one gap
    while heap:
        _, index, checks = heapq.heappop(heap)
        if kept[index]:
            continue
        if checks < _RECHECKS and heap:
            now = score(index)
            if now < -heap[0][0]:
                heapq.heappush(heap, (-now, index, checks + 1))
                continue
        chain = [index]
        parent = parents[index]
        steps = 0  # the enclosing segments taken (their closers not counted)
        while parent >= 0 and not kept[parent] and steps < _ANCESTORS:
            chain.append(parent)
            steps += 1
            if parent in closers:
                chain.append(closers[parent])
            parent = parents[parent]
        if parent >= 0 and not kept[parent]:
            continue  # nested deeper than it may be kept with what encloses it
        price = sum(costs[i] for i in chain) + mark * _gaps(chain, kept)
        if used + price > space:
            continue
        used += price
        for member in chain:
            kept[member] = True
            covered.update(names[member])
        order.append(index)
        if lines:
            for member in chain:
                for near in (member - 1, member + 1):
                    if 0 <= near < count and not kept[near] and near not in fillers:
                        heapq.heappush(heap, (-score(near), near, 0))
    return kept, order


def _gaps(chain: list[int], kept: list[bool]) -> int:
    """How many gaps keeping the segments ``chain`` adds (``-1``: one fewer): each run
    of them side by side splits the gap it stands in (both of its neighbours cut), ends
    one (one of them cut: no change) or fills one (none: the text's ends are not cut)."""
    count = len(kept)
    members = sorted(set(chain))
    added = 0
    start = 0
    for at in range(len(members)):
        if at + 1 < len(members) and members[at + 1] == members[at] + 1:
            continue  # the run goes on
        low, high = members[start] - 1, members[at] + 1
        left = low >= 0 and not kept[low]
        right = high < count and not kept[high]
        added += (left and right) - (not left and not right)
        start = at + 1
    return added


def drop_orphans(kept: list[bool], parts: Partition) -> None:
    """Unkeep the segments whose parent is no longer kept (in order: a parent comes
    before the segments that need it), and the openers left with nothing inside."""
    for index, parent in enumerate(parts.parents):
        if kept[index] and parent >= 0 and not kept[parent]:
            kept[index] = False
    inside = [False] * len(kept)
    for index, parent in enumerate(parts.parents):
        if kept[index] and parent >= 0 and parts.closers.get(parent) != index:
            inside[parent] = True
    for opener, closer in parts.closers.items():
        if opener and not inside[opener]:
            kept[opener] = kept[closer] = False
