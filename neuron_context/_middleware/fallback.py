"""Falling back to other models when a model call fails: ModelFallbackMiddleware.

It never retries an :class:`AgentError` (a limit must stop the run) nor swallows
cancellation. Waits use :func:`anyio.sleep`, so a cancelled run stops waiting at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs

from .._errors import AgentError, ConfigurationError, described
from .._run.events import FallbackUsed
from .._validators import callable_, require_sequence_of
from ..providers._base import Provider
from .retry import any_error
from .types import (
    AgentMiddleware,
    ModelHandler,
    ModelRequest,
    ModelResponse,
)

__all__ = ["ModelFallbackMiddleware"]


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
    retry_on: Callable[[Exception], bool] = attrs.field(
        default=any_error, kw_only=True, validator=callable_()
    )
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
            context.emit(FallbackUsed(context.turn, failed, name, described(error)))
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
