"""How an agent runs: :class:`AgentOptions`, and what a run returns, :class:`AgentResult`."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Literal

import attrs

from .._counting.counter import BaseCounter
from .._errors import AgentError, ConfigurationError
from .._messages.message import Message, Role, history_repr
from .._middleware.chain import MiddlewareChain
from .._middleware.types import AgentMiddleware
from .._run.events import AgentEvent
from .._strategies.strategy import ContextStrategy
from .._validators import callable_, instance_of, number, one_of, optional, positive_int
from ..providers._base import TokenUsage

__all__ = ["AgentOptions", "AgentResult"]


def _to_middleware(value: Iterable[AgentMiddleware]) -> tuple[AgentMiddleware, ...]:
    return MiddlewareChain(value).middlewares


@attrs.frozen(kw_only=True, init=False)
class AgentOptions:
    """How an agent runs. Every field is keyword-only.

    ``max_output_tokens`` caps each reply; a strategy's ``max_tokens`` is the history's
    budget. ``max_tokens`` is still accepted for the reply cap, with a
    ``DeprecationWarning``, for one release.

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
    the history (see :mod:`neuron_context._compaction.reporting`)."""
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
    max_output_tokens: int | None = attrs.field(default=None, validator=optional(positive_int()))
    """The most tokens each reply may have (the ``max_tokens`` of every model call)."""
    temperature: float | None = attrs.field(default=None, validator=optional(number(minimum=0)))
    """The ``temperature`` of every model call."""
    on_event: Callable[[AgentEvent], object] | None = attrs.field(
        default=None, validator=optional(callable_())
    )
    """A plain (sync) function called with every event as it happens, in the run's task.
    An observer: an exception it raises is logged and the run goes on."""

    def __init__(
        self,
        *,
        middleware: Iterable[AgentMiddleware] = (),
        system_prompt: str | None = None,
        max_turns: int = 50,
        model: str | None = None,
        context: ContextStrategy | None = None,
        counter: BaseCounter | None = None,
        context_errors: Literal["continue", "raise"] = "continue",
        max_output_tokens: int | None = None,
        temperature: float | None = None,
        on_event: Callable[[AgentEvent], object] | None = None,
        max_tokens: int | None = None,
    ) -> None:
        if max_tokens is not None:
            warnings.warn(
                "AgentOptions(max_tokens=...) is deprecated: it is the reply's cap, now "
                "called max_output_tokens (a strategy's max_tokens is the history's budget)",
                DeprecationWarning,
                stacklevel=2,
            )
            if max_output_tokens is not None and max_output_tokens != max_tokens:
                msg = (
                    "AgentOptions: max_tokens (deprecated) and max_output_tokens differ: "
                    "give max_output_tokens alone"
                )
                raise ConfigurationError(msg)
            max_output_tokens = max_tokens
        self.__attrs_init__(
            middleware=middleware,
            system_prompt=system_prompt,
            max_turns=max_turns,
            model=model,
            context=context,
            counter=counter,
            context_errors=context_errors,
            max_output_tokens=max_output_tokens,
            temperature=temperature,
            on_event=on_event,
        )

    @property
    def max_tokens(self) -> int | None:
        """Deprecated: :attr:`max_output_tokens` (the reply's cap)."""
        warnings.warn(
            "AgentOptions.max_tokens is deprecated: read max_output_tokens",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.max_output_tokens


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
