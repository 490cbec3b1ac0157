"""Where a text's segments are: the elements of a JSON result, the lines of a text, and
what each needs beside it to keep its meaning (the opener holding an element's key, a
table's header, the line an indented line stands in), for
:func:`~neuron_context._messages.segments.choose_segments`.

Linear in the text: a JSON text is scanned once, and only once the C parser has accepted
it (every string the scan meets is closed: a string is skipped by one anchored pattern,
never rescanned); a text is read line by line, each line once (a long line is split at
spaces found in a bounded window).
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
_TABLE_SEPARATOR = re.compile(r"[\s|:+-]*\Z")
_TITLE = 80
"""The longest title before a table's header (``flights: ``)."""
_GUTTER = re.compile(r"\s*\d{1,7}(?:→|\t|:(?=\S)|\| ?)")
"""A numbered listing's line number (``47→``, ``47\\t``): a line's indent is after it."""


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


def partition(text: str, split: int) -> Partition:
    """``text`` split into segments no longer than ``split`` characters where the text
    allows: a JSON object or array into its elements (an element longer than ``split``
    into its own, under its opener), else into lines (a table's rows under their header,
    an indented line under the line it is indented in; a line longer than ``split`` at
    spaces, its pieces under its first)."""
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
            found.append(_Container())
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
    key it stands under); ``None`` when the outermost container is empty."""
    containers = _containers(text)
    if not containers or not containers[0].elements:
        return None
    starts: list[int] = [0]  # the first segment: what opens the text, up to its first element
    parents: list[int] = [-1]
    closers: dict[int, int] = {}
    stack: list[tuple[int, int, int]] = [(0, 0, 0)]  # container, its opener, next element
    while stack:
        index, opener, position = stack.pop()
        container = containers[index]
        elements = container.elements
        while position < len(elements):
            start = elements[position]
            end = elements[position + 1] if position + 1 < len(elements) else container.close
            child = container.children.get(position)
            starts.append(start)
            parents.append(opener)
            if child is not None and end - start > split and containers[child].elements:
                stack.append((index, opener, position + 1))
                stack.append((child, len(starts) - 1, 0))
                break
            position += 1
        else:
            closers[opener] = len(starts)
            starts.append(container.close)  # what closes it, up to the next element
            parents.append(opener)
    return Partition((*starts, len(text)), tuple(parents), "items", closers)


def _titled(line: str) -> bool:
    """Whether a row of a table is the header of a table of its own: its first cell is
    titled (``flights: flight_number|date|price``, a condensed index's table)."""
    colon = line.find(": ", 0, _TITLE)
    return colon > 0 and "|" not in line[:colon]


def is_blank(line: str) -> bool:
    """Whether ``line`` holds nothing but white space, or a listing's line number
    (``    20→``): a line kept for itself would hold no fact."""
    gutter = _GUTTER.match(line)
    return not (line[gutter.end() :] if gutter is not None else line).strip()


def _long_line(text: str, start: int, end: int, split: int) -> list[int]:
    """Where the pieces after the first of the line ``text[start:end]`` start, when it
    is longer than ``split``: cut at spaces (a word is never cut), each kept only with
    the line's first piece (what the line is about: its id, its key)."""
    found: list[int] = []
    cut = start + split
    while cut < end:
        space = text.rfind(" ", cut - split // 2, cut)
        if space < 0:
            space = text.find(" ", cut, end - 1)
            if space < 0:
                break
        cut = space + 1
        found.append(cut)
        cut += split
    return found


def _line_partition(text: str, split: int) -> Partition:
    starts: list[int] = []
    parents: list[int] = []
    stood: dict[int, int] = {}
    indents: list[tuple[int, int]] = []  # (indent, segment) of the enclosing lines
    table_head = -1
    table_bars = 0
    position = 0
    while position < len(text):
        end = text.find("\n", position)
        end = len(text) if end < 0 else end + 1
        line = text[position:end]
        parent = -1
        bars = line.count("|") if len(line) <= 4 * split else 0
        tabs = line.count("\t") if len(line) <= 4 * split else 0
        cells = max(bars, tabs)
        if cells >= 2 and cells == table_bars and table_head >= 0 and not _titled(line):
            parent = table_head
            if _TABLE_SEPARATOR.match(line) is not None:
                table_head = len(starts)  # the rows stand under the separator and header
        elif cells >= 2:
            table_head = len(starts)
        else:
            table_head = -1
        table_bars = cells
        gutter = _GUTTER.match(line)
        body = line[gutter.end() :] if gutter is not None else line
        stands = stands_for(line) if len(line) < 4 * split else 0
        if stands:
            stood[len(starts)] = stands
        elif parent < 0 and body.strip():
            indent = len(body) - len(body.lstrip(" \t"))
            while indents and indents[-1][0] >= indent:
                indents.pop()
            if indents and indent > 0:
                parent = indents[-1][1]
            indents.append((indent, len(starts)))
        first = len(starts)
        starts.append(position)
        parents.append(parent)
        for cut in _long_line(text, position, end, split):
            starts.append(cut)
            parents.append(first)
        position = end
    if not starts:
        starts.append(0)
        parents.append(-1)
    return Partition((*starts, len(text)), tuple(parents), "lines", stood=stood)
