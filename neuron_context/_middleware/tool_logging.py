"""Tool-call logging: every call's tool, arguments, duration and outcome, structured.

The LangChain-middleware README this project started from logged every tool call with
its inputs. Here each call becomes one :mod:`logging` record whose ``extra=`` fields
(``tool``, ``tool_use_id``, ``arguments``, ``duration``, ``outcome``, ``error``,
``turn``) a JSON or OpenTelemetry handler can ship as they are, and whose message a
human can read::

    tool read_file success in 0.012s {"path": "notes.md"}

Arguments are logged after redaction: values under keys that look like secrets
(``password``, ``api_key``, ``token``, ...; ``secret_keys``, matched case-insensitively
as parts of the key, nested objects too) become ``"[redacted]"``, and a ``redact``
function of yours may rewrite the rest. The record goes to the package logger
(``neuron_context``) unless you pass your own.

Registered first, it measures the whole chain (retries, approvals) around the tool; the
loop's own :class:`~neuron_context.events.ToolCalled` event reports the same call for metrics.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping

import anyio
import attrs

from .._counting.counter import compact_json
from .._errors import described
from .._log import logger as package_logger
from .._messages.content import JSON, ToolResult
from .._validators import callable_, instance_of, non_negative_int, optional, require_names
from .types import AgentMiddleware, ToolCallRequest, ToolHandler

__all__ = ["REDACTED", "SECRET_KEYS", "ToolCallLoggingMiddleware", "redact_secrets"]

REDACTED = "[redacted]"
"""What a secret argument's value is logged as."""

SECRET_KEYS = frozenset(
    {
        "password",
        "passwd",
        "secret",
        "token",
        "api_key",
        "apikey",
        "authorization",
        "credential",
        "private_key",
        "cookie",
    }
)
"""Parts of argument names whose values are never logged."""


def redact_secrets(arguments: Mapping[str, JSON], secret_keys: frozenset[str]) -> dict[str, JSON]:
    """A copy of ``arguments`` with the values under secret-looking keys replaced by
    :data:`REDACTED`, nested objects included (a key is secret when one of
    ``secret_keys`` is part of it, ignoring case)."""
    return {
        key: REDACTED
        if any(part in key.lower() for part in secret_keys)
        else _redact_value(value, secret_keys)
        for key, value in arguments.items()
    }


def _redact_value(value: JSON, secret_keys: frozenset[str]) -> JSON:
    if isinstance(value, dict):
        return redact_secrets(value, secret_keys)
    if isinstance(value, list):
        return [_redact_value(item, secret_keys) for item in value]
    return value


def _to_logger(value: logging.Logger | None) -> logging.Logger:
    return package_logger if value is None else value


def _secret_keys(value: Iterable[str]) -> frozenset[str]:
    names = require_names(value, "ToolCallLoggingMiddleware.secret_keys", what="key names")
    return frozenset(name.lower() for name in names)


Redactor = Callable[[str, Mapping[str, JSON]], Mapping[str, JSON]]
"""``redact(tool_name, arguments) -> arguments to log`` (already secret-key redacted)."""


@attrs.define
class ToolCallLoggingMiddleware(AgentMiddleware):
    """Logs every tool call: tool, redacted arguments, duration and outcome.

    One record per call, at ``level`` when it succeeded and ``error_level`` when the
    model sees an error (an error result or an exception, which is re-raised), with the
    fields in ``extra=``: ``tool``, ``tool_use_id``, ``arguments``, ``duration``
    (seconds), ``outcome`` (``"success"``, ``"error"`` or ``"cancelled"``), ``error``
    and ``turn``.

    Examples:
        >>> logging_middleware = ToolCallLoggingMiddleware(
        ...     redact=lambda tool, args: {k: v for k, v in args.items() if k != "body"}
        ... )
    """

    logger: logging.Logger = attrs.field(
        default=None,
        kw_only=True,
        converter=_to_logger,
        validator=instance_of(logging.Logger, "a logging.Logger"),
    )
    """Where the records go (default: the package logger, ``neuron_context``)."""
    level: int = attrs.field(default=logging.INFO, kw_only=True, validator=non_negative_int())
    """The level of a successful call's record."""
    error_level: int = attrs.field(
        default=logging.WARNING, kw_only=True, validator=non_negative_int()
    )
    """The level of a failed or cancelled call's record."""
    secret_keys: frozenset[str] = attrs.field(
        default=SECRET_KEYS, kw_only=True, converter=_secret_keys
    )
    """Parts of argument names whose values are logged as ``"[redacted]"``."""
    redact: Redactor | None = attrs.field(
        default=None, kw_only=True, validator=optional(callable_())
    )
    """Rewrites the (secret-redacted) arguments before they are logged."""

    def arguments(self, name: str, arguments: Mapping[str, JSON]) -> Mapping[str, JSON]:
        """The arguments as they are logged: secrets redacted, then ``redact`` applied."""
        cleaned = redact_secrets(arguments, self.secret_keys)
        return self.redact(name, cleaned) if self.redact is not None else cleaned

    async def wrap_tool_call(self, request: ToolCallRequest, next: ToolHandler) -> ToolResult:
        """Time the call and log its outcome (re-raising what the tool raised)."""
        use = request.tool_use
        arguments = self.arguments(use.name, use.input)
        started = time.perf_counter()
        try:
            result = await next(request)
        except anyio.get_cancelled_exc_class():
            self._log(request, arguments, started, "cancelled", None)
            raise
        except Exception as exc:
            self._log(request, arguments, started, "error", described(exc))
            raise
        if result.is_error:
            self._log(request, arguments, started, "error", result.text)
        else:
            self._log(request, arguments, started, "success", None)
        return result

    def _log(
        self,
        request: ToolCallRequest,
        arguments: Mapping[str, JSON],
        started: float,
        outcome: str,
        error: str | None,
    ) -> None:
        duration = time.perf_counter() - started
        level = self.level if outcome == "success" else self.error_level
        if not self.logger.isEnabledFor(level):
            return
        use = request.tool_use
        shown = compact_json(dict(arguments))
        text = "tool %s %s in %.3fs %s" + (": %s" if error else "")
        values: tuple[object, ...] = (use.name, outcome, duration, shown)
        self.logger.log(
            level,
            text,
            *(values + ((error,) if error else ())),
            extra={
                "tool": use.name,
                "tool_use_id": use.id,
                "arguments": dict(arguments),
                "duration": duration,
                "outcome": outcome,
                "error": error,
                "turn": request.context.turn,
            },
        )
