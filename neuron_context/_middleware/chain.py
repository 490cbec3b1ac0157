"""The middleware chain: hooks in order, wrappers as an onion.

Modelled on :class:`~neuron_context.CompositeStrategy` (a plain loop over a tuple):
which middleware overrides which hook is computed once, when the chain is built, so a
turn only visits the middlewares that do something there.

The chain is also the boundary where a hook's value crosses back into the loop: each is
checked here, once, as it crosses — a ``before_*``/``after_*`` hook returns ``None`` or
what it was given (a list of messages, a ``ModelRequest``, a ``ModelResponse``), a
wrapper returns a ``ModelResponse`` or a ``ToolResult`` and calls ``next`` with a
request — and anything else is a :class:`~neuron_context.errors.MiddlewareError` naming
the middleware and the hook, raised before the loop records anything.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import TypeVar

from .._errors import ConfigurationError, MiddlewareError, show
from .._messages.checks import check_messages, is_message_list
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

    @property
    def wraps_agent(self) -> bool:
        """Whether a middleware overrides ``before_agent`` or ``after_agent`` (without
        one, a run hands its history to no hook and need not copy it for them)."""
        return bool(self._before_agent or self._after_agent)

    async def before_agent(self, messages: list[Message]) -> list[Message]:
        """Every ``before_agent``, in registration order; the (possibly replaced) history.

        Raises:
            MiddlewareError: a hook returned something other than messages or ``None``,
                or left something other than messages in the list it was given.
        """
        for middleware in self._before_agent:
            replaced = await _hook(middleware, "before_agent", middleware.before_agent(messages))
            messages = _messages(middleware, "before_agent", messages, replaced)
        return messages

    async def after_agent(self, messages: list[Message]) -> list[Message]:
        """Every ``after_agent``, in reverse order (checked as :meth:`before_agent`)."""
        for middleware in self._after_agent:
            replaced = await _hook(middleware, "after_agent", middleware.after_agent(messages))
            messages = _messages(middleware, "after_agent", messages, replaced)
        return messages

    async def before_model(self, request: ModelRequest) -> ModelRequest:
        """Every ``before_model``, in registration order.

        Raises:
            MiddlewareError: a hook returned something other than a ``ModelRequest`` or
                ``None``, or left something other than messages in ``request.messages``.
        """
        for middleware in self._before_model:
            given = request.messages
            before = given.copy()
            replaced = await _hook(middleware, "before_model", middleware.before_model(request))
            if replaced is not None:
                request = _instance(middleware, "before_model", replaced, ModelRequest)
            # A request's fields are checked when set (a new list of messages too); a list
            # edited in place is checked here (comparing it first costs a pointer a message).
            if request.messages is given and given != before:
                _messages(middleware, "before_model", given, None)
        return request

    async def after_model(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        """Every ``after_model``, in reverse order.

        Raises:
            MiddlewareError: a hook returned something other than a ``ModelResponse``
                or ``None`` (a ``ModelResponse`` checks its own fields).
        """
        for middleware in self._after_model:
            replaced = await _hook(
                middleware, "after_model", middleware.after_model(request, response)
            )
            if replaced is not None:
                response = _instance(middleware, "after_model", replaced, ModelResponse)
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


# -- what crosses back from a hook: checked here, once, naming the hook ---------------


def _refused(middleware: AgentMiddleware, hook: str, problem: str) -> MiddlewareError:
    msg = f"{middleware.name}.{hook} {problem}"
    return MiddlewareError(msg, middleware=middleware.name, hook=hook)


async def _hook(middleware: AgentMiddleware, hook: str, call: object) -> object:
    """What the hook's call returned, awaited (a hook defined without ``async``
    returns its value instead of an awaitable: refused, naming it)."""
    if not inspect.isawaitable(call):
        raise _refused(middleware, hook, f"must be an async method, it returned {show(call, 60)}")
    return await call


T = TypeVar("T")


def _instance(middleware: AgentMiddleware, hook: str, value: object, kind: type[T]) -> T:
    if not isinstance(value, kind):
        problem = f"must return a {kind.__name__} or None, got {type(value).__name__}"
        raise _refused(middleware, hook, f"{problem} {show(value, 60)}")
    return value


def _messages(
    middleware: AgentMiddleware, hook: str, given: list[Message], replaced: object
) -> list[Message]:
    """The history after a hook: ``replaced`` when it returned one, else ``given`` (which
    it may have changed in place); refused unless it is a list of messages."""
    value: object = given if replaced is None else replaced
    if is_message_list(value):
        return value  # type: ignore[return-value]
    try:
        checked = check_messages(value, f"{middleware.name}.{hook}: messages")
    except ConfigurationError as exc:
        raise MiddlewareError(str(exc), middleware=middleware.name, hook=hook) from None
    return value if type(value) is list else list(checked)


def _bind_model(middleware: AgentMiddleware, inner: ModelHandler) -> ModelHandler:
    async def checked(request: ModelRequest) -> ModelResponse:
        sent = _called_with(middleware, "wrap_model_call", request, ModelRequest)
        return await inner(sent)

    async def call(request: ModelRequest) -> ModelResponse:
        response = await _hook(
            middleware, "wrap_model_call", middleware.wrap_model_call(request, checked)
        )
        return _returned(middleware, "wrap_model_call", response, ModelResponse)

    return call


def _bind_tool(middleware: AgentMiddleware, inner: ToolHandler) -> ToolHandler:
    async def checked(request: ToolCallRequest) -> ToolResult:
        sent = _called_with(middleware, "wrap_tool_call", request, ToolCallRequest)
        return await inner(sent)

    async def call(request: ToolCallRequest) -> ToolResult:
        result = await _hook(
            middleware, "wrap_tool_call", middleware.wrap_tool_call(request, checked)
        )
        return _returned(middleware, "wrap_tool_call", result, ToolResult)

    return call


def _called_with(middleware: AgentMiddleware, hook: str, value: object, kind: type[T]) -> T:
    if not isinstance(value, kind):
        problem = f"called next with a {type(value).__name__}, not a {kind.__name__}"
        raise _refused(middleware, hook, problem)
    return value


def _returned(middleware: AgentMiddleware, hook: str, value: object, kind: type[T]) -> T:
    if not isinstance(value, kind):
        problem = f"must return a {kind.__name__}, got {type(value).__name__}"
        raise _refused(middleware, hook, f"{problem} {show(value, 60)}")
    return value
