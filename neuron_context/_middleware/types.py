"""Agent middleware: six async hooks around the agent loop, all no-ops by default.

A middleware sees the run at six points::

    run(input)
    ├── before_agent(messages)                   once, registration order
    │   ┌─ each turn ───────────────────────────────────────────────┐
    │   │ before_model(request)                  registration order │
    │   │ wrap_model_call(request, next)         onion: first = outermost
    │   │ after_model(request, response)         reverse order      │
    │   │ wrap_tool_call(request, next)          onion, per tool call (concurrent)
    │   └───────────────────────────────────────────────────────────┘
    └── after_agent(messages)                    once, reverse order

``before_*``/``after_*`` hooks may change what they are given in place or return a
replacement (``None`` keeps it). Wrappers decide whether, how often and with what the
inner call runs: ``await next(request)``. A request carries the run's
:class:`RunContext`, so a middleware keeps no per-run data on itself and one instance can
serve many agents at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TypeAlias

import attrs

from .._messages.content import ToolResult, ToolUse
from .._messages.message import Message, ToolDefinition, history_repr
from .._run.run import RunContext
from .._run.tools import Tool
from ..providers._base import CompletionResponse, Provider, StopReason, TokenUsage

__all__ = [
    "AgentMiddleware",
    "ModelHandler",
    "ModelRequest",
    "ModelResponse",
    "ToolCallRequest",
    "ToolHandler",
]


def _to_messages(value: Iterable[Message]) -> list[Message]:
    return list(value)


def _to_definitions(value: Iterable[ToolDefinition]) -> list[ToolDefinition]:
    return list(value)


@attrs.define(eq=False)
class ModelRequest:
    """What the next model call will send; middlewares may edit every field.

    ``messages`` starts as a copy of the agent's history: editing it edits only this
    call (see :class:`ContextEditingMiddleware`); ``context.state.messages`` is the
    history itself.
    """

    messages: list[Message] = attrs.field(converter=_to_messages, repr=history_repr)
    """The conversation to send (a list of its own)."""
    tools: list[ToolDefinition] = attrs.field(factory=list, kw_only=True, converter=_to_definitions)
    """The tool definitions to send."""
    system_prompt: str | None = attrs.field(default=None, kw_only=True)
    """The system prompt to send."""
    model: str | None = attrs.field(default=None, kw_only=True)
    """The model to ask; ``None`` means the provider's default."""
    provider: Provider | None = attrs.field(default=None, kw_only=True)
    """Who answers; ``None`` means the agent's provider (a fallback sets another)."""
    context: RunContext = attrs.field(factory=RunContext, kw_only=True, repr=False)
    """The run this request belongs to."""


@attrs.define(eq=False)
class ModelResponse:
    """The model's reply, as the loop will record it; ``after_model`` may edit it."""

    message: Message
    """The assistant message appended to the history."""
    stop_reason: StopReason = attrs.field(kw_only=True, default=StopReason.END_TURN)
    usage: TokenUsage | None = attrs.field(default=None, kw_only=True)
    """What the provider reported."""
    provider: Provider | None = attrs.field(default=None, kw_only=True, repr=False)
    """The provider that answered."""

    @classmethod
    def of(cls, response: CompletionResponse, provider: Provider | None = None) -> ModelResponse:
        """A response from a provider's :class:`~neuron_context.CompletionResponse`."""
        return cls(
            response.message,
            stop_reason=response.stop_reason,
            usage=response.usage,
            provider=provider,
        )

    @property
    def tool_uses(self) -> tuple[ToolUse, ...]:
        """The tools the reply calls, in order."""
        return self.message.tool_uses


@attrs.frozen(eq=False)
class ToolCallRequest:
    """One tool call on its way through ``wrap_tool_call``.

    Frozen: a wrapper that changes the call passes ``attrs.evolve(request, ...)`` to
    ``next``. ``tool`` is ``None`` for a name the agent does not know (the innermost
    handler then answers with an error result).
    """

    tool_use: ToolUse
    """The call as the model made it."""
    tool: Tool | None
    """The tool called, or ``None``."""
    context: RunContext = attrs.field(factory=RunContext, kw_only=True, repr=False)
    number: int = attrs.field(default=1, kw_only=True)
    """Its number among this run's tool calls (1-based)."""
    number_for_tool: int = attrs.field(default=1, kw_only=True)
    """Its number among this run's calls of the same tool (1-based)."""


ModelHandler: TypeAlias = Callable[[ModelRequest], Awaitable[ModelResponse]]
"""The ``next`` of ``wrap_model_call``."""
ToolHandler: TypeAlias = Callable[[ToolCallRequest], Awaitable[ToolResult]]
"""The ``next`` of ``wrap_tool_call``: returns the result or raises the tool's error."""


class AgentMiddleware:
    """Base class of middlewares: override the hooks you need; the rest are no-ops.

    A middleware may also bring tools (:attr:`tools`), which the agent adds to its own.

    Examples:
        >>> class Shout(AgentMiddleware):
        ...     async def before_model(self, request):
        ...         request.system_prompt = (request.system_prompt or "") + " Be loud."
    """

    tools: tuple[Tool, ...] = ()
    """Tools this middleware adds to the agent."""

    @property
    def name(self) -> str:
        """The name events and errors use (the class name)."""
        return type(self).__name__

    async def before_agent(self, messages: list[Message]) -> list[Message] | None:
        """Once per run, before the first turn, with the history (input appended)."""
        return None

    async def after_agent(self, messages: list[Message]) -> list[Message] | None:
        """Once per run, after the last turn, with the history."""
        return None

    async def before_model(self, request: ModelRequest) -> ModelRequest | None:
        """Before each model call."""
        return None

    async def after_model(
        self, request: ModelRequest, response: ModelResponse
    ) -> ModelResponse | None:
        """After each model call, before the reply is recorded and its tools run."""
        return None

    async def wrap_model_call(self, request: ModelRequest, next: ModelHandler) -> ModelResponse:
        """Around each model call: by default, ``await next(request)``."""
        return await next(request)

    async def wrap_tool_call(self, request: ToolCallRequest, next: ToolHandler) -> ToolResult:
        """Around each tool call: by default, ``await next(request)``."""
        return await next(request)
