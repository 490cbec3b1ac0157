"""The last resort of a :class:`~neuron_context._strategies.default.DefaultStack`
compaction: cut what the plan assembled until it is within the hard budget.

Each part is priced once; every cut updates the excess by what it changed. The cuts come
in the order of what the next model call needs least:

1. the biggest recent messages are cut in the middle (head and tail kept, the marker
   naming what was cut), then the oldest recent messages go, from one safe cut to the
   next;
2. the summary is cut (:func:`~.summary_cut.cut_summary`: its plan block kept whole;
   a quote or code block the cut leaves open is closed before the marker; an earlier
   cut's marker in it kept whole or cut whole; its marker alone where no cut fits with
   its blocks closed), then dropped, as is a summary cut to nothing (never kept as an
   empty message);
3. the step in progress (the calls of the last assistant message and their results) is
   cut in the middle, its biggest message first: it is what the model acts on now
   (with ``in_progress="drop"``, what cannot be cut, tool inputs and images, then goes
   from its oldest message, one safe cut to the next);
4. the newest request is cut down to a floor, then the task, then the newest request
   further: a task that fits is never dropped to keep more of a longer request; a task
   whose cut keeps none of its words is cut again with the request, the two sharing
   their room and each keeping words (:func:`~.words.shared`), where that fits; a task
   that cannot fit even cut (images cannot be cut), or whose cut still keeps none of its
   words, gives way to the newest request, cut again into its room (beside a kept step,
   the task goes below its floor first where that alone makes the output fit and it
   still keeps words); a pinned request is cut again from its original at the cut's
   own goal, and the room a cut leaves below its goal goes back to the pinned requests,
   the newest first, up to their pins; a user's words are cut by content where that
   keeps more of their names (:mod:`.clauses`), with the words first, the marker naming
   none of the cut part, and an earlier cut's markers in them kept whole or cut whole
   and counted (:func:`~.words.cut_words`; a request left empty is mended after, :mod:`.said`);
5. with a store, a kept step that leaves no room for the reference to what the output
   lost takes the task (cut, or gone when that leaves less than its floor: the
   reference reaches it) where that makes the output fit, before the reference would
   go; beside a kept step the newest request (the task, where it is the only request)
   goes below its floor only where that alone makes the output fit (the limit, else
   the hard budget: the reserve beyond the limit is spent before the floor puts the
   output over the budget) and it still keeps words, and never beside a full index
   (the shortest reference is tried first); when the budget cannot hold
   the step in progress even so, the output keeps them over budget
   (``in_progress="keep"``, the default: a model that no longer sees the call it just
   made would make it again; the agent loop reports a ``CompactionOverBudget``
   event), or the compaction raises
   :class:`~neuron_context.errors.ContextOverflowError` (``in_progress="raise"``).

Finally the output starts on a user message again if the cuts left it starting on an
assistant message while the input did not (:mod:`.opener`). One message is cut by
:mod:`.message_cut`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, TypeAlias

from ..._counting.counter import BaseCounter
from ..._messages.conversation import first_is_user, next_safe_cut
from ..._messages.message import Message
from ..._messages.truncation import truncate_message
from ..._summary.facts import condense
from .clauses import holds, reused
from .message_cut import MIN_TRUNCATED, message_overhead, shrink
from .opener import kept_step, repin
from .plan import Part, Plan
from .water import describe_cut
from .words import cut_words, regrown, says, shared, words_kept

__all__ = ["InProgress", "fit"]

InProgress: TypeAlias = Literal["drop", "keep", "raise"]
"""What a compaction does when the budget cannot hold the newest request with the step
in progress: keep them over budget, or raise :class:`ContextOverflowError`."""


def _unsaid(parts: Sequence[Part], messages: Sequence[Message], plan: Plan) -> bool:
    """Whether ``parts`` hold the task cut to none of the words it had."""
    if plan.task is None or not says(messages[plan.task]):
        return False
    return any(p.kind == "task" and not says(p.message) for p in parts)


def _names_held(parts: Sequence[Part], messages: Sequence[Message], plan: Plan) -> float:
    """What the names of the task (its original) that its part in ``parts`` shows
    weigh; with no task part, all of its names."""
    if plan.task is None:
        return 0.0
    names = reused(messages[plan.task])
    task = next((p.message for p in parts if p.kind == "task"), messages[plan.task])
    return holds(task, names)


def fit(  # noqa: PLR0915 - the last resort's steps, in order
    parts: list[Part],
    messages: Sequence[Message],
    plan: Plan,
    limit: int,
    *,
    counter: BaseCounter,
    part_cost: Callable[[Part], int],
    in_progress: InProgress = "keep",
    budget: int = 0,
    below: bool = True,
) -> list[Part]:
    """``parts`` cut until they cost at most ``limit`` as ``part_cost`` prices them (see
    the module docstring); ``messages`` is the input, ``plan`` its plan, ``budget`` the
    hard budget beyond ``limit`` (its reserve) that a kept step's output still meets
    where it cannot meet ``limit``; ``below``: whether the newest request may go below
    its floor beside a kept step (not beside a full index, where the shortest
    reference would leave it its floor).

    Raises:
        ContextOverflowError: ``in_progress="raise"`` and the budget cannot hold the
            step in progress (cut in the middle) with the pinned requests.
    """
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

    def cut_biggest(kind: str) -> None:
        """Cut the biggest parts of ``kind`` in the middle while over the budget."""
        while excess > 0:
            sizes = [
                (costs[i], i)
                for i, p in enumerate(parts)
                if p.kind == kind and costs[i] > MIN_TRUNCATED * 2
            ]
            if not sizes:
                return
            size, index = max(sizes)
            goal = max(MIN_TRUNCATED, size - excess, size // 2)
            shorter = truncate_message(
                parts[index].message, goal, counter, describe=describe_cut, condense=condense
            )
            if counter.estimate_message(shorter) >= size:
                return
            replace(index, Part(kind, shorter))

    # What each pinned part was cut from: a pin cut again is cut from its original.
    # Keyed by id, each entry holds its message too: alive, its id never another's.
    source = {id(message): (message, messages[index]) for index, message in plan.pinned.items()}

    def original_of(message: Message) -> Message:
        """What ``message`` (a pinned part, or a cut of one) was cut from."""
        entry = source.get(id(message))
        return entry[1] if entry is not None and entry[0] is message else message

    def cut(kind: str, *, floor: int = 0, lift: bool = False) -> None:
        """Cut the part of ``kind`` by the excess, to no less than ``floor`` tokens: a
        pinned request from its original, to the same goal (one cut, its marker counting
        all that is gone; at a goal that does not depend on what the plan pinned, so a
        bigger budget, whose plan pinned more, keeps no fewer of its words), where that
        keeps as many of its words as the part cut as it is, or the part cut says
        nothing (a pin the plan had no room for, an empty message or its marker alone,
        is cut from its original to the floor, so the request says what it asks). With
        ``lift`` (beside a kept step), a pin the plan cut below ``floor`` is cut again
        from its original to the floor too: it keeps its floor beside a step kept over
        budget, and goes below it only in the last resort's own step."""
        for index, part in enumerate(parts):
            if excess <= 0 or part.kind != kind:
                continue
            shorter = shrink(part.message, excess, counter, floor=floor)
            original = original_of(part.message)
            if original is not part.message and not shorter.is_compaction:
                goal = max(message_overhead(counter), floor, costs[index] - excess)
                if (says(shorter) or not says(original)) and not (
                    lift and costs[index] < floor
                ):  # a cut, not a regrow
                    goal = min(goal, costs[index])
                again = cut_words(original, goal, counter)
                if counter.estimate_message(again) <= goal and (
                    words_kept(again) >= words_kept(shorter) or not says(shorter)
                ):
                    shorter = again
            source[id(shorter)] = (shorter, original)
            replace(index, Part(kind, shorter))

    def drop_oldest(kind: str) -> None:
        """Drop the oldest parts of ``kind``, from one safe cut to the next."""
        while excess > 0:
            kept = [p for p in parts if p.kind == kind]
            if not kept:
                return
            drop({id(p) for p in kept[: next_safe_cut([p.message for p in kept], 1)]})

    def share() -> None:
        """The task and the newest request (one part each) cut again from their
        originals to share their room, each keeping words, where such a cut fits."""
        at = {p.kind: i for i, p in enumerate(parts) if p.kind in ("task", "request")}
        kinds = [p.kind for p in parts]
        if plan.task is None or plan.newest is None or kinds.count("task") != 1:
            return
        if kinds.count("request") != 1:
            return
        room = costs[at["task"]] + costs[at["request"]] - max(0, excess)
        both = shared(messages[plan.task], messages[plan.newest], room, counter)
        if both is not None:
            replace(at["task"], Part("task", both[0]))
            replace(at["request"], Part("request", both[1]))

    cut_biggest("tail")
    drop_oldest("tail")
    cut("summary")
    if excess > 0:  # cut and still too big: the summaries go
        drop({id(p) for p in parts if p.kind == "summary"})
    # A summary cut to nothing (not even its marker fits) says nothing: it goes.
    drop({id(p) for p in parts if p.kind == "summary" and not p.message.text})
    cut_biggest("step")
    if in_progress == "drop":
        drop_oldest("step")  # what cannot be cut (tool inputs, images)
    stepping = in_progress != "drop" and any(p.kind == "step" for p in parts)
    cut("request", floor=MIN_TRUNCATED, lift=stepping)
    # A step kept never takes a request below its floor (the task may still go whole).
    cut("task", floor=MIN_TRUNCATED if stepping else 0, lift=stepping)
    task_cost = sum(costs[i] for i, p in enumerate(parts) if p.kind == "task")
    if stepping and 0 < excess <= task_cost and any(p.kind == "reference" for p in parts):
        # The reference reaches everything the output lost, the task with it: where the
        # task's room makes the output fit, the task gives way before the reference
        # would (a compaction without it loses them all). Cut below its floor, it goes
        # unless it still shows every name the task holds (a by-content cut a token
        # under the floor can keep both ids).
        cut("task")
        whole_names = _names_held([], messages, plan)
        if excess > 0 or (
            any(p.kind == "task" and costs[i] < MIN_TRUNCATED for i, p in enumerate(parts))
            and not 0 < whole_names <= _names_held(parts, messages, plan)
        ):  # below its floor, it stays only where it still shows every name it had
            drop({id(p) for p in parts if p.kind == "task"})
    if stepping and excess > 0 and any(p.kind == "request" for p in parts):
        # The task below its floor, where that alone makes the output fit and it still
        # says something, rather than gone (the request keeps its floor).
        saved = (list(parts), list(costs), excess)
        cut("task")
        if excess > 0 or _unsaid(parts, messages, plan):
            parts, costs, excess = saved
    if not stepping:
        cut("request")
        if _unsaid(parts, messages, plan):
            share()  # the request below its floor before a task that says nothing goes
        elif _names_held(parts, messages, plan) < _names_held([], messages, plan):
            # The task's cut lost some of its names: sharing the room may keep more.
            saved = (list(parts), list(costs), excess)
            before = _names_held(parts, messages, plan)
            share()
            if _names_held(parts, messages, plan) <= before:
                parts, costs, excess = saved
    if any(p.kind == "request" for p in parts) and (excess > 0 or _unsaid(parts, messages, plan)):
        # The task cannot fit even cut, or its cut keeps none of its words (an empty
        # message, or its marker alone: it says nothing of the task).
        drop({id(p) for p in parts if p.kind == "task"})
        # The newest request was cut to leave the task its place: the room the task
        # leaves goes back to it (whole again when it fits).
        if plan.newest is not None:
            newest = {"request": messages[plan.newest]}
            fuller = regrown(parts, -excess, newest, counter=counter, part_cost=part_cost)
            for index, part in enumerate(fuller):
                if part is not parts[index]:
                    replace(index, part)
    pinned = "request" if any(p.kind == "request" for p in parts) else "task"
    if excess > 0 and stepping and below and any(p.kind == pinned for p in parts):
        # The task gave way (or is the only request) and the step is kept: the newest
        # request goes below its floor where that alone makes the output fit and it
        # still says something; fit the limit, else the budget beyond it (the reserve:
        # a few tokens over the limit rather than the floor's many over the budget).
        for spare in dict.fromkeys((0, max(0, budget - limit))):
            saved = (list(parts), list(costs), excess)
            excess -= spare
            cut(pinned)
            excess += spare
            if excess <= spare and all(says(p.message) for p in parts if p.kind == pinned):
                break
            parts, costs, excess = saved
    if excess < 0:
        # A cut keeps no more than its goal, often less (it cuts in steps), and the
        # request was cut to its floor before the task was cut: the room left goes back
        # to the pinned requests, the newest first, up to their pins.
        fuller = regrown(
            parts,
            -excess,
            _originals(messages, plan),
            counter=counter,
            part_cost=part_cost,
            caps=_pin_costs(plan, part_cost),
        )
        for index, part in enumerate(fuller):
            if part is not parts[index]:
                replace(index, part)
    if excess > 0 and any(p.kind == "step" for p in parts):  # kept over budget, or an error
        return kept_step(parts, messages, plan, excess, counter, in_progress=in_progress)
    if not first_is_user([p.message for p in parts]) and first_is_user(messages):
        parts = repin(
            parts,
            costs,
            messages,
            plan,
            limit,
            counter=counter,
            part_cost=part_cost,
            in_progress=in_progress,
        )
    return parts


def _originals(messages: Sequence[Message], plan: Plan) -> dict[str, Message]:
    """The pinned requests' originals by the kind of their part."""
    kinds = (("request", plan.newest), ("task", plan.task))
    return {kind: messages[index] for kind, index in kinds if index is not None}


def _pin_costs(plan: Plan, part_cost: Callable[[Part], int]) -> dict[str, int]:
    """What the plan's pins cost, by the kind of their part: the most a request the
    last resort cut grows back to."""
    kinds = (("request", plan.newest), ("task", plan.task))
    return {
        kind: part_cost(Part(kind, plan.pinned[index]))
        for kind, index in kinds
        if index is not None and index in plan.pinned
    }
