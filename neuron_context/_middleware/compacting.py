"""The compaction step on a model request, for the middlewares that compact it (context
editing, summarization): counted with the request's system prompt and tools, reported
as the loop's compactions are (:func:`~neuron_context._compaction.reporting.reporter`).
"""

from __future__ import annotations

from .._compaction.reporting import offload_failures
from .._compaction.step import StepReport, StepResult, compact_step
from .._strategies.strategy import ContextStrategy
from .types import ModelRequest

__all__ = ["compact_request"]


async def compact_request(
    request: ModelRequest,
    strategy: ContextStrategy,
    *,
    label: str,
    report: StepReport | None = None,
) -> StepResult:
    """The compaction step on a model request (what a middleware compacts): its messages,
    counted with its system prompt and tools. The request is left as it is."""
    with offload_failures(request.context):
        return await compact_step(
            strategy,
            request.messages,
            counter=request.context.requests,
            system_prompt=request.system_prompt,
            tools=request.tools,
            report=report,
            label=label,
        )
