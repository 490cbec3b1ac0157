"""``default_stack``'s offloading: what a :class:`~neuron_context._strategies.default.DefaultStack`
compaction with a store adds to the one without.

Every input message the output does not keep as it is goes to the store, and the output
holds one reference to them after the summaries. The reference is priced in the budget
before the key exists, so the compaction keeps room for it: a placeholder as long as the
reference can be (:func:`placeholder`), a part of its own that the last resort never
cuts (:func:`assemble`), replaced by the real reference once the parts are final
(:func:`offload`). Where the budget has no room for the full reference the shortest form
is tried, and where not even that fits, or the store fails, the compaction is the one
without a store (:func:`with_store`): offloading never costs the budget.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TypeAlias

from ..._counting.counter import BaseCounter
from ..._log import logger
from ..._messages.content import Compaction
from ..._messages.message import Message, Role
from ..._stores.offload import largest_reference, messages_reference, short_reference
from ..._stores.serialized import KEY_LENGTH
from ..._stores.store import Store
from .plan import Part, Plan

Found: TypeAlias = tuple[list[Message], int, int]
"""One compaction: the output, its cost and the limit it must meet."""

Attempt: TypeAlias = Callable[[Store | None, bool], Awaitable[Found | None]]
"""A compaction with a store (or ``None``) and its ``short`` reference; ``None`` when the
put failed."""


async def with_store(attempt: Attempt, store: Store | None) -> Found:
    """The compaction with ``store``: with the full reference, else the shortest, else
    without a store (logged when only the reference kept the output over its limit).

    The output without a store is taken whenever the one with it is over the limit, so a
    reference never turns a compaction that meets the budget into one that does not;
    when neither meets it, the one with the reference is kept (what it removed can still
    be recalled). Without a store, the one compaction is the answer, over the limit or
    not (a compaction that cannot meet the budget is not run three times). Each attempt
    after the first has more space (a shorter reference, or none), so where it
    summarizes the same messages ``attempt`` may hand it the first one's summaries
    (``DefaultStack`` does with an LLM summarizer: a reference's few tokens seldom move
    the cut, and then the attempts cost one call, not three)."""
    found = await attempt(store, False)
    if store is None:  # no put that could fail: the one compaction, over its limit or not
        assert found is not None
        return found
    if found is not None and found[1] > found[2]:  # try the shortest reference
        found = await attempt(store, True)
    if found is None or found[1] > found[2]:
        # The store failed, or the reference does not fit a budget that the output
        # without it meets: the compaction as it would be without a store.
        plain = await attempt(None, False)
        assert plain is not None
        if found is not None and plain[1] <= plain[2]:
            logger.warning(
                "DefaultStack: no room for the reference to the offloaded messages "
                "within the budget; compacting without offloading"
            )
        if found is None or plain[1] <= plain[2]:
            found = plain
    return found


def reference_message(text: str) -> Message:
    """The message that holds the reference to what a compaction offloaded."""
    return Message(role=Role.USER, content=(Compaction(content=text),))


def placeholder(store: Store | None, *, short: bool) -> Message | None:
    """The message that keeps room for the reference (``None`` without a store): as long
    as the reference can be, since its key and counts are known only after the put, and
    the put comes after the parts are final."""
    if store is None:
        return None
    longest = short_reference("f" * KEY_LENGTH) if short else largest_reference()
    return reference_message(longest)


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
    reference to them where the placeholder was (``None`` when the put failed)."""
    kept = {id(part.message) for part in parts}
    removed = [message for message in messages if id(message) not in kept]
    reference = messages_reference(
        store, removed, counter, "DefaultStack", short=short, kept=[p.message for p in parts]
    )
    if reference is None:
        return None if removed else [part for part in parts if part.kind != "reference"]
    message = reference_message(reference)
    return [Part("reference", message) if p.kind == "reference" else p for p in parts]
