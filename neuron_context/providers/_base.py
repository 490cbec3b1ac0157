"""The model provider interface: one request in, one assistant reply out.

A :class:`Provider` is a single-method strategy object (``complete``), like httpx's
transport. Requests and responses are frozen values; the SDK providers
(:mod:`neuron_context.providers`) and the test double
:class:`neuron_context.testing.FunctionProvider` implement it, and
:class:`~neuron_context.SummarizationStrategy` calls it.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs

from .._errors import ConfigurationError, show
from .._messages.checks import check_messages
from .._messages.content import ToolUse
from .._messages.message import Message, Role, ToolDefinition, history_repr
from .._validators import (
    instance_of,
    non_negative_int,
    number,
    optional,
    positive_int,
    require_sequence_of,
    string,
)

__all__ = [
    "CompletionRequest",
    "CompletionResponse",
    "Provider",
    "StopReason",
    "TokenUsage",
]


class StopReason(enum.StrEnum):
    """Why the model stopped generating."""

    END_TURN = "end_turn"
    """The model finished its reply."""
    TOOL_USE = "tool_use"
    """The model called one or more tools and waits for their results."""
    MAX_TOKENS = "max_tokens"
    """The reply was cut off at the ``max_tokens`` limit."""
    STOP_SEQUENCE = "stop_sequence"
    """The model produced one of the request's stop sequences."""


_STOP_REASONS = {reason.value: reason for reason in StopReason}


def _to_stop_reason(value: object) -> StopReason:
    # A lookup, not StopReason(value): the enum's own error would repr a hostile value.
    reason = _STOP_REASONS.get(value) if isinstance(value, str) else None
    if reason is None:
        msg = (
            f"CompletionResponse.stop_reason must be one of {[r.value for r in StopReason]}, "
            f"got {show(value)}"
        )
        raise ConfigurationError(msg)
    return reason


def _to_messages(value: object) -> tuple[Message, ...]:
    return check_messages(value, "CompletionRequest.messages", sequence=False)


def _to_tools(value: object) -> tuple[ToolDefinition, ...]:
    return require_sequence_of(value, "CompletionRequest.tools", ToolDefinition, "tool definitions")


@attrs.frozen
class CompletionRequest:
    """What is sent to a model: the conversation and how to answer it.

    Examples:
        >>> request = CompletionRequest([Message.user("hi")], system="Be brief.", max_tokens=50)
        >>> request.messages[0].text
        'hi'
    """

    messages: tuple[Message, ...] = attrs.field(converter=_to_messages, repr=history_repr)
    """The conversation, oldest first (stored as a tuple)."""
    system: str | None = attrs.field(default=None, kw_only=True, validator=optional(string()))
    """The system prompt, sent before the messages (providers put it where their API
    wants it)."""
    tools: tuple[ToolDefinition, ...] = attrs.field(default=(), kw_only=True, converter=_to_tools)
    """The tools the model may call."""
    model: str | None = attrs.field(default=None, kw_only=True, validator=optional(string()))
    """The model to use; ``None`` means the provider's own default."""
    max_tokens: int | None = attrs.field(
        default=None, kw_only=True, validator=optional(positive_int())
    )
    """The most tokens the reply may have; ``None`` means the provider's default."""
    temperature: float | None = attrs.field(
        default=None, kw_only=True, validator=optional(number(minimum=0))
    )
    """Sampling temperature; ``None`` means the provider's default."""

    @classmethod
    def _of_messages(cls, messages: Sequence[Message], **fields: Any) -> CompletionRequest:
        """A request of ``messages`` known to be :class:`Message` s (the agent loop's
        checked history): the other fields are checked, the messages are not checked
        again one by one (an O(history) pass on every model call)."""
        request = cls((), **fields)
        object.__setattr__(request, "messages", tuple(messages))
        return request


def _check_message(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, Message):
        msg = f"CompletionResponse.{attribute.name} must be a Message, got {type(value).__name__}"
        raise ConfigurationError(msg)
    if value.role is not Role.ASSISTANT:
        msg = f"CompletionResponse.{attribute.name} must be an assistant message, not {value.role}"
        raise ConfigurationError(msg)


@attrs.frozen
class TokenUsage:
    """The tokens a call consumed, as the provider reported them."""

    input_tokens: int = attrs.field(validator=non_negative_int())
    """Tokens of the request (prompt), cached ones included."""
    output_tokens: int = attrs.field(validator=non_negative_int())
    """Tokens of the reply."""

    @property
    def total_tokens(self) -> int:
        """``input_tokens + output_tokens``."""
        return self.input_tokens + self.output_tokens


@attrs.frozen
class CompletionResponse:
    """A model's reply: one assistant message and why it stopped.

    Examples:
        >>> response = CompletionResponse(Message.assistant("hello"), stop_reason="end_turn")
        >>> response.text, response.stop_reason is StopReason.END_TURN
        ('hello', True)
    """

    message: Message = attrs.field(validator=_check_message)
    """The reply, an assistant message."""
    stop_reason: StopReason = attrs.field(kw_only=True, converter=_to_stop_reason)
    """Why the model stopped; a plain string such as ``"end_turn"`` is accepted."""
    usage: TokenUsage | None = attrs.field(
        default=None, kw_only=True, validator=optional(instance_of(TokenUsage, "a TokenUsage"))
    )
    """The tokens the call consumed, when the provider reported them."""
    finish_reason: str | None = attrs.field(
        default=None, kw_only=True, validator=optional(string())
    )
    """Why the model stopped, as the provider said it (OpenAI's ``"stop"``, Anthropic's
    ``"end_turn"``), when it did; :attr:`stop_reason` is the same reason mapped to a
    :class:`StopReason`. Traces report this one."""
    model: str | None = attrs.field(default=None, kw_only=True, validator=optional(string()))
    """The model that answered, as the provider reported it (``"gpt-4.1-2025-04-14"``)."""
    response_id: str | None = attrs.field(default=None, kw_only=True, validator=optional(string()))
    """The provider's identifier of this reply (``"chatcmpl-..."``, ``"msg_..."``)."""

    @property
    def text(self) -> str:
        """The reply's text blocks joined with ``"\\n"``."""
        return self.message.text

    @property
    def tool_uses(self) -> tuple[ToolUse, ...]:
        """The reply's tool uses, in order."""
        return self.message.tool_uses


class Provider(abc.ABC):
    """A model that answers a :class:`CompletionRequest`.

    Implementations raise :class:`~neuron_context.errors.ProviderError` for failed calls
    (with ``retryable`` set when trying again may help); they must not retry
    endlessly themselves and must let cancellation propagate.
    """

    provider_name: ClassVar[str | None] = None
    """Who serves the model, as OpenTelemetry's ``gen_ai.provider.name`` says it
    (``"openai"``, ``"anthropic"``): the model-call spans of the agent loop carry it.
    ``None``: the spans name the class instead."""

    @abc.abstractmethod
    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Send ``request`` to the model and return its reply."""
