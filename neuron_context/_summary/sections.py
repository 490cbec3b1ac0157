"""A summary's sections, filled in the space it is given.

The extractive summarizer finds items (a quoted request, an index line, a chunk of a
result's facts, ...), each in its section with a rank; :func:`fit` chooses which make
the summary: the task and the newest request first (the user's own words are what a
session cannot lose), then the sections take turns by weight (the next item comes from
the section that has spent the least for its weight, a result's facts first on ties),
so a few long requests cannot crowd out the index and space one section leaves goes to
the others; an item too big for the room left is passed over for a smaller one after
it (never a further chunk of a line whose head was left out), so the space is filled.
An index line that only repeats the label of a facts line chosen beside it (``a.py:
Read`` beside ``Read a.py: ...``) gives its space back, and the turns go on.

Given a :data:`~neuron_context._messages.segments.Weigh` (what an agent reuses of a
text: ids, dates, names with their labels, paths, code names), the choice goes by
content too: the requests, decisions and next steps that hold nothing it weighs (``That
sounds good, thanks!``) take their turns only after every item that holds something (a user's
constraint, ``Don't use my credit card``, holds no id yet binds every later step), and a
quoted request too long for its space keeps its lines, sentences or clauses worth most
(``My user ID is aarav_garcia_1177.``, see :mod:`.quotes`) rather than its head and tail.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import attrs

from .._counting.counter import BaseCounter
from .._messages.markers import stands_for
from .._messages.truncation import Weigh, truncate_text
from .._numbers import scale
from .format import (
    ARTIFACTS,
    DECISIONS,
    ERRORS,
    FACTS,
    GOAL,
    HEADINGS,
    NEXT,
    PLAN,
    REQUEST_CLOSE,
    REQUEST_OPEN,
    quoted,
)
from .quotes import closed, fences_closed, sentences_kept

__all__ = ["Item", "fit"]

_PRIORITY = (PLAN, FACTS, ARTIFACTS, GOAL, ERRORS, NEXT, DECISIONS)
"""The order in which sections get their next item on ties. Every section starts having
spent nothing, so in a small summary (one or two items) this order is the whole choice:
a result's facts, then the index, come before the quoted requests (replayed at 10% of the
budget on tau-bench airline runs outside the shared set, where most summaries hold 20-120
tokens: 62.7% of the next step's evidence kept against 62.1% with the goal first; the
shared set unchanged)."""
_WEIGHTS = {
    PLAN: 100.0,
    GOAL: 4.0,
    ARTIFACTS: 30.0,
    FACTS: 6.0,
    ERRORS: 2.0,
    NEXT: 1.5,
    DECISIONS: 1.0,
}
"""How the sections share the space (see :func:`fit`); the plan is state and comes first."""
_REFILLS = 3
"""How many times the space that repeated index lines give back is filled again."""
_PINNED_RANK = 101
"""Quoted requests ranked up to this are the task (99 carried, 100 new) and the newest
request (101): placed before any other item."""
_VERBATIM_SHARE = 0.4
"""The most of the budget one quoted request may take; a longer one is cut in the middle
(by content, given a weigh)."""
_WORDS = (GOAL, DECISIONS, NEXT)
"""The sections whose items are words that may hold nothing an agent reuses (a request
of thanks, an assistant's "let me check"): given a weigh, such an item waits until every
item that holds something has had its turn, then fills what room is left."""
_IDLE_CHARS = 1_000
"""The longest words weighed for whether they hold nothing an agent reuses: a longer
request (a pasted log, an issue) is not chit-chat, and takes its turns with the facts
unweighed."""


@attrs.frozen
class Item:
    """One line (or block) of a summary, in its section, with its rank."""

    section: int
    rank: int  # lower is more important within its section
    order: int  # display position within its section
    text: str
    verbatim: bool = False  # a user's words, quoted as they are
    continues: str = ""  # a further chunk of the line before: the separator to it
    block: bool = False  # a block of lines (the plan), rendered as it is
    echoes: tuple[str, ...] = ()  # lines that say all it says (see ``_drop_repeated``)
    chained: bool = False  # a further chunk taken only after the chunk just before it

    def rendered(self) -> str:
        if self.verbatim:
            return f"{REQUEST_OPEN}\n{closed(quoted(self.text))}\n{REQUEST_CLOSE}"
        if self.block:
            return self.text
        if self.continues:
            return self.continues + self.text
        return f"- {self.text}"


def fit(
    items: Sequence[Item], budget: int, counter: BaseCounter, *, weigh: Weigh | None = None
) -> str:
    """The summary of ``items`` in ``budget`` tokens as ``counter`` prices them, by
    content where ``weigh`` says what an agent reuses of a text (see the module
    docstring); ``""`` when not even the first fits."""
    by_section: dict[int, list[Item]] = {}
    for item in sorted(items, key=lambda i: (i.rank, i.order)):
        by_section.setdefault(item.section, []).append(item)
    estimate = counter.estimate_text
    verbatim = scale(budget, _VERBATIM_SHARE)
    chosen: list[Item] = []
    costs: list[int] = []
    spent = dict.fromkeys(by_section, 0)
    used = [0]  # what ``chosen`` costs

    def place(section: int, item: Item) -> bool:
        """Add ``item`` if it fits (a quoted request cut to fit); whether it did (an
        item that a line chosen already says is done with, and adds nothing)."""
        if item.echoes and _echoed(item, chosen):
            return True
        heading = estimate(f"\n{HEADINGS[section]}\n") if not spent[section] else 0
        cost = heading + estimate(item.rendered() + "\n")
        room = budget - used[0]
        if item.verbatim and (cost > room or cost > verbatim):
            item = _shortened(item, min(room, verbatim), counter, weigh)
            cost = heading + estimate(item.rendered() + "\n")
        if cost > room and section == FACTS and not item.continues:
            # A result's facts line says all its call's index line (and last action)
            # says: it takes their place where that makes the room.
            said = _said_by(item, chosen)
            if cost <= room + sum(costs[at] for at in said):
                for at in reversed(said):
                    spent[chosen.pop(at).section] -= costs[at]
                    used[0] -= costs.pop(at)
                room = budget - used[0]
        if cost > room:
            return False
        chosen.append(item)
        costs.append(cost)
        used[0] += cost
        spent[section] += cost
        return True

    # The task and the newest request go first: the user's own words are what a
    # session cannot lose, so no other section's turn may take their space.
    goal = by_section.get(GOAL, [])
    pinned = [i for i in goal if i.verbatim and i.rank <= _PINNED_RANK]
    goal[:] = [i for i in goal if not (i.verbatim and i.rank <= _PINNED_RANK)]  # one pass
    for item in pinned:
        place(GOAL, item)
    # Sections share the rest of the space by weight: the next item comes from the
    # section that has spent the least for its weight (in priority order on ties),
    # so a few long requests cannot crowd out the index, and space one section
    # leaves goes to the others.
    # Given a weigh, the items that hold something an agent reuses take their turns
    # first; the words that hold nothing then fill what room is left.
    for phase in _phases(by_section, weigh):
        turn = _Turns(_heads(phase), place)
        for _ in range(_REFILLS):
            taken = dict.fromkeys(phase, 0)  # each pass looks again at what was passed over
            turn.failed.clear()
            active = [s for s in _PRIORITY if s in phase]
            while active:
                section = min(active, key=lambda s: spent[s] / _WEIGHTS[s])
                if not _place_next(section, phase[section], taken, turn):
                    active.remove(section)
            # An index line that only repeats the label of a result's facts chosen
            # beside it ("a.py: Read" beside "Read a.py: ...") gives its space back
            # (a phase of words alone chose neither).
            index_or_facts = ARTIFACTS in phase or FACTS in phase
            freed = _drop_repeated(chosen, costs) if index_or_facts else {}
            if not freed:
                break
            for section, tokens in freed.items():
                spent[section] -= tokens
                used[0] -= tokens
    return _within(chosen, costs, budget, counter)


def _within(chosen: list[Item], costs: list[int], budget: int, counter: BaseCounter) -> str:
    """``chosen`` rendered within ``budget`` (rendering may cost a little more than the
    items' sum): the last chosen, least important, dropped by the overshoot."""
    while chosen:
        text = _render(chosen)
        over = counter.estimate_text(text) - budget
        if over <= 0:
            return text
        while chosen and over > 0:
            over -= costs.pop()
            chosen.pop()
    return ""


def _phases(by_section: dict[int, list[Item]], weigh: Weigh | None) -> list[dict[int, list[Item]]]:
    """The queues of ``by_section`` in the order their turns are taken: all of them, or,
    given ``weigh``, first every item but the words of :data:`_WORDS` that hold nothing
    it weighs (up to :data:`_IDLE_CHARS` characters), then those (each queue keeps its
    order)."""
    if weigh is None:
        return [by_section]
    first: dict[int, list[Item]] = {}
    later: dict[int, list[Item]] = {}
    for section, queue in by_section.items():
        for item in queue:
            idle = section in _WORDS and len(item.text) <= _IDLE_CHARS and not weigh(item.text)
            (later if idle else first).setdefault(section, []).append(item)
    return [first, later]


@attrs.define
class _Turns:
    """What the turns of :func:`fit` remember: each further chunk's head, what was
    placed, and the shortest item of each section that did not fit in this pass (only
    shorter ones are tried after it: the room only shrinks within a pass, so a full
    summary is not priced item by item to the end of every section)."""

    heads: dict[int, int]
    place: Callable[[int, Item], bool]
    placed: set[int] = attrs.Factory(set)
    failed: dict[int, int] = attrs.Factory(dict)


def _place_next(section: int, queue: list[Item], taken: dict[int, int], turn: _Turns) -> bool:
    """Place the next item of ``section`` that fits (``taken`` counts those looked at);
    whether one did. An item that does not fit is passed over (a smaller one after it
    may), and so is a further chunk of a line whose head was not placed."""
    while taken[section] < len(queue):
        item = queue[taken[section]]
        taken[section] += 1
        head = turn.heads.get(id(item))
        if id(item) in turn.placed or (head is not None and head not in turn.placed):
            continue
        size = len(item.text)
        if size >= turn.failed.get(section, size + 1):
            continue
        if turn.place(section, item):
            turn.placed.add(id(item))
            return True
        turn.failed[section] = size
    return False


def _echoed(item: Item, chosen: Sequence[Item]) -> bool:
    """Whether a line in ``chosen`` is one of ``item``'s :attr:`Item.echoes`, or starts
    with one and ``": "``."""
    return any(
        not other.continues
        and not other.echoes
        and any(other.text == echo or other.text.startswith(echo + ": ") for echo in item.echoes)
        for other in chosen
    )


def _said_by(head: Item, chosen: Sequence[Item]) -> list[int]:
    """Where in ``chosen`` the lines are that the facts line ``head`` says all of: its
    call's index line, and an item that echoes its label (see :attr:`Item.echoes`)."""
    return [
        at
        for at, item in enumerate(chosen)
        if (item.section == ARTIFACTS and _repeats(item.text, [head.text]))
        or (item.echoes and _echoed(item, [head]))
    ]


def _drop_repeated(chosen: list[Item], costs: list[int]) -> dict[int, int]:
    """Drop from ``chosen`` (and ``costs``) each index line that only repeats the label
    of a facts line chosen beside it, and each item that one of its :attr:`Item.echoes`
    says (a line chosen that is one, or starts with one and ``": "``: the last action
    beside the index line or the facts line of its call); what they cost, by section."""
    labels = [i.text for i in chosen if i.section == FACTS and not i.continues]
    repeated = [
        at
        for at, item in enumerate(chosen)
        if (item.section == ARTIFACTS and _repeats(item.text, labels))
        or (item.echoes and _echoed(item, chosen))
    ]
    freed: dict[int, int] = {}
    for at in reversed(repeated):
        section = chosen[at].section
        freed[section] = freed.get(section, 0) + costs.pop(at)
        chosen.pop(at)
    return freed


def _heads(by_section: dict[int, list[Item]]) -> dict[int, int]:
    """The head of each further chunk (an item that ``continues`` the line before it in
    its section's display order): ``id(chunk) -> id(head)``, the nearest item before it
    that starts a line, or, for a :attr:`Item.chained` one (a further row of a table),
    the item just before it."""
    heads: dict[int, int] = {}
    for queue in by_section.values():
        head: Item | None = None
        before: Item | None = None
        for item in sorted(queue, key=lambda i: i.order):
            if not item.continues:
                head = item
            elif item.chained and before is not None:
                heads[id(item)] = id(before)
            elif head is not None:
                heads[id(item)] = id(head)
            before = item
    return heads


_WEIGHED_CHARS = 64
"""A request quoted by content is at most this many characters a token of its space
(about 16 times the space): a longer one is cut in the middle, so a summary's work stays
bounded by its space, not by what a user pasted."""


def _shortened(item: Item, space: int, counter: BaseCounter, weigh: Weigh | None) -> Item:
    """``item`` with its text cut to fit ``space`` tokens, rendered: in the middle, or,
    given ``weigh``, to its pieces worth most (:func:`.quotes.sentences_kept`; a long
    request to its lines, where they hold more: see
    :func:`~neuron_context._messages.truncation.truncate_text`), but for a text of
    more than :data:`_WEIGHED_CHARS` characters a token of ``space``, cut in the
    middle; ``item`` as it is when the cut would keep nothing of it but its marker."""
    wrapper = counter.estimate_text(f"{REQUEST_OPEN}\n\n{REQUEST_CLOSE}\n") + 1
    if space - wrapper < 24:  # too little room to quote anything useful
        return item
    if len(item.text) > _WEIGHED_CHARS * space:
        weigh = None  # a pasted file or log: its middle cut is bounded by the space
    room = space - wrapper
    for attempt in range(1, _TRIES + 1):
        text = fences_closed(_cut(item.text, room, counter, weigh), item.text)
        shorter = attrs.evolve(item, text=text)
        # The fences closed and opened around the gaps, and the escapes of the tags the
        # words hold (each adds a backslash), are priced with them: what they add comes
        # off the room (more at each try: a cut by lines may keep the same lines in a
        # little less) and the words are cut again.
        over = counter.estimate_text(shorter.rendered() + "\n") - space
        if over <= 0:
            break
        room -= over * attempt
    if not any(line.strip() and not stands_for(line) for line in text.split("\n")):
        return item  # a quote of a marker alone says nothing of the user's words
    return shorter


_TRIES = 6
"""How many times a quote is cut again to leave its fences and escapes their room."""


def _cut(text: str, space: int, counter: BaseCounter, weigh: Weigh | None) -> str:
    """``text`` cut to ``space`` tokens: to its pieces worth most given ``weigh`` (where
    any holds something), else in the middle."""
    if weigh is not None:
        kept = sentences_kept(text, space, counter, weigh)
        if kept:
            return kept
    return truncate_text(text, space, counter, weigh=weigh)


def _repeats(line: str, labels: Sequence[str]) -> bool:
    """Whether the index ``line`` (``artifact: tool``, one tool; or a tool's name alone,
    a call without arguments) says no more than one of the facts lines ``labels``
    (``tool artifact: facts``, ``tool: facts``) starts with."""
    artifact, separator, tool = line.rpartition(": ")
    if not separator:
        return _is_tool(line) and any(label.startswith(f"{line}: ") for label in labels)
    if not _is_tool(tool):
        return False
    head = f"{tool} {artifact}: "
    return any(label.startswith(head) for label in labels)


def _is_tool(name: str) -> bool:
    return bool(name) and all(c.isalnum() or c in "_.-" for c in name)


def _render(items: Iterable[Item]) -> str:
    sections: dict[int, list[Item]] = {}
    for item in items:
        sections.setdefault(item.section, []).append(item)
    parts: list[str] = []
    for section in sorted(sections):
        lines: list[str] = []
        for item in sorted(sections[section], key=lambda i: i.order):
            if item.continues and lines:
                lines[-1] += item.rendered()  # a further chunk of the line before
            elif not item.continues:
                lines.append(item.rendered())
        parts.append("\n".join([HEADINGS[section], *lines]))
    return "\n\n".join(parts)
