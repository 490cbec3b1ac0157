"""The recommended stack: one budget, a hard guarantee, a request every provider accepts.

:func:`default_stack` is the front door for a loop that compacts before every model call
for hundreds of turns. Every building block stays public; this module only decides how
they fit together, once, so a user states the budget once. Why each piece is there:

- **A target below the trigger (hysteresis).** Compacting exactly to the budget makes the
  next turn compact again, and every compaction rewrites the prompt, so the provider's
  prompt cache misses. Compacting below it leaves room for turns to grow before the next
  compaction: to ``target`` x the budget when given, else to a share decided per
  compaction from the conversation's measured growth (:mod:`.headroom`).
- **The task and the newest request pinned.** An agent session is often one request
  followed by hundreds of tool turns: the request is the job, so it is kept as a message,
  never summarized. The newest request is what the user wants now: kept too. Both are
  user messages, so the output starts on one whenever the input did (Anthropic rejects
  a conversation that starts on an assistant message). A short task stays whole even
  when the target leaves little room; only the hard budget cuts it.
- **A summary that fills the space.** The older part is summarized (offline, by the
  extractive summarizer, unless an LLM ``summarizer`` is given) into exactly the space the
  kept messages leave below the target, quoting the user's later requests, indexing the
  artifacts touched and the errors met. An LLM summarizer that fails falls back to the
  offline one, so the budget still holds.
- **Earlier summaries kept as they are** while the new one still has a fair share of the
  space beside them (``summaries.DELTA_SHARE``), so the prompt up to them is unchanged, the
  provider's prompt cache still serves it on the call after a compaction, and nothing
  they hold is lost; above the target if need be, up to ``summaries.SUMMARY_HEADROOM`` of the
  room between the target and the budget (a merge would rewrite the prompt and drop
  what no longer fits), short of the last turn of measured growth, which stays free so
  the next call does not compact again (``headroom.kept_free``). When even that leaves
  too little room, all are merged into one below the target. A new summary leaves out
  the facts the kept messages already show.
- **Recent messages as they are,** from a safe cut (a tool use is never separated from
  its result), a single huge tool result cut rather than taking the whole space; they
  get the space the summary does not need, and the step in progress (or, when the
  newest message is the user's answer, the assistant's words it answers) the room above
  the target too, short of two turns of growth (:func:`.headroom.step_ceiling`), and
  the room below the target the summaries left unused (:mod:`.regrow`).
- **A hard budget.** If the result is still over the budget, the last resort truncates
  (:mod:`neuron_context._messages.truncation`), then drops the oldest kept messages, then
  cuts the summary and the pinned requests; the newest request is never dropped
  entirely. If even the system messages do not fit, ``strict=True`` raises
  :class:`BudgetExceededError` saying by how much; by default the best result is logged
  and returned.
- **A reserve for rendering.** The counting rules price a summary without the heading a
  provider sees and tool inputs as compact JSON, which a wire format may space out;
  ``reserve`` keeps that share of the budget free.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias, TypedDict

import attrs

from ..._counting.cache import CostTable
from ..._counting.counter import BaseCounter
from ..._counting.heuristic import to_counter
from ..._counting.tokenizer import TokenizerCounter
from ..._errors import BudgetExceededError
from ..._log import log_compaction, logger
from ..._messages.checks import CheckOnFailure
from ..._messages.message import Message, Role, ToolDefinition
from ..._numbers import scale
from ..._stores.store import Store, optional_store
from ..._summary.format import SUMMARY_HEADING
from ..._validators import bool_, instance_of, number, one_of, optional, positive_int
from ...providers._base import Provider
from ..strategy import BudgetedStrategy, check_token_count
from .fit import InProgress, fit
from .front import leading_summaries, leading_system_cost
from .headroom import STEP_TURNS, decided_target, kept_free, step_ceiling
from .offloading import Found, given_back, offload, placeholder, unindexed, with_store
from .plan import Part, Plan
from .regrow import regrown
from .said import unblanked
from .schedule import CacheSchedule, growth_per_turn
from .summaries import SummaryWriter

__all__ = ["DefaultStack", "SummaryOptions"]

Written: TypeAlias = dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, list[Message]]]
"""The summaries one compaction wrote, by the identities of the earlier summaries and
the messages they summarize: the target they were written for, and them."""

_TAIL_SHARE = 0.25
"""The least share of the recent space a new message keeps when only the tail is cut
(what a full compaction gives a kept message at most)."""


def _exact_counter(value: BaseCounter | None) -> BaseCounter:
    """The given counter, or exact ``o200k_base`` counts loaded on first use."""
    if value is None:
        return TokenizerCounter.lazy("o200k_base")
    return to_counter(value)


class SummaryOptions(TypedDict, total=False):
    """What ``default_stack`` passes on to the :class:`~neuron_context.SummarizationStrategy`
    that calls its summarizer (each as that class documents it)."""

    instructions: str
    model: str | None
    timeout: float | None
    retries: int
    retry_delay: float
    max_retry_delay: float
    cache_aligned: bool
    tools: Sequence[ToolDefinition]


@attrs.define
class DefaultStack(BudgetedStrategy):
    """The stack :func:`default_stack` returns; see there and the module docstring."""

    max_tokens: int = attrs.field(validator=positive_int())
    """The budget: the output costs at most this (less the reserve) whenever the system
    messages and the newest request fit."""
    counter: BaseCounter = attrs.field(default=None, kw_only=True, converter=_exact_counter)
    """Prices messages (default: exact ``o200k_base`` counts, the encoding loaded on
    first use; see :func:`default_stack`)."""
    summarizer: Provider | None = attrs.field(
        default=None, kw_only=True, validator=optional(instance_of(Provider, "a Provider"))
    )
    """Writes the summaries (``None``: the offline :class:`ExtractiveSummarizer`)."""
    target: float | None = attrs.field(
        default=None, kw_only=True, validator=optional(number(minimum=0.05, maximum=1.0))
    )
    """Compaction brings the history down to this share of the budget (``None``: a share
    decided per compaction from the conversation's growth per turn, see
    :mod:`neuron_context._strategies.default.headroom`)."""
    recent: float = attrs.field(default=0.35, kw_only=True, validator=number(minimum=0, maximum=1))
    """The least share of the target's free space given to recent messages kept as they
    are (more where the summary needs less, see :mod:`.plan`); the summary fills the
    rest."""
    reserve: float = attrs.field(
        default=0.05, kw_only=True, validator=number(minimum=0, maximum=0.5)
    )
    """The share of the budget kept free for what a provider's rendering adds."""
    strict: bool = attrs.field(default=False, kw_only=True, validator=bool_())
    """Raise :class:`BudgetExceededError` when the budget cannot be met."""
    in_progress: InProgress = attrs.field(
        default="keep", kw_only=True, validator=one_of(("drop", "keep", "raise"))
    )
    """When the budget cannot hold the newest request with the step in progress (the
    last assistant message's tool calls and their results), even cut and with the task
    gone: ``"keep"`` them over budget (the default: logged, and the agent loop reports a
    ``CompactionOverBudget`` event; a model that no longer sees the call it just made
    would make it again), ``"drop"`` the step's oldest messages (the budget holds; with
    a store they are offloaded), or ``"raise"``
    :class:`~neuron_context.errors.ContextOverflowError`."""
    summary_options: SummaryOptions = attrs.field(factory=SummaryOptions, kw_only=True)
    """Extra keyword arguments for the :class:`SummarizationStrategy` that calls
    ``summarizer`` (``instructions``, ``model``, ``timeout``, ``retries``, ...)."""
    schedule: CacheSchedule | None = attrs.field(
        default=None,
        kw_only=True,
        validator=optional(instance_of(CacheSchedule, "a CacheSchedule")),
    )
    """Decides from the prompt cache's prices when and how deep to compact below the
    budget (``None``: compact only over it, to ``target``). With a :attr:`store`, the
    schedule's tail-only cut is not used (it would cut without offloading)."""
    store: Store | None = attrs.field(default=None, kw_only=True, validator=optional_store())
    """Where every message the output does not keep as it is goes (summarized, cut or
    dropped), entry by entry: the output then holds an index of them after the summaries,
    a line per entry with its key (``- read_file src/app.py (2,314 tokens) — recall:
    <key>``), priced in the budget (the oldest entries rolled up into one when the lines
    outgrow its room). Where the budget has no room for it, the shortest form
    (``[recall: <key>]``, one entry holding all); where not even that fits, or the store
    fails, the compaction is the one without a store (logged). An earlier index that a
    compaction removes is carried into the new one line by line, so every removed text
    stays behind a key the output shows."""
    _writer: SummaryWriter = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        # Checks summary_options once, here.
        self._writer = SummaryWriter(self.counter, self.summarizer, self.summary_options)

    def _limit(self, systems: int) -> int:
        """What the counter may measure: the budget less the reserve, a share of what
        the system messages (``systems`` tokens, priced exactly) leave."""
        return self.max_tokens - scale(max(0, self.max_tokens - systems), self.reserve)

    def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
        """Whether ``token_count``, with the headings of the summaries a compaction put
        at the front of ``messages``, is over the budget less the reserve (or, with a
        :attr:`schedule`, worth compacting early because the cache has gone cold)."""
        token_count = check_token_count(token_count, "DefaultStack")
        schedule = self.schedule
        if schedule is not None:
            schedule.tick()
        cold = schedule is not None and schedule.cold()
        # What a provider receives: the headings of the summaries a compaction put in
        # front too (a compaction prices them; the reserve alone does not cover them
        # once earlier summaries pile up).
        token_count += self._front_headings(messages)
        if not cold and token_count <= scale(self.max_tokens, 1 - self.reserve):
            return False  # under even the smallest limit: no need to look further
        systems = leading_system_cost(messages, self.counter)
        limit = self._limit(systems)
        if token_count > limit or schedule is None or not cold:
            return token_count > limit
        growth = growth_per_turn(messages, self.counter.cost_table(messages).costs())
        target = self._target(systems, limit, growth)
        target = schedule.target(target, limit, self._floor(systems, limit), growth)
        own = 0.0
        if self.summarizer is not None:  # the summarizer reads it all, writes the summary
            own = schedule.cost_model.call_cost(token_count, scale(target - systems, self.recent))
        return schedule.compact_early(token_count, target, limit, growth, own)

    def token_estimate(self, messages: Sequence[Message]) -> int:
        """The exact count wherever :meth:`should_compact` compares it with the budget:
        over ``max_tokens * (1 - reserve)``, the lowest limit, less the headings of the
        summaries in front (which :meth:`should_compact` adds), this is
        ``counter.estimate_messages(messages)``; at or below it, it may be a bound
        between that count and that limit (the counter's
        :meth:`~neuron_context.BaseCounter.bound_messages`: the exact default counter
        adds the UTF-8 size of texts it has not tokenized yet instead of tokenizing
        them), so ``should_compact(messages, token_estimate(messages))`` decides as with
        the exact count. With a :attr:`schedule` (which reads the count below the
        budget too) it is always exact. For the exact count anywhere, call
        ``stack.counter.estimate_messages(messages)``."""
        if self.schedule is not None:
            return self.counter.estimate_messages(messages)
        lowest = scale(self.max_tokens, 1 - self.reserve) - self._front_headings(messages)
        return self.counter.bound_messages(messages, max(0, lowest))

    def _floor(self, systems: int, limit: int) -> int:
        """The lowest a :attr:`schedule` may bring the history down to, in tokens."""
        share = self.schedule.floor if self.schedule is not None else 1.0
        if self.target is not None:
            share = min(self.target, share)
        return systems + scale(limit - systems, share)

    def compaction_target(self, messages: Sequence[Message]) -> int:
        """The tokens a compaction of ``messages`` brings them down to: :attr:`target`
        of the room the system messages leave (the budget less the reserve), or the
        share decided from the conversation's growth per turn; with a :attr:`schedule`,
        as it lowers that. The plan may give the summary more, up to the budget, when
        the pinned requests and the kept messages fill it."""
        costs = self.counter.cost_table(messages).costs()
        systems = sum(c for c, m in zip(costs, messages, strict=True) if m.role is Role.SYSTEM)
        return self._goal(messages, costs, systems, self._limit(systems))[0]

    def _goal(
        self, messages: Sequence[Message], costs: Sequence[int], systems: int, limit: int
    ) -> tuple[int, float]:
        """The target (see :meth:`compaction_target`) and the growth per turn it was
        decided from."""
        growth = growth_per_turn(messages, costs)
        target = self._target(systems, limit, growth)
        if self.schedule is not None:
            target = self.schedule.target(target, limit, self._floor(systems, limit), growth)
        return target, growth

    def _target(self, systems: int, limit: int, growth: float) -> int:
        """What a compaction brings the history down to, in tokens: :attr:`target` of
        the room when given, else the share decided from ``growth`` (tokens a turn)."""
        if self.target is None:
            return decided_target(systems, limit, growth)
        return systems + scale(limit - systems, self.target)

    # -- compacting ---------------------------------------------------------------------

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Bring ``messages`` under the target (see the module docstring).

        Each message is priced once, from the counter's cost table (a history it counted
        before costs only its new messages); the plan and the last-resort cuts work from
        those costs and update the total by what each cut changes.

        Raises:
            BudgetExceededError: with ``strict=True``, when the budget cannot be met.
        """
        with CheckOnFailure(messages, "DefaultStack"):
            table = self.counter.cost_table(messages)

        written: Written = {}

        async def attempt(store: Store | None, short: bool) -> Found | None:
            return await self._compact(messages, table, store, short=short, written=written)

        output, after, limit = await with_store(attempt, self.store, budget=self.max_tokens)
        self._check(after, limit)
        return output

    async def _compact(
        self,
        messages: Sequence[Message],
        table: CostTable,
        store: Store | None,
        *,
        short: bool = False,
        written: Written | None = None,
    ) -> tuple[list[Message], int, int] | None:
        """:meth:`compact` with ``store`` (and its ``short`` reference): the output, its
        cost and the limit (``None`` when the put failed); ``written``: the summaries
        the compaction's earlier attempts wrote (see :meth:`_written`)."""
        systems = sum(
            table.cost(index)
            for index, message in enumerate(messages)
            if message.role is Role.SYSTEM
        )
        limit = self._limit(systems)
        costs = table.costs()
        target, growth = self._goal(messages, costs, systems, limit)
        before = table.total + self._headings(messages)  # what a provider receives
        # The tail alone, when cutting it is enough.
        if self.schedule is not None and before > limit and store is None:
            share = scale(scale(target - systems, self.recent), _TAIL_SHARE)
            headings = self._headings(messages)
            cut = self.schedule.cut_tail(
                messages,
                costs,
                self.counter,
                limit=limit - headings,
                share=share,
                growth=growth,
            )
            if cut is not None:
                log_compaction("DefaultStack", self.counter, messages, cut, {"tail_only": True})
                return cut, self.counter.estimate_messages(cut) + self._headings(cut), limit
        if before <= target:
            return list(messages), before, limit
        # With a store, room is kept for the index (see .offloading): above the target
        # while the budget has it, so the index costs none of what the output keeps.
        holder = placeholder(store, messages, self.counter, space=limit - systems, short=short)
        room = 0 if holder is None else self._part_cost(Part("reference", holder))
        planned = min(target, limit - room)
        turns = STEP_TURNS if self.schedule is None else self.schedule.min_turns
        plan = Plan.of(
            messages,
            self.counter,
            limit,
            planned,
            self.recent,
            table=table,
            free=kept_free(growth, limit - target),
            ceiling=step_ceiling(limit - room, growth, limit - target, turns=turns),
        )
        if store is not None:
            plan = unindexed(plan)
        summaries = await self._written(plan, plan.target, written)
        plan, parts = regrown(plan, summaries, holder, costs, self.counter, self._cost, room, limit)
        assembled = list(parts)
        if store is not None and not short:
            plan = attrs.evolve(plan, below_floor=False)
        parts = self._fit(parts, messages, plan, limit)
        if store is not None:
            offloaded = offload(parts, messages, store, self.counter, short=short)
            if offloaded is None:
                return None
            parts = given_back(
                offloaded,
                assembled,
                plan,
                room,
                counter=self.counter,
                part_cost=self._part_cost,
                limit=limit,
            )
        output = [part.message for part in parts]
        after = self._cost(parts)
        if after > before:  # nothing could be saved (the input is all pinned)
            output, after = list(messages), before
        log_compaction(
            "DefaultStack",
            self.counter,
            messages,
            output,
            {"summarized": len(plan.summarized), "kept": len(plan.tail), "target": target},
        )
        return output, after, limit

    @property
    def _heading(self) -> int:
        return self.counter.estimate_text(SUMMARY_HEADING + "\n")

    def _front_headings(self, messages: Sequence[Message]) -> int:
        """What the headings of the summaries at the front of ``messages`` add when
        rendered (O(the front), not of the history: see :func:`~.front.leading_summaries`)."""
        found = leading_summaries(messages)
        return self._heading * found if found else 0

    def _headings(self, messages: Sequence[Message]) -> int:
        """What the headings of the summaries in ``messages`` add when rendered."""
        return self._heading * sum(1 for m in messages if m.is_compaction)

    def _part_cost(self, part: Part) -> int:
        """What one part of the output costs as a provider receives it."""
        message = part.message
        cost = self.counter.estimate_message(message)
        return cost + self._heading if message.is_compaction else cost

    def _cost(self, parts: Sequence[Part]) -> int:
        return sum(self._part_cost(part) for part in parts)

    async def _written(self, plan: Plan, target: int, written: Written | None) -> list[Message]:
        """:meth:`_summaries`, except that with a summarizer (each summary a call) a
        summary an earlier attempt of the same compaction wrote of the same messages
        for a target no higher is used again: it fits, and the attempts with a shorter
        reference or without a store (see ``offloading.with_store``) cost no call.
        Where the earlier attempt wrote none (too little space), this one may: it is
        asked again."""
        if written is None or self.summarizer is None:
            return await self._summaries(plan, target)
        key = (tuple(map(id, plan.previous)), tuple(map(id, plan.summarized)))
        found = written.get(key)
        if found is not None and found[0] <= target:
            return found[1]
        summaries = await self._summaries(plan, target)
        kept = set(map(id, plan.previous))
        if any(id(summary) not in kept for summary in summaries):  # a new one was written
            written[key] = (target, summaries)
        return summaries

    async def _summaries(self, plan: Plan, target: int) -> list[Message]:
        """The summaries before the kept part, sized to the space left below ``target``
        (earlier ones kept as they are: below the budget's limit, see
        :meth:`~neuron_context._strategies.default.summaries.SummaryWriter.summaries`)."""
        limit = self._limit(leading_system_cost(plan.messages, self.counter))
        return await self._writer.summaries(plan, target, limit)

    def _fit(
        self, parts: list[Part], messages: Sequence[Message], plan: Plan, limit: int
    ) -> list[Part]:
        """The last resort, until the output is within ``limit`` (:mod:`.fit`; no request
        left empty, :mod:`.said`). Its signature stays: measurement tools wrap it."""
        cost, counter = self._part_cost, self.counter
        parts = fit(
            parts,
            messages,
            plan,
            limit,
            counter=counter,
            part_cost=cost,
            in_progress=self.in_progress,
            budget=self.max_tokens,
            below=plan.below_floor,
        )
        return unblanked(parts, messages, plan, limit, part_cost=cost, counter=counter)

    def _check(self, cost: int, limit: int) -> None:
        excess = cost - limit
        if excess <= 0:
            return
        msg = (
            f"DefaultStack: the budget cannot be met: {cost} tokens, {excess} over the "
            f"limit of {limit} (max_tokens {self.max_tokens} less the reserve); the "
            "system messages, the newest request and the step in progress cost too much"
        )
        if self.strict:
            raise BudgetExceededError(msg, excess=excess, max_tokens=self.max_tokens)
        logger.warning(msg, extra={"tokens_after": cost, "max_tokens": self.max_tokens})
