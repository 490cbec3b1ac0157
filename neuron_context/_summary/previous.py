"""A previous summary read back, so the next one carries it: its lines by section, its
quoted user requests and its plans, verbatim (the format is :mod:`.format`'s)."""

from __future__ import annotations

from collections.abc import Set

from .agent_plan import PLAN_CLOSE, PLAN_OPEN
from .facts_text import cells, pairs_line, table_columns
from .format import FACTS, GOAL, HEADINGS, PLAN, REQUEST_CLOSE, REQUEST_OPEN, unquoted
from .scan import clip
from .shown import repeats

__all__ = ["SEGMENT_BREAK", "carried_sections", "carried_segments"]

SEGMENT_BREAK = "\n  "
"""What sets a segment of a result's line (a line of the result as it stands) apart from
the facts before it in a summary: a line of its own, indented under its call."""


def carried_sections(
    previous: str | None, limit: int
) -> tuple[dict[int, list[str]], list[str], list[str]]:
    """The previous summary's lines by section (unknown headings and text: the goal),
    its quoted user requests and its plans (oldest first), verbatim. Its facts lines
    are carried whole, each with the segments indented under it (each is one result's
    index), the newest first: ``previous`` may hold several summaries, oldest first
    (a section heading that does not follow the one before starts the next), and each
    lists its results newest first."""
    carried: dict[int, list[str]] = {}
    quoted: list[str] = []
    plans: list[str] = []
    if not previous:
        return carried, quoted, plans
    titles = {heading.removeprefix("## ").casefold(): i for i, heading in enumerate(HEADINGS)}
    section = GOAL
    facts: list[list[list[str]]] = [[]]  # by summary, oldest first: each line's parts
    block: list[str] | None = None  # a quoted request or a plan, being read
    into: list[str] = quoted
    close = ""
    for raw in previous.split("\n"):
        if block is not None:
            if raw == close:
                text = "\n".join(block)
                into.append(unquoted(text) if into is quoted else text)
                block = None
            else:
                block.append(raw)
            continue
        if raw in (REQUEST_OPEN, PLAN_OPEN):
            block = []
            into, close = (quoted, REQUEST_CLOSE) if raw == REQUEST_OPEN else (plans, PLAN_CLOSE)
            continue
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            title = line.lstrip("#").strip().casefold()
            if title in titles:
                if titles[title] <= section and facts[-1]:
                    facts.append([])  # the next summary
                section = titles[title]
                continue
        if section == FACTS and raw.startswith(SEGMENT_BREAK[1:]) and facts[-1]:
            facts[-1][-1].append(line)  # a segment, under its result's line (joined once)
            continue
        if line.startswith(("- ", "* ")):
            line = line[2:].strip()
        if not line or section == PLAN:
            continue
        if section == FACTS:
            facts[-1].append([line])
        else:
            carried.setdefault(section, []).append(clip(line, limit))
    if block and into is quoted:  # an unclosed quote: keep its words as a request
        quoted.append(unquoted("\n".join(block)))
    newest_first = [SEGMENT_BREAK.join(parts) for lines in reversed(facts) for parts in lines]
    if newest_first:
        carried[FACTS] = newest_first
    return carried, quoted, plans


def carried_segments(line: str, shown: Set[str]) -> list[tuple[str, bool]]:
    """The parts of a previous facts line worth carrying, each an item of its own, and
    whether it is a further row of a table (to be taken only after the item before it:
    a row stands under its header). The first is the line's head (its call's label and
    the facts on that line), always; then its segments, but not one the rest of the
    request shows (see :func:`~.shown.repeats`). A table's header (``flights:
    origin|...``, see :func:`~.facts_text.table_columns`), with the values every row
    holds (the pairs directly above it), goes with the first of its rows carried, as
    one item, whatever the request shows of it (a row says what its cells are only
    under its header), and not at all when none of its rows is; where the head ends in
    the header or those values (a result whose first chunk is the table), the head
    goes with them (kept alone when no row is carried: with the table's first row
    where it ends in the header). A row is a segment with a cell under each of the
    header's columns; the first segment that is not one ends the table."""
    parts = line.split(SEGMENT_BREAK)
    kept: list[tuple[str, bool]] = []
    header = ""  # a table's header, waiting for its first row carried
    alone = ""  # what the head is kept as if it waits for a row and none is carried
    columns = 0  # the columns of the table being read (0: none is)
    table = False  # a row of the table being read was carried
    fixed = ""  # the values every row of the table below holds, waiting for its header

    def close() -> None:
        nonlocal header
        if header and not kept:  # the head, waiting for a row none of which is carried
            kept.append((alone, False))
        header = ""

    for at, text in enumerate(parts):
        after, beyond = [*parts[at + 1 : at + 3], "", ""][:2]
        # The head's facts follow its label's ": " (a segment is all facts).
        ends = [text[on + 2 :] for on in range(len(text)) if text.startswith(": ", on)]
        ends = ends if at == 0 else [text]
        found = max((table_columns(end, after) for end in ends), default=0)
        if found and at == 0:
            alone = f"{text}{SEGMENT_BREAK}{after}"
        if found:
            close()
            header = SEGMENT_BREAK.join(filter(None, (fixed, text)))
            columns, table, fixed = found, False, ""
            continue
        if columns and cells(text) != columns:
            close()  # not a row: the table has ended
            columns, table = 0, False
        if not columns and any(map(pairs_line, ends)) and table_columns(after, beyond):
            fixed = alone = text
            continue
        if at == 0:
            kept.append((text, False))
        elif repeats(text, shown):
            continue
        elif header:
            kept.append((f"{header}{SEGMENT_BREAK}{text}", False))
            header, table = "", True
        else:
            kept.append((text, table))
    close()
    return kept
