"""The plan of one :class:`~neuron_context._strategies.default.DefaultStack` compaction.

Planned before any summary is written, in one pass over the messages (each message's
cost comes from the counter's cost table, made once for the compaction): which user
messages are pinned, where the kept recent part starts (a safe cut, so no tool use
loses its result), what is summarized, and what the kept part costs, so the summary can
be given exactly the space that is left.

What the next model call needs most is kept first:

- **The step in progress**: the last assistant message's calls and the results the
  model has not answered yet (:func:`step_in_progress`). They are kept whole while the
  room allows (the summary keeping its floor share), and cut last: the other kept
  messages share what they leave. Cut, they may also take the room above the target up
  to a ceiling the stack gives (see :mod:`.water` and ``headroom.step_ceiling``).
- **The exchange the newest request answers.** When the newest message is the user's
  answer, the assistant's last words before it (a proposal, a question, options to pick
  from; :func:`answered_exchange`) are what the next step acts on: they are levelled
  with the step in progress, kept even where they alone fill the recent space (see
  docs/strategies/default-stack.md for the figures).
- **A summary's space follows what it summarizes.** It needs the earlier summaries it
  keeps and :data:`SPAN_SHARE` of the messages it summarizes; the kept messages get the
  rest of the room below the target when that is more than the ``recent`` share.
  Replayed on the shared transcripts (next-step evidence kept with its meaning, at 10% /
  25% / 50%), with the step in progress above the target: 77.7% / 91.4% / 97.7%
  against 77.3% / 91.0% / 97.3% without this rule (90.4% / 97.0% at 25% / 50% with
  this rule alone); the share is not a knife edge: 0.25 and 0.5 keep 91.6% and 91.8%
  at 25%.
- **A cut moves back into the newest exchange, not past it.** A cut inside an exchange
  moves forward to the next safe cut (a tool use never loses its result), except in the
  newest exchange, where that would keep nothing recent: there the cut moves back to the
  exchange's start and its members are cut to fit instead.
- **A task before length.** The task (the first request) is pinned before the newest
  request, which gets the space the task leaves: a task that fits is never dropped to
  keep more of a longer message.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from ..._counting.cache import CostTable
from ..._counting.counter import BaseCounter
from ..._messages.conversation import next_safe_cut, opens_exchange
from ..._messages.message import Message, Role
from ..._numbers import scale
from .turns import answered_exchange, is_request, step_in_progress
from .water import MIN_TRUNCATED, kept_part
from .words import cut_words

__all__ = ["SPAN_SHARE", "Part", "Plan", "answered_exchange", "is_request", "step_in_progress"]

_PIN_SHARE = 0.25
"""The most of the target one pinned request may take; a longer one is cut in the middle."""
_TASK_WHOLE = 256
"""A task up to this many tokens is kept whole whenever it takes at most half the space the
hard budget leaves (requests are short; a long one, such as a pasted document, is cut)."""
_MESSAGE_SHARE = 0.25
"""The most of the recent space one kept message may take (a huge tool result is cut)."""
_SUMMARY_FLOOR = 0.25
"""The share of the room below the target the step in progress leaves to the summary,
and that the summary keeps when the pins and the kept messages fill the target."""
SPAN_SHARE = 0.35
"""A summary's share of what it summarizes: the most a new summary beside kept earlier
ones may cost (never less than the fair share, ``summaries.DELTA_SHARE``), and what a
summary needs of the room below the target beside the earlier summaries it keeps (the
kept messages get the rest, see :func:`_kept`).

Beside kept summaries, the kept summaries then grow by at most this share of what the
conversation grows by between compactions, so they fill the room up to the budget (and
are merged) that much more slowly: a summary of a few turns given the whole new share
keeps nearly all of them and fills the room almost as fast as the turns did. Replayed on
the shared transcripts at 10% (input bill; next-step evidence kept with its meaning,
without and with a store; with a turn kept free, before the summary filled its space):
no limit 2.15M, 77.0%, 75.5%; 0.5 2.15M, 76.5%; 0.4 2.13M, 76.5%; 0.35 2.13M, 76.8%,
75.5%; 0.3 2.11M, 77.1%, 74.9%; 0.25 2.11M, 76.5%, 74.5%. At 25% and 50%, 0.35 keeps as
much (90.3%, 96.5%) for the same bill (3.55M, 5.02M). As what a summary needs (with the
step in progress kept above the target), 0.25 / 0.35 / 0.5 keep 91.6% / 91.4% / 91.8% at
25%."""


def _pins(
    messages: Sequence[Message],
    counter: BaseCounter,
    task: int | None,
    newest: int | None,
    *,
    room: int,
    free: int,
) -> dict[int, Message]:
    """The pinned requests by index: the task cut to a share of the ``room`` below the
    target (a short task kept whole while it takes at most half of the hard budget's
    ``free`` space); the newest request whole when ``free`` allows."""
    pinned: dict[int, Message] = {}
    task_cost = 0
    if task is not None and task != newest:
        space = max(MIN_TRUNCATED, scale(room, _PIN_SHARE), min(_TASK_WHOLE, free // 2))
        pinned[task] = cut_words(messages[task], space, counter)
        task_cost = counter.estimate_message(pinned[task])
    if newest is not None:
        # The user's newest words may take all the space the hard budget leaves, less
        # the task's when the task fits beside a request cut to the floor: a short task
        # never gives way to a longer request that must be cut anyway.
        space = max(scale(room, _PIN_SHARE), free)
        if task_cost and task_cost + MIN_TRUNCATED <= free:
            space = max(MIN_TRUNCATED, min(space, free - task_cost))
        pinned[newest] = cut_words(messages[newest], space, counter)
    return pinned


def _cut_back(messages: Sequence[Message], start: int) -> int:
    """The safe cut for a kept part that would start at ``start``: the next safe cut,
    unless that skips past the newest exchange (``start`` falls inside it, or after it
    at the end: nothing would be kept), where the cut moves back to the exchange's
    start instead."""
    cut = next_safe_cut(messages, start)
    if cut == start < len(messages):
        return cut  # a safe cut keeping something: it stays
    opener = start - 1
    while opener >= 0 and messages[opener].role in (Role.TOOL, Role.SYSTEM):
        opener -= 1
    if opener < 0 or not opens_exchange(messages[opener]):
        return cut
    if any(opens_exchange(m) for m in messages[cut:]):
        return cut  # a newer exchange is kept: this one is not the newest
    return opener


def _kept(
    messages: Sequence[Message],
    costs: Sequence[int],
    cut: int,
    counter: BaseCounter,
    *,
    pinned: dict[int, Message],
    step: set[int],
    spaces: tuple[int, int, int, int],
    summarized: tuple[int, int] | None,
    targets: tuple[int, int, int | None],
) -> tuple[list[Message], int, int, tuple[int, int]]:
    """The kept part from ``cut``, what it costs with the system messages and the pins
    before it, the target of the output (see :attr:`Plan.target`) and the space and room
    above the target it was levelled in (see :attr:`Plan.levels`), from ``spaces``:
    what the system messages cost, the room below the target they leave, the rest of it
    the pins leave, and the space of it given to the kept part; ``summarized``: what the
    earlier summaries and the messages to summarize cost (``None``: there are none);
    ``targets``: the target, the limit and the ceiling.

    The summary needs the earlier summaries it keeps and :data:`SPAN_SHARE` of what it
    summarizes: the kept messages fill the rest of the room (all of it, with nothing
    older) when that is more than ``space``. The step in progress may also take the room
    up to the ceiling beside the earlier summaries, unless its cut messages outgrow their
    caps so far that the output would pass the ceiling: then it is kept as without one."""
    target, limit, ceiling = targets
    system_cost, room, rest, space = spaces
    previous, summary, tail_space = 0, 0, rest
    if summarized is not None:
        previous = summarized[0]
        summary = previous + scale(summarized[1], SPAN_SHARE)
        tail_space = max(space, rest - summary)
        summary = min(summary, scale(room, _SUMMARY_FLOOR))
    above = max(0, ceiling - target - previous) if ceiling is not None else 0
    while True:
        tail, extra = kept_part(
            messages,
            costs,
            cut,
            pinned=pinned,
            step=step,
            space=tail_space,
            above=above,
            counter=counter,
        )
        kept = [m for i, m in pinned.items() if i < cut]
        kept.extend(m for m in tail if m.role is not Role.SYSTEM)
        fixed = system_cost + counter.estimate_messages(kept)
        planned = target + extra
        if summarized is not None:
            # Pins and kept messages that fill the target (a long task, an exchange cut
            # no further than its floor) still leave the summary its floor share of the
            # room (or what it needs, when less), from what the hard budget leaves
            # above the target.
            planned = max(planned, min(limit, fixed + summary))
        if not extra or max(planned, fixed) + previous <= max(target, ceiling or 0):
            return tail, fixed, planned, (tail_space, above)
        above = 0


@attrs.frozen
class Part:
    """One message of the output and why it is there."""

    kind: str
    """``system``, ``task`` (the first request), ``request`` (the newest), ``summary``,
    ``step`` (a message of the step in progress) or ``tail`` (another recent message),
    each kept as it is or truncated."""
    message: Message


@attrs.frozen
class Plan:
    """What one compaction keeps, pins and summarizes."""

    messages: Sequence[Message]
    cut: int
    """Where the kept recent part starts (a safe cut)."""
    task: int | None
    """The index of the first request, pinned."""
    newest: int | None
    """The index of the newest request, pinned."""
    pinned: dict[int, Message]
    """The pinned requests by index (cut in the middle when too long)."""
    tail: list[Message]
    """The kept recent part (huge messages cut in the middle)."""
    previous: list[Message]
    """Summary messages before the cut: earlier summaries, kept or merged."""
    summarized: list[Message]
    """The other messages before the cut."""
    fixed_cost: int
    """The cost of everything but the new summary."""
    step: frozenset[int] = frozenset()
    """The indices of the step in progress in the kept part (cut last)."""
    target: int = 0
    """What the output may cost: the target asked for, more by what the step in progress
    takes above it (up to the ceiling the plan was given), or more when the pinned
    requests and the kept messages fill it (the summary keeps :data:`_SUMMARY_FLOOR` of
    the room, or what it needs when less), never more than the hard budget."""
    free: int = 0
    """The tokens below the hard budget the output leaves free for the next turn's growth:
    earlier summaries kept as they are above :attr:`target` stop short of them."""
    summarized_cost: int = 0
    """What :attr:`summarized` costs (from the cost table the plan is made from)."""
    first: frozenset[int] = frozenset()
    """The indices levelled first: the step in progress and the exchange the newest
    request answers (see :func:`answered_exchange`)."""
    levels: tuple[int, int] = (0, 0)
    """The space the kept part was levelled in and the room above the target its
    :attr:`first` messages could take (see :func:`~.water.kept_part`)."""
    below_floor: bool = True
    """Whether the last resort may cut the newest request below its floor beside a kept
    step (see :func:`~.fit.fit`): not beside a store's full index, only beside its
    shortest reference or with no store."""

    @classmethod
    def of(
        cls,
        messages: Sequence[Message],
        counter: BaseCounter,
        limit: int,
        target: int,
        recent: float,
        *,
        table: CostTable | None = None,
        free: int = 0,
        ceiling: int | None = None,
    ) -> Plan:
        """Plan the compaction of ``messages`` down to ``target`` tokens (``limit`` is
        the hard budget; both include the system messages), from ``table``, the cost
        table of ``messages`` (made with ``counter`` when not given); ``free``: the
        tokens below ``limit`` kept free for the next turn (see :attr:`free`);
        ``ceiling``: the most the output may cost with the step in progress kept above
        the target (``None``: the target; see :attr:`target`)."""
        requests = [i for i, m in enumerate(messages) if is_request(m)]
        task = requests[0] if requests else None
        newest = requests[-1] if requests else None
        costs = (table if table is not None else counter.cost_table(messages)).costs()
        system_cost = sum(c for c, m in zip(costs, messages, strict=True) if m.role is Role.SYSTEM)
        room = max(0, target - system_cost)
        pinned = _pins(messages, counter, task, newest, room=room, free=limit - system_cost)
        pinned_cost = sum(counter.estimate_message(m) for m in pinned.values())
        rest = max(0, room - pinned_cost)
        step = {i for i in step_in_progress(messages) if i not in pinned}
        answered = {i for i in answered_exchange(messages) if i not in pinned}
        first = step | answered  # levelled first, may take the room above the target
        step_cost = sum(costs[i] for i in first)
        # The step in progress and the exchange the newest request answers are kept whole
        # while the room allows, the summary keeping at least its floor share when there
        # is anything older to summarize.
        space = max(scale(rest, recent), min(step_cost, scale(rest, 1 - _SUMMARY_FLOOR)))
        cap = max(MIN_TRUNCATED, scale(space, _MESSAGE_SHARE))
        used = 0
        start = len(messages)
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.role is Role.SYSTEM or index in pinned:
                start = index
                continue
            if message.is_compaction:
                break  # an earlier summary stays before the kept part
            cost = costs[index] if index in first else min(costs[index], cap)
            if used + cost > space:
                if index in answered:  # kept, cut to the space (levelled first)
                    start = index
                break
            used += cost
            start = index
        cut = _cut_back(messages, start)
        previous: list[Message] = []
        summarized: list[Message] = []
        summarized_cost = 0
        previous_cost = 0
        for index in range(cut):
            message = messages[index]
            if message.role is Role.SYSTEM or index in pinned:
                continue
            if message.is_compaction:
                previous.append(message)
                previous_cost += costs[index]
            else:
                summarized.append(message)
                summarized_cost += costs[index]
        tail, fixed, target, levels = _kept(
            messages,
            costs,
            cut,
            counter,
            pinned=pinned,
            step=first,
            spaces=(system_cost, room, rest, space),
            summarized=(previous_cost, summarized_cost) if previous or summarized else None,
            targets=(target, limit, ceiling),
        )
        return cls(
            messages,
            cut,
            task,
            newest,
            pinned,
            tail,
            previous,
            summarized,
            fixed,
            frozenset(step),
            target,
            max(0, free),
            summarized_cost,
            frozenset(first),
            levels,
        )

    def assemble(self, summaries: Sequence[Message]) -> list[Part]:
        """The output, in the input's order: the system messages, the task, the summaries
        (where the first earlier summary stood, even before the task; else after the
        task, and after the leading system messages where nothing is cut), the newest
        request (when older than the cut), then the kept recent part."""
        parts: list[Part] = []
        at: int | None = None  # where the summaries go
        for index in range(self.cut):
            message = self.messages[index]
            if message.role is Role.SYSTEM:
                parts.append(Part("system", message))
                continue
            if message.is_compaction and at is None:  # where the earlier summaries stood
                at = len(parts)
                continue
            if index in self.pinned:
                kind = "task" if index == self.task else "request"
                if kind == "request" and at is None:
                    at = len(parts)
                parts.append(Part(kind, self.pinned[index]))
                continue
            if at is None and (self.task is None or index > self.task):
                at = len(parts)
        if at is None and self.cut > 0:
            at = len(parts)
        for offset, message in enumerate(self.tail):
            index = self.cut + offset
            if message.role is Role.SYSTEM:
                kind = "system"
            elif index in self.pinned:
                kind = "task" if index == self.task else "request"
            else:
                kind = "step" if index in self.step else "tail"
            if at is None and kind not in ("system", "task"):  # nothing cut: after those
                at = len(parts)
            parts.append(Part(kind, message))
        at = len(parts) if at is None else at
        parts[at:at] = [Part("summary", m) for m in summaries]
        return parts
