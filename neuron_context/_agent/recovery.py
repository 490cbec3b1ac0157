"""The loop's recovery from a provider's overflow error (see
:mod:`neuron_context._overflow`, which recognises it and sizes the retry).

When the model call fails because the request is too long for the model, the loop
learns the real size from the refusal (a :class:`~neuron_context.CalibratedCounter`
observes the provider's count, when it gives one), compacts the history to fit with its
``context`` strategy at the learned budget (a ``default_stack`` when it has none),
retries once, and keeps that budget for the turns after. The compacted history is kept
only when the retry succeeds: a second refusal raises
:class:`~neuron_context.errors.ContextOverflowError` with the history as it was.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from .._compaction.overflow import budget_of, refused_again, shrunk
from .._compaction.step import compact_step
from .._counting.calibrated import CalibratedCounter
from .._errors import ContextOverflowError, ProviderError
from .._log import logger
from .._messages.message import Message, ToolDefinition
from .._middleware.compacting import offload_failures, reporter
from .._middleware.types import ModelRequest, ModelResponse
from .._overflow import context_overflow
from .._run.run import RunContext
from .._strategies.strategy import ContextStrategy

__all__ = ["model_turn"]

Turn = Callable[[ModelRequest], Awaitable[ModelResponse]]


async def model_turn(
    turn: Turn,
    request: ModelRequest,
    context: RunContext,
    *,
    strategy: ContextStrategy | None,
    learn: Callable[[ContextStrategy], None],
    tools: tuple[ToolDefinition, ...],
    system_prompt: str | None,
    model: str | None,
) -> ModelResponse:
    """``turn(request)``; on an overflow error, one compaction and retry (see the module
    docstring). ``learn`` is told the strategy sized to the learned budget.

    Raises:
        ContextOverflowError: the retry was refused as too long as well.
    """
    try:
        return await turn(request)
    except ProviderError as exc:
        overflow = context_overflow(exc)
        if overflow is None or isinstance(exc, ContextOverflowError):
            raise
    state = context.state
    history = list(state.messages)
    counter = context.counter
    if isinstance(counter, CalibratedCounter) and overflow.tokens is not None:
        sent = [Message.system(system_prompt), *history] if system_prompt else history
        counter.observe(sent, overflow.tokens, tools=tools)
    counted = context.count_request(history, system_prompt, tools)
    budget = overflow.budget(counted, budget_of(strategy))
    smaller = shrunk(strategy, budget, counter)
    logger.warning(
        "the provider refused the request as too long (%s); compacting to %d tokens and "
        "retrying once",
        overflow.message[:200],
        budget,
    )
    with offload_failures(context):  # a failed put is an OffloadFailed event here too
        result = await compact_step(
            smaller,
            history,
            counter=context.requests,
            system_prompt=system_prompt,
            tools=tools,
            tokens=counted,
            errors="raise",
            report=reporter(context, "overflow"),
            label="overflow",
        )
    learn(smaller)
    retry = ModelRequest._of_history(
        list(result.messages),
        tools=tools,
        system_prompt=system_prompt,
        model=model,
        context=context,
    )
    state.count_model_call()
    try:
        response = await turn(retry)
    except ProviderError as exc:
        error = refused_again(exc, budget)
        if error is None:
            raise
        raise error from exc
    state.messages = list(result.messages)
    return response
