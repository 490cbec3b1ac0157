"""How a failed provider call becomes a :class:`~neuron_context.errors.ProviderError`.

One ladder for both SDKs: an HTTP status is retryable when trying again may help (408,
409, 429 and every 5xx), with the wait the server asked for (``retry-after-ms`` or
``retry-after``, in seconds or as an HTTP date); a lost connection or a timeout is
retryable; a complete reply that cannot be read is a server bug, which a retry does not
fix.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping

from .._errors import ProviderError

__all__ = [
    "RETRYABLE_STATUS",
    "malformed_response",
    "parse_retry_after",
    "status_error",
    "transport_error",
]

RETRYABLE_STATUS = frozenset({408, 409, 429})
"""Statuses below 500 that are worth retrying: timeout, conflict (lock contention) and
rate limit. Every 5xx status (Anthropic's ``overloaded`` is 529) is retried too."""

_MAX_RETRY_AFTER = 24 * 60 * 60.0


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
    except (TypeError, ValueError, IndexError, OverflowError):
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
