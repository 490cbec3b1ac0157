"""The facts of the results as a summary's items: each result's facts in chunks under
its call, newest first, and an earlier summary's facts lines carried the same way.

A result's first chunk is ranked before the further chunks of the newer results (see
``fact_chunks.STRIDE``), so one long listing does not hide the results before it; a list or
a table the agent walks (see :mod:`.walked`) is its result's first chunk, ranked
before the first chunks of every result (a list of which only one item is used, a
choice as much as a walk, after the newest result's first chunk only). Each item is
handed to the ``add`` of the summarizer
(:class:`~neuron_context._summary.extractive.ExtractiveSummarizer`), which builds its
:class:`~neuron_context._summary.sections.Item`.
"""

from __future__ import annotations

from collections.abc import Callable, Set

from .fact_chunks import STRIDE, Fact, chunks, render
from .findings import Findings
from .format import FACTS
from .previous import SEGMENT_BREAK, carried_segments
from .shown import noted, repeatable
from .walked import used_by, used_items, walked_facts, walked_line, words

__all__ = ["carried_items", "result_items"]

FIRST = 1_000_000
"""The rank of the newest result's first chunk (each older result's is one more)."""
WALKED = -FIRST
"""The rank of the newest walked list or table (each older one's is one more): before
every result's first chunk."""
Add = Callable[..., None]


def _further(add: Add, chunk: list[Fact], rank: int, order: int) -> None:
    """Add ``chunk``, a further chunk of the line before it in ``order``."""
    separator = SEGMENT_BREAK if chunk[0].line else "; " if chunk[0].group else ", "
    text = render(chunk).replace("\n", SEGMENT_BREAK)
    add(FACTS, rank, text, order=order, continues=separator, chained=chunk[0].row)


def result_items(found: Findings, shown: Set[str], add: Add) -> None:
    """The facts of the results, newest first, a chunk of each result at a time: each
    result's first chunk before the later chunks of the newer ones (see
    ``fact_chunks.STRIDE``); a result's pairs share a line, and each segment of a line of it
    (:attr:`~.fact_chunks.Fact.line`) is a chunk on a line of its own, under its call. A list
    a later call walks (the piece holding its next item) or a walked table (its header
    and next rows: see :mod:`.walked`) is its result's first chunk, before the first
    chunks of every result (after the newest result's first one where only one item of
    the list is used)."""
    noted_before: set[str] = set()
    for position, group in enumerate(found.facts):
        used = used_by(found.called, shown, group.read)
        ahead, rest = walked_facts(group.facts, used)
        ahead = noted(ahead, group.label, noted_before, shown)
        kept = noted(rest, group.label, noted_before, shown)
        noted_before.update(fact.text for fact in kept if repeatable(fact))
        order = (position + 1) * 100_000
        led = chunks(ahead)
        for number, chunk in enumerate(led):
            if number == 0:  # the walk leads; the rest of a walked table follows it
                text = render(chunk).replace("\n", SEGMENT_BREAK)
                texts = [fact.text for fact in group.facts]
                # One item used may be a choice: after the newest result's first chunk.
                chosen = used_items(text, texts, used) == 1
                lead = FIRST + min(position, 1) if chosen else WALKED + position
                add(FACTS, lead, f"{group.label}: {text}", order=order)
            else:
                _further(add, chunk, FIRST + position + (number - 1) * STRIDE, order + number)
        order += len(ahead)
        for number, chunk in enumerate(chunks(kept)):
            rank = FIRST + position + number * STRIDE
            if number == 0 and not led:
                # A table's header and its first row read from lines are two segments.
                text = render(chunk).replace("\n", SEGMENT_BREAK)
                add(FACTS, rank, f"{group.label}: {text}", order=order + 1)
            else:
                _further(add, chunk, rank, order + 1 + number)


def carried_items(lines: list[str], newer: int, found: Findings, shown: Set[str], add: Add) -> None:
    """The previous summary's facts lines (newest first), ranked as the results older
    than the ``newer`` ones just read: a line's head and each segment under it are
    chunks of one result, taken in turn with the newer results' chunks (see
    ``fact_chunks.STRIDE``), each verbatim; a segment that the rest of the request shows is
    left out, but a table's header goes with its first row carried, and a head that
    ends in a table's header with the table (see :func:`.previous.carried_segments`).
    A list being walked (see :mod:`.walked`: calls of ``found``, the rest of the
    request or the calls the carried lines are labelled with used some of its items)
    leads its line, updated, before the first chunks of every result older than the
    newer results' walked lists."""
    # A walk paused for a span: the calls an earlier summary's lines are labelled with
    # took items as well (``get_reservation_details reservation_id=DQST39: ...``).
    labels = {word for line in lines for word in words(line.partition(": ")[0])}
    used = used_by(found.called, {*shown, *labels})
    for position, line in enumerate(lines, start=newer):
        order = (position + 1) * 100_000
        head, separator, segments = line.partition(SEGMENT_BREAK)
        ahead, rest = walked_line(head, used)
        if ahead:
            lead = FIRST + 1 if used_items(ahead, [head], used) == 1 else WALKED + position
            add(FACTS, lead, ahead, order=order)
        carried = f"{rest}{separator}{segments}" if ahead else line
        for number, (text, row) in enumerate(carried_segments(carried, shown)):
            # The head is the result's line; each segment goes under it.
            under = {"continues": SEGMENT_BREAK, "chained": row} if number else {}
            if ahead and not number:
                under = {"continues": ", "}
            add(FACTS, FIRST + position + number * STRIDE, text, order=order + 1 + number, **under)
