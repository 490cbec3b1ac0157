"""What the SDK providers share: importing an SDK lazily and classifying HTTP errors."""

from __future__ import annotations

import copy
import email.utils
import importlib
import inspect
import math
import time
from collections.abc import Callable, Mapping
from types import ModuleType

from .._errors import ConfigurationError, ProviderError
from .._messages.content import JSON

__all__ = [
    "RETRYABLE_STATUS",
    "count",
    "import_sdk",
    "keyword_names",
    "malformed_response",
    "parse_retry_after",
    "request_params_copy",
    "split_arguments",
    "status_error",
    "transport_error",
]

RETRYABLE_STATUS = frozenset({408, 409, 429})
"""Statuses below 500 that are worth retrying: timeout, conflict (lock contention) and
rate limit. Every 5xx status (Anthropic's ``overloaded`` is 529) is retried too."""

_MAX_RETRY_AFTER = 24 * 60 * 60.0


def count(value: object) -> int | None:
    """``value`` when it is a non-negative int (a token count), else ``None``."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
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
        msg = (
            f"the {name!r} package is required by this provider: "
            f"install it with `pip install 'neuron-context[{extra}]'`"
        )
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
            msg = f"{owner}.request_params keys must be str, got {key!r}"
            raise ConfigurationError(msg)
        if key in reserved:
            msg = f"{owner}.request_params may not set {key!r}: it comes from the request"
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


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date).

    Returns ``None`` when neither header is present or readable; the value is never
    negative and at most one day.
    """
    if headers is None:
        return None
    seconds: float | None = None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        seconds = _number(millis, scale=1000.0)
    value = headers.get("retry-after")
    if seconds is None and value is not None:
        seconds = _number(value, scale=1.0)
        if seconds is None:
            seconds = _date(value)
    if seconds is None:
        return None
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER)


def _number(text: str, *, scale: float) -> float | None:
    try:
        value = float(text.strip()) / scale
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _date(text: str) -> float | None:
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return when.timestamp() - time.time()


def status_error(
    provider: str, status: int, message: str, headers: Mapping[str, str] | None
) -> ProviderError:
    """A :class:`ProviderError` for an HTTP error status (chain the SDK's exception)."""
    retryable = status >= 500 or status in RETRYABLE_STATUS
    msg = f"{provider} request failed with HTTP {status}: {message}"
    return ProviderError(
        msg,
        retryable=retryable,
        status_code=status,
        retry_after=parse_retry_after(headers),
    )


def transport_error(provider: str, what: str) -> ProviderError:
    """A retryable :class:`ProviderError` for a failed connection or a timeout."""
    msg = f"{provider} request failed: {what}"
    return ProviderError(msg, retryable=True)


def malformed_response(provider: str, problem: object) -> ProviderError:
    """A non-retryable :class:`ProviderError` for a response that cannot be read.

    A complete body that is not what the API promises is a server bug, which a retry
    does not fix (a cut-off body is a transport error, which is retried).
    """
    msg = f"{provider} returned a response that cannot be read: {problem}"
    return ProviderError(msg, retryable=False)
