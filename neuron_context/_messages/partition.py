"""Where a text's segments are: the elements of a JSON result, the lines of a text, and
what each needs beside it to keep its meaning (the opener holding an element's key, a
record's first field, a table's header, the line an indented line stands in, the
heading of a markdown section, the first line of a paragraph), for
:func:`~neuron_context._messages.segments.choose_segments`.

The units are where an agent's facts live: a record under its key (a field of it under
the record's first field, which says whose it is), a row under its
header, a body line under its definition, a line of prose under its paragraph's first
line and its section's headings (each heading under the one of a higher level). A line
too long for its space (a paragraph of a web page on one line, a list of links) is cut
into pieces after its sentences where it can, else after the elements of a list, its
clauses, at last at a space: a piece kept for its name reads as a whole sentence or a
whole element (a link's title beside its address), not as words cut from one.

Linear in the text: a JSON text is scanned once, and only once the C parser has accepted
it (every string the scan meets is closed: a string is skipped by one anchored pattern,
never rescanned); a text is read line by line, each line once (a long line is split at
boundaries found in a bounded window).
"""

from __future__ import annotations

import json
import re

import attrs

from .markers import stands_for

__all__ = ["Partition", "is_blank", "partition"]

_JSON_MAX = 2_000_000
"""The largest text scanned as JSON (a bigger one is read line by line)."""
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]')
"""A JSON string (skipped whole) or a structural character."""
_NONSPACE = re.compile(r"\S")
_NULL_FIELD = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"\s*:\s*null\b')
"""A field whose value is ``null`` (it says whose nothing is: it leads no record)."""
_TABLE_SEPARATOR = re.compile(r"[\s|:+-]*\Z")
_NAMES = re.compile(r"(?:[^\W\d]|[ \t|()#%&*+?,'-])*\Z")
"""A line of column names: words, spaces and the cells' separators only. No digit, no
``.``, ``/``, ``:``, ``@``, ``=``, ``$`` or quote: the values an agent reuses (an id, a
date, an amount, a path, an address, a file's name) hold one of those, a name seldom."""
_BOUNDARIES = (". ", "}, ", "},", "; ", ", ", " ")
"""Where a long line is cut into pieces, strongest first: after a sentence, after an
element of a list (a JSON object in a line of text), after a clause, at a space."""
_HEADING = re.compile(r"(#{1,6}) \S")
"""A markdown heading: the lines of its section stand under it."""
_TITLE = 80
"""The longest title before a table's header (``flights: ``)."""
_GUTTER = re.compile(r"\s*\d{1,7}(?:→|\t|:|\| ?)")
"""A numbered listing's line number (``47→``, ``47\\t``, ``47:``, ``47|``): a line's indent
is after it, and a line with nothing after it is blank (SWE-agent's ``1461:`` before an
indented ``1462:        if ...``)."""
_LISTING = re.compile(r"[ \t]*([0-9]{1,7})(?:→|\t|:(?![0-9]))")
"""A file's line number as an editor shows it (``47→``, ``47\\t``, ``1475:`` before its
indent, ``1:from ...`` at the margin; not a time, ``12:30``). A numbered line is the
file's where the line before or after it holds the number next to its own: the file's
lines then stand only under each other (not under the editor's own lines around them,
``[File: ...]``, ``(1456 more lines above)``). Numbered lines that do not run on (a
list of ports, ``22: ssh``, ``80: http``; a mapping's ``200: 'ok',``) are lines as any."""


@attrs.frozen
class Partition:
    """A text split into segments: segment ``i`` is ``text[starts[i]:starts[i + 1]]``."""

    starts: tuple[int, ...]
    """Where each segment starts, then the text's length."""
    parents: tuple[int, ...]
    """The segment each one needs beside it to keep its meaning (``-1``: none)."""
    unit: str
    """What a segment is called in a marker: ``items`` (JSON) or ``lines``."""
    closers: dict[int, int] = attrs.field(factory=dict)
    """The segment that closes each JSON opener (``]}``): kept with it, and neither is
    kept for itself (they hold no facts, only the meaning of what they enclose)."""
    stood: dict[int, int] = attrs.field(factory=dict)
    """The lines an earlier cut wrote (its markers), each with how many lines it stands
    for: never kept for itself, nor the line another is indented under."""
    headers: frozenset[int] = frozenset()
    """The segments of a text's table headers (each piece of a long one, and a markdown
    separator under one): they name the columns, so they are kept with a row, never for
    themselves (a key is not a value). A table's first line is its header where a
    markdown separator stands under it, or where it reads as column names (no value:
    :data:`_NAMES`) and a row under it does not and shares no cell with it; else it is
    a row as any (a headerless table, ``git log --format='%h|%an|%s'``, two shell
    pipelines, log lines split by bars)."""


def partition(text: str, split: int) -> Partition:
    """``text`` split into segments no longer than ``split`` characters where the text
    allows: a JSON object or array into its elements (an element longer than ``split``
    into its own, under its opener), else into lines (a table's rows under their header,
    an indented line under the line it is indented in (a file's numbered line only under
    another), a line of a paragraph under its first line, a paragraph's first line under
    its section's markdown heading; a line longer than ``split`` after its sentences,
    elements or clauses, or at spaces, its pieces under its first)."""
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and len(text) <= _JSON_MAX:
        try:
            json.loads(stripped)
        except (ValueError, RecursionError):
            pass
        else:
            found = _json_partition(text, split)
            if found is not None:
                return found
    return _line_partition(text, split)


@attrs.define
class _Container:
    elements: list[int] = attrs.Factory(list)
    """Where each element starts (an object's: its key)."""
    children: dict[int, int] = attrs.Factory(dict)
    """The container each element that is one is, by the element's position."""
    close: int = -1
    """Where its closing bracket stands."""
    record: bool = False
    """Whether it is an object (in a list: a record, whose fields stand under its first)."""


def _containers(text: str) -> list[_Container]:
    """Every object and array of a valid JSON text, outermost first, with where its
    elements start, in one pass (strings are skipped whole by the C scanner)."""
    found: list[_Container] = []
    stack: list[int] = []
    for match in _TOKEN.finditer(text):
        at = match.start()
        char = text[at]
        if char == '"':
            continue
        if char in "[{":
            if stack and found[stack[-1]].elements:
                parent = found[stack[-1]]
                parent.children[len(parent.elements) - 1] = len(found)
            stack.append(len(found))
            found.append(_Container(record=char == "{"))
        elif char in "]}":
            found[stack.pop()].close = at
            continue
        nonspace = _NONSPACE.search(text, at + 1)
        if nonspace is not None and text[nonspace.start()] not in "]}":
            found[stack[-1]].elements.append(nonspace.start())
    return found


def _json_partition(text: str, split: int) -> Partition | None:
    """The elements of a JSON text's outermost container, an element longer than
    ``split`` split into its own (its opener, its elements, its closer), iteratively (a
    result may nest deeply). An element's parent is the opener of its container (the
    key it stands under); a field of a record (an object in a list) split into its
    fields stands under the record's first field where that is a value no longer than
    ``split`` and not ``null`` (a record leads with what it is: ``"flight_number":
    "HAT170"``, a ``"price": 117`` alone says whose price it is not); ``None`` when the
    outermost container is empty."""
    containers = _containers(text)
    if not containers or not containers[0].elements:
        return None
    starts: list[int] = [0]  # the first segment: what opens the text, up to its first element
    parents: list[int] = [-1]
    closers: dict[int, int] = {}
    # A container, its opener, its next element, whether it is a record (an object in
    # a list), the segment of its first field when its other fields stand under it.
    stack: list[tuple[int, int, int, bool, int]] = [(0, 0, 0, False, -1)]
    while stack:
        index, opener, position, record, lead = stack.pop()
        container = containers[index]
        elements = container.elements
        while position < len(elements):
            start = elements[position]
            end = elements[position + 1] if position + 1 < len(elements) else container.close
            child = container.children.get(position)
            if (
                record
                and not position
                and child is None
                and end - start <= split
                and not _NULL_FIELD.match(text, start)
            ):
                lead = len(starts)
            starts.append(start)
            parents.append(lead if position and lead >= 0 else opener)
            if child is not None and end - start > split and containers[child].elements:
                stack.append((index, opener, position + 1, record, lead))
                inner = containers[child]
                stack.append((child, len(starts) - 1, 0, inner.record and not container.record, -1))
                break
            position += 1
        else:
            closers[opener] = len(starts)
            starts.append(container.close)  # what closes it, up to the next element
            parents.append(opener)
    return Partition((*starts, len(text)), tuple(parents), "items", closers)


def _title(line: str) -> int:
    """Where a table's line is after its title (``flights: ``), else 0."""
    colon = line.find(": ", 0, _TITLE)
    return colon + 2 if colon > 0 and "|" not in line[:colon] and "\t" not in line[:colon] else 0


def _titled(line: str) -> bool:
    """Whether a row of a table is the header of a table of its own: its first cell is
    titled (``flights: flight_number|date|price``, a condensed index's table; not a
    later cell, ``9f3ab21\tbob\tchore: tidy docs``)."""
    return _title(line) > 0


def _names(line: str) -> bool:
    """Whether a table's line (its title aside) reads as column names: :data:`_NAMES`."""
    return _NAMES.match(line.rstrip("\r\n"), _title(line)) is not None


def _cells(line: str) -> set[str]:
    """The cells of a table's line (its title aside), each stripped, the empty ones left
    out (a markdown row's ends)."""
    cells = line[_title(line) :].split("|" if line.count("|") >= line.count("\t") else "\t")
    return {cell.strip() for cell in cells} - {""}


def is_blank(line: str) -> bool:
    """Whether ``line`` holds nothing but white space, or a listing's line number
    (``    20→``): a line kept for itself would hold no fact."""
    gutter = _GUTTER.match(line)
    return not (line[gutter.end() :] if gutter is not None else line).strip()


def _long_line(text: str, start: int, end: int, split: int) -> list[int]:
    """Where the pieces after the first of the line ``text[start:end]`` start, when it
    is longer than ``split``: cut at the strongest of :data:`_BOUNDARIES` in the last
    half of each piece's room (a word is never cut), each piece kept only with the
    line's first (what the line is about: its id, its key)."""
    found: list[int] = []
    cut = start + split
    while cut < end:
        low = cut - split // 2
        for boundary in _BOUNDARIES:  # the strongest boundary in the window
            at = text.rfind(boundary, low, cut)
            if at >= 0:
                cut = at + len(boundary)
                break
        else:
            space = text.find(" ", cut, end - 1)
            if space < 0:
                break
            cut = space + 1
        found.append(cut)
        cut += split
    return found


@attrs.define
class _Outline:
    """The lines a text's next line may stand under, as the text is read: the lines it
    is indented in, the markdown headings of its section, its paragraph's first line."""

    indents: list[tuple[int, int]] = attrs.Factory(list)
    """(indent, segment) of the enclosing lines."""
    headings: list[tuple[int, int]] = attrs.Factory(list)
    """(level, segment) of the enclosing headings."""
    paragraph: int = -1
    """The first line of the paragraph a line at the margin continues (``-1``: none)."""

    def table(self, head: int) -> None:
        """A table's rows follow its first line (segment ``head``): a line after them
        stands under none of the table's lines (a header's meaning is its rows', and a
        line of prose right after a table starts a paragraph of its own)."""
        while self.indents and self.indents[-1][1] >= head:
            self.indents.pop()
        if self.paragraph >= head:
            self.paragraph = -1

    def parent(self, body: str, index: int, *, numbered: bool = False) -> int:
        """The line the line ``body`` (segment ``index``, not blank) stands under; a
        ``numbered`` line (a listing's, after its line number) is code, where ``# ...``
        is a comment, not a heading."""
        indent = len(body) - len(body.lstrip(" \t"))
        indents = self.indents
        while indents and indents[-1][0] >= indent:
            indents.pop()
        parent = indents[-1][1] if indents and indent > 0 else -1
        indents.append((indent, index))
        heading = None if numbered else _HEADING.match(body)
        if heading is not None:  # a section: under the heading of a higher level
            level = len(heading.group(1))
            while self.headings and self.headings[-1][0] >= level:
                self.headings.pop()
            self.paragraph = -1
            parent = self.headings[-1][1] if self.headings else -1
            self.headings.append((level, index))
        elif parent < 0 and indent == 0 and self.paragraph >= 0:
            parent = self.paragraph  # a line of a paragraph: under its first line
        elif parent < 0:
            if indent == 0:
                self.paragraph = index
            if self.headings:
                parent = self.headings[-1][1]  # a line of a section: under its heading
        return parent


def _number(text: str, position: int) -> int:
    """The number an editor shows the line at ``position`` of ``text`` with, else -1."""
    found = _LISTING.match(text, position)
    return int(found.group(1)) if found is not None else -1


def _line_partition(text: str, split: int) -> Partition:  # noqa: PLR0915 - one pass
    starts: list[int] = []
    parents: list[int] = []
    stood: dict[int, int] = {}
    headers: set[int] = set()
    outline = _Outline()
    listing = False  # whether the last line holding something was a file's numbered line
    number = -1  # the last line's number as an editor shows it (-1: none)
    table_head = -1
    table_bars = 0
    table_first, first_line = -1, ""  # the table's first line: its segment, its text
    head = range(0)  # the segments of the table's first line while it may be a header
    names = False  # whether the table's first line reads as column names
    position = 0
    while position < len(text):
        end = text.find("\n", position)
        end = len(text) if end < 0 else end + 1
        line = text[position:end]
        parent = -1
        bars = line.count("|") if len(line) <= 4 * split else 0
        tabs = line.count("\t") if len(line) <= 4 * split else 0
        cells = max(bars, tabs)
        separator = False
        if cells >= 2 and cells == table_bars and table_head >= 0 and not _titled(line):
            parent = table_head
            outline.table(table_first)
            separator = _TABLE_SEPARATOR.match(line) is not None
            if separator or (head and names and not _names(line)):
                # Its columns named, where no column's name is its value in the row (a
                # log's ``INFO | worker started | ok`` over ``INFO | job 7 done | 12s``
                # is a row): a header, with its pieces.
                if separator or not _cells(first_line) & _cells(line):
                    headers.update(head)
                head = range(0)
            if separator:
                table_head = len(starts)  # the rows stand under the separator and header
        elif cells >= 2:
            table_head = table_first = len(starts)
            first_line, names = line, _names(line)
        else:
            table_head = -1
        table_bars = cells
        previous, number = number, _number(text, position)
        gutter = _GUTTER.match(line)
        body = line[gutter.end() :] if gutter is not None else line
        stands = stands_for(line) if len(line) < 4 * split else 0
        if stands:
            stood[len(starts)] = stands
        elif not body.strip():
            outline.paragraph = -1
        elif parent < 0:
            numbered = number >= 0 and (previous == number - 1 or _number(text, end) == number + 1)
            if numbered != listing:  # into a file's lines or out of them: a new outline
                outline, listing = _Outline(), numbered
            parent = outline.parent(body, len(starts), numbered=gutter is not None)
        first = len(starts)
        starts.append(position)
        parents.append(parent)
        for cut in _long_line(text, position, end, split):
            starts.append(cut)
            parents.append(first)
        if separator:
            headers.update(range(first, len(starts)))
        elif table_head == first:
            head = range(first, len(starts))
        position = end
    if not starts:
        starts.append(0)
        parents.append(-1)
    return Partition(
        (*starts, len(text)), tuple(parents), "lines", stood=stood, headers=frozenset(headers)
    )
