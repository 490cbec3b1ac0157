"""The front door: :func:`default_stack`, the recommended stack configured once (the
stack itself, and why each piece is there: :mod:`.stack`)."""

from __future__ import annotations

from typing import Unpack

from ..._counting.counter import BaseCounter
from ..._stores.store import Store
from ...providers._base import Provider
from .fit import InProgress
from .schedule import CacheSchedule
from .stack import DefaultStack, SummaryOptions

__all__ = ["default_stack"]


def default_stack(
    max_tokens: int,
    *,
    counter: BaseCounter | None = None,
    summarizer: Provider | None = None,
    target: float | None = None,
    recent: float = 0.35,
    reserve: float = 0.05,
    strict: bool = False,
    schedule: CacheSchedule | None = None,
    store: Store | None = None,
    in_progress: InProgress = "keep",
    **summary_options: Unpack[SummaryOptions],
) -> DefaultStack:
    """The stack we recommend, configured once: see :class:`DefaultStack`.

    Args:
        max_tokens: the budget. Whenever the system messages plus the newest user request
            fit, the output fits (less ``reserve``).
        counter: prices messages. Default: exact ``o200k_base`` counts
            (:meth:`TokenizerCounter.lazy <neuron_context.TokenizerCounter.lazy>`, loaded
            on the first count), so the budget holds in real tokens for OpenAI's current
            models; for other tokenizers (Claude's is unpublished) pass a
            :class:`~neuron_context.CalibratedCounter` or a smaller budget, as the docs
            of the default stack say.
        summarizer: writes the summaries: an LLM :class:`~neuron_context.Provider`, or
            ``None`` for the offline :class:`~neuron_context.ExtractiveSummarizer`. An
            LLM summarizer that fails falls back to the offline one.
        target: the share of the budget a compaction brings the history down to, so
            the next turns do not compact again (the provider's prompt cache survives).
            ``None`` (the default): decided per compaction from the conversation's
            growth per turn: the highest share that leaves as many whole turns of room
            as 55% would, up to 90% when not one turn fits (see the docs of the
            default stack).
        recent: the least share of the space below the target kept as recent
            messages, as they are (more where the summary needs less: the earlier
            summaries it keeps and 35% of what it summarizes); the summary fills the
            rest.
        reserve: the share of the budget kept free for what a provider's rendering adds
            to what the counter prices (the summary's heading, spaced-out JSON).
        strict: raise :class:`BudgetExceededError` (a ``CompactionError``) when even the
            system messages and the newest request do not fit; by default the best
            result is logged and returned.
        schedule: a :class:`~neuron_context.strategies.CacheSchedule` that decides from
            the prompt cache's prices when and how deep to compact below the budget
            (the tail alone when that is enough, deeper when the history grows fast,
            early when the cache has gone cold); ``None``: compact only over the budget.
        store: where what a compaction removes goes (a :class:`~neuron_context.Store`);
            the output then holds a reference to it that the recall tool reads back.
            ``None`` (the default): removed content is gone, as without offloading.
        in_progress: when the budget cannot hold the newest request with the step in
            progress (the last assistant message's tool calls and their results), even
            cut and with the task gone: ``"keep"`` them over budget (the default:
            logged, and the agent loop reports a ``CompactionOverBudget`` event),
            ``"drop"`` the step's oldest messages (the budget holds; with a store they
            are offloaded, recallable) or ``"raise"``
            :class:`~neuron_context.errors.ContextOverflowError`.
        **summary_options: passed to the :class:`~neuron_context.SummarizationStrategy`
            that calls ``summarizer`` (``instructions``, ``model``, ``timeout``,
            ``retries``, ``cache_aligned``, ``tools``, ...).

    Examples:
        >>> stack = default_stack(100_000)
        >>> stack.should_compact([], 0)
        False
    """
    return DefaultStack(
        max_tokens,
        counter=counter,
        summarizer=summarizer,
        target=target,
        recent=recent,
        reserve=reserve,
        strict=strict,
        schedule=schedule,
        store=store,
        in_progress=in_progress,
        summary_options=summary_options,
    )
