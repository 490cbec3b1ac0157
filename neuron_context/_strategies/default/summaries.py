"""``default_stack``'s summaries: what replaces the older part of the history.

A :class:`SummaryWriter` writes the summary that a ``DefaultStack`` puts before the
messages it keeps, in exactly the space they leave: the offline
:class:`~neuron_context.ExtractiveSummarizer` on the messages themselves, or an LLM
summarizer through a :class:`~neuron_context.SummarizationStrategy` (falling back to the
offline one when it fails). Earlier summaries stay as they are while the new one has a
fair share of the space beside them (:data:`DELTA_SHARE`), above the target if need be
(:data:`SUMMARY_HEADROOM` of the room up to the budget, short of the turn of growth the
plan keeps free), so the provider's prompt cache still serves the prompt up to them and
nothing they hold is lost to a merge. A new
summary leaves out what the messages kept beside it already show
(:mod:`neuron_context._summary.shown`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import anyio.to_thread

from ..._counting.counter import BaseCounter
from ..._errors import ConfigurationError, SummarizationError
from ..._log import logger
from ..._messages.content import Compaction
from ..._messages.message import Message, Role
from ..._numbers import scale
from ..._summary.extractive import ExtractiveSummarizer
from ..._summary.format import SUMMARY_HEADING
from ..._summary.shown import shown_words
from ...providers._base import CompletionRequest, Provider
from ..summarization import SummarizationStrategy
from .message_cut import message_overhead
from .plan import SPAN_SHARE, Plan
from .reuse import reuse

__all__ = ["DELTA_SHARE", "MIN_SUMMARY", "NEW_SHARE", "SUMMARY_HEADROOM", "SummaryWriter"]

MIN_SUMMARY = 48
"""Tokens below which a summary is not worth writing."""
DELTA_SHARE = 0.1
"""The share of the summary space a new summary needs beside the earlier ones; with less,
all are merged into one. A merge rewrites the prompt from the first summary on (a cache
miss) and drops what no longer fits of the earlier ones, so it waits until the new
summary would be squeezed: replayed on the shared transcripts, 0.1 keeps as much of what
the next step uses as 0.3 did (more at 10% and 50%) with 0.4 points more prompt-cache
reuse at 25%; at 0.05 or 0 the new summaries get too little room (25%: 90.4%, 90.5%
against 90.7% of the next step's evidence)."""
SUMMARY_HEADROOM = 0.85
"""The share of the room between the target and the limit (the budget less the reserve)
that earlier summaries kept as they are may take beside a new one, rather than be
merged below the target (a merge rewrites the prompt from the first summary on and
drops what no longer fits). Replayed on the shared transcripts at 25%, before the
segment choice of recent results (next-step evidence kept with its meaning, input
bill): 0 (merging at the target) 88.5%, 3.47M; 0.5 89.3%, 3.62M; 0.75 89.7%, 3.54M;
0.85 90.1%, 3.54M; 1.0 89.7%, 3.66M; at 50%, 0.85 keeps 96.6% against 95.7% at 0.75
(the summaries of a long exploration no longer squeezed when a big step in progress is
kept). The last turn of measured growth below the limit stays free whatever the share
(``Plan.free``, :func:`~.headroom.kept_free`)."""
NEW_SHARE = 0.4
"""The share of the summary space a new summary gets beside earlier summaries kept above
the target (see :meth:`SummaryWriter.summaries`)."""


def task_kept(plan: Plan) -> bool:
    """Whether ``plan`` keeps the conversation's task beside its summaries: it pins a
    first request, and no earlier summary stands before it (where one does, the task
    is the first request that summary quotes, and the request pinned is a later one)."""
    return plan.task is not None and not any(m.is_compaction for m in plan.messages[: plan.task])


class SummaryWriter:
    """Writes ``default_stack``'s summaries with ``counter``, ``summarizer`` (``None``:
    offline) and the :class:`~neuron_context.SummarizationStrategy` ``options``.

    Raises:
        ConfigurationError: ``options`` holds an option the summarization strategy does
            not take, or a bad value.
    """

    __slots__ = ("counter", "offline", "options", "summarizer")

    def __init__(
        self,
        counter: BaseCounter,
        summarizer: Provider | None,
        options: Mapping[str, Any],
    ) -> None:
        self.counter = counter
        self.summarizer = summarizer
        self.options = options
        self.offline = ExtractiveSummarizer(counter=counter, max_mentions=400)
        self._summarizing(self.offline, 100)  # checks the options once, here

    @property
    def heading(self) -> int:
        """What a summary's heading adds when rendered (priced when first needed: a
        lazy counter loads nothing before it counts)."""
        return self.counter.estimate_text(SUMMARY_HEADING + "\n")

    def _summarizing(self, provider: Provider, budget: int) -> SummarizationStrategy:
        try:
            return SummarizationStrategy(
                provider, 0, counter=self.counter, max_summary_tokens=budget, **self.options
            )
        except TypeError as exc:
            msg = f"DefaultStack.summary_options: {exc}"
            raise ConfigurationError(msg) from exc

    async def summaries(self, plan: Plan, target: int, limit: int | None = None) -> list[Message]:
        """The summaries before the kept part, sized to the space left below ``target``
        (and, for earlier summaries kept as they are, :data:`SUMMARY_HEADROOM` of the
        room up to ``limit``, short of the plan's :attr:`~.plan.Plan.free` tokens).

        Earlier summaries stay as they are while a new summary of the newly summarized
        messages still has a fair share of the space beside them: the prompt up to and
        including them is then unchanged, so the provider's prompt cache serves it on
        the call after a compaction too, and nothing they hold is lost. Into
        :data:`SUMMARY_HEADROOM` of the room above the target (none when ``limit`` is
        ``None``), leaving the plan's :attr:`~.plan.Plan.free` tokens below ``limit``
        (a turn of growth: less, and the next call compacts again), they may stay above
        it, the new summary then getting :data:`NEW_SHARE` of the space, at most
        :data:`SPAN_SHARE` of what it summarizes; when even that leaves too
        little, all are merged into one in the space below the target (the earlier
        ones handed to the summarizer as the previous summary). A fact that the kept
        messages already show (their results, calls and requests) is not
        repeated in the new summary.
        """
        overhead = message_overhead(self.counter) + self.heading
        space = target - plan.fixed_cost - overhead
        roomy = space
        if limit is not None:
            ceiling = target + scale(max(0, limit - target), SUMMARY_HEADROOM)
            ceiling = max(target, min(ceiling, limit - plan.free))
            roomy = max(space, ceiling - plan.fixed_cost - overhead)
        kept = self.counter.estimate_messages(plan.previous) + self.heading * sum(
            1 for m in plan.previous if m.is_compaction
        )
        beside = [*plan.pinned.values(), *plan.tail]
        kept_task = task_kept(plan)
        kept_newest = plan.newest is not None  # pinned, or in the kept part
        if not plan.summarized:
            if kept <= roomy + overhead:
                return list(plan.previous)
            return await self.summary(
                list(plan.previous),
                space,
                shown=shown_words(beside),
                task_kept=kept_task,
                newest_kept=kept_newest,
            )
        if self.options.get("cache_aligned"):
            # The agent's own prefix, as its last call sent it, so the cache serves it.
            return await self.summary(list(plan.messages[: plan.cut]), space, task_kept=kept_task)
        fair = max(MIN_SUMMARY, scale(space, DELTA_SHARE))
        # Only the kept messages' words: leaving out of a new summary the facts of the
        # earlier summaries kept beside it too gained nothing measurable (25% of the
        # shared transcripts: 90.9% of the next step's evidence against 90.8%, 77.2%
        # against 77.4% at 10%) and cost 1.7% more input at 25%.
        shown = shown_words(beside)
        if plan.previous and max(space, kept + fair) <= roomy:
            share = min(roomy - kept, max(space - kept, scale(space, NEW_SHARE)))
            spanned = scale(plan.summarized_cost, SPAN_SHARE)  # counted in the plan's table
            share = min(share, max(fair, spanned))
            summary = await self.summary(
                plan.summarized, share, shown=shown, task_kept=kept_task, newest_kept=kept_newest
            )
            return [*plan.previous, *summary]
        return await self.summary(
            [*plan.previous, *plan.summarized],
            space,
            shown=shown,
            task_kept=kept_task,
            newest_kept=kept_newest,
        )

    async def summary(
        self,
        source: list[Message],
        space: int,
        *,
        shown: frozenset[str] = frozenset(),
        task_kept: bool = False,
        newest_kept: bool = False,
    ) -> list[Message]:
        """One summary of ``source`` in ``space`` tokens (none when it does not fit);
        ``shown``: the telling words of what the request holds beside it (the offline
        summarizer leaves out the facts that would only repeat them); ``task_kept``: the
        conversation's task is kept beside the summary (:func:`task_kept`), so the
        offline summary does not quote a request first for being the first;
        ``newest_kept``: the conversation's newest request is kept beside it, so the
        offline summary does not quote a request first for being the newest.

        An LLM summarizer is asked through a :class:`SummarizationStrategy` (its request,
        retries and checks); the offline one is handed the messages themselves, so its
        work is bounded by the space, not by ``source`` (it reads newest first and stops
        when nothing older could fit), with no transcript rendered and read back.
        """
        if space < MIN_SUMMARY:
            return []
        if self.summarizer is not None:
            strategy = self._summarizing(self.summarizer, space)
            try:
                result = await strategy.compact(source)
            except SummarizationError as exc:
                logger.warning("DefaultStack: the summarizer failed (%s); summarizing offline", exc)
            else:
                return [m for m in result if m.is_compaction][:1]
        request = CompletionRequest(source, max_tokens=space)
        # The summary chooses by what an agent reuses, as the cut of a recent result does.
        summarize = functools.partial(
            self.offline.summarize,
            request,
            shown=shown,
            weigh=reuse,
            task_kept=task_kept,
            newest_kept=newest_kept,
        )
        text = await anyio.to_thread.run_sync(summarize, abandon_on_cancel=True)
        text = text.strip()
        if not text:  # nothing worth a summary was found
            logger.info("DefaultStack: no summary written (nothing to summarize)")
            return []
        summary = Message(role=Role.USER, content=(Compaction(content=text),))
        if not self._smaller(summary, source):
            logger.info("DefaultStack: no summary written (it would not be smaller)")
            return []
        return [summary]

    def _smaller(self, summary: Message, source: Sequence[Message]) -> bool:
        """Whether ``summary`` costs less than ``source`` (as a summarization strategy
        uses only a summary that makes the history smaller), reading only as much of
        ``source`` as that takes."""
        counter = self.counter
        cost = counter.estimate_message(summary)
        total = 0
        for message in source:
            total += counter.estimate_message(message)
            if total > cost:
                return True
        return False
