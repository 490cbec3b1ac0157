"""``AnthropicProvider``: the Messages API over the official ``anthropic`` SDK."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from .._errors import ConfigurationError, ProviderError
from .._log import logger
from .._messages.content import JSON
from .._validators import require_int
from ..formats import from_anthropic, to_anthropic, tools_to_anthropic
from ._base import CompletionRequest, CompletionResponse, StopReason, TokenUsage
from ._sdk import SDKProvider, count, reported

if TYPE_CHECKING:
    import anthropic

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicProvider"]

DEFAULT_MAX_TOKENS = 4096
"""The ``max_tokens`` sent when the request has none (the Messages API requires it)."""

_NAME = "Anthropic"
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


class AnthropicProvider(SDKProvider["anthropic.AsyncAnthropic"]):
    """A :class:`~neuron_context.Provider` over the Anthropic Messages API.

    The conversation is rendered with :func:`neuron_context.formats.to_anthropic` (the
    request's ``system`` before the leading system messages, in the top-level
    ``system``; consecutive same-role turns merged; thinking blocks sent back with their
    signatures) and the reply read back with
    :func:`~neuron_context.formats.from_anthropic`. Tool definitions are sent as
    :func:`~neuron_context.formats.tools_to_anthropic` renders them. The API requires
    ``max_tokens``: a request without one sends ``default_max_tokens``.

    ``stop_reason`` ``end_turn``, ``tool_use``, ``max_tokens`` and ``stop_sequence``
    map to the :class:`~neuron_context.StopReason` of the same name;
    ``model_context_window_exceeded`` is ``max_tokens`` (the reply was cut off).
    ``refusal`` and ``pause_turn`` raise a non-retryable
    :class:`~neuron_context.errors.ProviderError`: such a reply is not an answer and must
    never be kept as one (for instance as a summary). Usage: ``input_tokens`` is the
    whole prompt, that is the API's ``input_tokens`` plus
    ``cache_creation_input_tokens`` and ``cache_read_input_tokens`` (the API counts
    cached tokens apart), so it compares with OpenAI's ``prompt_tokens``;
    ``output_tokens`` is the API's.

    Errors become :class:`~neuron_context.errors.ProviderError` with the SDK's exception
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
        ConfigurationError: the ``anthropic`` package is not installed (install the
            ``anthropic`` extra), both ``client`` and ``client_kwargs`` were
            given, a value is invalid, or the client built has no credentials (no
            ``api_key``, no ``ANTHROPIC_API_KEY`` or ``ANTHROPIC_AUTH_TOKEN``, no
            profile): the message names ``ANTHROPIC_API_KEY``. A ``client`` passed in
            is not checked.

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

    provider_name = "anthropic"
    _NAME = _NAME
    _SDK = "anthropic"
    _CLIENT = "AsyncAnthropic"
    _BASE_ERROR = "AnthropicError"
    _RESERVED = frozenset({"model", "messages", "system", "tools", "stream", "max_tokens"})
    _KEY_ENV = "ANTHROPIC_API_KEY"

    def __init__(
        self,
        model: str,
        *,
        client: anthropic.AsyncAnthropic | None = None,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        request_params: Mapping[str, JSON] | None = None,
        **client_kwargs: object,
    ) -> None:
        require_int(default_max_tokens, "AnthropicProvider.default_max_tokens", minimum=1)
        super().__init__(
            model, client=client, request_params=request_params, client_kwargs=client_kwargs
        )
        self._default_max_tokens = default_max_tokens

    @classmethod
    def _has_credentials(cls, client: anthropic.AsyncAnthropic) -> bool:
        # An API key, a bearer token (ANTHROPIC_AUTH_TOKEN), or credentials the SDK
        # resolved itself (a profile, workload identity federation).
        return any(getattr(client, name, None) for name in ("api_key", "auth_token", "credentials"))

    @property
    def default_max_tokens(self) -> int:
        """``max_tokens`` for requests that set none."""
        return self._default_max_tokens

    def request_body(self, request: CompletionRequest) -> dict[str, JSON]:
        """The JSON body :meth:`complete` sends for ``request``.

        Raises:
            ConfigurationError: a message cannot be expressed in the Messages API.
        """
        self._check_request(request, "request_body")
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
            body["tools"] = list(tools_to_anthropic(request.tools))
        body.update(self._params)
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    def _endpoint(self) -> Callable[..., object]:
        return self._client.messages.with_raw_response.create

    def _read(self, data: Mapping[str, object]) -> CompletionResponse:
        return _read_message(data)


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
    return CompletionResponse(
        message,
        stop_reason=stop_reason,
        usage=_usage(data.get("usage")),
        finish_reason=reported(stop),
        model=reported(data.get("model")),
        response_id=reported(data.get("id")),
    )


def _usage(raw: object) -> TokenUsage | None:
    if not isinstance(raw, Mapping):
        return None
    uncached, output = count(raw.get("input_tokens")), count(raw.get("output_tokens"))
    if uncached is None or output is None:
        return None
    written = count(raw.get("cache_creation_input_tokens")) or 0
    read = count(raw.get("cache_read_input_tokens")) or 0
    return TokenUsage(input_tokens=uncached + written + read, output_tokens=output)
