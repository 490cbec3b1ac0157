"""Resilience: retry failing tools, fall back to other models.

Neither ever retries an :class:`AgentError` (a limit must stop the run) nor swallows
cancellation. Waits use :func:`anyio.sleep`, so a cancelled run stops waiting at once.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

import anyio
import attrs

from .._errors import AgentError, ConfigurationError, show
from .._messages.content import ToolResult
from .._validators import non_negative_int, number, require_sequence_of
from ..providers._base import Provider
from .events import FallbackUsed, ToolRetried
from .middleware import (
    AgentMiddleware,
    ModelHandler,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    ToolHandler,
)

__all__ = ["ModelFallbackMiddleware", "ToolRetryMiddleware"]


def _any_error(_: Exception) -> bool:
    return True


def _to_names(value: Iterable[str] | None) -> frozenset[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return frozenset((value,))
    return frozenset(value)


@attrs.define
class ToolRetryMiddleware(AgentMiddleware):
    """Retries a tool call that raised, up to ``max_retries`` times after the first attempt.

    Waits ``initial_delay * backoff ** (attempt - 1)`` seconds (capped at ``max_delay``),
    each scaled by a random factor in ``[1 - jitter, 1 + jitter]`` so that many agents
    do not retry in step. ``retry_on`` decides which exceptions are worth a retry (all,
    by default); ``tool_names`` restricts it to some tool names. The last failure propagates
    (the model then sees it as an error result).

    Examples:
        >>> timeouts = lambda exc: isinstance(exc, TimeoutError)
        >>> retry = ToolRetryMiddleware(3, initial_delay=0.5, retry_on=timeouts)
    """

    max_retries: int = attrs.field(validator=non_negative_int())
    """Retries after the first attempt."""
    initial_delay: float = attrs.field(default=1.0, kw_only=True, validator=number(minimum=0))
    """Seconds before the first retry."""
    backoff: float = attrs.field(default=2.0, kw_only=True, validator=number(minimum=1))
    """The factor between successive delays."""
    max_delay: float = attrs.field(default=60.0, kw_only=True, validator=number(minimum=0))
    """The longest wait."""
    jitter: float = attrs.field(default=0.1, kw_only=True, validator=number(minimum=0, maximum=1))
    """The relative spread of each wait."""
    retry_on: Callable[[Exception], bool] = attrs.field(default=_any_error, kw_only=True)
    """Whether an exception is worth a retry."""
    tool_names: frozenset[str] | None = attrs.field(default=None, kw_only=True, converter=_to_names)
    """Only these tools are retried (``None``: all)."""
    rng: random.Random = attrs.field(factory=random.Random, kw_only=True, repr=False)
    """The source of jitter (seed it for reproducible waits)."""

    def __attrs_post_init__(self) -> None:
        if not callable(self.retry_on):
            msg = f"ToolRetryMiddleware.retry_on must be callable, got {show(self.retry_on, 60)}"
            raise ConfigurationError(msg)

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        try:
            grown = self.initial_delay * self.backoff ** (attempt - 1)
        except OverflowError:  # after a thousand or so retries: the cap holds
            grown = self.max_delay
        base = min(self.max_delay, grown)
        spread = self.rng.uniform(1 - self.jitter, 1 + self.jitter) if self.jitter else 1.0
        return min(self.max_delay, base * spread)

    async def wrap_tool_call(self, request: ToolCallRequest, next: ToolHandler) -> ToolResult:
        """Call ``next``; on a retryable exception wait and call it again."""
        if self.tool_names is not None and request.tool_use.name not in self.tool_names:
            return await next(request)
        attempt = 1
        while True:
            try:
                return await next(request)
            except AgentError:
                raise
            except Exception as exc:
                if attempt > self.max_retries or not self.retry_on(exc):
                    raise
                wait = self.delay(attempt)
                context, use = request.context, request.tool_use
                context.emit(
                    ToolRetried(
                        context.turn,
                        use.name,
                        use.id,
                        attempt,
                        wait,
                        f"{type(exc).__name__}: {exc}",
                    )
                )
            await anyio.sleep(wait)
            attempt += 1


def _to_providers(value: Iterable[Provider]) -> tuple[Provider, ...]:
    if isinstance(value, Provider):
        return (value,)
    providers = require_sequence_of(
        value, "ModelFallbackMiddleware.providers", Provider, "providers"
    )
    if not providers:
        msg = "ModelFallbackMiddleware.providers must not be empty"
        raise ConfigurationError(msg)
    return providers


def _to_models(value: Iterable[str | None] | None) -> tuple[str | None, ...] | None:
    return None if value is None else tuple(value)


@attrs.define
class ModelFallbackMiddleware(AgentMiddleware):
    """When the model call fails, tries the next provider of ``providers``, in order.

    ``retry_on`` decides which exceptions move on to the next provider (all, by
    default; an :class:`AgentError` or cancellation never does). The last failure
    propagates. Each switch is reported as :class:`FallbackUsed`.

    Examples:
        >>> from neuron_context.testing import FunctionProvider
        >>> fallback = ModelFallbackMiddleware([FunctionProvider(lambda r: "backup")])
    """

    providers: tuple[Provider, ...] = attrs.field(converter=_to_providers)
    """The providers to try after the agent's, in order."""
    models: tuple[str | None, ...] | None = attrs.field(
        default=None, kw_only=True, converter=_to_models
    )
    """The model to ask each provider for (default: the request's model)."""
    retry_on: Callable[[Exception], bool] = attrs.field(default=_any_error, kw_only=True)
    """Whether a failure moves on to the next provider."""

    def __attrs_post_init__(self) -> None:
        if self.models is not None and len(self.models) != len(self.providers):
            msg = "ModelFallbackMiddleware.models must give one model per provider"
            raise ConfigurationError(msg)

    async def wrap_model_call(self, request: ModelRequest, next: ModelHandler) -> ModelResponse:
        """Call ``next``; on failure, call it again with each fallback provider."""
        failed = type(request.provider).__name__ if request.provider is not None else "primary"
        try:
            return await next(request)
        except AgentError:
            raise
        except Exception as exc:
            if not self.retry_on(exc):
                raise
            error: Exception = exc
        for index, provider in enumerate(self.providers):
            context = request.context
            name = type(provider).__name__
            context.emit(
                FallbackUsed(context.turn, failed, name, f"{type(error).__name__}: {error}")
            )
            model = self.models[index] if self.models is not None else request.model
            try:
                return await next(attrs.evolve(request, provider=provider, model=model))
            except AgentError:
                raise
            except Exception as exc:
                if not self.retry_on(exc):
                    raise
                error, failed = exc, name
        raise error
