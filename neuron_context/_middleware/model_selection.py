"""Dynamic model selection: pick the provider and model for each call from the request.

The LangChain-middleware README this project started from sent a request to a
multimodal model while it held images, to a remote long-context model when it was
large, and to a cheap local model otherwise. Routing per call pays off only together
with the strategies that take images and bulk out of the history
(:class:`~neuron_context.StripProcessedImagesStrategy` in a
:class:`~neuron_context.ContextEditingMiddleware`). The router works in
``wrap_model_call``, which runs after every ``before_model`` hook: it sees the request as
it will be sent — edited, summarized — wherever it is registered, as LangChain's
``wrap_model_call`` model selection does.

The rules, in order (the first that applies wins): the user's own ``rules``; images in
the request (also inside tool results) → ``multimodal``; the request, counted as the
provider receives it (messages, system prompt, tools), above ``long_context_tokens`` →
``long_context``; else ``default``. Images come first because a text-only model cannot
take them at any size. Each choice is logged and reported as a :class:`ModelRouted`
event, so a run's events show which model answered which turn and why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import attrs

from .._errors import ConfigurationError, show
from .._log import logger
from .._messages.content import Image, ToolResult
from .._messages.message import Message
from .._run.events import ModelRouted
from .._run.events import RouteReason as Reason
from .._validators import instance_of, non_negative_int, optional, string
from ..providers._base import Provider
from .types import AgentMiddleware, ModelHandler, ModelRequest, ModelResponse

__all__ = ["DynamicModelSelectionMiddleware", "ModelRoute", "ModelRouted", "count_images"]


@attrs.frozen
class ModelRoute:
    """Where a request goes: a provider, a model, or both (``None``: keep the agent's).

    Examples:
        >>> vision = ModelRoute("vision", model="gpt-4o")
    """

    name: str = attrs.field(validator=string(nonempty=True))
    """The route's name, as logs and events show it."""
    provider: Provider | None = attrs.field(
        default=None,
        kw_only=True,
        validator=optional(instance_of(Provider, "a Provider")),
        repr=False,
    )
    """The provider to ask (``None``: the agent's)."""
    model: str | None = attrs.field(default=None, kw_only=True, validator=optional(string()))
    """The model to ask (``None``: the request's)."""


def count_images(messages: Sequence[Message]) -> int:
    """The images in ``messages``, those inside tool results included."""
    found = 0
    for message in messages:
        for block in message.content:
            if isinstance(block, Image):
                found += 1
            elif isinstance(block, ToolResult):
                found += sum(isinstance(item, Image) for item in block.content)
    return found


def _to_rules(
    value: Iterable[Callable[[ModelRequest], ModelRoute | None]],
) -> tuple[Callable[[ModelRequest], ModelRoute | None], ...]:
    rules = tuple(value)
    for rule in rules:
        if not callable(rule):
            msg = f"DynamicModelSelectionMiddleware.rules must hold callables, got {show(rule)}"
            raise ConfigurationError(msg)
    return rules


@attrs.define
class DynamicModelSelectionMiddleware(AgentMiddleware):
    """Routes each model call: images → ``multimodal``, large → ``long_context``, else
    ``default`` (a route left ``None`` is skipped; ``default=None`` keeps the agent's).

    Examples:
        >>> router = DynamicModelSelectionMiddleware(
        ...     default=ModelRoute("local", model="small"),
        ...     multimodal=ModelRoute("vision", model="vision-large"),
        ...     long_context=ModelRoute("remote", model="long-1m"),
        ...     long_context_tokens=100_000,
        ... )
    """

    default: ModelRoute | None = attrs.field(
        default=None, kw_only=True, validator=optional(instance_of(ModelRoute, "a ModelRoute"))
    )
    """Where the other requests go (``None``: the agent's provider and model)."""
    multimodal: ModelRoute | None = attrs.field(
        default=None, kw_only=True, validator=optional(instance_of(ModelRoute, "a ModelRoute"))
    )
    """Where a request holding images goes."""
    long_context: ModelRoute | None = attrs.field(
        default=None, kw_only=True, validator=optional(instance_of(ModelRoute, "a ModelRoute"))
    )
    """Where a request above ``long_context_tokens`` goes."""
    long_context_tokens: int = attrs.field(
        default=100_000, kw_only=True, validator=non_negative_int()
    )
    """The size (tokens, as the run's counter measures the request) above which a
    request is long."""
    rules: tuple[Callable[[ModelRequest], ModelRoute | None], ...] = attrs.field(
        default=(), kw_only=True, converter=_to_rules
    )
    """Your own rules, tried first, in order: each returns a route or ``None``."""

    def choose(self, request: ModelRequest) -> tuple[ModelRoute | None, Reason, int, int]:
        """The route for ``request``, the rule that chose it, its tokens and images."""
        context = request.context
        tokens = context.count_request(request.messages, request.system_prompt, request.tools)
        images = count_images(request.messages)
        for rule in self.rules:
            chosen = rule(request)
            if chosen is not None:
                return chosen, "rule", tokens, images
        if images and self.multimodal is not None:
            return self.multimodal, "images", tokens, images
        if tokens > self.long_context_tokens and self.long_context is not None:
            return self.long_context, "long_context", tokens, images
        return self.default, "default", tokens, images

    async def wrap_model_call(self, request: ModelRequest, next: ModelHandler) -> ModelResponse:
        """Send the call to the chosen route's provider and model (the request handed in
        is left as it is; ``next`` gets a routed copy)."""
        route, reason, tokens, images = self.choose(request)
        if route is not None and (route.provider is not None or route.model is not None):
            request = attrs.evolve(
                request,
                provider=route.provider if route.provider is not None else request.provider,
                model=route.model if route.model is not None else request.model,
            )
        name = route.name if route is not None else "agent"
        provider = type(request.provider).__name__ if request.provider is not None else "agent"
        logger.info(
            "DynamicModelSelectionMiddleware: route %s (%s): %s %s, %d tokens, %d images",
            name,
            reason,
            provider,
            request.model,
            tokens,
            images,
            extra={
                "route": name,
                "reason": reason,
                "provider": provider,
                "model": request.model,
                "tokens": tokens,
                "images": images,
            },
        )
        context = request.context
        event = ModelRouted(context.turn, name, reason, provider, request.model, tokens, images)
        context.emit(event)
        return await next(request)
