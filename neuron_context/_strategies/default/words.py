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
cut's marker lines: a cut keeps each of them whole or cuts it whole, and the new marker
counts what they stood for, in the first of its forms that leaves room for words
(:mod:`.earlier_markers`).
Where no step is kept and a task's cut would say nothing, the task and the newest
request share their room, each keeping words (:func:`shared`), before the task goes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from ..._counting.counter import BaseCounter
from ..._messages.content import ContentBlock, Text
from ..._messages.markers import stands_for, tight
from ..._messages.message import Message, Role
from ..._messages.truncation import truncate_message
from ..._stores.offload import references_in
from ..._summary.facts import condense
from .clauses import by_content, holds, reused
from .earlier_markers import (
    FORMS,
    has_markers,
    marker_for,
    whole_markers,
)
from .water import describe_cut

if TYPE_CHECKING:  # the plan pins requests with cut_words: no import of it at run time
    from .plan import Part

__all__ = [
    "cut_words",
    "regrown",
    "says",
    "shared",
    "words_kept",
]

_SWITCH = 16
"""How far above the goal where markers take their full form a cut is compared with the
cut at the goal below (its marker short): the few tokens the full form costs more are
words the bigger goal would otherwise lose."""

_TRIES = 4
"""How many cuts are tried, each shorter by its overshoot, where a marker that counts
the earlier markers it replaces costs more than the one it stands for."""


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
    form where a cut with it keeps words, else in the next of its :data:`FORMS` that
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
        for form in range(FORMS):
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
    replaced by one marker standing for all of it (in the first of its :data:`FORMS`
    that fits), where no cut that keeps its markers whole fits ``goal``; texts left
    empty where not even that fits."""
    for form in range(FORMS):
        content = tuple(
            Text(text=marker_for(before.text, 0, len(before.text), goal, counter, form=form))
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
    in ``form`` (one of :data:`FORMS`)."""
    assert isinstance(before, Text)
    assert isinstance(after, Text)
    mended = whole_markers(after.text, before.text, space, counter, form=form)
    return after if mended == after.text else Text(text=mended)
