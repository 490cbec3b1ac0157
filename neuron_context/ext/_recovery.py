"""What every adapter does when the provider refuses a request as too long for the model.

The framework's model call is wrapped (LangChain's ``wrap_model_call``, a pydantic-ai
model, an Agents SDK model): a refusal that :func:`~neuron_context.errors.context_overflow`
recognises is recovered from as the agent loop does (see
:mod:`neuron_context._agent.recovery`): the conversation that was sent is compacted to
the size the refusal showed, the call is retried once, and the smaller strategy is kept
for every conversation after (:meth:`~neuron_context.ext._sessions.Sessions.learn`). A second
refusal is a :class:`~neuron_context.errors.ContextOverflowError`; the framework's own
history is never edited by the recovery.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from .._compaction.step import StepResult
from .._log import logger
from .._messages.message import Message, ToolDefinition
from .._overflow import Overflow
from ._sessions import Session, Sessions

__all__ = ["recover"]

K = TypeVar("K")
S = TypeVar("S")


async def recover(
    sessions: Sessions[K, S],
    session: Session[K, S],
    overflow: Overflow,
    messages: Sequence[Message],
    *,
    system_prompt: str | None,
    tools: Sequence[ToolDefinition],
    label: str,
) -> tuple[StepResult, int]:
    """``messages`` (what the refused request sent) compacted to the size ``overflow``
    showed, and that budget; ``sessions`` keeps the smaller strategy (the caller retries
    once, and raises :func:`~neuron_context._compaction.overflow.refused_again`'s error
    if the retry is refused too)."""
    logger.warning(
        "%s: the provider refused the request as too long (%s); compacting to fit and "
        "retrying once",
        label,
        overflow.message[:200],
    )
    result, budget = await session.view.recover(
        overflow, messages, system_prompt=system_prompt, tools=tools, label=label
    )
    sessions.learn(session.view.strategy)
    return result, budget
