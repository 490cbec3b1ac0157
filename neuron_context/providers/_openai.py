"""``OpenAIProvider``: Chat Completions over the official ``openai`` SDK."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal, TypeAlias

from .._errors import ConfigurationError, ProviderError, show
from .._log import logger
from .._messages.content import JSON
from ..formats import from_openai, to_openai, tools_to_openai
from ._base import CompletionRequest, CompletionResponse, StopReason, TokenUsage
from ._sdk import SDKProvider, count, reported

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIProvider"]

MaxTokensParam: TypeAlias = Literal["max_tokens", "max_completion_tokens"]

_NAME = "OpenAI"
_OPENAI_HOST = "api.openai.com"
_FINISH: Mapping[str, StopReason] = {
    "stop": StopReason.END_TURN,
    "length": StopReason.MAX_TOKENS,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
}


class OpenAIProvider(SDKProvider["openai.AsyncOpenAI"]):
    """A :class:`~neuron_context.Provider` over OpenAI Chat Completions.

    It works with any server that speaks Chat Completions (vLLM, Ollama, llama.cpp
    server, LM Studio, ...) through ``base_url``. The conversation is rendered with
    :func:`neuron_context.formats.to_openai` (the request's ``system`` first) and the
    reply read back with :func:`~neuron_context.formats.from_openai`; tool definitions
    are sent as :func:`~neuron_context.formats.tools_to_openai` renders them.

    ``finish_reason`` maps to :class:`~neuron_context.StopReason`: ``stop`` is
    ``end_turn``, ``length`` is ``max_tokens``, ``tool_calls`` is ``tool_use``; a
    reply that holds tool calls is ``tool_use`` whatever the server says (some
    servers answer ``stop``), unless it was cut off. Usage is ``prompt_tokens`` /
    ``completion_tokens``. A reply the model refused (``refusal``) or the server
    filtered (``content_filter``) raises a non-retryable
    :class:`~neuron_context.errors.ProviderError`: it is not an answer, and must never be kept
    as one (for instance as a summary).

    Errors become :class:`~neuron_context.errors.ProviderError` with the SDK's exception
    chained: HTTP 408, 409, 429 and 5xx, connection failures and timeouts are
    ``retryable`` (with ``retry_after`` from the ``retry-after`` header); other
    statuses and unreadable replies are not.

    **Retries.** The SDK retries on its own (``max_retries``, 2 by default) before an
    error reaches this provider, and :class:`~neuron_context.SummarizationStrategy`
    retries retryable errors again: the two multiply. For summaries, build the
    provider with ``max_retries=0`` and let the strategy retry.

    Args:
        model: the model used when the request names none.
        client: an ``openai.AsyncOpenAI`` (or ``AsyncAzureOpenAI``) to use; it stays
            yours, :meth:`aclose` leaves it open. Without it one is built from
            ``client_kwargs`` and closed by :meth:`aclose`.
        max_tokens_param: the field that carries the request's ``max_tokens``.
            OpenAI's own API wants ``max_completion_tokens`` (its reasoning models
            reject ``max_tokens``), while many OpenAI-compatible servers only know
            ``max_tokens`` and would silently ignore the other. By default it is
            ``max_completion_tokens`` when the client talks to ``api.openai.com`` or is
            an ``AsyncAzureOpenAI``, and ``max_tokens`` otherwise.
        request_params: extra fields sent with every request (``top_p``,
            ``reasoning_effort``, ``seed``, ...); the request's own ``temperature``
            wins over one given here. ``model``, ``messages``, ``tools``, ``stream``
            and the max-tokens fields are set from the request and may not appear.
        **client_kwargs: passed to ``openai.AsyncOpenAI`` (``api_key``, ``base_url``,
            ``timeout``, ``max_retries``, ``http_client``, ...).

    Raises:
        ConfigurationError: the ``openai`` package is not installed (install the
            ``openai`` extra), both ``client`` and ``client_kwargs`` were
            given, a value is invalid, or the SDK could not build a client; without an
            ``api_key`` and ``OPENAI_API_KEY`` the message names ``OPENAI_API_KEY``.
            A ``client`` passed in is not checked.

    Examples:
        ```python
        # OPENAI_API_KEY from the environment; the strategy does the retrying.
        provider = OpenAIProvider("gpt-4.1-mini", max_retries=0)
        # A local model behind an OpenAI-compatible server (here Ollama).
        local = OpenAIProvider("qwen3:8b", base_url="http://localhost:11434/v1", api_key="-")
        async with provider:  # closes the client it built
            response = await provider.complete(CompletionRequest([Message.user("hi")]))
        ```
    """

    provider_name = "openai"
    _NAME = _NAME
    _SDK = "openai"
    _CLIENT = "AsyncOpenAI"
    _BASE_ERROR = "OpenAIError"
    _KEY_ENV = "OPENAI_API_KEY"
    _RESERVED = frozenset(
        {"model", "messages", "tools", "stream", "max_tokens", "max_completion_tokens"}
    )

    @classmethod
    def _has_credentials(cls, client: openai.AsyncOpenAI) -> bool:
        # The SDK raises without a key, but before openai 1.7x an empty api_key="" built
        # a client that failed only at the first call.
        return bool(getattr(client, "api_key", None))

    def __init__(
        self,
        model: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        max_tokens_param: MaxTokensParam | None = None,
        request_params: Mapping[str, JSON] | None = None,
        **client_kwargs: object,
    ) -> None:
        if max_tokens_param not in (None, "max_tokens", "max_completion_tokens"):
            msg = (
                "OpenAIProvider.max_tokens_param must be 'max_tokens' or "
                f"'max_completion_tokens', got {show(max_tokens_param)}"
            )
            raise ConfigurationError(msg)
        super().__init__(
            model, client=client, request_params=request_params, client_kwargs=client_kwargs
        )
        if max_tokens_param is None:
            official = (
                isinstance(self._client, self._sdk.AsyncAzureOpenAI)
                or _host(self._client) == _OPENAI_HOST
            )
            max_tokens_param = "max_completion_tokens" if official else "max_tokens"
        self._max_tokens_param: MaxTokensParam = max_tokens_param

    @property
    def max_tokens_param(self) -> MaxTokensParam:
        """The field that carries ``max_tokens``."""
        return self._max_tokens_param

    def request_body(self, request: CompletionRequest) -> dict[str, JSON]:
        """The JSON body :meth:`complete` sends for ``request``.

        Raises:
            ConfigurationError: a message cannot be expressed in Chat Completions.
        """
        self._check_request(request, "request_body")
        body: dict[str, JSON] = {
            "model": request.model or self._model,
            "messages": list(to_openai(request.messages, system=request.system)),
        }
        if request.tools:
            body["tools"] = list(tools_to_openai(request.tools))
        if request.max_tokens is not None:
            body[self._max_tokens_param] = request.max_tokens
        body.update(self._params)
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    def _endpoint(self) -> Callable[..., object]:
        return self._client.chat.completions.with_raw_response.create

    def _read(self, data: Mapping[str, object]) -> CompletionResponse:
        return _read_completion(data)


def _host(client: openai.AsyncOpenAI) -> str:
    return str(getattr(client.base_url, "host", "") or "")


def _read_completion(data: Mapping[str, object]) -> CompletionResponse:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        msg = "choices must be a non-empty list of objects"
        raise ConfigurationError(msg)
    choice: Mapping[str, object] = choices[0]
    raw = choice.get("message")
    if not isinstance(raw, Mapping):
        msg = "choices[0].message must be an object"
        raise ConfigurationError(msg)
    refusal = raw.get("refusal")
    finish = choice.get("finish_reason")
    if isinstance(refusal, str) and refusal:
        msg = f"{_NAME} did not answer: the model refused: {refusal}"
        raise ProviderError(msg, retryable=False)
    if finish == "content_filter":
        msg = f"{_NAME} did not answer: the content filter withheld the reply (content_filter)"
        raise ProviderError(msg, retryable=False)
    (message,) = from_openai([{**raw, "role": "assistant"}])
    if message.tool_uses and finish != "length":
        stop_reason = StopReason.TOOL_USE
    elif isinstance(finish, str) and finish in _FINISH:
        stop_reason = _FINISH[finish]
    else:
        if finish is not None:
            logger.debug("OpenAIProvider: unknown finish_reason %r read as end_turn", finish)
        stop_reason = StopReason.END_TURN
    return CompletionResponse(
        message,
        stop_reason=stop_reason,
        usage=_usage(data.get("usage")),
        finish_reason=reported(finish),
        model=reported(data.get("model")),
        response_id=reported(data.get("id")),
    )


def _usage(raw: object) -> TokenUsage | None:
    if not isinstance(raw, Mapping):
        return None
    prompt, completion = count(raw.get("prompt_tokens")), count(raw.get("completion_tokens"))
    if prompt is None or completion is None:
        return None
    return TokenUsage(input_tokens=prompt, output_tokens=completion)
