"""The middleware chain: hooks in order, wrappers as an onion.

Modelled on :class:`~neuron_context.CompositeStrategy` (a plain loop over a tuple):
which middleware overrides which hook is computed once, when the chain is built, so a
turn only visits the middlewares that do something there.
"""

from __future__ import annotations

from collections.abc import Iterable

from .._messages.content import ToolResult
from .._messages.message import Message
from .._validators import require_sequence_of
from .types import (
    AgentMiddleware,
    ModelHandler,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    ToolHandler,
)

__all__ = ["MiddlewareChain"]


def _overrides(middleware: AgentMiddleware, hook: str) -> bool:
    return getattr(type(middleware), hook) is not getattr(AgentMiddleware, hook)


class MiddlewareChain:
    """Runs middlewares: ``before_*`` in registration order, ``after_*`` in reverse,
    wrappers onion-style (the first registered is the outermost).

    Examples:
        >>> chain = MiddlewareChain([AgentMiddleware(), AgentMiddleware()])
        >>> len(chain.middlewares)
        2
    """

    __slots__ = (
        "_after_agent",
        "_after_model",
        "_before_agent",
        "_before_model",
        "_wrap_model",
        "_wrap_tool",
        "middlewares",
    )

    def __init__(self, middlewares: Iterable[AgentMiddleware] = ()) -> None:
        chosen = require_sequence_of(
            middlewares, "MiddlewareChain.middlewares", AgentMiddleware, "middlewares"
        )
        self.middlewares: tuple[AgentMiddleware, ...] = chosen
        """The middlewares, in registration order."""

        def having(hook: str) -> tuple[AgentMiddleware, ...]:
            return tuple(m for m in chosen if _overrides(m, hook))

        self._before_agent = having("before_agent")
        self._after_agent = tuple(reversed(having("after_agent")))
        self._before_model = having("before_model")
        self._after_model = tuple(reversed(having("after_model")))
        self._wrap_model = having("wrap_model_call")
        self._wrap_tool = having("wrap_tool_call")

    def __repr__(self) -> str:
        return f"MiddlewareChain({list(self.middlewares)!r})"

    async def before_agent(self, messages: list[Message]) -> list[Message]:
        """Every ``before_agent``, in registration order; the (possibly replaced) history."""
        for middleware in self._before_agent:
            replaced = await middleware.before_agent(messages)
            if replaced is not None:
                messages = replaced
        return messages

    async def after_agent(self, messages: list[Message]) -> list[Message]:
        """Every ``after_agent``, in reverse order."""
        for middleware in self._after_agent:
            replaced = await middleware.after_agent(messages)
            if replaced is not None:
                messages = replaced
        return messages

    async def before_model(self, request: ModelRequest) -> ModelRequest:
        """Every ``before_model``, in registration order."""
        for middleware in self._before_model:
            replaced = await middleware.before_model(request)
            if replaced is not None:
                request = replaced
        return request

    async def after_model(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        """Every ``after_model``, in reverse order."""
        for middleware in self._after_model:
            replaced = await middleware.after_model(request, response)
            if replaced is not None:
                response = replaced
        return response

    async def call_model(self, request: ModelRequest, handler: ModelHandler) -> ModelResponse:
        """``handler`` wrapped by every ``wrap_model_call`` (first registered outermost)."""
        call = handler
        for middleware in reversed(self._wrap_model):
            call = _bind_model(middleware, call)
        return await call(request)

    async def call_tool(self, request: ToolCallRequest, handler: ToolHandler) -> ToolResult:
        """``handler`` wrapped by every ``wrap_tool_call`` (first registered outermost)."""
        call = handler
        for middleware in reversed(self._wrap_tool):
            call = _bind_tool(middleware, call)
        return await call(request)

    async def model_turn(self, request: ModelRequest, handler: ModelHandler) -> ModelResponse:
        """One model call: every ``before_model``, the wrapped call, every ``after_model``."""
        request = await self.before_model(request)
        response = await self.call_model(request, handler)
        return await self.after_model(request, response)


def _bind_model(middleware: AgentMiddleware, inner: ModelHandler) -> ModelHandler:
    async def call(request: ModelRequest) -> ModelResponse:
        return await middleware.wrap_model_call(request, inner)

    return call


def _bind_tool(middleware: AgentMiddleware, inner: ToolHandler) -> ToolHandler:
    async def call(request: ToolCallRequest) -> ToolResult:
        return await middleware.wrap_tool_call(request, inner)

    return call
