"""The loop's compaction: the one compaction step on the agent's history, reported as
events (and the recovery step's recompaction of it, reported the same way).

At the top of every turn the loop runs :func:`~neuron_context._compaction.step.compact_step`
on its history with ``AgentOptions.context``, before the model call, and keeps the
result: the request is counted as the provider receives it (messages, system prompt and
tool definitions), a failed compaction keeps the history as it was (reported as
:class:`CompactionFailed`, or raised with ``AgentOptions(context_errors="raise")``),
cancellation propagates, and the history always starts on a user message when it did.
Size the strategy's ``max_tokens`` as the window minus the reply (
:meth:`Agent.count_request` of an empty history gives what the system prompt and the
tools take).

The middlewares that compact (summarization, context editing) run the same step on the
request (``_middleware/compacting.py``) and report through :func:`reporter`, so every
caller's events mean the same.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from .._messages.message import ToolDefinition
from .._run.events import (
    CompactionCompleted,
    CompactionFailed,
    CompactionOverBudget,
    CompactionStarted,
    OffloadFailed,
)
from .._run.run import RunContext
from .._stores.offload import collect_failures
from .._strategies.strategy import ContextStrategy
from .recovery import Recompacted, recompact
from .refusal import Overflow
from .step import StepReport, StepResult, StepStarted, compact_step

__all__ = ["compact_history", "offload_failures", "recompact_history", "reporter"]


def reporter(context: RunContext, trigger: str) -> StepReport:
    """What turns a step's reports into the run's compaction events (``trigger``: who
    compacts, ``"context"`` or a middleware's name)."""

    def report(item: StepStarted | StepResult) -> None:
        turn = context.turn
        if isinstance(item, StepStarted):
            context.emit(
                CompactionStarted(
                    turn, item.strategy, trigger, item.tokens_before, item.messages_before
                )
            )
        elif item.failed:
            context.emit(
                CompactionFailed(
                    turn,
                    item.strategy,
                    trigger,
                    item.tokens_before,
                    item.reason,
                    item.cancelled,
                    item.duration,
                )
            )
        else:
            context.emit(
                CompactionCompleted(
                    turn,
                    item.strategy,
                    trigger,
                    item.tokens_before,
                    item.tokens_after,
                    item.messages_before,
                    len(item.messages),
                    item.messages_removed,
                    item.duration,
                    item.prefix_kept,
                    item.tokens_rewritten,
                )
            )
            if item.over_budget and item.budget is not None:
                context.emit(
                    CompactionOverBudget(
                        turn, item.strategy, trigger, item.tokens_after, item.budget
                    )
                )

    return report


@contextlib.contextmanager
def offload_failures(context: RunContext) -> Iterator[None]:
    """Report each offload that failed inside the block as an :class:`OffloadFailed`."""
    with collect_failures() as failures:
        try:
            yield
        finally:
            for failure in failures:
                context.emit(
                    OffloadFailed(context.turn, failure.strategy, failure.store, failure.reason)
                )


async def compact_history(
    context: RunContext,
    strategy: ContextStrategy,
    tokens: int,
    *,
    system_prompt: str | None,
    tools: Sequence[ToolDefinition],
    raise_errors: bool = False,
) -> bool:
    """Compact ``context.state.messages`` with ``strategy`` if it asks to; report it.

    Returns whether the history was replaced.

    Raises:
        NeuronContextError: the compaction failed and ``raise_errors`` is set.
    """
    state = context.state
    with offload_failures(context):
        result = await compact_step(
            strategy,
            state.messages,
            counter=context.requests,
            system_prompt=system_prompt,
            tools=tools,
            tokens=tokens,
            errors="raise" if raise_errors else "keep",
            report=reporter(context, "context"),
            label="context",
        )
    if result.compacted:
        state.messages = list(result.messages)
    return result.compacted


async def recompact_history(
    context: RunContext,
    strategy: ContextStrategy | None,
    overflow: Overflow,
    *,
    system_prompt: str | None,
    tools: Sequence[ToolDefinition],
) -> Recompacted:
    """``context.state.messages`` recompacted to the size ``overflow`` showed (see
    :func:`~neuron_context._compaction.recovery.recompact`), reported as a compaction
    with the trigger ``"overflow"``. The history is not replaced: the caller keeps the
    result only when the retry is answered.

    Raises:
        ContextOverflowError: the request cannot be made to fit.
        NeuronContextError: the compaction failed.
    """
    with offload_failures(context):
        return await recompact(
            overflow,
            context.state.messages,
            strategy=strategy,
            counter=context.requests,
            system_prompt=system_prompt,
            tools=tools,
            report=reporter(context, "overflow"),
            label="overflow",
        )
