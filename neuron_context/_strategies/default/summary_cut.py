"""A summary's text cut to a space by the last resort of a
:class:`~neuron_context._strategies.default.DefaultStack` compaction
(:func:`cut_summary`): its plan block kept whole, the rest cut in the middle with every
quote and code block the cut leaves open closed before the marker (and opened again
after it), and no piece of an earlier cut's marker kept."""

from __future__ import annotations

from ..._counting.counter import BaseCounter
from ..._messages.truncation import truncate_text
from ..._summary.agent_plan import PLAN_CLOSE, PLAN_OPEN
from ..._summary.format import REQUEST_CLOSE, REQUEST_OPEN
from ..._summary.quotes import closer, open_fence
from .earlier_markers import common_prefix, has_markers, marker_alone, whole_markers

__all__ = ["cut_summary"]

_BLOCK_TRIES = 4
"""How many cuts of a summary are tried, each below the last cut by what closing its
blocks cost over the space, before its marker alone stands for it."""


def cut_summary(text: str, space: int, counter: BaseCounter) -> str:
    """A summary's text cut to ``space`` tokens; its plan block, when it has one and it
    fits, is kept whole and the rest cut around it."""
    opening = text.find(PLAN_OPEN + "\n")
    closing = text.find("\n" + PLAN_CLOSE, opening)
    if opening < 0 or closing < 0:
        return _cut_blocks(text, space, counter)
    end = closing + len(PLAN_CLOSE) + 1
    plan = text[opening:end]
    left = space - counter.estimate_text(plan + "\n\n")
    if left < 0:
        return _cut_blocks(text, space, counter)
    rest = _cut_blocks((text[:opening] + text[end:]).strip("\n"), left, counter)
    return f"{plan}\n\n{rest}" if rest else plan


def _cut_blocks(text: str, space: int, counter: BaseCounter) -> str:
    """``text`` (a summary's) cut in the middle to ``space`` tokens; where its head and
    its tail stand in different blocks (the head in a quote, the tail after it), the
    blocks open at the end of the head are closed before the marker and those open at
    the start of the tail opened after it (cut again to leave them their room): the
    rest of the summary never reads as the user's words or as code, and a summary that
    carries this one reads each quote whole. Where closing them costs more than the
    space, the cut is tried shorter (each try below the last cut's own cost, by what it
    was over); where no try fits, the marker alone stands for all of ``text`` (a cut
    that leaves a quote open would make the rest read as the user's words), or ``""``
    where not even that fits (the caller drops the summary then)."""
    goal = space
    marked = has_markers(text)
    for _ in range(_BLOCK_TRIES):
        cut = truncate_text(text, goal, counter)
        if marked:  # no piece of an earlier cut's marker (a quote cut before)
            cut = whole_markers(cut, text, goal, counter, pieces_only=True)
        fixed = _closed(cut, text)
        over = counter.estimate_text(fixed) - space
        if over <= 0:
            return fixed
        # Below the cut this goal gave (a cut is the same for several goals in a row).
        goal = min(goal, counter.estimate_text(cut)) - over
    alone = marker_alone(text, space, counter)
    return alone if counter.estimate_text(alone) <= space else ""


def _closed(cut: str, text: str) -> str:
    """``cut`` (``text``'s head, a marker line, its tail or none) with the blocks open at
    the end of its head closed before the marker, and those open at the start of its
    tail opened after it, where the two differ (a cut that keeps the head alone closes
    them all)."""
    if cut == text:
        return cut
    same = common_prefix(cut, text)
    start = cut.rfind("\n", 0, same + 1) + 1  # where the marker's line starts
    end = len(cut) - common_prefix(cut[::-1], text[::-1])
    end += cut[end : end + 1] == "\n"  # where the tail starts
    if not 0 < start < end <= len(cut):
        return cut  # no head before the marker
    before = _open_blocks(text[:start])
    after = _open_blocks(text[: len(text) - (len(cut) - end)]) if end < len(cut) else []
    if before == after:
        return cut  # the marker stands inside the blocks the head and the tail share
    closers = "".join(f"{close}\n" for _, close in reversed(before))
    openers = "".join(f"{opening}\n" for opening, _ in after)
    return cut[:start] + closers + cut[start:end] + openers + cut[end:]


def _open_blocks(text: str) -> list[tuple[str, str]]:
    """The quote and the code block open at the end of ``text`` (a summary's first
    lines), outermost first: each as the line that opens it and the one that closes it.
    A line that is :data:`REQUEST_CLOSE` ends the quote and any code block opened in it
    (a quote escapes the tags in the user's words: that line is never theirs, and a
    block the user left open ends with their words)."""
    blocks: list[tuple[str, str]] = []
    fence = ""
    quoted = False
    for line in text.split("\n")[:-1]:  # the lines ended in ``text``
        if not fence and line == REQUEST_OPEN:
            quoted = True
        elif quoted and line == REQUEST_CLOSE:
            quoted, fence = False, ""
        else:
            fence = open_fence(f"{fence}\n{line}" if fence else line)
    if quoted:
        blocks.append((REQUEST_OPEN, REQUEST_CLOSE))
    if fence:
        blocks.append((fence, closer(fence)))
    return blocks
