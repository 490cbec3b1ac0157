"""How a :class:`~neuron_context._strategies.default.DefaultStack` compaction shares the
space of its kept recent part among the messages in it: the water level.

Messages above a common cap (the level) are cut to it, the others kept whole, so no one
message takes the space of all the others (:func:`water_level`). The step in progress
(the last assistant message's calls and the results the model has not answered yet;
when the newest message is the user's answer, the assistant's last words before it) is
levelled first and on its own, so the level cuts it last (the last resort, past the
level, cuts the answered exchange as a recent message); it may also take room above the
target, which the plan gives it when the budget has it (:func:`kept_part`): the next
call reads it first, and cut to the target's share a big step keeps little of each
result. A cut tool result keeps the segments of it an agent may reuse most
(:func:`~.reuse.reuse`: its records, rows and lines, whole and in order), the words of a
user or the assistant their head and tail, and the marker names what was cut
(:func:`describe_cut`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._counting.counter import BaseCounter
from ..._messages.message import Message, Role
from ..._messages.truncation import truncate_message
from ..._summary.facts import condense, facts
from ..._summary.scan import mentioned
from .reuse import reuse

__all__ = ["MIN_TRUNCATED", "describe_cut", "kept_part", "water_level"]

MIN_TRUNCATED = 48
"""The least a kept message is cut to."""
_MARKER_NAMES = 400
"""The most names a truncation marker counts from the part it cut."""


def water_level(costs: Sequence[int], space: int) -> int:
    """The largest cap ``c`` with ``sum(min(cost, c)) <= space`` (at least the truncation
    floor): messages above it are cut to it, the others kept whole."""
    if sum(costs) <= space:
        return max(costs, default=0)
    remaining = space
    ordered = sorted(costs)
    for position, cost in enumerate(ordered):
        share = remaining // (len(ordered) - position)
        if cost > share:
            return max(MIN_TRUNCATED, share)
        remaining -= cost
    return max(MIN_TRUNCATED, ordered[-1])  # pragma: no cover - the sum exceeded space


def describe_cut(cut: str) -> list[str]:
    """The names the cut part of a message holds, for its truncation marker: the paths
    and URLs it mentions, then its facts (see :mod:`neuron_context._summary.facts`)."""
    found = dict.fromkeys(mentioned(cut))
    for fact in facts(cut, limit=_MARKER_NAMES):
        found.setdefault(fact.text)
    return list(found)[:_MARKER_NAMES]


def kept_part(
    messages: Sequence[Message],
    costs: Sequence[int],
    cut: int,
    *,
    pinned: dict[int, Message],
    step: set[int],
    space: int,
    above: int,
    counter: BaseCounter,
    earlier: Sequence[Message] | None = None,
) -> tuple[list[Message], int]:
    """The kept part of ``messages`` from ``cut`` (``costs``: each message's), in
    ``space`` tokens, and what its step in progress takes above them: the pinned
    requests as ``pinned``, the messages of the ``step`` in progress cut to their own
    level in the share of ``space`` they would take alone and up to ``above`` tokens
    more, the other messages to the level of what that share leaves (taken from the
    ``earlier`` kept part of the same ``space`` when given: their level depends on the
    space alone)."""
    free = [
        i
        for i in range(cut, len(messages))
        if messages[i].role is not Role.SYSTEM and i not in pinned
    ]
    first = [costs[i] for i in free if i in step]
    share = sum(min(cost, water_level(first, space)) for cost in first)
    level_step = water_level(first, share + above)
    extra = max(0, sum(min(cost, level_step) for cost in first) - share)
    level = water_level([costs[i] for i in free if i not in step], max(0, space - share))
    tail: list[Message] = []
    for index in range(cut, len(messages)):
        message = messages[index]
        cap = level_step if index in step else level
        if index in pinned:
            tail.append(pinned[index])
        elif earlier is not None and index not in step:
            tail.append(earlier[index - cut])
        elif message.role is Role.SYSTEM or costs[index] <= cap:
            tail.append(message)
        else:
            tail.append(
                truncate_message(
                    message, cap, counter, describe=describe_cut, condense=condense, weigh=reuse
                )
            )
    return tail, extra
