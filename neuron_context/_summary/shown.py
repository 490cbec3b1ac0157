"""What the rest of a request already shows, so a summary beside it does not repeat it.

A summary shares its request with the messages kept as they are (the pinned requests, the
recent part). A fact noted in the summary that the kept part already shows, each telling
word of it (an id, a number, a code name, a date), costs summary space and keeps nothing
the request did not hold: the kept messages hold the same words on their own lines, with
their own labels. :func:`shown_words` collects the words of the kept messages once
(linear in their text, no word judged); :func:`repeats` tells a summary line or fact
whose every telling word is among them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Set

from .._messages.message import Message
from .fact_chunks import Fact
from .facts_text import is_salient
from .transcript import message_entries

__all__ = ["noted", "repeatable", "repeats", "shown_words"]

_WORD = re.compile(r"[\w$.@#+-]+")
_TRIM = ".,;:!?'\"`()[]{}<>-+#@$"
_CUT = "[... "
"""How a truncation marker's line starts (see ``neuron_context._messages.markers``)."""
_SHORTEST = 3
"""Words shorter than this are not telling (``id``, ``to``, ``1``)."""


@functools.lru_cache(maxsize=1 << 16)
def _telling(word: str) -> bool:
    """A word that says something on its own: it holds a digit, or is salient (a pure
    function of the word, judged once: the same names recur from turn to turn)."""
    return any(c.isdigit() for c in word) or is_salient(word)


def shown_words(messages: Iterable[Message]) -> frozenset[str]:
    """The words of ``messages`` (of three characters or more) where a name stands
    with what it is: the user's texts, tool calls' arguments and tool results (not the
    assistant's prose, nor a truncation marker's line, which lists names without what
    they are); each as it stands and, when dotted, by its parts."""
    raw: set[str] = set()  # the words as found: each distinct one is trimmed once
    for message in messages:
        for entry in message_entries(message, _unnamed):
            if entry.kind == "assistant":
                continue  # prose: a name in it may stand without what it is
            text = entry.text
            if _CUT not in text:
                raw.update(_WORD.findall(text))
                continue
            for line in text.split("\n"):
                if not line.startswith(_CUT):  # a cut's marker lists names without labels
                    raw.update(_WORD.findall(line))
    found = {word for word in (w.strip(_TRIM) for w in raw) if len(word) >= _SHORTEST}
    dotted = [word for word in found if "." in word]
    found.update(part for word in dotted for part in word.split(".") if part)
    return frozenset(found)


def repeats(text: str, shown: Set[str]) -> bool:
    """Whether ``text`` (a summary line or fact) has a telling word and every one is in
    ``shown``; ``False`` when ``shown`` is empty."""
    if not shown:
        return False
    telling = False
    for found in _WORD.findall(text):
        word = found.strip(_TRIM)
        if len(word) < _SHORTEST:
            continue
        if word not in shown:
            if _telling(word):
                return False
        elif not telling:
            telling = _telling(word)
    return telling


def _unnamed(_: object) -> str:
    return ""


def repeatable(fact: Fact) -> bool:
    """Whether ``fact`` says the same wherever it is noted: a line as it stands (a pair
    or a row says something of its own record)."""
    return fact.line


def noted(found: list[Fact], label: str, before: Set[str], shown: Set[str]) -> list[Fact]:
    """The facts of one result worth noting: not one its call already names (the id it
    looked up), a line a newer result noted (a file read again, in ``before``), or what
    the rest of the request shows. A table's header is noted with the first of its rows
    noted, whatever the request shows of it (a row says what its cells are only under
    it), and not at all when none is."""
    noted: list[Fact] = []
    header: Fact | None = None  # a table's header, waiting for its first row noted
    for fact in found:
        if fact.header:
            header = fact
            continue
        if not fact.row:
            header = None
        if (
            fact.text in label
            or (repeatable(fact) and fact.text in before)
            or repeats(fact.text, shown)
        ):
            continue
        if header is not None:
            noted.append(header)
            header = None
        noted.append(fact)
    return noted
