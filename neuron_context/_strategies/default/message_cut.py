"""One message cut by a number of tokens, as the last resort (:mod:`.fit`) cuts a part:
a summary by :func:`~.summary_cut.cut_summary` (its plan block kept whole), any other
message by its words (:func:`~.words.cut_words`); with the floor the last resort first
cuts a message to, and what a counter charges for a message beyond its blocks.
"""

from __future__ import annotations

from ..._counting.counter import BaseCounter
from ..._messages.content import Compaction
from ..._messages.message import Message, Role
from .summary_cut import cut_summary
from .words import cut_words

__all__ = ["MIN_TRUNCATED", "message_overhead", "shrink"]

MIN_TRUNCATED = 48
"""The smallest a message is truncated to before older messages are dropped instead,
and the floor a newest request is first cut to."""


def message_overhead(counter: BaseCounter) -> int:
    """What any counter charges for a message beyond its blocks: an empty message's cost
    (the interface promises the ``estimate_*`` methods, not a ``message_overhead`` field)."""
    return counter.estimate_message(Message(role=Role.USER, content=()))


def shrink(message: Message, excess: int, counter: BaseCounter, *, floor: int = 0) -> Message:
    """``message`` cut by ``excess`` tokens, to no less than ``floor`` tokens of it (a
    summary keeps its plan block whole while the rest can give way)."""
    cost = counter.estimate_message(message)
    overhead = message_overhead(counter)
    goal = max(overhead, floor, cost - excess)
    if message.is_compaction:
        block = next(b for b in message.content if isinstance(b, Compaction))
        space = max(0, goal - overhead)
        return Message(
            role=Role.USER,
            content=(Compaction(content=cut_summary(block.content, space, counter)),),
        )
    return cut_words(message, goal, counter)
