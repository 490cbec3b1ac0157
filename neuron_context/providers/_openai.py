"""``OpenAIProvider``: Chat Completions over the official ``openai`` SDK."""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Literal, TypeAlias, cast

from .._errors import ConfigurationError, ProviderError
from .._messages.content import JSON
from .._messages.message import ToolDefinition
from ..formats import from_openai, to_openai
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
    import openai

__all__ = ["OpenAIProvider"]

from .._log import logger

MaxTokensParam: TypeAlias = Literal["max_tokens", "max_completion_tokens"]

_NAME = "OpenAI"
_OPENAI_HOST = "api.openai.com"
_RESERVED = frozenset(
    {"model", "messages", "tools", "stream", "max_tokens", "max_completion_tokens"}
)
_FINISH: Mapping[str, StopReason] = {
    "stop": StopReason.END_TURN,
    "length": StopReason.MAX_TOKENS,
    "tool_calls": StopReason.TOOL_USE,
    "function_call": StopReason.TOOL_USE,
}


class OpenAIProvider(Provider):
    """A :class:`~neuron_context.Provider` over OpenAI Chat Completions.

    It works with any server that speaks Chat Completions (vLLM, Ollama, llama.cpp
    server, LM Studio, ...) through ``base_url``. The conversation is rendered with
    :func:`neuron_context.formats.to_openai` (the request's ``system`` first) and the
    reply read back with :func:`~neuron_context.formats.from_openai`; tool definitions
    are sent as ``{"type": "function", "function": {"name", "description",
    "parameters"}}``.

    ``finish_reason`` maps to :class:`~neuron_context.StopReason`: ``stop`` is
    ``end_turn``, ``length`` is ``max_tokens``, ``tool_calls`` is ``tool_use``; a
    reply that holds tool calls is ``tool_use`` whatever the server says (some
    servers answer ``stop``), unless it was cut off. Usage is ``prompt_tokens`` /
    ``completion_tokens``. A reply the model refused (``refusal``) or the server
    filtered (``content_filter``) raises a non-retryable
    :class:`~neuron_context.ProviderError`: it is not an answer, and must never be kept
    as one (for instance as a summary).

    Errors become :class:`~neuron_context.ProviderError` with the SDK's exception
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
        ConfigurationError: the ``openai`` package is not installed (install
            ``neuron-context[openai]``), both ``client`` and ``client_kwargs`` were
            given, a value is invalid, or the SDK could not build a client (no API key).

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

    def __init__(
        self,
        model: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        max_tokens_param: MaxTokensParam | None = None,
        request_params: Mapping[str, JSON] | None = None,
        **client_kwargs: object,
    ) -> None:
        if not isinstance(model, str) or not model:
            msg = f"OpenAIProvider.model must be a non-empty str, got {model!r}"
            raise ConfigurationError(msg)
        if max_tokens_param not in (None, "max_tokens", "max_completion_tokens"):
            msg = (
                "OpenAIProvider.max_tokens_param must be 'max_tokens' or "
                f"'max_completion_tokens', got {max_tokens_param!r}"
            )
            raise ConfigurationError(msg)
        params = request_params_copy("OpenAIProvider", request_params, _RESERVED)
        sdk = import_sdk("openai", "openai")
        owns_client = client is None
        if client is None:
            factory = cast("Callable[..., openai.AsyncOpenAI]", sdk.AsyncOpenAI)
            try:
                client = factory(**client_kwargs)
            except sdk.OpenAIError as exc:
                msg = f"OpenAIProvider could not build an openai.AsyncOpenAI client: {exc}"
                raise ConfigurationError(msg) from exc
        elif client_kwargs:
            msg = (
                "OpenAIProvider takes either client= or client keyword arguments, not both "
                f"(got {sorted(client_kwargs)})"
            )
            raise ConfigurationError(msg)
        if max_tokens_param is None:
            official = isinstance(client, sdk.AsyncAzureOpenAI) or _host(client) == _OPENAI_HOST
            max_tokens_param = "max_completion_tokens" if official else "max_tokens"
        self._sdk: ModuleType = sdk
        self._client = client
        self._owns_client = owns_client
        self._model = model
        self._max_tokens_param: MaxTokensParam = max_tokens_param
        self._params = params
        self._known = keyword_names(client.chat.completions.create)

    @property
    def model(self) -> str:
        """The model used when a request names none."""
        return self._model

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The SDK client."""
        return self._client

    @property
    def max_tokens_param(self) -> MaxTokensParam:
        """The field that carries ``max_tokens``."""
        return self._max_tokens_param

    def __repr__(self) -> str:
        return f"OpenAIProvider(model={self._model!r}, base_url={str(self._client.base_url)!r})"

    async def aclose(self) -> None:
        """Close the client if this provider built it (a given client is left open)."""
        if self._owns_client:
            await self._client.close()

    async def __aenter__(self) -> OpenAIProvider:
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
            ConfigurationError: a message cannot be expressed in Chat Completions.
        """
        body: dict[str, JSON] = {
            "model": request.model or self._model,
            "messages": list(to_openai(request.messages, system=request.system)),
        }
        if request.tools:
            body["tools"] = [_tool(tool) for tool in request.tools]
        if request.max_tokens is not None:
            body[self._max_tokens_param] = request.max_tokens
        body.update(self._params)
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Send ``request`` to Chat Completions and read the first choice.

        Raises:
            ProviderError: the call failed or the reply cannot be used (see the class).
            ConfigurationError: a message cannot be expressed in Chat Completions.
        """
        create = cast(
            "Callable[..., Awaitable[openai.types.chat.ChatCompletion]]",
            self._client.chat.completions.create,
        )
        arguments, extra = split_arguments(self.request_body(request), self._known)
        sdk = self._sdk
        try:
            completion = await create(**arguments, extra_body=extra or None)
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
            msg = f"the openai SDK refused the request: {exc}"
            raise ProviderError(msg, retryable=False) from exc
        data = completion.to_dict(mode="json", warnings=False)
        try:
            return _read_completion(data)
        except ConfigurationError as exc:
            raise malformed_response(_NAME, exc) from exc


def _host(client: openai.AsyncOpenAI) -> str:
    return str(getattr(client.base_url, "host", "") or "")


def _tool(tool: ToolDefinition) -> JSON:
    parameters: dict[str, JSON] = copy.deepcopy(dict(tool.input_schema))
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": parameters,
        },
    }


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
    return CompletionResponse(message, stop_reason=stop_reason, usage=_usage(data.get("usage")))


def _usage(raw: object) -> TokenUsage | None:
    if not isinstance(raw, Mapping):
        return None
    prompt, completion = count(raw.get("prompt_tokens")), count(raw.get("completion_tokens"))
    if prompt is None or completion is None:
        return None
    return TokenUsage(input_tokens=prompt, output_tokens=completion)
