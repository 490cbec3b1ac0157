"""A user's words cut by content: where room is short, a task or a newest request of one
line keeps its sentences or clauses worth most, whole, rather than its head and tail.

A request holds its facts with the words that say what they are: ``Hi! I'm hoping to
cancel a flight and get a refund. My reservation is EHGLP3 and user id mia_li_3668.``,
repeated, cut in the middle to 20 tokens keeps ``Hi! I'm hoping to cancel a`` and ``r id
mia_li_3668.``, the reservation cut out; cut by content it keeps ``Hi! … My reservation
is EHGLP3 and user id mia_li_3668. …``. Only a request of one line is cut so (a user's
message in a conversation); a text of several lines keeps its head and tail.
:func:`by_content` is the cut a summary quotes a request with
(:func:`~neuron_context._summary.quotes.sentences_kept`), weighed by what an agent
reuses (:func:`.reuse.reuse`: ids, dates, paths, names with their labels);
:func:`~.words.cut_words` takes it where it :func:`holds` more of the request's names
(:func:`reused`) than the middle cut, or as many and more words. Cutting a multi-line
task's lines by content too dropped an issue's title and a task's framing (a SWE-agent
task kept ``…\nISSUE:\n…``): replayed on public SWE-agent runs outside the shared set,
88.5% of the next step's evidence kept at 25%, against 89.5% with the middle cut.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ..._counting.counter import BaseCounter
from ..._messages.content import Text
from ..._messages.markers import stands_for
from ..._messages.message import Message
from ..._summary.quotes import sentences_kept
from .reuse import reuse

__all__ = ["by_content", "holds", "reused"]

_TRIES = 4
"""How many cuts are tried, each in the room less its overshoot (the pieces' gaps and
joints are priced with them)."""


def by_content(message: Message, goal: int, counter: BaseCounter) -> Message | None:
    """``message`` (one text of one line) cut to ``goal`` tokens by its sentences and
    clauses worth most, ``None`` where it is not one such text or no such cut fits and
    holds something. A text of several lines (an issue, a task's instructions, a pasted
    log; an earlier cut's marker stands on a line of its own) is not cut so: its head
    says what it is (an issue's title, a task's framing), and the middle cut keeps it.
    Nor is a text that is, or holds, an earlier cut's marker (a pin a previous
    compaction left as its marker alone): its markers are kept whole or cut whole."""
    if len(message.content) != 1 or not isinstance(message.content[0], Text):
        return None
    text = message.content[0].text
    if "\n" in text.strip():
        return None  # an issue, a listing, a pasted log: its head says what it is
    if stands_for(text) or _holds_marker(text):
        return None  # an earlier cut's marker is kept whole or cut whole, never in pieces
    space = goal - (counter.estimate_message(message) - counter.estimate_text(text))
    for _ in range(_TRIES):
        if space <= 0:
            return None
        kept = sentences_kept(text, space, counter, reuse)
        if not kept:
            return None
        chosen = attrs.evolve(message, content=(Text(text=kept),))
        over = counter.estimate_message(chosen) - goal
        if over <= 0:
            return chosen
        space -= over
    return None


def _holds_marker(text: str) -> bool:
    """Whether ``text`` holds an earlier cut's marker (``[... `` up to `` ...]``)."""
    start = text.find("[... ")
    return start >= 0 and text.find(" ...]", start) >= 0


def reused(message: Message) -> dict[str, float]:
    """The names an agent reuses in ``message``'s words, each at its most weight on the
    lines it is read from (a cut's marker lines hold none)."""
    found: dict[str, float] = {}
    for line in message.text.split("\n"):
        if stands_for(line):
            continue
        for name, weight in reuse(line).items():
            found[name] = max(weight, found.get(name, 0.0))
    return found


def holds(cut: Message, names: Mapping[str, float]) -> float:
    """What the ``names`` (of the text ``cut`` was cut from) that ``cut`` shows weigh
    together, each once: a piece of a name a cut leaves (``mia_li_``) is none of them."""
    return sum(names.get(name, 0.0) for name in reused(cut))
