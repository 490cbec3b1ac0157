"""How the last resort (:mod:`.fit`) ends: the output starts on a user message whenever
the input did.

The user message that opened the kept turn goes back in front, cut to fit
(:func:`repin`); where none fits, the messages before the first user message go, but
beside a step in progress kept: a model that no longer sees the call it just made would
make it again. When the budget cannot hold the step in progress (:func:`kept_step`), it
is kept over budget with that opener cut to its floor in front, or the compaction raises
:class:`~neuron_context.errors.ContextOverflowError`, as ``in_progress`` says
(:data:`.fit.InProgress`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..._counting.counter import BaseCounter
from ..._errors import ContextOverflowError
from ..._messages.conversation import first_is_user, turn_start
from ..._messages.message import Message
from .message_cut import MIN_TRUNCATED, shrink
from .plan import Part, Plan

if TYPE_CHECKING:
    from .fit import InProgress

__all__ = ["kept_step", "repin"]


def kept_step(
    parts: list[Part],
    messages: Sequence[Message],
    plan: Plan,
    excess: int,
    counter: BaseCounter,
    *,
    in_progress: InProgress,
) -> list[Part]:
    """``parts`` with the step in progress kept ``excess`` tokens over budget, starting
    on a user message when the input did (the user message that opened the step's turn,
    cut by what is over but never below its floor, put back before it); or, with
    ``in_progress="raise"``, the :class:`ContextOverflowError` saying so."""
    if in_progress == "raise":
        msg = (
            "the budget cannot hold the newest request with the step in progress (its "
            f"tool calls and results), even cut: {excess} tokens over"
        )
        raise ContextOverflowError(msg)
    if first_is_user([p.message for p in parts]) or not first_is_user(messages):
        return parts
    opener = turn_start(messages, min(plan.step)) if plan.step else None
    if opener is None:  # pragma: no cover - the input starts on a user message
        return parts
    pin = Part("request", shrink(messages[opener], excess, counter, floor=MIN_TRUNCATED))
    return _pinned_first(parts, pin)


def _pinned_first(parts: Sequence[Part], pin: Part) -> list[Part]:
    """``parts`` with ``pin`` before the first of them that is not a system message."""
    first = next((i for i, p in enumerate(parts) if p.kind != "system"), len(parts))
    return [*parts[:first], pin, *parts[first:]]


def repin(
    parts: list[Part],
    costs: list[int],
    messages: Sequence[Message],
    plan: Plan,
    limit: int,
    *,
    counter: BaseCounter,
    part_cost: Callable[[Part], int],
    in_progress: InProgress = "keep",
) -> list[Part]:
    """Start the output on a user message again: the one that opened the kept turn,
    cut to fit; if none fits, the messages before the first user message go, but for a
    step in progress kept (``in_progress`` not ``"drop"``): the opener then goes back
    before it cut to its floor, over the budget as a kept step is (or the
    :class:`ContextOverflowError` of ``in_progress="raise"``), so the output never loses
    the call the model just made, nor everything (where the opener is the only user
    message, such as a summary at the front).

    Raises:
        ContextOverflowError: ``in_progress="raise"`` and the opener does not fit
            before the step in progress.
    """
    excess = sum(costs) - limit
    index = turn_start(messages, plan.cut - 1) if plan.cut > 0 else None
    if index is not None:
        pin = Part("request", messages[index])
        pinned = excess + part_cost(pin)
        if pinned > 0:
            pin = Part("request", shrink(pin.message, pinned, counter))
            pinned = excess + part_cost(pin)
        empty = pin.message.is_compaction and not pin.message.text  # it says nothing
        if (pinned <= 0 or pinned <= excess) and not empty:
            return _pinned_first(parts, pin)
        if in_progress != "drop" and any(p.kind == "step" for p in parts):
            if in_progress == "raise":
                msg = (
                    "the budget cannot hold the step in progress (its tool calls and "
                    f"results) with the user message that opened its turn: {pinned} tokens over"
                )
                raise ContextOverflowError(msg)
            over = excess + part_cost(Part("request", messages[index]))
            pin = Part("request", shrink(messages[index], over, counter, floor=MIN_TRUNCATED))
            return _pinned_first(parts, pin)
    while not first_is_user([p.message for p in parts]):
        first = next(i for i, p in enumerate(parts) if p.kind != "system")
        parts = [*parts[:first], *parts[first + 1 :]]
    return parts
