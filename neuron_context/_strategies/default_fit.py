"""The last resort of a :class:`~neuron_context._strategies.default.DefaultStack`
compaction: cut the planned output until it is within the hard budget.

The plan sizes everything to the target; when the result is still over the budget (huge
pinned requests, messages that cannot be cut), :func:`fit` truncates the biggest kept
message, drops the oldest kept ones from one safe cut to the next, then cuts the summary
and the pinned requests, and starts the output on a user message again when the input
did. Each part is priced once; every cut updates the excess by what it changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .._counting.counter import BaseCounter
from .._messages.content import Compaction
from .._messages.conversation import first_is_user, next_safe_cut, turn_start
from .._messages.message import Message, Role
from .._messages.truncation import truncate_message, truncate_text
from .default_plan import Part, Plan

__all__ = ["fit", "message_overhead", "shrink"]

_MIN_TRUNCATED = 48
"""The smallest a message is truncated to before older messages are dropped instead."""


def fit(
    parts: list[Part],
    messages: Sequence[Message],
    plan: Plan,
    limit: int,
    *,
    counter: BaseCounter,
    part_cost: Callable[[Part], int],
) -> list[Part]:
    """The last resort: truncate, drop the oldest kept messages, cut the summary and
    the pinned requests, until the output is within :attr:`limit`.

    Each part is priced once; every cut updates the excess by what it changed."""
    costs = [part_cost(part) for part in parts]
    excess = sum(costs) - limit

    def replace(index: int, part: Part) -> None:
        nonlocal excess
        cost = part_cost(part)
        excess += cost - costs[index]
        parts[index], costs[index] = part, cost

    def drop(gone: set[int]) -> None:
        """Drop the parts whose ids are in ``gone``."""
        nonlocal parts, costs, excess
        keep = [i for i, part in enumerate(parts) if id(part) not in gone]
        excess -= sum(costs) - sum(costs[i] for i in keep)
        parts, costs = [parts[i] for i in keep], [costs[i] for i in keep]

    # 1. The biggest kept message (not a system message) is cut in the middle.
    while excess > 0:
        sizes = [
            (costs[i], i)
            for i, p in enumerate(parts)
            if p.kind == "tail" and costs[i] > _MIN_TRUNCATED * 2
        ]
        if not sizes:
            break
        size, index = max(sizes)
        goal = max(_MIN_TRUNCATED, size - excess, size // 2)
        shorter = truncate_message(parts[index].message, goal, counter)
        if counter.estimate_message(shorter) >= size:
            break
        replace(index, Part("tail", shorter))
    # 2. The oldest kept messages go, from one safe cut to the next (the newest
    # request is a "request" part, never dropped).
    while excess > 0:
        tail = [p for p in parts if p.kind == "tail"]
        if not tail:
            break
        drop({id(p) for p in tail[: next_safe_cut([p.message for p in tail], 1)]})
    # 3. The summary, then the pinned requests, are cut in the middle; a task that
    # would keep less than half of itself gives its place to the newest request.
    for kind in ("summary", "task", "request"):
        for index, part in enumerate(parts):
            if excess <= 0 or part.kind != kind:
                continue
            cost = counter.estimate_message(part.message)
            newest = any(p.kind == "request" for p in parts)
            if kind == "task" and newest and cost - excess < cost // 2:
                drop({id(part)})
            else:
                replace(index, Part(kind, shrink(part.message, excess, counter)))
            # Cut and still too big (an image cannot be cut): the summary goes, and
            # so does the task when the newest request is kept beside it.
            if excess > 0 and (kind == "summary" or (kind == "task" and newest)):
                drop({id(p) for p in parts if p.kind == kind})
            break
    if not first_is_user([p.message for p in parts]) and first_is_user(messages):
        parts = _repin(parts, costs, messages, plan, limit, counter=counter, part_cost=part_cost)
    return parts


def _repin(
    parts: list[Part],
    costs: list[int],
    messages: Sequence[Message],
    plan: Plan,
    limit: int,
    *,
    counter: BaseCounter,
    part_cost: Callable[[Part], int],
) -> list[Part]:
    """Start the output on a user message again: the one that opened the kept turn,
    cut to fit; if none fits, the messages before the first user message go."""
    excess = sum(costs) - limit
    index = turn_start(messages, plan.cut - 1) if plan.cut > 0 else None
    if index is not None:
        first = next((i for i, p in enumerate(parts) if p.kind != "system"), len(parts))
        pin = Part("request", messages[index])
        pinned = excess + part_cost(pin)
        if pinned > 0:
            pin = Part("request", shrink(pin.message, pinned, counter))
            pinned = excess + part_cost(pin)
        if pinned <= 0 or pinned <= excess:
            return [*parts[:first], pin, *parts[first:]]
    while not first_is_user([p.message for p in parts]):
        first = next(i for i, p in enumerate(parts) if p.kind != "system")
        parts = [*parts[:first], *parts[first + 1 :]]
    return parts


def message_overhead(counter: BaseCounter) -> int:
    """What any counter charges for a message beyond its blocks: an empty message's cost
    (the interface promises the ``estimate_*`` methods, not a ``message_overhead`` field)."""
    return counter.estimate_message(Message(role=Role.USER, content=()))


def shrink(message: Message, excess: int, counter: BaseCounter) -> Message:
    cost = counter.estimate_message(message)
    overhead = message_overhead(counter)
    goal = max(overhead, cost - excess)
    if message.is_compaction:
        block = next(b for b in message.content if isinstance(b, Compaction))
        space = max(0, goal - overhead)
        text = truncate_text(block.content, space, counter)
        return Message(role=Role.USER, content=(Compaction(content=text),))
    return truncate_message(message, goal, counter)
