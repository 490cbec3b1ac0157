"""An earlier cut's marker lines in a new cut of a user's words: each kept whole or cut
whole, never a piece of one (``[... 119 l`` read as the user's words), and counted in
the new marker (:func:`whole_markers`, :func:`marker_alone`).

A text an earlier cut left (a request pinned cut by a previous compaction) holds that
cut's marker lines. The marker of a cut that replaces earlier markers counts the lines
and tokens they stood for, so the output says how much of the request is gone in all
(its tokens alone where one of them gave no character count), showing their keys
(``recall: <key>``: what they cut is read back there). Where that marker leaves no room
for words, or does not fit, it gives way in steps (:data:`FORMS`), so such a request
is never left empty where a plain cut's marker fits. Used by the cut of a user's words
(:mod:`.words`) and of a summary (:mod:`.summary_cut`).
"""

from __future__ import annotations

from ..._counting.counter import BaseCounter
from ..._messages.markers import marker, said_size, stands_for, tight
from ..._stores.offload import references_in

__all__ = ["FORMS", "common_prefix", "has_markers", "marker_alone", "marker_for", "whole_markers"]

FORMS = 4
"""The forms of a marker that replaces earlier ones, each cheaper than the one before:
0 its full form (characters where it can, tokens, the earlier markers' counts added,
their keys shown); 1 tokens alone; 2 tokens alone without the keys; 3 what the cut
itself removed (its lines and tokens as the text holds them, no earlier count added),
as a plain cut writes it. A cut takes the first that leaves room for words."""


def whole_markers(
    cut: str,
    text: str,
    space: int,
    counter: BaseCounter,
    *,
    pieces_only: bool = False,
    form: int = 0,
) -> str:
    """``cut`` (``text`` cut to ``space`` tokens: its head, a marker line, its tail) with
    the head and the tail moved out of any marker line of an earlier cut they end or
    start in (and off one they end or start with: two markers never stand in a row),
    its marker counting what the earlier markers it replaces stood for and showing the
    keys they showed (``recall: <key>``); ``cut`` as it is where it holds no earlier
    marker (in ``form``, one of :data:`FORMS`). It may cost a few tokens more than ``cut`` (a
    count of more lines): the caller cuts again shorter where it must. With
    ``pieces_only``, ``cut`` as it is unless its head or its tail holds a piece of an
    earlier marker."""
    found = _split(cut, text)
    if found is None:
        return cut
    head, tail = found
    inside = _in_line(text, len(head), head=True) or _in_line(
        text, len(text) - len(tail), head=False
    )
    if pieces_only and not inside:
        return cut
    start = _head_end(text, len(head))
    end = _tail_start(text, len(text) - len(tail))
    if (start, end) == (len(head), len(text) - len(tail)) and not has_markers(text[start:end]):
        return cut  # no earlier marker in or around the cut
    line = marker_for(text, start, end, space, counter, form=form)
    return text[:start].rstrip("\n").rstrip(" ") + line + text[end:]


def marker_alone(text: str, space: int, counter: BaseCounter) -> str:
    """The marker line that stands for all of ``text`` in a cut to ``space`` tokens (the
    earlier markers in it counted, their keys shown): what is left of a text no cut of
    which fits."""
    return marker_for(text, 0, len(text), space, counter).strip("\n")


def marker_for(
    text: str, start: int, end: int, space: int, counter: BaseCounter, *, form: int = 0
) -> str:
    """The marker line that stands for ``text[start:end]`` (whole lines, earlier markers
    among them) in a cut to ``space`` tokens: its lines, characters and tokens, the
    earlier markers' counted as what they said they stood for, and the keys they showed
    (``recall: <key>``: what they cut is read back there). Its short form (tokens
    alone) where an earlier marker gave no character count: a count of characters would
    leave out what that one stood for. Cheaper in a later ``form`` (:data:`FORMS`)."""
    pieces = text[start:end].split("\n")
    chars = end - start
    tokens = counter.estimate_text(text) - counter.estimate_text(text[:start] + text[end:])
    lines = [piece for piece in pieces if piece.strip()] or [""]
    if form == FORMS - 1:  # what this cut removed, as a plain cut counts it
        return marker(chars, tokens, lines=len(lines), short=True)
    earlier = [piece for piece in pieces if stands_for(piece)]
    uncounted = False  # a marker that gave no character count (a short one)
    for piece in earlier:  # what each stood for, beyond its own length and cost
        said_chars, said_tokens = said_size(piece)
        chars += max(0, said_chars - len(piece))
        tokens += max(0, said_tokens - counter.estimate_text(piece))
        uncounted = uncounted or not said_chars
    count = sum(stands_for(piece) or 1 for piece in lines)
    keys = [key for piece in earlier for key in references_in(piece)]
    reference = "; ".join(f"recall: {key}" for key in dict.fromkeys(keys)) if form < 2 else ""
    short = uncounted or form > 0 or tight(space, counter)  # no character count it cannot make good
    return marker(chars, tokens, lines=count, reference=reference, short=short)


def _in_line(text: str, at: int, *, head: bool) -> bool:
    """Whether a cut at ``at`` (the end of a head, or the start of a tail) falls inside a
    marker line of ``text``: the head would keep its first characters, the tail its
    last."""
    if not 0 < at < len(text):
        return False
    start = text.rfind("\n", 0, at) + 1  # the line the cut falls in
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    inside = start < at < end if head else start < at <= end - 1
    return inside and bool(stands_for(text[start:end]))


def has_markers(text: str) -> bool:
    """Whether ``text`` holds a line a cut wrote."""
    return any(stands_for(line) for line in text.split("\n"))


def _head_end(text: str, start: int) -> int:
    """Where a head of ``text`` ending at ``start`` ends once it keeps no piece of an
    earlier marker line, nor such a line as its last (the new marker replaces it)."""
    while start > 0:
        line_start = text.rfind("\n", 0, start - 1) + 1  # the line of its last character
        line_end = text.find("\n", line_start)
        if not stands_for(text[line_start : len(text) if line_end < 0 else line_end]):
            return start
        start = max(0, line_start - 1)
    return start


def _tail_start(text: str, end: int) -> int:
    """Where a tail of ``text`` starting at ``end`` starts once it keeps no piece of an
    earlier marker line, nor such a line as its first."""
    while end < len(text):
        probe = end + (text[end] == "\n")  # a line end before the tail: its next line
        line_start = text.rfind("\n", 0, probe) + 1
        line_end = text.find("\n", probe)
        line_end = len(text) if line_end < 0 else line_end
        if not stands_for(text[line_start:line_end]):
            return end
        end = min(len(text), line_end + 1)
    return end


def _split(cut: str, text: str) -> tuple[str, str] | None:
    """The head and the tail of ``text`` that ``cut`` keeps around its marker line, or
    ``None`` where ``cut`` is not ``text``'s head, a marker line and its tail."""
    if cut == text or not cut:
        return None
    same = common_prefix(cut, text)
    start = cut.rfind("\n", 0, same + 1)  # the marker line's leading line end
    stop = cut.find("\n", start + 1)
    if start < 0 or stop < 0 or not stands_for(cut[start + 1 : stop]):
        return None
    head, tail = cut[:start], cut[stop + 1 :]
    if not text.startswith(head) or not text.endswith(tail):
        return None
    if len(head) + len(tail) > len(text):
        return None
    return head, tail


def common_prefix(first: str, second: str) -> int:
    """How many characters ``first`` and ``second`` start with alike."""
    for index, (one, other) in enumerate(zip(first, second, strict=False)):
        if one != other:
            return index
    return min(len(first), len(second))
