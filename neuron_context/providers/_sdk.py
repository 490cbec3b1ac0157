"""What the SDK providers share: the client they own, the call, and the error ladder.

:class:`SDKProvider` is the one base of :class:`~neuron_context.providers.OpenAIProvider`
and :class:`~neuron_context.providers.AnthropicProvider`. It imports the SDK lazily (a
missing one names the extra that installs it), builds a client from keyword arguments or
takes the caller's (and closes only the one it built), sends the JSON body a subclass
renders, and turns every failure into a :class:`~neuron_context.errors.ProviderError`.

Why the reply is read from the raw HTTP body: the SDKs parse a 200 reply into their own
models leniently, so a body of ``[]``, ``null``, a string or plain text came back as
something that was not a completion (and raised ``AttributeError`` later), and a body
nested a thousand levels deep raised ``RecursionError`` inside the SDK. Reading the raw
body with ``json.loads`` and checking it is an object keeps one path for every reply, and
every failure of :meth:`SDKProvider.complete` is a ``ProviderError``; our readers
(:mod:`neuron_context.formats`) then check each field.

Only the SDK's own exception types are caught. Each SDK wraps the errors of the HTTP
library it is built on (``httpx`` up to openai 2 and anthropic 1, ``httpx2`` since) in
its ``APIConnectionError`` and ``APITimeoutError``, and reads a non-streamed body before
it returns, so a provider needs nothing the SDK does not depend on.

A subclass keeps only what differs: the SDK's names, the endpoint, the request body and
how a reply is read.
"""

from __future__ import annotations

import abc
import copy
import importlib
import inspect
import json
import os
from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType, TracebackType
from typing import ClassVar, Generic, Protocol, Self, TypeVar, cast

from .._errors import ConfigurationError, ProviderError, show
from .._extras import install_hint
from .._messages.content import JSON
from .._validators import require_str
from ._base import CompletionRequest, CompletionResponse, Provider
from ._failures import malformed_response, status_error, transport_error

__all__ = [
    "SDKProvider",
    "count",
    "import_sdk",
    "keyword_names",
    "reported",
    "request_params_copy",
    "split_arguments",
]


class _Client(Protocol):
    """What :class:`SDKProvider` needs of an SDK client."""

    @property
    def base_url(self) -> object: ...

    async def close(self) -> None: ...


class _HTTPResponse(Protocol):
    """What :class:`SDKProvider` needs of the SDK's HTTP response (``httpx2.Response``)."""

    async def aread(self) -> bytes: ...


class _RawResponse(Protocol):
    """What :class:`SDKProvider` needs of an SDK's raw response (``with_raw_response``)."""

    @property
    def http_response(self) -> _HTTPResponse: ...


ClientT = TypeVar("ClientT", bound=_Client)


def count(value: object) -> int | None:
    """``value`` when it is a non-negative int (a token count), else ``None``."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


_REPORTED_MAX = 256
"""The longest model name, reply id or finish reason a reply is taken at its word for."""


def reported(value: object) -> str | None:
    """``value`` when it is a non-empty string of at most 256 characters (a model name,
    a reply's id, a finish reason as the API sent it), else ``None``."""
    if isinstance(value, str) and 0 < len(value) <= _REPORTED_MAX:
        return value
    return None


def import_sdk(name: str, extra: str) -> ModuleType:
    """Import the SDK ``name``, or say which extra installs it.

    Raises:
        ConfigurationError: the package is not installed.
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        msg = f"the {name!r} package is required by this provider: {install_hint(extra)}"
        raise ConfigurationError(msg) from exc


def request_params_copy(
    owner: str, params: Mapping[str, JSON] | None, reserved: frozenset[str]
) -> dict[str, JSON]:
    """A deep copy of a provider's ``request_params``, checked against ``reserved`` keys.

    Raises:
        ConfigurationError: ``params`` is not a mapping of str keys, or sets a key the
            provider fills from the request.
    """
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        msg = f"{owner}.request_params must be a mapping, got {type(params).__name__}"
        raise ConfigurationError(msg)
    for key in params:
        if not isinstance(key, str):
            msg = f"{owner}.request_params keys must be str, got {show(key)}"
            raise ConfigurationError(msg)
        if key in reserved:
            msg = f"{owner}.request_params may not set {show(key)}: it comes from the request"
            raise ConfigurationError(msg)
    return copy.deepcopy(dict(params))


_NOT_BODY = frozenset({"extra_body", "extra_headers", "extra_query", "timeout"})


def keyword_names(function: Callable[..., object]) -> frozenset[str]:
    """The body fields an SDK method (``create``) takes as keyword arguments."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - SDK methods have signatures
        return frozenset()
    kinds = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return frozenset(p.name for p in parameters if p.kind in kinds) - _NOT_BODY


def split_arguments(
    body: Mapping[str, JSON], known: frozenset[str]
) -> tuple[dict[str, JSON], dict[str, JSON]]:
    """``body`` split into the SDK method's own keyword arguments and ``extra_body``.

    SDK releases add and remove parameters (``temperature`` left the Anthropic SDK's
    ``create``); a field the installed SDK does not name is still sent, as
    ``extra_body``, so the JSON on the wire is ``body`` whatever the SDK version.
    """
    arguments = {key: value for key, value in body.items() if key in known}
    extra = {key: value for key, value in body.items() if key not in known}
    return arguments, extra


def _read_body(provider: str, content: bytes) -> Mapping[str, object]:
    """The JSON object of a 200 reply, or a non-retryable :class:`ProviderError`."""
    try:
        data = json.loads(content)
    except RecursionError:
        raise malformed_response(provider, "the JSON body is nested too deeply") from None
    except ValueError as exc:  # not JSON, or not UTF-8
        raise malformed_response(provider, exc) from exc
    if not isinstance(data, dict):
        kind = "null" if data is None else type(data).__name__
        raise malformed_response(provider, f"the body must be a JSON object, got {kind}")
    return data


class SDKProvider(Provider, Generic[ClientT]):
    """A :class:`~neuron_context.Provider` over an official SDK's async client.

    Subclasses set the class attributes naming their SDK and implement
    :meth:`request_body`, :meth:`_endpoint` and :meth:`_read`.
    """

    _NAME: ClassVar[str]
    """The API's name in error messages (``"OpenAI"``)."""
    _SDK: ClassVar[str]
    """The SDK's import name, which is also the extra that installs it."""
    _CLIENT: ClassVar[str]
    """The SDK's async client class (``"AsyncOpenAI"``)."""
    _BASE_ERROR: ClassVar[str]
    """The SDK's root exception, raised when a client cannot be built."""
    _RESERVED: ClassVar[frozenset[str]]
    """Body fields set from the request, which ``request_params`` may not set."""
    _KEY_ENV: ClassVar[str]
    """The environment variable the SDK reads the API key from (``"OPENAI_API_KEY"``)."""

    def __init__(
        self,
        model: str,
        *,
        client: ClientT | None,
        request_params: Mapping[str, JSON] | None,
        client_kwargs: Mapping[str, object],
    ) -> None:
        owner = type(self).__name__
        require_str(model, f"{owner}.model", nonempty=True)
        params = request_params_copy(owner, request_params, self._RESERVED)
        sdk = import_sdk(self._SDK, self._SDK)
        owns_client = client is None
        if client is None:
            factory = cast("Callable[..., ClientT]", getattr(sdk, self._CLIENT))
            try:
                client = factory(**client_kwargs)
            except getattr(sdk, self._BASE_ERROR) as exc:
                if _no_key(client_kwargs, self._KEY_ENV):
                    raise ConfigurationError(self._no_credentials()) from exc
                msg = f"{owner} could not build an {self._SDK}.{self._CLIENT} client: {exc}"
                raise ConfigurationError(msg) from exc
            if not self._has_credentials(client):
                raise ConfigurationError(self._no_credentials())
        elif client_kwargs:
            msg = (
                f"{owner} takes either client= or client keyword arguments, not both "
                f"(got {sorted(client_kwargs)})"
            )
            raise ConfigurationError(msg)
        self._sdk: ModuleType = sdk
        self._client: ClientT = client
        self._owns_client = owns_client
        self._model = model
        self._params = params
        try:
            endpoint = self._endpoint()
        except AttributeError:
            msg = f"{owner}.client must be an {self._SDK}.{self._CLIENT}, got {show(client)}"
            raise ConfigurationError(msg) from None
        self._known = keyword_names(endpoint)

    @classmethod
    def _has_credentials(cls, client: ClientT) -> bool:
        """Whether the client the provider built found credentials. ``True`` here: an
        SDK that builds no client without them (OpenAI's) says so by raising."""
        return True

    def _no_credentials(self) -> str:
        """The error message for a client built without credentials."""
        return (
            f"{type(self).__name__} has no API key: set the {self._KEY_ENV} environment "
            f"variable, or pass api_key=... (or an {self._SDK}.{self._CLIENT} as client=)"
        )

    @property
    def model(self) -> str:
        """The model used when a request names none."""
        return self._model

    @property
    def client(self) -> ClientT:
        """The SDK client."""
        return self._client

    def __repr__(self) -> str:
        base_url = str(self._client.base_url)
        return f"{type(self).__name__}(model={self._model!r}, base_url={base_url!r})"

    async def aclose(self) -> None:
        """Close the client if this provider built it (a given client is left open)."""
        if self._owns_client:
            await self._client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _check_request(self, request: object, method: str) -> None:
        if not isinstance(request, CompletionRequest):
            msg = (
                f"{type(self).__name__}.{method} takes a CompletionRequest, "
                f"got {type(request).__name__}"
            )
            raise ConfigurationError(msg)

    @abc.abstractmethod
    def request_body(self, request: CompletionRequest) -> dict[str, JSON]:
        """The JSON body :meth:`complete` sends for ``request``.

        Raises:
            ConfigurationError: a message cannot be expressed in the API.
        """

    @abc.abstractmethod
    def _endpoint(self) -> Callable[..., object]:
        """The SDK method that sends a request (``create``), as a raw-response call."""

    @abc.abstractmethod
    def _read(self, data: Mapping[str, object]) -> CompletionResponse:
        """The reply in the JSON object ``data``.

        Raises:
            ConfigurationError: ``data`` is not a reply of the API.
            ProviderError: the reply is not an answer (a refusal, a filtered reply).
        """

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Send ``request`` and read the reply.

        Raises:
            ProviderError: the call failed or the reply cannot be used; this is every
                failure once the request was rendered (an HTTP error, a lost connection,
                a timeout, a body that is not a reply of the API).
            ConfigurationError: a message cannot be expressed in the API (nothing is
                sent).
        """
        self._check_request(request, "complete")
        arguments, extra = split_arguments(self.request_body(request), self._known)
        content = await self._send(arguments, extra)
        data = _read_body(self._NAME, content)
        try:
            return self._read(data)
        except ConfigurationError as exc:
            raise malformed_response(self._NAME, exc) from exc

    async def _send(self, arguments: Mapping[str, JSON], extra: Mapping[str, JSON]) -> bytes:
        """The body of the reply; every SDK failure becomes a :class:`ProviderError`."""
        sdk, name = self._sdk, self._NAME
        call = cast("Callable[..., Awaitable[_RawResponse]]", self._endpoint())
        try:
            response = await call(**arguments, extra_body=dict(extra) or None)
            # The SDK has read the whole body (a non-streamed call): this only returns it.
            content = await response.http_response.aread()
        except sdk.APIStatusError as exc:
            raise status_error(name, exc.status_code, exc.message, exc.response.headers) from exc
        except sdk.APITimeoutError as exc:
            raise transport_error(name, "the request timed out") from exc
        except sdk.APIConnectionError as exc:
            raise transport_error(name, f"the connection failed: {_cause(exc)}") from exc
        except sdk.APIError as exc:
            raise malformed_response(name, exc) from exc
        except ValueError as exc:  # the SDK refused the call before sending it
            msg = f"the {self._SDK} SDK refused the request: {exc}"
            raise ProviderError(msg, retryable=False) from exc
        return content


def _no_key(client_kwargs: Mapping[str, object], variable: str) -> bool:
    """Whether neither ``client_kwargs`` nor the environment give an API key."""
    return not client_kwargs.get("api_key") and not os.environ.get(variable)


def _cause(exc: BaseException) -> str:
    """``exc``'s message and, when it wraps one, its cause's: the SDK's connection error
    says only "Connection error."; its cause says what happened (a refused connection, a
    body cut off)."""
    cause = exc.__cause__
    if cause is None or not str(cause):
        return str(exc)
    return f"{exc} ({type(cause).__name__}: {cause})"
