"""A user's request quoted in less space than it takes: its pieces that hold what an
agent reuses, whole.

A request is prose, most often one line: ``Sure! My user ID is aarav_garcia_1177.
Unfortunately, I don't have the reservation ID handy right now.`` Cut in the middle, it
keeps ``Sure! My user ID is`` and ``ndy right now.``: the one thing the next step needs is
what the cut removed. A request holds its facts with the words that say what they are, in
its lines (a passenger's line: the name its date of birth belongs to) and, within a line,
in its sentences and clauses. So :func:`sentences_kept` keeps the pieces worth most per
token (what a :data:`~neuron_context._messages.segments.Weigh` finds in them: ids, dates,
names with their labels), whole, in their order, a
:data:`~neuron_context._messages.markers.SHORT_GAP` where others were left out, then fills
what room is left with the others, the first ones first (they say what the request is
about)::

    Sure! My user ID is aarav_garcia_1177. Unfortunately, …

Its whole lines are chosen where it has several and one that holds something fits, else its
sentences and clauses. Only requests of up to :data:`_PIECES` pieces are chosen this way:
a longer one (an issue, a pasted log) is cut as any text is, by its lines.
"""

from __future__ import annotations

import re
from itertools import groupby
from typing import TYPE_CHECKING

from .._messages.markers import SHORT_GAP, stands_for
from .._messages.segments import Weigh

if TYPE_CHECKING:  # the counter is a parameter: no import of a higher room at run time
    from .._counting.counter import BaseCounter

__all__ = ["closed", "closer", "fences_closed", "open_fence", "sentences_kept"]

_LINES = re.compile(r"\n+")
"""Where a request's lines end."""
_CLAUSES = re.compile(r"(?<=[.!?,;])[ \t]+(?=\S)|\n+")
"""Where its sentences and their clauses end (after ``.``, ``!``, ``?``, ``,`` or ``;``
and the spaces after it), and its lines."""
_PIECES = 48
"""The most pieces a request is chosen from (a longer one is cut by its lines)."""
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
"""A line that opens or closes a Markdown code block (its fence, then its info string)."""


def open_fence(text: str) -> str:
    """The fence of the Markdown code block ``text`` leaves open (```` ``` ````, ``~~~~``),
    ``""`` when it closes every block it opens: a block closes at a line of at least
    as many of the same fence characters and nothing else (CommonMark)."""
    fence = ""
    for line in text.split("\n"):
        found = _FENCE.fullmatch(line.rstrip("\r"))
        if found is None:
            continue
        mark, rest = found.groups()
        if not fence:
            if not (mark[0] == "`" and "`" in rest):
                fence = mark
        elif mark[0] == fence[0] and len(mark) >= len(fence) and not rest.strip():
            fence = ""
    return fence


def closed(text: str) -> str:
    """``text`` with the code block it leaves open closed on a line of its own (a
    request quoted whole whose block the user never closed would turn the rest of the
    summary into code)."""
    fence = open_fence(text)
    return f"{text}\n{closer(fence)}" if fence else text


def fences_closed(kept: str, text: str) -> str:
    """``kept`` (what a cut keeps of ``text``: runs of its lines, each gap a cut's marker
    line, see :func:`~neuron_context._messages.markers.stands_for`) with the code block
    open before each marker closed before it, the one ``text`` has open where the next
    run stands opened after it, and the one open at the end closed: a quote cut in its
    code would otherwise turn the rest of the summary into code, and a run that starts
    in a block would read its closing fence as an opening one. A run that is not
    ``text``'s as it stands (a line cut in its clauses) leaves the blocks as the kept
    lines read."""
    lines: list[str] = []
    fence = ""  # as the lines written so far leave it
    at = 0  # in ``text``: after the last run found there
    for marker, run in groupby(kept.split("\n"), key=lambda line: bool(stands_for(line))):
        chunk = list(run)
        if marker:
            if fence:
                lines.append(closer(fence))
                fence = ""
            lines.extend(chunk)
            continue
        said = "\n".join(chunk)
        found = text.find(said, at)
        if found >= 0:
            if lines and not fence:  # after a gap: the block ``text`` has open there
                fence = open_fence(text[: text.rfind("\n", 0, found) + 1])
                if fence:
                    lines.append(fence)
            at = found + len(said)
        for line in chunk:
            lines.append(line)
            fence = open_fence(f"{fence}\n{line}" if fence else line)
    if fence:
        lines.append(closer(fence))
    return "\n".join(lines)


def closer(fence: str) -> str:
    """The line that closes the code block ``fence`` opened."""
    return fence[0] * len(fence)


def sentences_kept(text: str, max_tokens: int, counter: BaseCounter, weigh: Weigh) -> str:
    """``text``'s pieces worth most that fit ``max_tokens`` together (see the module
    docstring): its whole lines where it has several and one worth something fits (a
    passenger's line keeps the name its date of birth belongs to), else its sentences
    and clauses; ``""`` when it has fewer than two pieces or more than :data:`_PIECES`,
    when none holds anything ``weigh`` finds, or when none fits. Each piece is the
    text's own, with its indent and what ends it (kept pieces in a row read as the
    text does); a :data:`~neuron_context._messages.markers.SHORT_GAP` stands for each
    run left out."""
    for pattern, joint in ((_LINES, "\n"), (_CLAUSES, " ")):
        pieces = _pieces(text, pattern)
        kept = _chosen(pieces, joint, max_tokens, counter, weigh)
        if kept:
            return kept
    return ""


def _pieces(text: str, pattern: re.Pattern[str]) -> list[str]:
    """``text`` cut after each match of ``pattern`` (a piece keeps the line end or the
    spaces after it), its pieces of only blanks joined to the piece before; more than
    :data:`_PIECES` pieces are not made (the count alone says so)."""
    pieces: list[str] = []
    start = 0
    for found in pattern.finditer(text):
        piece = text[start : found.end()]
        if pieces and not piece.strip():
            pieces[-1] += piece
        else:
            pieces.append(piece)
        start = found.end()
        if len(pieces) > _PIECES:
            return pieces
    if text[start:].strip() or not pieces:
        pieces.append(text[start:])
    else:
        pieces[-1] += text[start:]
    return _spans_whole([piece for piece in pieces if piece.strip()])


def _spans_whole(pieces: list[str]) -> list[str]:
    """``pieces`` with a piece that opens a backtick span (inline code, ``a; b``) joined
    to those that follow up to the one that closes it: a cut never leaves a span open."""
    joined: list[str] = []
    open_span = False
    for piece in pieces:
        if open_span:
            joined[-1] += piece
        else:
            joined.append(piece)
        open_span ^= piece.count("`") % 2 == 1
    return joined


def _chosen(
    pieces: list[str], joint: str, max_tokens: int, counter: BaseCounter, weigh: Weigh
) -> str:
    """The ``pieces`` worth most per token that fit ``max_tokens`` joined, then the
    others of more than two words, the first first, each text once (a repeated piece is
    kept where it first fits); ``""`` when none worth something fits (``joint``: what
    follows a gap's mark)."""
    if not 2 <= len(pieces) <= _PIECES:
        return ""
    worth = [sum(weigh(piece).values()) for piece in pieces]
    if not any(worth):
        return ""
    costs = [max(1, counter.estimate_text(piece)) for piece in pieces]
    weighed = sorted(
        (i for i in range(len(pieces)) if worth[i] > 0), key=lambda i: (-worth[i] / costs[i], i)
    )
    # A piece of no worth of a word or two (``Hi!``) says next to nothing beside its gap.
    others = [i for i in range(len(pieces)) if worth[i] <= 0 and len(pieces[i].split()) > 2]
    kept: set[int] = set()
    said: set[str] = set()
    for index in [*weighed, *others]:
        if costs[index] > max_tokens or pieces[index].strip() in said:
            continue  # priced once: the joined text tried stays within twice the space
        if counter.estimate_text(_joined(pieces, kept | {index}, joint)) <= max_tokens:
            kept.add(index)
            said.add(pieces[index].strip())  # the same piece twice says it once
    if not any(worth[i] > 0 for i in kept):
        return ""
    return _joined(pieces, kept, joint)


def _joined(pieces: list[str], kept: set[int], joint: str) -> str:
    """The ``kept`` pieces in their order, as the text has them, a :data:`SHORT_GAP`
    and ``joint`` for each run left out (the last piece kept before a gap without the
    spaces that end it)."""
    parts: list[str] = []
    after = -1  # the piece before the next one kept
    for index in sorted(kept):
        if index != after + 1:
            if parts:
                parts[-1] = parts[-1].rstrip()
                parts.append(joint)
            parts.append(SHORT_GAP + joint)
        parts.append(pieces[index])
        after = index
    if after != len(pieces) - 1:
        parts[-1] = parts[-1].rstrip()
        parts.append(joint + SHORT_GAP)
    return "".join(parts).rstrip()
