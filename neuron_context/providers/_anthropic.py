"""``AnthropicProvider``: the Messages API over the official ``anthropic`` SDK."""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, cast

from .._errors import ConfigurationError, ProviderError
from .._messages.content import JSON
from .._messages.message import ToolDefinition
from ..formats import from_anthropic, to_anthropic
from ._base import CompletionRequest, CompletionResponse, Provider, StopReason, TokenUsage
from ._sdk import (
    count,
    import_sdk,
    keyword_names,
    malformed_response,
    request_params_copy,
    split_arguments,
    status_error,
    transport_error,
)

if TYPE_CHECKING:
    import anthropic

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicProvider"]

from .._log import logger

DEFAULT_MAX_TOKENS = 4096
"""The ``max_tokens`` sent when the request has none (the Messages API requires it)."""

_NAME = "Anthropic"
_RESERVED = frozenset({"model", "messages", "system", "tools", "stream", "max_tokens"})
_STOP: Mapping[str, StopReason] = {
    "end_turn": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "stop_sequence": StopReason.STOP_SEQUENCE,
    # The context window filled up mid-reply: the reply is cut off, like max_tokens.
    "model_context_window_exceeded": StopReason.MAX_TOKENS,
}
_DECLINED: Mapping[str, str] = {
    "refusal": "the model refused to answer (stop_reason 'refusal')",
    "pause_turn": (
        "the model paused a long-running turn (stop_reason 'pause_turn'); server tools "
        "are not supported by this provider"
    ),
}


class AnthropicProvider(Provider):
    """A :class:`~neuron_context.Provider` over the Anthropic Messages API.

    The conversation is rendered with :func:`neuron_context.formats.to_anthropic` (the
    request's ``system`` before the leading system messages, in the top-level
    ``system``; consecutive same-role turns merged; thinking blocks sent back with their
    signatures) and the reply read back with
    :func:`~neuron_context.formats.from_anthropic`. Tool definitions are sent as
    ``{"name", "description", "input_schema"}``. The API requires ``max_tokens``: a
    request without one sends ``default_max_tokens``.

    ``stop_reason`` ``end_turn``, ``tool_use``, ``max_tokens`` and ``stop_sequence``
    map to the :class:`~neuron_context.StopReason` of the same name;
    ``model_context_window_exceeded`` is ``max_tokens`` (the reply was cut off).
    ``refusal`` and ``pause_turn`` raise a non-retryable
    :class:`~neuron_context.ProviderError`: such a reply is not an answer and must
    never be kept as one (for instance as a summary). Usage: ``input_tokens`` is the
    whole prompt, that is the API's ``input_tokens`` plus
    ``cache_creation_input_tokens`` and ``cache_read_input_tokens`` (the API counts
    cached tokens apart), so it compares with OpenAI's ``prompt_tokens``;
    ``output_tokens`` is the API's.

    Errors become :class:`~neuron_context.ProviderError` with the SDK's exception
    chained: HTTP 408, 409, 429 and 5xx (``overloaded`` is 529), connection failures
    and timeouts are ``retryable`` (with ``retry_after`` from ``retry-after-ms`` or
    ``retry-after``); other statuses and unreadable replies are not.

    **Retries.** The SDK retries on its own (``max_retries``, 2 by default) before an
    error reaches this provider, and :class:`~neuron_context.SummarizationStrategy`
    retries retryable errors again: the two multiply. For summaries, build the
    provider with ``max_retries=0`` and let the strategy retry.

    Args:
        model: the model used when the request names none.
        client: an ``anthropic.AsyncAnthropic`` to use; it stays yours,
            :meth:`aclose` leaves it open. Without it one is built from
            ``client_kwargs`` and closed by :meth:`aclose`.
        default_max_tokens: ``max_tokens`` for requests that set none.
        request_params: extra fields sent with every request (``thinking``,
            ``top_p``, ``stop_sequences``, ``metadata``, ...); the request's own
            ``temperature`` wins over one given here. ``model``, ``messages``,
            ``system``, ``tools``, ``stream`` and ``max_tokens`` come from the request
            and may not appear.
        **client_kwargs: passed to ``anthropic.AsyncAnthropic`` (``api_key``,
            ``base_url``, ``timeout``, ``max_retries``, ``http_client``, ...).

    Raises:
        ConfigurationError: the ``anthropic`` package is not installed (install
            ``neuron-context[anthropic]``), both ``client`` and ``client_kwargs`` were
            given, or a value is invalid.

    Examples:
        ```python
        # ANTHROPIC_API_KEY from the environment; the strategy does the retrying.
        provider = AnthropicProvider("claude-haiku-4-5", max_retries=0)
        # Extended thinking: extra request fields go in request_params.
        thinker = AnthropicProvider(
            "claude-sonnet-4-5",
            request_params={"thinking": {"type": "enabled", "budget_tokens": 2048}},
        )
        async with provider:  # closes the client it built
            response = await provider.complete(CompletionRequest([Message.user("hi")]))
        ```
    """

    def __init__(
        self,
        model: str,
        *,
        client: anthropic.AsyncAnthropic | None = None,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        request_params: Mapping[str, JSON] | None = None,
        **client_kwargs: object,
    ) -> None:
        if not isinstance(model, str) or not model:
            msg = f"AnthropicProvider.model must be a non-empty str, got {model!r}"
            raise ConfigurationError(msg)
        if (
            isinstance(default_max_tokens, bool)
            or not isinstance(default_max_tokens, int)
            or default_max_tokens < 1
        ):
            msg = (
                "AnthropicProvider.default_max_tokens must be a positive int, "
                f"got {default_max_tokens!r}"
            )
            raise ConfigurationError(msg)
        params = request_params_copy("AnthropicProvider", request_params, _RESERVED)
        sdk = import_sdk("anthropic", "anthropic")
        owns_client = client is None
        if client is None:
            factory = cast("Callable[..., anthropic.AsyncAnthropic]", sdk.AsyncAnthropic)
            try:
                client = factory(**client_kwargs)
            except sdk.AnthropicError as exc:
                msg = f"AnthropicProvider could not build an anthropic.AsyncAnthropic: {exc}"
                raise ConfigurationError(msg) from exc
        elif client_kwargs:
            msg = (
                "AnthropicProvider takes either client= or client keyword arguments, not "
                f"both (got {sorted(client_kwargs)})"
            )
            raise ConfigurationError(msg)
        self._sdk: ModuleType = sdk
        self._client = client
        self._owns_client = owns_client
        self._model = model
        self._default_max_tokens = default_max_tokens
        self._params = params
        self._known = keyword_names(client.messages.create)

    @property
    def model(self) -> str:
        """The model used when a request names none."""
        return self._model

    @property
    def client(self) -> anthropic.AsyncAnthropic:
        """The SDK client."""
        return self._client

    @property
    def default_max_tokens(self) -> int:
        """``max_tokens`` for requests that set none."""
        return self._default_max_tokens

    def __repr__(self) -> str:
        base_url = str(self._client.base_url)
        return f"AnthropicProvider(model={self._model!r}, base_url={base_url!r})"

    async def aclose(self) -> None:
        """Close the client if this provider built it (a given client is left open)."""
        if self._owns_client:
            await self._client.close()

    async def __aenter__(self) -> AnthropicProvider:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- request ----------------------------------------------------------------------

    def request_body(self, request: CompletionRequest) -> dict[str, JSON]:
        """The JSON body :meth:`complete` sends for ``request``.

        Raises:
            ConfigurationError: a message cannot be expressed in the Messages API.
        """
        system, messages = to_anthropic(request.messages, system=request.system)
        rendered: list[JSON] = [*messages]
        body: dict[str, JSON] = {
            "model": request.model or self._model,
            "max_tokens": request.max_tokens
            if request.max_tokens is not None
            else self._default_max_tokens,
            "messages": rendered,
        }
        if system is not None:
            body["system"] = system
        if request.tools:
            body["tools"] = [_tool(tool) for tool in request.tools]
        body.update(self._params)
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Send ``request`` to the Messages API and read the reply.

        Raises:
            ProviderError: the call failed or the reply cannot be used (see the class).
            ConfigurationError: a message cannot be expressed in the Messages API.
        """
        create = cast(
            "Callable[..., Awaitable[anthropic.types.Message]]", self._client.messages.create
        )
        arguments, extra = split_arguments(self.request_body(request), self._known)
        sdk = self._sdk
        try:
            reply = await create(**arguments, extra_body=extra or None)
        except sdk.APIStatusError as exc:
            raise status_error(_NAME, exc.status_code, exc.message, exc.response.headers) from exc
        except sdk.APITimeoutError as exc:
            raise transport_error(_NAME, "the request timed out") from exc
        except sdk.APIConnectionError as exc:
            raise transport_error(_NAME, f"could not connect: {exc}") from exc
        except sdk.APIError as exc:
            raise malformed_response(_NAME, exc) from exc
        except json.JSONDecodeError as exc:
            raise malformed_response(_NAME, exc) from exc
        except ValueError as exc:  # the SDK refused the call before sending it
            msg = f"the anthropic SDK refused the request: {exc}"
            raise ProviderError(msg, retryable=False) from exc
        data = reply.to_dict(mode="json", warnings=False)
        try:
            return _read_message(data)
        except ConfigurationError as exc:
            raise malformed_response(_NAME, exc) from exc


def _tool(tool: ToolDefinition) -> JSON:
    schema: dict[str, JSON] = copy.deepcopy(dict(tool.input_schema))
    return {"name": tool.name, "description": tool.description, "input_schema": schema}


def _read_message(data: Mapping[str, object]) -> CompletionResponse:
    stop = data.get("stop_reason")
    if isinstance(stop, str) and stop in _DECLINED:
        msg = f"{_NAME} did not answer: {_DECLINED[stop]}"
        raise ProviderError(msg, retryable=False)
    content = data.get("content")
    if not isinstance(content, list):
        msg = "content must be a list of blocks"
        raise ConfigurationError(msg)
    (message,) = from_anthropic([{"role": "assistant", "content": content}])
    if isinstance(stop, str) and stop in _STOP:
        stop_reason = _STOP[stop]
    else:
        if stop is not None:
            logger.debug("AnthropicProvider: unknown stop_reason %r read by content", stop)
        stop_reason = StopReason.TOOL_USE if message.tool_uses else StopReason.END_TURN
    return CompletionResponse(message, stop_reason=stop_reason, usage=_usage(data.get("usage")))


def _usage(raw: object) -> TokenUsage | None:
    if not isinstance(raw, Mapping):
        return None
    uncached, output = count(raw.get("input_tokens")), count(raw.get("output_tokens"))
    if uncached is None or output is None:
        return None
    written = count(raw.get("cache_creation_input_tokens")) or 0
    read = count(raw.get("cache_read_input_tokens")) or 0
    return TokenUsage(input_tokens=uncached + written + read, output_tokens=output)
