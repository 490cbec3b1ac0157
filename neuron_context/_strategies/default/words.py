"""A user's words cut to a goal (:func:`cut_words`), as a
:class:`~neuron_context._strategies.default.DefaultStack` compaction pins a request or
the task, and its last resort cuts them (or the user message that opened a kept step)
further; a pinned request cut again from its original into the room there is now
(:func:`regrown`).

A user's words are cut in the middle, head and tail kept, or by content where that
holds more of their names (:mod:`.clauses`: a one-line request's sentences or clauses
worth most, each gap a ``…``), and the words come first: the marker says how much was cut, and
names none of it (the names of a cut part take the
room of the words that say what the request asks; a long request cut to a few dozen
tokens kept a marker's list of file names and a piece of its last line where the plain
cut keeps its first requirement whole). A bigger goal keeps no fewer words than the
middle cut itself does (a Hypothesis property; just above the goal where markers take
their full form, the cut with the short marker is taken where it keeps more; a cut tried
again shorter goes below the cut it last gave, so a few one-token tries never end in no
words; a cut that keeps no words at its goal takes a middle cut at a goal a few tokens
above that comes out within it). Where the middle cut itself (``truncate_message``)
keeps fewer characters at the bigger goal, this cut may too: its tries shrink the head
and the tail by their overshoot in steps (a plain paragraph keeps 711 characters at 194
tokens, 707 at 195), and its rule that never shows a piece of a row can keep a re-cut
text's head at one goal and its tail alone at the next. Nor where either goal's cut
is the by-content cut of a one-line text: each goal takes whichever of the by-content
and the middle cut holds more of the text's names (then more characters), neither
holds more names at every bigger goal, and so the choice can trade places from one goal
to the next (a code line repeated keeps 59 characters at 21 tokens, 27 at 22).

A text an earlier cut left (a request pinned cut by a previous compaction) holds that
cut's marker lines: a cut keeps each of them whole or cuts it whole, never a piece of one
(``[... 119 l`` read as the user's words), and the marker of a cut that replaces earlier
markers counts the lines and tokens they stood for, so the output says how much of the
request is gone in all (its tokens alone where one of them gave no character count),
showing their keys. Where that marker leaves no room for words, or does not fit, it
gives way in steps (:data:`_FORMS`), so such a request is never left empty where a
plain cut's marker fits.
Where no step is kept and a task's cut would say nothing, the task and the newest
request share their room, each keeping words (:func:`shared`), before the task goes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from ..._counting.counter import BaseCounter
from ..._messages.content import ContentBlock, Text
from ..._messages.markers import marker, said_size, stands_for, tight
from ..._messages.message import Message, Role
from ..._messages.truncation import truncate_message
from ..._stores.offload import references_in
from ..._summary.facts import condense
from .clauses import by_content, holds, reused
from .water import describe_cut

if TYPE_CHECKING:  # the plan pins requests with cut_words: no import of it at run time
    from .plan import Part

__all__ = [
    "common_prefix",
    "cut_words",
    "has_markers",
    "marker_alone",
    "regrown",
    "says",
    "shared",
    "whole_markers",
    "words_kept",
]

_SWITCH = 16
"""How far above the goal where markers take their full form a cut is compared with the
cut at the goal below (its marker short): the few tokens the full form costs more are
words the bigger goal would otherwise lose."""

_TRIES = 4
"""How many cuts are tried, each shorter by its overshoot, where a marker that counts
the earlier markers it replaces costs more than the one it stands for."""

_FORMS = 4
"""The forms of a marker that replaces earlier ones, each cheaper than the one before:
0 its full form (characters where it can, tokens, the earlier markers' counts added,
their keys shown); 1 tokens alone; 2 tokens alone without the keys; 3 what the cut
itself removed (its lines and tokens as the text holds them, no earlier count added),
as a plain cut writes it. A cut takes the first that leaves room for words."""


def cut_words(message: Message, goal: int, counter: BaseCounter) -> Message:
    """``message`` cut to ``goal`` tokens: a user's words (a message with no tool
    results) in the middle, the marker counting what is gone, earlier markers included,
    and never cutting one in two; any other message with its marker naming what the cut
    part holds."""
    if message.role is not Role.USER or message.tool_results:
        return truncate_message(message, goal, counter, describe=describe_cut, condense=condense)
    cut = _words_cut(message, goal, counter)
    if cut is message:
        return cut
    below = _below_short(message, goal, counter)
    if below is not None:
        # Just above the goal where markers take their short form, a cut with the
        # short marker (at the goal below) may keep more words than one with the full.
        shorter = _words_cut(message, below, counter)
        if words_kept(shorter) > words_kept(cut):
            cut = shorter
    chosen = by_content(message, goal, counter)
    if chosen is None:
        return cut
    names = reused(message)  # a piece of a name the middle cut leaves is not one
    if not names:
        return cut  # nothing to weigh the pieces by: the middle cut keeps head and tail
    if (holds(chosen, names), words_kept(chosen)) > (holds(cut, names), words_kept(cut)):
        return chosen
    return cut


def _below_short(message: Message, goal: int, counter: BaseCounter) -> int | None:
    """The largest goal under ``goal`` whose cut of ``message`` writes short markers,
    where ``goal``'s writes full ones and is within :data:`_SWITCH` tokens of it; else
    ``None`` (a marker is short by the tokens its text is cut to: the goal less what the
    message costs beyond its texts)."""
    texts = sum(counter.estimate_text(b.text) for b in message.content if isinstance(b, Text))
    beyond = counter.estimate_message(message) - texts
    if tight(goal - beyond, counter):
        return None
    for below in range(goal - 1, max(0, goal - _SWITCH) - 1, -1):
        if tight(below - beyond, counter):
            return below
    return None


def words_kept(message: Message) -> int:
    """How many characters of ``message``'s text are not a cut's marker lines."""
    return sum(len(line) for line in message.text.split("\n") if not stands_for(line))


def _words_cut(message: Message, goal: int, counter: BaseCounter) -> Message:
    """A user's ``message`` cut in the middle to ``goal`` tokens, its earlier markers
    each kept whole or cut whole and counted in the new one: the new marker in its full
    form where a cut with it keeps words, else in the next of its :data:`_FORMS` that
    does (the first cut that fits and holds a marker where none keeps words)."""
    cut = truncate_message(message, goal, counter)
    if cut is message:
        return cut
    if not any(_marked(block) for block in message.content):
        if says(cut) or not says(message):
            return cut
        return next((c for c in _above(message, goal, counter) if says(c)), cut)
    first: Message | None = None
    for tried in (cut, *_above(message, goal, counter)):
        for form in range(_FORMS):
            mended = _fitted(message, tried, goal, counter, form)
            if mended is None:
                continue
            if says(mended):
                return mended
            if first is None and mended.text.strip():
                first = mended
    return _gone(message, cut, goal, counter) if first is None else first


def _above(message: Message, goal: int, counter: BaseCounter) -> Iterator[Message]:
    """The middle cuts of ``message`` at the :data:`_TRIES` goals above ``goal`` that
    come out within ``goal``: the middle cut shrinks its head and tail in steps, so a
    cut that keeps words within a goal may be found only from a goal above it (where
    the cut at the goal itself kept none)."""
    for above in range(goal + 1, goal + 1 + _TRIES):
        cut = truncate_message(message, above, counter)
        if counter.estimate_message(cut) <= goal:
            yield cut


def _fitted(
    message: Message, cut: Message, goal: int, counter: BaseCounter, form: int
) -> Message | None:
    """``cut`` (``message`` cut to ``goal``) with its earlier markers kept whole, the new
    marker in ``form``, cut again shorter where that costs more than ``goal``; ``None``
    where no such cut fits in :data:`_TRIES` tries."""
    space = goal
    for attempt in range(_TRIES):
        if attempt:
            cut = truncate_message(message, space, counter)
        content = tuple(
            _whole(after, before, space, counter, form) if _marked(before) else after
            for before, after in zip(message.content, cut.content, strict=True)
        )
        mended = attrs.evolve(cut, content=content)
        over = counter.estimate_message(mended) - goal
        if over <= 0:
            return mended
        # Below the cut this space gave (a cut is the same for several goals in a row).
        space = min(space, counter.estimate_message(cut)) - over
    return None


def regrown(
    parts: Sequence[Part],
    slack: int,
    originals: Mapping[str, Message],
    *,
    counter: BaseCounter,
    part_cost: Callable[[Part], int],
    caps: Mapping[str, int] | None = None,
) -> list[Part]:
    """``parts`` with their pinned requests cut again from their ``originals`` (by kind:
    ``request``, then ``task``) into the ``slack`` tokens there are now beside them, no
    longer than ``caps`` says for their kind (whole where that fits): a request the last
    resort cut to leave room for what then took less (a task gone, an index shorter than
    its placeholder) keeps more of its words. Each takes what it gains of the slack, at
    the biggest goal (of the :data:`_SWITCH` below its own) whose cut keeps no fewer
    words and says something where the part did; the output costs no more than
    ``parts`` and ``slack``."""
    output = list(parts)
    for kind in ("request", "task"):
        original = originals.get(kind)
        if original is None:
            continue
        for position, part in enumerate(output):
            if slack <= 0:
                return output
            if part.kind != kind or part.message is original:
                continue
            cost = part_cost(part)
            goal = cost + slack if caps is None else min(cost + slack, caps.get(kind, 0))
            if goal <= cost:
                continue
            for tried in range(goal, max(cost, goal - _SWITCH), -1):
                fuller = attrs.evolve(part, message=cut_words(original, tried, counter))
                gained = part_cost(fuller) - cost
                if 0 < gained <= slack and _no_less(fuller.message, part.message):
                    output[position] = fuller
                    slack -= gained
                    break
    return output


def _no_less(fuller: Message, cut: Message) -> bool:
    """Whether ``fuller`` keeps as many of the user's words as ``cut`` and says
    something where ``cut`` does: a regrow never trades a cut with words for an earlier
    cut's marker alone."""
    return words_kept(fuller) >= words_kept(cut) and (says(fuller) or not says(cut))


def shared(
    task: Message, request: Message, room: int, counter: BaseCounter
) -> tuple[Message, Message] | None:
    """The ``task`` and the newest ``request`` (their originals) cut to share ``room``
    tokens, each keeping some of its words: the task half the room, or the least that
    keeps any of its words where that is more or leaves the request none; the request
    the rest. ``None`` where no such cut of both says something, the request's cut
    showing the keys (``recall: <key>``) the request shows: a cut that loses them loses
    the way to what they stood for, and the task gives way first."""
    least = next((g for g in range(1, room + 1) if says(cut_words(task, g, counter))), None)
    if least is None:
        return None
    for goal in dict.fromkeys((max(least, room // 2), least)):
        kept = cut_words(task, goal, counter)
        left = room - counter.estimate_message(kept)
        cut = cut_words(request, left, counter)
        if says(cut) and counter.estimate_message(cut) <= left and _keeps_keys(cut, request):
            return kept, cut
    return None


def _keeps_keys(cut: Message, original: Message) -> bool:
    """Whether ``cut`` shows every key (``recall: <key>``) ``original`` shows."""
    return set(references_in(original.text)) <= set(references_in(cut.text))


def says(message: Message) -> bool:
    """Whether ``message``'s text holds a line that is not a cut's marker."""
    return any(line.strip() and not stands_for(line) for line in message.text.split("\n"))


def _marked(block: ContentBlock) -> bool:
    """Whether ``block`` is a text holding a line an earlier cut wrote."""
    return isinstance(block, Text) and has_markers(block.text)


def _gone(message: Message, cut: Message, goal: int, counter: BaseCounter) -> Message:
    """``cut`` (``message`` cut as it comes) with each text that holds an earlier marker
    replaced by one marker standing for all of it (in the first of its :data:`_FORMS`
    that fits), where no cut that keeps its markers whole fits ``goal``; texts left
    empty where not even that fits."""
    for form in range(_FORMS):
        content = tuple(
            Text(text=_marker_for(before.text, 0, len(before.text), goal, counter, form=form))
            if isinstance(before, Text) and _marked(before)
            else after
            for before, after in zip(message.content, cut.content, strict=True)
        )
        gone = attrs.evolve(cut, content=content)
        if counter.estimate_message(gone) <= goal:
            return gone
    return attrs.evolve(
        cut, content=tuple(Text(text="") if isinstance(b, Text) else b for b in gone.content)
    )


def _whole(
    after: ContentBlock, before: ContentBlock, space: int, counter: BaseCounter, form: int
) -> Text:
    """``after`` (``before``'s text cut) as :func:`whole_markers` mends it, its marker
    in ``form`` (one of :data:`_FORMS`)."""
    assert isinstance(before, Text)
    assert isinstance(after, Text)
    mended = whole_markers(after.text, before.text, space, counter, form=form)
    return after if mended == after.text else Text(text=mended)


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
    marker (in ``form``, one of :data:`_FORMS`). It may cost a few tokens more than ``cut`` (a
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
    line = _marker_for(text, start, end, space, counter, form=form)
    return text[:start].rstrip("\n").rstrip(" ") + line + text[end:]


def marker_alone(text: str, space: int, counter: BaseCounter) -> str:
    """The marker line that stands for all of ``text`` in a cut to ``space`` tokens (the
    earlier markers in it counted, their keys shown): what is left of a text no cut of
    which fits."""
    return _marker_for(text, 0, len(text), space, counter).strip("\n")


def _marker_for(
    text: str, start: int, end: int, space: int, counter: BaseCounter, *, form: int = 0
) -> str:
    """The marker line that stands for ``text[start:end]`` (whole lines, earlier markers
    among them) in a cut to ``space`` tokens: its lines, characters and tokens, the
    earlier markers' counted as what they said they stood for, and the keys they showed
    (``recall: <key>``: what they cut is read back there). Its short form (tokens
    alone) where an earlier marker gave no character count: a count of characters would
    leave out what that one stood for. Cheaper in a later ``form`` (:data:`_FORMS`)."""
    pieces = text[start:end].split("\n")
    chars = end - start
    tokens = counter.estimate_text(text) - counter.estimate_text(text[:start] + text[end:])
    lines = [piece for piece in pieces if piece.strip()] or [""]
    if form == _FORMS - 1:  # what this cut removed, as a plain cut counts it
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
