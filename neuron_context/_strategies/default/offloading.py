"""``default_stack``'s offloading: what a :class:`~neuron_context._strategies.default.DefaultStack`
compaction with a store adds to the one without.

Every input message the output does not keep as it is goes to the store entry by entry,
and the output holds an index of them after the summaries, a line per entry with its key
(:mod:`neuron_context._stores.index`). The index is priced in the budget before the keys
exist, so the compaction keeps room for it: a placeholder as long as the index may be
(:func:`placeholder`: :data:`INDEX_SHARE` of what the system messages leave, no more than
the lines the input could need), a part of its own that the last resort never cuts
(:func:`assemble`), replaced by the real index once the parts are final
(:func:`offload`; the oldest entries roll up into one when the lines do not fit), and
what the real index leaves of the room goes back to a request the last resort cut to
make it (:func:`given_back`). Where
the budget has no room for the index the shortest form (``[recall: <key>]``, one entry
holding everything removed) is tried, and where not even that fits, or the store fails,
the compaction is the one without a store (:func:`with_store`): offloading never costs
the budget.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeAlias

import attrs

from ..._counting.counter import BaseCounter
from ..._errors import ContextOverflowError
from ..._log import logger
from ..._messages.content import Compaction
from ..._messages.message import Message, Role
from ..._numbers import scale
from ..._stores.entries import PAGE_TOKENS, is_index
from ..._stores.index import index_placeholder, index_reference
from ..._stores.offload import short_reference
from ..._stores.serialized import COSTLIEST_KEY
from ..._stores.store import Store
from ..._summary.format import SUMMARY_HEADING
from .plan import Part, Plan
from .turns import is_request
from .water import MIN_TRUNCATED
from .words import regrown

Found: TypeAlias = tuple[list[Message], int, int]
"""One compaction: the output, its cost and the limit it must meet."""

Attempt: TypeAlias = Callable[[Store | None, bool], Awaitable[Found | None]]
"""A compaction with a store (or ``None``) and its ``short`` reference; ``None`` when the
put failed."""


async def with_store(attempt: Attempt, store: Store | None, *, budget: int) -> Found:
    """The compaction with ``store``: with the full reference, else the shortest, else
    without a store (logged when only the reference kept the output over its limit).

    The output without a store is taken whenever the one with it is over the limit and
    the one without meets it, so a reference never turns a compaction that meets the
    limit into one that does not. When neither meets it (the step in progress is kept
    over it), the one with the reference is kept (what it removed can still be recalled)
    unless it is over ``budget`` (the hard budget, beyond the reserve) and the one
    without is not: a reference never puts an output over the budget (nor further over
    it where no step is kept: the newest request alone does not fit). Without a store,
    the one compaction is the answer, over the limit or not (a compaction that cannot
    meet the budget is not run three times). Each attempt after the first has more
    space (a shorter reference, or none), so where it
    summarizes the same messages ``attempt`` may hand it the first one's summaries
    (``DefaultStack`` does with an LLM summarizer: a reference's few tokens seldom move
    the cut, and then the attempts cost one call, not three). An attempt that is not the
    last one that raises :class:`~neuron_context.errors.ContextOverflowError`
    (``in_progress="raise"``) is over its limit: the next one runs, and only the last
    one's error is raised."""
    if store is None:  # no put that could fail: the one compaction, over its limit or not
        found = await attempt(store, False)
        assert found is not None
        return found
    found = await _over(attempt, store, short=False)
    if found is not None and found[1] > found[2]:  # try the shortest reference
        found = await _over(attempt, store, short=True)
    if found is None or found[1] > found[2]:
        # The store failed, or the reference does not fit a budget that the output
        # without it meets: the compaction as it would be without a store.
        plain = await attempt(None, False)
        assert plain is not None
        costs_budget = found is not None and plain[1] <= budget < found[1]
        # Over the budget with no step kept (the newest request alone does not fit):
        # the reference only adds to what is over. Within the budget (the reserve
        # spent), the reference stays: what it removed can still be recalled.
        if found is not None and budget < found[1] and plain[1] < found[1]:
            costs_budget = costs_budget or not _stepping(plain[0])
        if found is not None and (plain[1] <= plain[2] or costs_budget):
            logger.warning(
                "DefaultStack: no room for the reference to the offloaded messages "
                "within the budget; compacting without offloading"
            )
        if found is None or found is _OVER or plain[1] <= plain[2] or costs_budget:
            found = plain
    return found


def _stepping(output: Sequence[Message]) -> bool:
    """Whether ``output`` ends on the step in progress (a call or its results)."""
    return bool(output) and bool(output[-1].tool_uses or output[-1].is_tool)


_OVER: Found = ([], 1, 0)
"""An attempt that raised :class:`ContextOverflowError`: over its limit, whatever it costs."""


async def _over(attempt: Attempt, store: Store, *, short: bool) -> Found | None:
    """``attempt`` with ``store``, or :data:`_OVER` where it raised
    :class:`ContextOverflowError` (a later attempt has more room and may fit)."""
    try:
        return await attempt(store, short)
    except ContextOverflowError:
        return _OVER


def reference_message(text: str) -> Message:
    """The message that holds the reference to what a compaction offloaded."""
    return Message(role=Role.USER, content=(Compaction(content=text),))


INDEX_SHARE = 0.15
"""The most of the budget (beyond the system messages) an index may take, above its
least room (:data:`INDEX_KEYS`)."""

INDEX_KEYS = 1
"""The page keys an index has room for beside one long line whatever the share (where
the input could need more than a line). A system prompt that fills most of a small
budget leaves a share of one line, and then everything removed is one entry beyond a
page; room for a page key too (a key alone, about 10 tokens more) shows the keys of the
pages that hold the most ids beside it (at 10% of the shared transcripts, lost items in
one page 85% with one line's room, 95% with a key more, for 0.1 points of evidence; 96%
with two lines, for 0.2)."""


def placeholder(
    store: Store | None,
    messages: Sequence[Message],
    counter: BaseCounter,
    *,
    space: int,
    short: bool,
) -> Message | None:
    """The message that keeps room for the index (``None`` without a store): as long as
    an index may be (:data:`INDEX_SHARE` of ``space``, the budget beyond the system
    messages, and at least a line and :data:`INDEX_KEYS` page keys; no more than the
    lines ``messages`` could need), since its keys and counts are known only after the
    puts, and the puts come after the parts are final. Where that would leave the
    newest request less than its floor in ``space`` (a budget the system messages
    nearly fill), one line, else the shortest form (``short`` asks for that one)."""
    if store is None:
        return None
    shortest = reference_message(short_reference(COSTLIEST_KEY))
    if short:
        return shortest
    line = counter.estimate_message(index_placeholder(2)) - counter.estimate_message(
        index_placeholder(1)
    )
    most = (scale(space, INDEX_SHARE) - counter.estimate_message(index_placeholder(0))) // max(
        1, line
    )
    needed = _lines(messages)
    if most < 2 and needed > 1:
        wanted = index_placeholder(1, INDEX_KEYS)
    else:
        wanted = index_placeholder(min(max(1, most), needed))
    # Where the space is so small that the index's least room would leave the newest
    # request less than its floor, the index takes a line, or its shortest form: the
    # request is what the next call answers, and the index rolls up to its room.
    room = space - _request_floor(messages, counter) - counter.estimate_text(SUMMARY_HEADING)
    for holder in (wanted, index_placeholder(1)):
        if counter.estimate_message(holder) <= room:
            return holder
    return shortest


def _request_floor(messages: Sequence[Message], counter: BaseCounter) -> int:
    """What the newest request keeps at least when the last resort cuts it: the floor,
    or all of it when it costs less."""
    for message in reversed(messages):
        if is_request(message):
            return min(counter.estimate_message(message), MIN_TRUNCATED)
    return 0


def _lines(messages: Sequence[Message]) -> int:
    """About how many index lines ``messages`` would need if all were removed."""
    lines = 0
    for message in messages:
        if message.role is Role.SYSTEM:
            continue
        if message.is_compaction:
            lines += sum(
                block.content.count("\n") + 1
                for block in message.content
                if isinstance(block, Compaction)
            )
            continue
        chars = sum(len(t) for t in _texts(message))
        lines += max(1, len(message.tool_results)) + chars // (PAGE_TOKENS * 3)
    return lines


def _texts(message: Message) -> list[str]:
    return [message.text, *(r.text for r in message.tool_results)]


def unindexed(plan: Plan) -> Plan:
    """``plan`` without the earlier indexes among its summaries: a compaction with a
    store writes one index, carrying their lines (so the summaries are sized without
    them, and the output holds one index within its room)."""
    previous = [message for message in plan.previous if not is_index(message)]
    if len(previous) == len(plan.previous):
        return plan
    return attrs.evolve(plan, previous=previous)


def assemble(plan: Plan, summaries: list[Message], holder: Message | None) -> list[Part]:
    """The parts ``plan`` assembles around ``summaries``, with the ``holder`` of the
    reference after them as a part of its own (``reference``), which the last resort
    never cuts: the reference is what reaches everything the output lost."""
    parts = plan.assemble([*summaries, holder] if holder else summaries)
    if holder is not None:
        parts = [Part("reference", holder) if p.message is holder else p for p in parts]
    return parts


def offload(
    parts: list[Part],
    messages: Sequence[Message],
    store: Store,
    counter: BaseCounter,
    *,
    short: bool,
) -> list[Part] | None:
    """Offload every input message the output does not hold as it is, and put the
    index of them where the placeholder was, within the placeholder's cost (``None``
    when a put failed)."""
    kept = {id(part.message) for part in parts}
    removed = [message for message in messages if id(message) not in kept]
    holder = next((p.message for p in parts if p.kind == "reference"), None)
    room = 0 if holder is None else counter.estimate_message(holder)
    index = index_reference(
        store,
        removed,
        counter,
        "DefaultStack",
        room=room,
        short=short,
        kept=[p.message for p in parts],
        everything=messages,
    )
    if index is None:
        return None if removed else [part for part in parts if part.kind != "reference"]
    return [Part("reference", index) if p.kind == "reference" else p for p in parts]


def given_back(
    parts: list[Part],
    assembled: Sequence[Part],
    plan: Plan,
    room: int,
    *,
    counter: BaseCounter,
    part_cost: Callable[[Part], int],
    limit: int | None = None,
) -> list[Part]:
    """``parts`` (the output, its index written) with the pinned requests the last resort
    cut below their pins (``assembled``: the parts before it) cut again from the
    originals into the room the index left of its placeholder's (``room`` tokens), the
    newest request first, no longer than the plan pinned them (whole where that fits):
    the placeholder is priced as long as an index may be, and the real one is often
    shorter (one line of a request, a rolled-up line); where the last resort dropped
    the task, the newest request, up to all of it. The output costs no more than it
    did with the placeholder, nor more than ``limit``. The same regrow as the last
    resort's where a task gives way (:func:`~.words.regrown`), capped at the pins."""
    slack = room - sum(part_cost(p) for p in parts if p.kind == "reference")
    if limit is not None:  # an output over its limit (a kept step) takes no more
        slack = min(slack, limit - sum(part_cost(p) for p in parts))
    pins = [p for p in assembled if p.kind in ("request", "task")]
    at = [p.kind for p in parts if p.kind in ("request", "task")]
    originals = {
        kind: plan.messages[index]
        for kind, index in (("request", plan.newest), ("task", plan.task))
        if index is not None
    }
    caps = {pin.kind: part_cost(pin) for pin in pins}
    if at != [p.kind for p in pins]:
        if at != [p.kind for p in pins if p.kind != "task"]:
            return parts  # the last resort added a request (the opener of a kept step)
        # The task gave way and the newest request took its room (whole where it fit):
        # the room the index leaves goes to it, up to all of it.
        caps = {kind: part_cost(Part(kind, message)) for kind, message in originals.items()}
    if slack <= 0:
        return parts
    return regrown(parts, slack, originals, counter=counter, part_cost=part_cost, caps=caps)
