"""The room below the target a :class:`~neuron_context.DefaultStack` compaction left
unused, given to what the next call acts on.

The plan sizes the summaries' space before they are written (the earlier summaries they
keep and a share of what they summarize, see :mod:`.plan`); a summary of a few short
turns, or one too small to write, takes less, and a cut message may keep less than its
cap (its segments' sizes). Where the output then stays at least
:data:`REGROW` tokens below the plan's target and the plan cut a message of the step in
progress (or of the exchange the newest request answers), those messages are levelled
again (:func:`~.water.kept_part`) with that room too, the other kept messages left as
they were cut, and taken where the output stays within the target; where it does not (a
cut that kept less than its cap left part of that room, which the new cap counts again),
in that room less what it came out over (:data:`TRIES` in all).

Replayed when it came in (next-step evidence kept with its meaning at 10% / 25% / 50%,
one try): τ-bench airline runs outside the shared set 61.1% / 84.2% / 94.9% against
58.6% / 84.4% / 94.9% without it (at 10% the system prompt leaves a few hundred tokens,
a summary of the span is often too small to write, and the newest search result was cut
to a few dozen); SWE-agent trajectories 69.4% / 89.5% / 98.1% (68.9% / 89.5% / 98.1%);
the shared transcripts 78.3% / 91.9% / 98.0% (78.2% / 91.9% / 98.0%). The further tries
(:data:`TRIES`), when they came in: τ-bench at 10% 61.5% → 62.0%, SWE-agent at 10%
69.4% → 70.3%, the rest and the loop's input unchanged. Other changes have moved the
absolute figures since (the contrasts are what these measured). Levelling every cut
kept message again kept as much (61.0% at 10% on τ-bench) for up to twice a
compaction's CPU; with any room at all (no :data:`REGROW`), 78.0% at 10% on the shared
set; with 48 tokens, 58.7% at 10% on τ-bench.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from ..._counting.counter import BaseCounter
from ..._messages.message import Message
from .offloading import assemble
from .plan import Part, Plan
from .water import kept_part

__all__ = ["RECUT", "REGROW", "TRIES", "regrown"]

REGROW = 20
"""The least room below the target that the kept messages are levelled again in: less
holds hardly a line more, and changes what is kept for it."""
TRIES = 3
"""The most times the messages are levelled again, each time in the room less what the
last try came out over it: the room is what the output left unused, and a cut message
that kept less than its cap (whole segments) left some of it, which its new cap counts
again."""
RECUT = 8
"""The messages to level again cost at most this many times the plan's target in all: a
step far bigger than the budget is cut once, by the plan (another cut from the whole of
it would repeat the compaction's biggest work for a few lines more). One within it is
cut up to ``1 +`` :data:`TRIES` times (the plan's cut, then each try that comes out
over): at worst four cuts of up to eight targets' worth (a 10.5 MB result takes about
3 s a cut, so up to about 13 s in one compaction)."""


def regrown(  # noqa: PLR0917 - the compaction's state at this point
    plan: Plan,
    summaries: list[Message],
    holder: Message | None,
    costs: Sequence[int],
    counter: BaseCounter,
    cost: Callable[[Sequence[Part]], int],
    held: int = 0,
    limit: int | None = None,
) -> tuple[Plan, list[Part]]:
    """The parts ``plan`` assembles around ``summaries`` (and the ``holder`` of the
    reference, which costs ``held`` tokens: the plan's target leaves it out), and the
    plan they come from: its step in progress and the exchange the newest request
    answers (:attr:`~.plan.Plan.first`) levelled again, from the messages' ``costs``,
    with the room below its target left unused, where that is at least :data:`REGROW`
    tokens, the plan cut one of them, those cost at most :data:`RECUT` times the target,
    and the output (priced by ``cost``) stays within the target, the holder aside, and
    within ``limit`` with it (the plan's target may reach the limit: the holder then
    does not fit above it, and the last resort would cut the task for it); a try that
    comes out over is tried again in the room less what it came out over, while that
    is at least :data:`REGROW` tokens (:data:`TRIES` tries in all)."""
    parts = assemble(plan, summaries, holder)
    slack = plan.target - (cost(parts) - held)
    cut = [
        i for i in plan.first if i >= plan.cut and plan.tail[i - plan.cut] is not plan.messages[i]
    ]
    if slack < REGROW or not cut or sum(costs[i] for i in cut) > RECUT * plan.target:
        return plan, parts
    space, above = plan.levels
    room = slack
    for _ in range(TRIES):
        tail, _ = kept_part(
            plan.messages,
            costs,
            plan.cut,
            pinned=plan.pinned,
            step=set(plan.first),
            space=space,
            above=above + room,
            counter=counter,
            earlier=plan.tail,
        )
        grown = attrs.evolve(plan, tail=tail)
        again = assemble(grown, summaries, holder)
        total = cost(again)
        over = max(total - held - plan.target, total - limit if limit is not None else 0)
        if over <= 0:
            return grown, again
        room -= over  # the step's cut kept less than its cap: that room was counted twice
        if room < REGROW:
            break
    return plan, parts
