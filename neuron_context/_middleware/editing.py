"""Request-only context editing: shrink what one model call sees, keep the history.

:class:`ContextEditingMiddleware` runs a strategy on the request in ``before_model``
when the strategy's trigger says so; the agent's history is never touched, so the next
call starts from the full history again. That is the opposite of
``AgentOptions(context=...)`` (and of :class:`SummarizationMiddleware`), which replace
the history: use editing for views that are cheap to recompute (a window, stripping
tool calls), persistence for work that must not be redone (a summary).
"""

from __future__ import annotations

import attrs

from .._run.events import RequestEdited
from .._strategies.composite import EditPipeline
from .._strategies.strategy import ContextStrategy
from .._strategies.strip import StripToolCallsStrategy
from .._strategies.window import SlidingWindowStrategy
from .._validators import instance_of, require_int
from .compacting import compact_request
from .types import AgentMiddleware, ModelRequest

__all__ = ["ContextEditingMiddleware"]


@attrs.define
class ContextEditingMiddleware(AgentMiddleware):
    """Edits the request sent to the model with ``strategy``; the history is untouched.

    Before each model call the request goes through the compaction step every caller
    uses (:mod:`neuron_context._compaction.step`): counted as the provider receives it
    (messages, system prompt, tools), edited when ``strategy.should_compact`` says so. A
    strategy failure leaves the request as it was (logged). Reported as
    :class:`RequestEdited`.

    Examples:
        >>> editing = ContextEditingMiddleware.strip_and_truncate(20)
    """

    strategy: ContextStrategy = attrs.field(
        validator=instance_of(ContextStrategy, "a ContextStrategy")
    )
    """Edits the request's messages."""

    @classmethod
    def last_n(cls, n: int) -> ContextEditingMiddleware:
        """Send only the system messages and the last ``n`` others (always applies)."""
        return cls(SlidingWindowStrategy(require_int(n, "ContextEditingMiddleware.last_n"), 0))

    @classmethod
    def strip_tool_calls(cls) -> ContextEditingMiddleware:
        """Send no tool calls or results (always applies)."""
        return cls(StripToolCallsStrategy())

    @classmethod
    def strip_and_truncate(cls, n: int) -> ContextEditingMiddleware:
        """Strip the tool calls, then keep the last ``n`` messages (always applies)."""
        window = SlidingWindowStrategy(require_int(n, "ContextEditingMiddleware.n"), 0)
        return cls(EditPipeline((StripToolCallsStrategy(), window)))

    async def before_model(self, request: ModelRequest) -> None:
        """Replace the request's messages with the strategy's edit, when it applies."""
        context = request.context
        result = await compact_request(request, self.strategy, label="ContextEditingMiddleware")
        if not result.compacted:
            return
        request.messages = list(result.messages)
        context.emit(
            RequestEdited(
                context.turn,
                result.strategy,
                result.tokens_before,
                result.tokens_after,
                result.messages_removed,
                result.prefix_kept,
                result.tokens_rewritten,
            )
        )
