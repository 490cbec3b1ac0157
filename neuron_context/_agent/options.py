"""How an agent runs: :class:`AgentOptions`, and what a run returns, :class:`AgentResult`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

import attrs

from .._counting.counter import BaseCounter
from .._errors import AgentError
from .._messages.message import Message, Role, history_repr
from .._middleware.chain import MiddlewareChain
from .._middleware.types import AgentMiddleware
from .._run.events import AgentEvent
from .._strategies.strategy import ContextStrategy
from .._validators import instance_of, one_of, optional, positive_int
from ..providers._base import TokenUsage

__all__ = ["AgentOptions", "AgentResult"]


def _to_middleware(value: Iterable[AgentMiddleware]) -> tuple[AgentMiddleware, ...]:
    return MiddlewareChain(value).middlewares


@attrs.frozen(kw_only=True)
class AgentOptions:
    """How an agent runs. Every field is keyword-only.

    Examples:
        >>> from neuron_context import SlidingWindowStrategy
        >>> window = SlidingWindowStrategy(20, 8_000)
        >>> options = AgentOptions(system_prompt="Be brief.", context=window)
    """

    middleware: tuple[AgentMiddleware, ...] = attrs.field(default=(), converter=_to_middleware)
    """The middlewares, outermost first."""
    system_prompt: str | None = attrs.field(
        default=None, validator=optional(instance_of(str, "a str"))
    )
    """Sent with every model call (middlewares may extend it per call)."""
    max_turns: int = attrs.field(default=50, validator=positive_int())
    """The most model calls one run may make; one more raises
    :class:`MaxTurnsExceededError`."""
    model: str | None = attrs.field(default=None, validator=optional(instance_of(str, "a str")))
    """The model to ask; ``None`` means the provider's default."""
    context: ContextStrategy | None = attrs.field(
        default=None, validator=optional(instance_of(ContextStrategy, "a ContextStrategy"))
    )
    """Run at the top of every turn on the whole request's count; its result replaces
    the history (see :mod:`neuron_context._middleware.compacting`)."""
    counter: BaseCounter | None = attrs.field(
        default=None, validator=optional(instance_of(BaseCounter, "a counter"))
    )
    """Measures requests; default: the ``context`` strategy's counter, else a
    :class:`~neuron_context.TokenCounter`. A :class:`~neuron_context.CalibratedCounter`
    learns from every reported usage."""
    context_errors: Literal["continue", "raise"] = attrs.field(
        default="continue", validator=one_of(("continue", "raise"))
    )
    """What a failed compaction does: keep the history and go on, or raise."""
    max_tokens: int | None = attrs.field(default=None, validator=optional(positive_int()))
    """The ``max_tokens`` of every model call."""
    temperature: float | None = attrs.field(default=None)
    """The ``temperature`` of every model call."""
    on_event: Callable[[AgentEvent], object] | None = attrs.field(default=None)
    """A plain (sync) function called with every event as it happens, in the run's task."""


@attrs.frozen
class AgentResult:
    """What a run returns."""

    messages: list[Message] = attrs.field(repr=history_repr)
    """The whole history: earlier runs, the input, model replies and tool results."""
    events: tuple[AgentEvent, ...] = attrs.field(factory=tuple, repr=False)
    """The run's events, in order."""
    turns: int = 0
    """Model turns this run took."""
    usage: TokenUsage | None = None
    """The provider-reported tokens of this run's calls, summed (``None``: none reported)."""

    @property
    def message(self) -> Message:
        """The final reply (the last assistant message)."""
        for message in reversed(self.messages):
            if message.role is Role.ASSISTANT:
                return message
        msg = "AgentResult.message: the history holds no assistant message"
        raise AgentError(msg)

    @property
    def text(self) -> str:
        """The final reply's text."""
        return self.message.text
