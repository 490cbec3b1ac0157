"""A user's words cut to a goal (:func:`cut_words`): the words kept before a marker's
names where both do not fit, and the marker lines of an earlier cut in them kept whole
or cut whole, never in two."""

from __future__ import annotations

import re

import attrs

from ..._counting.counter import BaseCounter
from ..._messages.content import Text
from ..._messages.markers import marker, stands_for, tight
from ..._messages.message import Message, Role
from ..._messages.truncation import truncate_message
from ..._summary.facts import condense
from .water import describe_cut

__all__ = ["common", "cut_words", "says"]


def cut_words(message: Message, goal: int, counter: BaseCounter) -> Message:
    """``message`` cut to ``goal`` tokens, its marker naming what the cut part holds; a
    user's words whose cut would keep only the marker are cut again without the names
    (their share of a small space goes to the words: the request must still say what
    it asks, and the names are what its words hold)."""
    cut = truncate_message(message, goal, counter, describe=describe_cut, condense=condense)
    if message.role is Role.USER:
        cut = _around_markers(cut, message, goal, counter)
    if message.role is not Role.USER or says(cut) or not says(message):
        return cut
    plain = _around_markers(truncate_message(message, goal, counter), message, goal, counter)
    return plain if says(plain) else cut


_NAMED = re.compile(r"^\[\.\.\. [^\n]*? cut(, naming [^\n]*?) \.\.\.\]$", re.MULTILINE)
"""A marker line that names what its cut held, and its names."""

_SAID_TOKENS = re.compile(r"^\[\.\.\. .*\babout ([\d,]+) tokens\b.* \.\.\.\]$", re.MULTILINE)
"""A marker line and the tokens it says its cut held."""


def _around_markers(cut: Message, message: Message, goal: int, counter: BaseCounter) -> Message:
    """``cut`` (``message`` cut to ``goal`` tokens) with each text's head and tail moved
    out of a marker line of an earlier cut that they end or start inside: a marker line
    is kept whole or cut whole (a fragment of it would read as the user's words), and
    the new marker counts the lines and tokens it stood for. ``cut`` as it is where that
    would cost more than ``goal``."""
    if len(message.content) != len(cut.content):  # pragma: no cover - a cut keeps blocks
        return cut
    content = []
    for before, after in zip(message.content, cut.content, strict=True):
        text = after.text if isinstance(after, Text) else ""
        if isinstance(before, Text) and isinstance(after, Text) and before.text != text:
            text = _text_around(text, before.text, goal, counter)
        content.append(
            after if not isinstance(after, Text) or text == after.text else Text(text=text)
        )
    if all(one is other for one, other in zip(content, cut.content, strict=True)):
        return cut
    moved = attrs.evolve(cut, content=tuple(content))
    return moved if counter.estimate_message(moved) <= goal else cut


def _text_around(cut: str, text: str, goal: int, counter: BaseCounter) -> str:
    """``cut`` (``text``'s head, a marker, its tail) with its head and tail outside the
    marker lines of ``text``; ``cut`` as it is where neither stands inside one."""
    tail = len(cut) - common(cut[::-1], text[::-1])
    head = min(common(cut, text), tail)
    end = len(text) - (len(cut) - tail)  # where the tail starts in ``text``
    start = text.rfind("\n", 0, head) + 1  # the head's last line
    line_end = text.find("\n", head)
    moved = False
    if head > start and stands_for(text[start : len(text) if line_end < 0 else line_end]):
        head, moved = max(0, start - 1), True
    start = text.rfind("\n", 0, end) + 1  # the tail's first line
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if start < end and stands_for(text[start:line_end]):
        end, moved = min(len(text), line_end + 1), True
    if not moved or head >= end:
        return cut
    gone = text[head:end]
    tokens = counter.estimate_text(text) - counter.estimate_text(text[:head] + text[end:])
    for said in _SAID_TOKENS.finditer(gone):  # what the earlier markers stood for
        tokens += int(said.group(1).replace(",", "")) - counter.estimate_text(said.group(0))
    lines = sum(max(1, stands_for(line)) for line in gone.strip("\n").split("\n"))
    line = marker(len(gone), tokens, lines=lines, short=tight(goal, counter))
    named = _NAMED.search(cut, max(0, min(head, common(cut, text)) - len(line)))
    if named is not None:  # the names the cut's own marker gave, of a part of ``gone``
        line = line.replace(" cut ...]", f" cut{named.group(1)} ...]")
    return text[:head] + line + text[end:]


def says(message: Message) -> bool:
    """Whether ``message``'s text holds a line that is not a cut's marker."""
    return any(line.strip() and not stands_for(line) for line in message.text.split("\n"))


def common(first: str, second: str) -> int:
    """How many characters ``first`` and ``second`` start with alike."""
    for index, (one, other) in enumerate(zip(first, second, strict=False)):
        if one != other:
            return index
    return min(len(first), len(second))
