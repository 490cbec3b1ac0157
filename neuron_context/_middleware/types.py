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
from typing import Any, TypeAlias

import attrs

from .._errors import ConfigurationError, ProviderError, show
from .._messages.checks import check_messages, check_reply, is_message_list
from .._messages.content import ToolResult, ToolUse
from .._messages.message import Message, ToolDefinition, history_repr
from .._messages.wellformed import unique_tool_ids
from .._run.run import RunContext
from .._run.tools import Tool
from .._validators import instance_of, optional, positive_int, require_sequence_of, string
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
    if is_message_list(value):
        return list(value)
    return list(check_messages(value, "ModelRequest.messages", sequence=False))


def _to_definitions(value: Iterable[ToolDefinition]) -> list[ToolDefinition]:
    return list(
        require_sequence_of(value, "ModelRequest.tools", ToolDefinition, "tool definitions")
    )


def _to_reply(value: Message) -> Message:
    return unique_tool_ids(check_reply(value, "ModelResponse.message"), "ModelResponse")


_STOP_REASONS = {reason.value: reason for reason in StopReason}


def _to_stop_reason(value: object) -> StopReason:
    reason = _STOP_REASONS.get(value) if isinstance(value, str) else None
    if reason is None:
        msg = f"ModelResponse.stop_reason must be one of {list(_STOP_REASONS)}, got {show(value)}"
        raise ConfigurationError(msg)
    return reason


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
    system_prompt: str | None = attrs.field(
        default=None, kw_only=True, validator=optional(string())
    )
    """The system prompt to send."""
    model: str | None = attrs.field(default=None, kw_only=True, validator=optional(string()))
    """The model to ask; ``None`` means the provider's default."""
    provider: Provider | None = attrs.field(
        default=None, kw_only=True, validator=optional(instance_of(Provider, "a Provider"))
    )
    """Who answers; ``None`` means the agent's provider (a fallback sets another)."""
    context: RunContext = attrs.field(
        factory=RunContext,
        kw_only=True,
        repr=False,
        validator=instance_of(RunContext, "a RunContext"),
    )
    """The run this request belongs to."""

    @classmethod
    def _of_history(cls, messages: list[Message], **fields: Any) -> ModelRequest:
        """A request of the agent's history, known to be messages (checked when it was
        appended): its copy is not checked again item by item on every turn."""
        request = cls([], **fields)
        object.__setattr__(request, "messages", list(messages))
        return request


@attrs.define(eq=False)
class ModelResponse:
    """The model's reply, as the loop will record it; ``after_model`` may edit it.

    Every field is checked when it is set (at construction and on assignment), so what
    the loop records is always an assistant message: ``ModelResponse("text")`` or a tool
    result as ``message`` is a :class:`~neuron_context.ConfigurationError`. A reply that
    calls two tools with one id is given distinct ids (see
    :func:`~neuron_context._messages.wellformed.unique_tool_ids`, logged).
    """

    message: Message = attrs.field(converter=_to_reply)
    """The assistant message appended to the history."""
    stop_reason: StopReason = attrs.field(
        kw_only=True, default=StopReason.END_TURN, converter=_to_stop_reason
    )
    usage: TokenUsage | None = attrs.field(
        default=None, kw_only=True, validator=optional(instance_of(TokenUsage, "a TokenUsage"))
    )
    """What the provider reported."""
    provider: Provider | None = attrs.field(
        default=None,
        kw_only=True,
        repr=False,
        validator=optional(instance_of(Provider, "a Provider")),
    )
    """The provider that answered."""

    @classmethod
    def of(cls, response: CompletionResponse, provider: Provider | None = None) -> ModelResponse:
        """A response from a provider's :class:`~neuron_context.CompletionResponse`.

        Raises:
            ProviderError: ``response`` is not a ``CompletionResponse`` (a provider of
                the user's returned ``None``, a ``str``, a ``Message``), naming the
                provider.
        """
        who = type(provider).__name__ if provider is not None else "the provider"
        if not isinstance(response, CompletionResponse):
            msg = (
                f"{who}.complete must return a CompletionResponse, got "
                f"{type(response).__name__} {show(response, 60)}"
            )
            raise ProviderError(msg)
        return cls(
            unique_tool_ids(response.message, f"{who}.complete"),
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

    tool_use: ToolUse = attrs.field(validator=instance_of(ToolUse, "a ToolUse"))
    """The call as the model made it."""
    tool: Tool | None = attrs.field(validator=optional(instance_of(Tool, "a Tool")))
    """The tool called, or ``None``."""
    context: RunContext = attrs.field(
        factory=RunContext,
        kw_only=True,
        repr=False,
        validator=instance_of(RunContext, "a RunContext"),
    )
    number: int = attrs.field(default=1, kw_only=True, validator=positive_int())
    """Its number among this run's tool calls (1-based)."""
    number_for_tool: int = attrs.field(default=1, kw_only=True, validator=positive_int())
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
