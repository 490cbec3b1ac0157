"""When :class:`~neuron_context.DefaultStack` compacts below its budget, and how deep.

A compaction pays twice: it sheds tokens every later call would have read, and it
rewrites the prompt from its first changed message on, so every token after that point
is a cache miss on the next call. Cached tokens cost about a tenth of the input price
(:class:`~neuron_context.counting.CacheCostModel`), so a loop that compacts often pays
more for the misses than it saves. :class:`CacheSchedule` decides from those prices:

- **Over the budget nothing changes:** a request that would not fit is compacted.
- **Deep enough to last.** A compaction that leaves room for only a turn or two will be
  followed by another rewrite soon. The schedule measures how fast the history grows
  (the mean cost of its last turns) and lowers the target so that ``min_turns`` turns fit
  below the trigger, never below ``floor`` of the budget. Reading fewer cached tokens
  and rewriting less often are both cheaper, so the only reason not to go deeper is
  what the summary loses: ``floor`` is that limit.
- **The tail first.** When the messages that arrived since the previous call (not yet
  cached: a new tool result, however huge) are what crosses the budget, cutting only
  them keeps the whole cached prefix. The schedule does that whenever the cut leaves each
  new message at least the share a full compaction would give it and ``min_turns`` turns
  of room; otherwise the head is rewritten as before. (Clearing old results is not a
  tail change: it breaks the prefix at the first one it clears.)
- **Early when the cache is cold.** When more than the cache's lifetime has passed since
  the previous call, the next call writes its whole prompt anyway: compacting then costs
  no cache misses of its own and makes that write, and every read after it, smaller.
  The schedule compacts once the history is past the middle of the hysteresis band and
  the saving over the turns left before the budget would force it pays for the
  summarizer's own call (nothing, for the offline summarizer). The gap comes from the
  loop (:meth:`CacheSchedule.note_gap`) or from ``clock``, read at every trigger check
  (one per model call in a loop); unknown means warm. When the cache is warm, compacting
  before the budget forces it only moves a rewrite earlier, so the schedule waits.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import attrs

from ..._counting.counter import BaseCounter
from ..._counting.pricing import CacheCostModel
from ..._errors import show
from ..._messages.message import Message, Role
from ..._messages.truncation import truncate_message
from ..._validators import bool_, callable_, fail, instance_of, number, optional, positive_int
from .turns import is_request
from .water import describe_cut, water_level

__all__ = ["CacheSchedule", "growth_per_turn"]

_TURNS_MEASURED = 8
"""How many recent turns the growth rate is the mean of."""


def growth_per_turn(messages: Sequence[Message], costs: Sequence[int]) -> float:
    """The mean cost of the last turns before the newest one (a turn: an assistant
    message and what follows it up to the next), from the messages' ``costs``; 0 with
    fewer than two turns."""
    starts = [i for i, m in enumerate(messages) if m.role is Role.ASSISTANT]
    turns = min(_TURNS_MEASURED, len(starts) - 1)
    if turns < 1:
        return 0.0
    return sum(costs[starts[-turns - 1] : starts[-1]]) / turns


def _seconds(value: object, name: str, *, inf: bool) -> float:
    """``value`` as seconds: a real number (not a ``bool``), not NaN, infinite only when
    ``inf`` allows it. The error names the value, cut to 80 characters."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            seconds = float(value)
        except OverflowError:  # an int beyond float's range
            seconds = math.inf if value > 0 else -math.inf
        if not math.isnan(seconds) and (inf or math.isfinite(seconds)):
            return seconds
    kind = "a number of seconds" if inf else "a finite number of seconds"
    raise fail(name, f"must be {kind}, got {type(value).__name__} {show(value)}")


@attrs.define
class CacheSchedule:
    """Decides from the prompt cache's prices when and how deep to compact below the
    hard budget (see the module docstring). Give it to ``default_stack(schedule=...)``.

    Examples:
        >>> from neuron_context.counting import CacheCostModel
        >>> schedule = CacheSchedule(CacheCostModel.anthropic(), clock=None)
        >>> schedule.note_gap(900.0)  # the loop's previous call was 15 minutes ago
        >>> schedule.cold()
        True
    """

    cost_model: CacheCostModel = attrs.field(
        factory=CacheCostModel.openai,
        validator=instance_of(CacheCostModel, "a CacheCostModel"),
    )
    """The provider's cache prices and lifetime."""
    min_turns: int = attrs.field(default=8, kw_only=True, validator=positive_int())
    """The turns of growth a compaction leaves room for below the trigger."""
    floor: float = attrs.field(
        default=0.3, kw_only=True, validator=number(minimum=0.05, maximum=1.0)
    )
    """The lowest share of the budget a compaction brings the history down to."""
    tail_first: bool = attrs.field(default=True, kw_only=True, validator=bool_())
    """Cut only the messages new since the previous call when that is enough."""
    clock: Callable[[], float] | None = attrs.field(
        default=time.monotonic, kw_only=True, validator=optional(callable_())
    )
    """Seconds (monotonic), read at each trigger check to measure the gap between calls;
    ``None``: only :meth:`note_gap` tells."""
    _last: float | None = attrs.field(default=None, init=False, repr=False)
    _gap: float | None = attrs.field(default=None, init=False, repr=False)
    _told: bool = attrs.field(default=False, init=False, repr=False)

    def note_gap(self, seconds: float) -> None:
        """Tell the schedule how long ago the previous model call was (it then trusts
        this over its clock for the next check). A negative gap counts as 0;
        ``math.inf`` means the cache was never written (cold).

        Raises:
            ConfigurationError: ``seconds`` is not a number (or is NaN).
        """
        self._gap = max(0.0, _seconds(seconds, "CacheSchedule.note_gap: seconds", inf=True))
        self._told = True

    def tick(self) -> None:
        """A trigger check, one per model call: read the clock for the gap since the
        previous one (unless the loop told it).

        Raises:
            ConfigurationError: the clock returned something other than a finite number.
        """
        if self.clock is None:
            return
        now = _seconds(self.clock(), "CacheSchedule.clock()", inf=False)
        if not self._told:
            self._gap = None if self._last is None else now - self._last
        self._told = False
        self._last = now

    def cold(self) -> bool:
        """Whether the previous call's cache entry has expired (``False`` when unknown)."""
        return not self.cost_model.is_warm(self._gap)

    def target(self, target: int, limit: int, floor: int, growth: float) -> int:
        """``target`` lowered so that :attr:`min_turns` turns of ``growth`` fit below
        ``limit``, never below ``floor`` (all in tokens)."""
        room = limit - math.ceil(self.min_turns * growth)
        return max(min(target, floor), min(target, room))

    def compact_early(
        self, tokens: int, target: int, limit: int, growth: float, own_cost: float
    ) -> bool:
        """Whether a history of ``tokens`` under ``limit`` is worth compacting to
        ``target`` now: the cache is cold, the history is past the middle of the band
        between the two, and the saving until the budget would force a compaction pays
        for the compaction's ``own_cost`` (its summarizer's call)."""
        if not self.cold() or tokens - target < (limit - target) / 2:
            return False
        model = self.cost_model
        turns = self.min_turns if growth <= 0 else max(1.0, (limit - tokens) / growth)
        saving = (tokens - target) * (model.cache_write + turns * model.cache_read)
        return saving > own_cost

    def cut_tail(
        self,
        messages: Sequence[Message],
        costs: Sequence[int],
        counter: BaseCounter,
        *,
        limit: int,
        share: int,
        growth: float,
    ) -> list[Message] | None:
        """The history with only its newest messages (after the last assistant message)
        cut, when that brings it to ``min_turns`` turns of ``growth`` below ``limit``
        while leaving each cut message at least ``share`` tokens; else ``None``. A user
        request among them is never cut (a full compaction pins it)."""
        if not self.tail_first:
            return None
        start = next(
            (i + 1 for i in range(len(messages) - 1, -1, -1) if messages[i].role is Role.ASSISTANT),
            None,
        )
        if start is None or start == len(messages):
            return None
        new = range(start, len(messages))
        if any(is_request(messages[i]) or messages[i].role is Role.SYSTEM for i in new):
            return None
        goal = limit - max(1, math.ceil(self.min_turns * growth))
        space = goal - sum(costs[:start])
        if space <= 0:
            return None
        level = water_level([costs[i] for i in new], space)
        if level < share or sum(min(costs[i], level) for i in new) > space:
            return None
        tail = [
            messages[i]
            if costs[i] <= level
            else truncate_message(messages[i], level, counter, describe=describe_cut)
            for i in new
        ]
        if counter.estimate_messages(tail) > space:
            return None
        return [*messages[:start], *tail]
