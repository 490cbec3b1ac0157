"""What a cut says: the marker that stands where a text was cut, how to recognise one,
and the names it shows of what it replaced.

A marker counts what was cut (lines, characters, tokens) and, when the caller can name
them, the names the cut part held, as many as its share of the space allows
(:func:`fitting`), each a whole value (:func:`whole`: a piece of an id cut in two would
read as another id); a condensed rendering that is cut is named by its own values
(:func:`pieces`). :func:`is_truncated` recognises every marker this module writes (and
the shorter one of earlier releases), so a cut text is never cut again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the counter is a parameter: no import of a higher room at run time
    from .._counting.counter import BaseCounter

__all__ = [
    "SEPARATOR",
    "SHORT_GAP",
    "condensed_marker",
    "fitting",
    "gap_marker",
    "is_truncated",
    "marker",
    "pieces",
    "said_size",
    "stands_for",
    "tight",
    "whole",
]

SEPARATOR = " · "
"""Between the names of a marker: no path or URL holds it (a comma may be part of one)."""

_SHOWN = 1_000
"""The most names priced for one marker (it shows no more)."""

_TIGHT = 5
"""A text cut to less than this many times its full markers gets the short ones."""


def marker(
    cut_chars: int,
    cut_tokens: int,
    *,
    lines: int = 0,
    names: Sequence[str] = (),
    named: int = 0,
    reference: str = "",
    short: bool = False,
) -> str:
    """The line that replaces ``cut_chars`` characters (about ``cut_tokens`` tokens) of
    ``lines`` lines; ``named`` is how many names the cut part held, ``names`` those shown
    (the count is written only beside a name shown);
    ``reference`` (``recall: <key>``) says where the whole text is. ``short``: the
    tokens alone, for a text cut so far that every token of the marker is one less of
    the text (``[... 11 lines (about 209 tokens) cut ...]``)."""
    size = f"about {cut_tokens:,} tokens"
    if not short:
        size = f"{cut_chars:,} characters, {size}"
    what = f"{lines:,} line{'s' if lines != 1 else ''} ({size})" if lines else f"({size})"
    note = ""
    if names:  # a count of names none of which fits says nothing the size does not
        more = named - len(names)
        shown = SEPARATOR.join(names)
        if more > 0:
            shown = f"{shown} and {more:,} more"
        note = f", naming {named:,}: {shown}"
    if reference:
        note = f"{note}; {reference}"
    return f"\n[... {what} cut{note} ...]\n"


SHORT_GAP = "…"
"""A gap between kept segments of a text other than its largest (whose :func:`gap_marker`
says what a gap is and how many lines or items it holds, so each ``…`` holds at most as
many): a token or two, where a listing cut to its definitions has a gap every few lines
(its line numbers, when it has them, say how many lines each holds) and a JSON result
cut to ~100 tokens one between each two kept fields (where a full marker in each gap
would take ~40% of a reservation cut to 113 tokens)."""


_STANDS = re.compile(r"\[\.\.\. (?:([\d,]+) (?:lines?|items?) )?(?:\(|cut)")


def stands_for(line: str) -> int:
    """How many lines (or items) ``line`` stands for when it is a line a cut wrote (a
    :func:`marker`, a :func:`gap_marker`, a :data:`SHORT_GAP`: at least one), else 0:
    a text cut again counts what its earlier cut left out in its own gaps. A
    :data:`SHORT_GAP` does not say how many it stands for, so it counts as one: what a
    later cut counts of its gaps is a lower bound where the earlier cut wrote ``…``."""
    body = line.strip()
    if body == SHORT_GAP:
        return 1
    found = _STANDS.match(body)
    if found is None or not body.endswith(_MARKER_END):
        return 0
    return int(found.group(1).replace(",", "")) if found.group(1) else 1


_SAID = re.compile(
    r"\b([\d,]+) characters(?:, | \()about ([\d,]+) tokens\)|\(about ([\d,]+) tokens\)"
)
"""The size a marker says (an earlier release's ``N characters (about T tokens)`` too)."""


def said_size(line: str) -> tuple[int, int]:
    """The characters and tokens ``line`` says its cut held when it is a line a cut wrote
    that says so (a :func:`marker`; a short one says its tokens alone), else ``(0, 0)``:
    a text cut again counts them in its own marker."""
    found = _SAID.search(line) if stands_for(line) else None
    if found is None:
        return 0, 0
    chars, tokens, alone = found.groups()
    number = int((tokens or alone).replace(",", ""))
    return (int(chars.replace(",", "")) if chars else 0), number


def gap_marker(count: int, unit: str, *, reference: str = "") -> str:
    """The line that stands where ``count`` segments of a text (``unit``: ``lines`` or
    ``items``) were cut between segments that are kept, at a choice's largest gap (its
    other gaps are a :data:`SHORT_GAP`): ``[... 12 items cut ...]``; ``reference`` as
    :func:`marker`'s."""
    what = f"{count:,} {unit if count != 1 else unit.removesuffix('s')}"
    note = f"; {reference}" if reference else ""
    return f"[... {what} cut{note} ...]"


def condensed_marker(chars: int, tokens: int, *, short: bool = False) -> str:
    """The line before a condensed rendering of ``chars`` characters (``tokens``);
    ``short``: the tokens alone (``[condensed: about 649 tokens as an index]``)."""
    if short:
        return f"[condensed: about {tokens:,} tokens as an index]\n"
    size = f"{chars:,} characters (about {tokens:,} tokens)"
    return f"[condensed: {size} shown as an index of their values]\n"


_MARKER_HEAD = re.compile(
    r"\[condensed: [\d,]+ characters \(about [\d,]+ tokens\) shown as an index of their values\]|"
    r"\[condensed: about [\d,]+ tokens as an index\]|"
    r"\[\.\.\. (?:[\d,]+ lines? )?\((?:[\d,]+ characters, )?about [\d,]+ tokens\) cut"
    r"(?P<named>, naming |; )?"
    r"|\[\.\.\. [\d,]+ characters \(about [\d,]+ tokens\) cut(?P<old>;)?"
    r"|\[\.\.\. [\d,]+ (?:lines?|items?) cut(?P<gap>; )?"
)
"""What :func:`marker` and :func:`gap_marker` write (and the shorter marker of earlier
releases, which a stored history may hold), up to its note: a marker with a note ends
at the last ``" ...]"`` of its line, found once per line (a pattern that scanned to the
line's end from each head would be quadratic in a line of heads)."""
_MARKER_END = " ...]"


def is_truncated(text: str) -> bool:
    """Whether ``text`` holds a :func:`marker`: it was cut already, and cutting it again
    would only cut the marker (strategies that truncate skip such texts). Linear in
    ``text``."""
    line_end = last = -1
    for found in _MARKER_HEAD.finditer(text):
        end = found.end()
        if found.lastgroup is None:  # a condensed marker, or one without a note
            if found.group().endswith("]") or text.startswith(_MARKER_END, end):
                return True
            continue
        if end > line_end:
            line_end = text.find("\n", end)
            line_end = len(text) if line_end < 0 else line_end
            last = text.rfind(_MARKER_END, end, line_end)
        if last >= end:
            return True
    return False


def pieces(cut: str) -> list[str]:
    """The values of a cut part of a condensed rendering (see :data:`Condense`), in
    order, all of them: a row of a table (a line holding ``|``) is one value; other
    lines are split at ``", "`` outside braces and brackets (a small object,
    ``{economy=177, business=276}``, or a list is one value, unless the cut leaves it
    unclosed)."""
    found: list[str] = []
    for line in cut.split("\n"):
        if "|" in line:
            found.append(line.strip())
            continue
        if "{" not in line and "[" not in line:
            found.extend(piece.strip() for piece in line.split(", "))
            continue
        depth = 0
        start = 0
        for at, char in enumerate(line):
            if char in "{[":
                depth += 1
            elif char in "}]":
                depth = max(0, depth - 1)
            elif char == "," and depth == 0 and line[at + 1 : at + 2] == " ":
                found.append(line[start:at].strip())
                start = at + 2
        rest = line[start:]
        if depth:  # a bracket the cut left open: its values one by one
            found.extend(piece.strip() for piece in rest.split(", "))
        else:
            found.append(rest.strip())
    return [piece for piece in found if piece]


_SEPARATORS = " \t\r\n,;"
"""What ends a value in a text (a word, an id, a number)."""


def whole(cut: str, head: str, tail: str, *, index: bool) -> str:
    """``cut`` less a piece of a value at either end: where a value runs across the
    cut's start (end), what comes before its first (after its last) separator is part
    of a value the head (tail) shows the rest of, and named alone it would read as
    another value (``89752851`` of ``6589752851``). The separators: those of a text (a
    space, a comma, a semicolon), or with ``index``, a condensed rendering's (``", "``,
    a line end), where a row of a table (a line holding ``|``) cut in two goes whole:
    its cells may hold ``", "``."""
    if head and cut and _across(head, cut, index=index):
        if not index:
            start = 0
            while start < len(cut) and cut[start] not in _SEPARATORS:
                start += 1
            cut = cut[start:]
        else:
            first = cut.find("\n")
            at = -1 if _row(head, cut) else cut.find(", ")
            ends = [end for end in (at + 2 if at >= 0 else -1, first) if end >= 0]
            cut = cut[min(ends) :] if ends else ""
    if tail and cut and _across(cut, tail, index=index):
        if not index:
            end = len(cut)
            while end and cut[end - 1] not in _SEPARATORS:
                end -= 1
            cut = cut[:end]
        else:
            last = cut.rfind("\n")
            end = last if _row(cut, tail) else max(cut.rfind(", "), last)
            cut = cut[:end] if end >= 0 else ""
    return cut


def _across(before: str, after: str, *, index: bool) -> bool:
    """Whether a value runs across the junction of ``before`` and ``after`` (no
    separator ends the one or starts the other; in an index, a row of a table is one
    value whatever its cells hold)."""
    if not index:
        return before[-1] not in _SEPARATORS and after[0] not in _SEPARATORS
    if before.endswith("\n") or after.startswith("\n"):
        return False
    if _row(before, after):
        return True  # a row of a table, cut in two
    if before.endswith(", ") or after.startswith(", "):
        return False
    return not (before.endswith(",") and after.startswith(" "))


def _row(before: str, after: str) -> bool:
    """Whether the line that runs across the junction of ``before`` and ``after`` is a
    row of a table (it holds ``|``)."""
    end = after.find("\n")
    return "|" in before[before.rfind("\n") + 1 :] or "|" in (after if end < 0 else after[:end])


def tight(max_tokens: int, counter: BaseCounter) -> bool:
    """Whether ``max_tokens`` is so little that the markers take their short forms (the
    full marker would take more than a fifth of it)."""
    full = counter.estimate_text(marker(99_999, 9_999, lines=999) + condensed_marker(99_999, 9_999))
    return full * _TIGHT > max_tokens


def fitting(found: Sequence[str], tokens: int, counter: BaseCounter) -> list[str]:
    """The first of ``found`` that fit in ``tokens`` tokens as shown (each with its
    separator)."""
    shown: list[str] = []
    used = 0
    for name, cost in zip(found, counter.estimate_texts(list(found[:_SHOWN])), strict=False):
        used += cost + 2
        if used > tokens:
            break
        shown.append(name)
    return shown
