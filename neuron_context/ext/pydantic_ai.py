"""pydantic-ai: a history processor and conversion of ``ModelMessage`` s.

Install with ``pip install "neuron-context[pydantic-ai]"``. :class:`HistoryProcessor` runs
any :class:`~neuron_context.ContextStrategy` on the history before each model request::

    agent = Agent(model, capabilities=[ProcessHistory(HistoryProcessor(strategy))])

It is an async callable ``list[ModelMessage] -> list[ModelMessage]``, so it also serves
as an entry of ``history_processors=[...]`` in the pydantic-ai versions that have that
argument. pydantic-ai keeps what a processor returns as the run's history, so the
compaction persists (the history stops growing).

Messages the strategy keeps come back as the very objects pydantic-ai gave (a request
that lost some parts is a copy of the original with the remaining parts, so its
``instructions``, timestamps and run id stay); the conversation returned is well formed
(checked after each compaction, repaired with a warning if a strategy broke it), so no
tool call is left without its return and no return without its call.
"""

from __future__ import annotations

from .._errors import ConfigurationError
from .._strategies.base import ContextStrategy
from ._core import compact_conversation, missing_extra

try:
    from pydantic_ai.messages import ModelMessage

    from ._pydantic_ai_messages import (
        DOCUMENT_METADATA,
        from_pydantic_ai,
        read,
        rebuild,
        to_pydantic_ai,
    )
except ModuleNotFoundError as exc:  # pragma: no cover - exercised by a test in a subprocess
    raise missing_extra(__name__) from exc

__all__ = ["DOCUMENT_METADATA", "HistoryProcessor", "from_pydantic_ai", "to_pydantic_ai"]


class HistoryProcessor:
    """Compacts a pydantic-ai agent's history before each model request.

    Args:
        strategy: any strategy, typically ``default_stack(...)``; its own trigger
            decides when to compact.

    Examples:
        >>> processor = HistoryProcessor(SlidingWindowStrategy(20, 8_000))
    """

    __slots__ = ("strategy",)

    def __init__(self, strategy: ContextStrategy) -> None:
        if not isinstance(strategy, ContextStrategy):
            msg = f"HistoryProcessor.strategy must be a ContextStrategy, got {strategy!r}"
            raise ConfigurationError(msg)
        self.strategy = strategy

    def __repr__(self) -> str:
        return f"HistoryProcessor({self.strategy!r})"

    async def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The history to send: ``messages`` itself, or its compaction."""
        ours, origins = read(messages)
        compacted = await compact_conversation(self.strategy, ours)
        if compacted is None:
            return messages
        return rebuild(compacted, ours, origins, messages)
