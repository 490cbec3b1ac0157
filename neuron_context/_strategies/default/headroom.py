"""How far below its budget a :class:`~neuron_context.DefaultStack` compaction goes.

The space a compaction leaves between the history and the budget is the room the next
turns grow into before the next compaction; everything below it is what the history
keeps. Deeper keeps less and reads fewer cached tokens; each compaction rewrites the
prompt from its first changed message on (a prompt-cache miss of about its own size).
Unless the user gives a ``target``, the stack decides it per compaction from the
conversation's measured growth (``growth_per_turn`` of :mod:`.schedule`: the mean cost of
its last turns), in whole turns:

- **The same turns, no wasted space.** At :data:`BASE_SHARE` of the budget the room
  holds ``k`` whole turns of growth; the target rises to the highest point that still
  leaves room for those ``k`` turns (with :data:`TURN_MARGIN`): the loop compacts as
  often as it would at the base share, each time keeping what the partial turn's space
  holds. Growth that is small against the budget leaves the target at the base share:
  there the input bill is the cached prompt read on every call, and a higher target makes
  every read bigger without keeping more of what the next step uses (measured; see
  docs/strategies/default-stack.md).
- **A turn bigger than the room.** When not one turn fits the room at the base share,
  the next call compacts again at any target from the base share up, so the compaction
  keeps as much as it can: :data:`CEILING_SHARE` of the budget.
- **No measure yet** (fewer than two turns): the base share.
- **A turn kept free above the target.** Earlier summaries a compaction keeps as they are
  may bring its output above the target (see :mod:`.summaries`), never into the last
  turn of measured growth below the limit (:func:`kept_free`): an output that leaves less
  than a turn is compacted again on the next call, each time rewriting the prompt after
  the kept summaries. A turn bigger than the room above the target is not kept free:
  the next call compacts whatever is kept. Replayed on the shared transcripts at 10%
  (before the summary filled its space), where a turn is a large share of the room,
  summaries kept up to 85% of the room above the target compacted on 468 of 1,426 calls
  (input bill 2.17M) against 449 (2.15M) with a turn kept free, with as much of what the
  next step uses (76.8% and 77.0%); merging at the target instead compacts 394 times
  (2.02M) but keeps less at 25% (see
  ``summaries.SUMMARY_HEADROOM``), and two turns kept free kept less at 10% (2.10M,
  75.9%).

- **The step in progress above the target.** The results the model has not answered yet
  are what the next call reads first; cut to their share below the target, a big step
  keeps a few dozen tokens of each while the budget has room. They may take the room
  above the target up to :data:`STEP_TURNS` turns of measured growth below the limit
  (:func:`step_ceiling`; a schedule's ``min_turns``, when set), none before a turn is
  measured or where a turn is bigger than the room above the target. Replayed on the
  shared transcripts (with the summary's space following what it summarizes, see
  :mod:`.plan`): one turn left free made the loop compact again a call later (at 10%,
  443 compactions and 2.17M of input against 431 and 2.10M, for as much of what the next
  step uses: 77.4%); two turns, 432 and 2.12M for 77.7%, and 91.4% / 97.7% at 25% / 50%
  (90.7% / 96.9% before either change).

A :class:`~neuron_context.strategies.CacheSchedule`, when set, lowers the decided target
further so that its ``min_turns`` turns fit (tight when calls grow fast and the cache is
priced), as it lowers a given one.
"""

from __future__ import annotations

import math

from ..._numbers import scale

__all__ = [
    "BASE_SHARE",
    "CEILING_SHARE",
    "STEP_TURNS",
    "TURN_MARGIN",
    "decided_share",
    "decided_target",
    "kept_free",
    "step_ceiling",
]

BASE_SHARE = 0.55
"""The least share of the room (what the system messages leave of the budget less the
reserve) a decided target brings the history down to, and where the turns are counted."""
CEILING_SHARE = 0.9
"""The most share of the room a decided target keeps (a turn bigger than the room)."""
TURN_MARGIN = 1.05
"""The room left per turn, in measured turns: growth varies from turn to turn."""
STEP_TURNS = 2
"""The turns of measured growth a step in progress kept above the target leaves free
below the limit (see :func:`step_ceiling`)."""


def decided_share(room: int, growth: float) -> float:
    """The share of ``room`` tokens a compaction keeps when a conversation grows by
    ``growth`` tokens a turn (see the module docstring); in
    ``[BASE_SHARE, CEILING_SHARE]``, :data:`BASE_SHARE` when either is not positive."""
    if room <= 0 or not growth > 0:
        return BASE_SHARE
    try:
        turn = growth / room  # a turn's share of the room
    except OverflowError:  # a room beyond a float's range: a turn is nothing beside it
        return BASE_SHARE
    if turn == 0:
        return BASE_SHARE
    turns = math.floor((1 - BASE_SHARE) / turn) if math.isfinite(turn) else 0
    if turns == 0:
        return CEILING_SHARE
    return min(CEILING_SHARE, max(BASE_SHARE, 1 - TURN_MARGIN * turns * turn))


def decided_target(systems: int, limit: int, growth: float) -> int:
    """The target in tokens for a history whose system messages cost ``systems`` under a
    ``limit`` (the budget less the reserve), growing by ``growth`` tokens a turn."""
    room = max(0, limit - systems)
    return systems + scale(room, decided_share(room, growth))


def kept_free(growth: float, band: int) -> int:
    """The tokens below the limit a compaction's output leaves free for the next turn when
    a conversation grows by ``growth`` tokens a turn and the target leaves ``band``
    tokens below the limit: one turn; 0 when a turn is bigger than the band (the next
    call compacts whatever is kept) or ``growth`` is not a positive finite number (no
    measure yet)."""
    if not (growth > 0 and math.isfinite(growth)) or growth > band:
        return 0
    return math.ceil(growth)


def step_ceiling(limit: int, growth: float, band: int, *, turns: int = STEP_TURNS) -> int | None:
    """The most a compaction's output may cost when it keeps the step in progress above
    its target (``band`` tokens below ``limit``), for a conversation growing by
    ``growth`` tokens a turn: ``turns`` turns of growth below ``limit``; ``None`` where
    :func:`kept_free` keeps no turn free (no measure yet, or a turn bigger than the
    band: the next call compacts whatever is kept)."""
    free = kept_free(growth, band)
    return limit - turns * free if free else None
