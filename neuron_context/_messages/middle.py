"""The cut in the middle: a text's head and tail kept around a marker saying what was cut.

The head of a file or log says what it is and the tail holds how it ended (a test
summary, the last error), so a text too long for its space keeps both, and a marker in
between says what was cut, so neither the model nor the user mistakes the rest for the
whole: how many lines, characters and tokens, and, when the caller can name them, the
names the cut part held (its identifiers, numbers with their keys, paths), counted, as
many as a share of the space allows::

    [... 212 lines (41,802 characters, about 10,450 tokens) cut, naming 64: HAT170 ·
    price=1286 · src/app.py · ... and 51 more ...]

(the marker, and the names it shows: :mod:`neuron_context._messages.markers`). The head
and the tail end at line ends where one is near, so a row of a listing is kept whole or
not at all, never as a piece that reads as another value. Everything is priced by the
caller's counter. :mod:`neuron_context._messages.truncation` decides when a text is cut
in the middle rather than by a choice of its segments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

from .markers import fitting, marker, pieces, tight, whole

if TYPE_CHECKING:  # the counter is a parameter: no import of a higher room at run time
    from .._counting.counter import BaseCounter

__all__ = ["HEAD_SHARE", "NOTE_SHARE", "Describe", "cut_middle"]

Describe: TypeAlias = Callable[[str], Sequence[str]]
"""Given the part of a text that is cut, the names it holds, most telling first (the
marker counts them and shows as many as its share of the space allows)."""

HEAD_SHARE = 0.6
"""The share of what is kept that comes from the head of the text (the rest: its tail)."""

NOTE_SHARE = (0.3, 0.7)
"""The most of a truncated text's space the names in its marker may take: the first
share when little is cut, growing with the share cut up to the second (a text cut to a
tenth of itself keeps a head and a tail that say little; the names of what was cut
say more)."""

_NEAR = 5
"""A line end in the last (first) ``1/_NEAR`` of a head (tail) is where it is cut."""

_NEAR_CHARS = 80
"""... or in its last (first) this many characters (a line of a listing)."""

_MIN_KEEP = 16
"""Characters below which a text is not worth cutting: it is replaced by the marker."""


def cut_middle(
    text: str,
    max_tokens: int,
    counter: BaseCounter,
    describe: Describe | None,
    reference: str = "",
) -> str:
    """``text`` if it costs at most ``max_tokens``, else its head and tail around a
    :func:`~neuron_context._messages.markers.marker`, costing at most ``max_tokens``;
    ``""`` when not even the marker fits (the cut of
    :func:`~neuron_context._messages.truncation.truncate_text` without condensing).

    The names in the marker get their share of ``max_tokens`` first (a larger share the
    more is cut, see :data:`NOTE_SHARE`); the head and the tail share the rest. Each try
    that comes out too long shrinks the head and the tail by the overshoot, then the
    names."""
    cost = counter.estimate_text(text)
    if cost <= max_tokens:
        return text
    low, high = NOTE_SHARE
    kept = max(max_tokens, 0) / cost
    short = tight(max_tokens, counter)
    note = int(max(max_tokens, 0) * min(high, low + (high - low) * (1 - kept))) if describe else 0
    bare = counter.estimate_text(
        marker(len(text), cost, lines=text.count("\n") + 1, reference=reference, short=short)
    )
    keep = int(len(text) * max(0, max_tokens - bare - note) / cost)
    best = ""
    for _ in range(12):
        head, tail = _ends(text, keep)
        cut = text[len(head) : len(text) - len(tail)]
        names: list[str] = []
        named = 0
        if describe is not None and note > 0:
            found = describe(whole(cut, head, tail, index=describe is pieces))
            named = len(found)
            names = fitting(found, note, counter)
        cut_tokens = max(0, cost - counter.estimate_text(head) - counter.estimate_text(tail))
        line = marker(
            len(cut),
            cut_tokens,
            lines=cut.count("\n") + 1,
            names=names,
            named=named,
            reference=reference,
            short=short,
        )
        # The marker ends a line: a tail that starts one keeps its indent.
        starts = not tail or len(tail) == len(text) or text[-len(tail) - 1] == "\n"
        candidate = head.rstrip(" ") + line + (tail if starts else tail.lstrip(" "))
        over = counter.estimate_text(candidate) - max_tokens
        if over <= 0:
            return candidate
        best = candidate
        if keep > 0:  # shrink the head and tail by the overshoot, at this text's density
            keep = max(0, keep - max(int(over * len(text) / cost * 1.1), keep // 10, 1))
        elif note > 0:
            note = max(0, note - over - 1)
        else:
            break
    return best if counter.estimate_text(best) <= max_tokens else ""


def _ends(text: str, keep: int) -> tuple[str, str]:
    """The head and the tail kept of ``text`` when ``keep`` characters are kept, cut
    at line ends where a line end is near (in the fifth of each nearest the cut, or in
    the ``_NEAR_CHARS`` characters nearest it when the line cut is no longer than that,
    see :func:`_near`): a line of a listing or a table is kept whole or not at all,
    never as a part that reads as another value (an id cut in two)."""
    if keep < _MIN_KEEP:
        return "", ""
    head_chars = int(keep * HEAD_SHARE)
    if _piece_of_row(text, len(text) - (keep - head_chars), len(text)):
        head_chars = keep  # the tail would be a piece of the last row: the head takes it
        if _piece_of_row(text, 0, keep) and "\n" in text.rstrip("\n"):
            return "", ""  # ... unless it too would be one: no row fits, only the marker
    elif _piece_of_row(text, 0, head_chars):
        head_chars = 0  # ... or the head a piece of the first row: the tail takes it
        if _piece_of_row(text, len(text) - keep, len(text)) and "\n" in text.rstrip("\n"):
            return "", ""
    tail_start = len(text) - (keep - head_chars)
    head = text[:head_chars]
    tail = text[tail_start:]
    end = head.rfind("\n")
    if end > 0 and text[head_chars : head_chars + 1] != "\n":  # not at a row's end already
        line_end = text.find("\n", head_chars)
        row = (len(text) if line_end < 0 else line_end) - end - 1  # the line cut
        if _near(len(head) - end, len(head), row):
            head = head[:end]  # the marker starts on a line of its own
    start = tail.find("\n")
    if 0 <= start < len(tail) - 1 and text[tail_start - 1] != "\n":
        row = tail_start + start - text.rfind("\n", 0, tail_start) - 1  # the line cut
        if _near(start, len(tail), row):
            tail = tail[start + 1 :]
    return head, tail


def _piece_of_row(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (a head from 0 or a tail to the end) is a piece of
    one row of a listing (a line of at most ``_NEAR_CHARS`` characters), not all of it:
    shown alone, a piece of a row reads as another value (``665742`` of ``6589665742``)."""
    if start >= end:
        return False
    if start == 0:  # a head: the first line
        line_end = text.find("\n")
        line_end = len(text) if line_end < 0 else line_end
        return end < line_end <= _NEAR_CHARS
    body_end = len(text.rstrip("\n"))
    if start >= body_end or "\n" in text[start:body_end]:
        return False
    line_start = text.rfind("\n", 0, start) + 1
    return line_start < start and body_end - line_start <= _NEAR_CHARS


def _near(dropped: int, kept: int, row: int) -> bool:
    """Whether a part kept (``kept`` characters) ends at the line end ``dropped``
    characters from its cut: in its fifth nearest the cut, or, when the line cut is a
    row of a listing (``row`` characters, at most ``_NEAR_CHARS``), wherever it is (a
    part of a long line, a paragraph, is kept rather than the whole head or tail)."""
    return dropped <= kept // _NEAR or (row <= _NEAR_CHARS and dropped <= _NEAR_CHARS)
