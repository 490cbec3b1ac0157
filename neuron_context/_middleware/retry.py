"""Retrying a failing tool call: ToolRetryMiddleware.

It never retries an :class:`AgentError` (a limit must stop the run) nor swallows
cancellation. Waits use :func:`anyio.sleep`, so a cancelled run stops waiting at once.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable

import anyio
import attrs

from .._errors import AgentError, described
from .._messages.content import ToolResult
from .._run.events import ToolRetried
from .._validators import callable_, non_negative_int, number, require_int, require_names
from .types import (
    AgentMiddleware,
    ToolCallRequest,
    ToolHandler,
)

__all__ = ["ToolRetryMiddleware", "any_error"]


def any_error(_: Exception) -> bool:
    """Every exception is worth another attempt (the default ``retry_on``)."""
    return True


def _to_names(value: Iterable[str] | None) -> frozenset[str] | None:
    return None if value is None else require_names(value, "ToolRetryMiddleware.tool_names")


@attrs.define
class ToolRetryMiddleware(AgentMiddleware):
    """Retries a tool call that raised, up to ``max_retries`` times after the first attempt.

    Waits ``initial_delay * backoff ** (attempt - 1)`` seconds (capped at ``max_delay``),
    each scaled by a random factor in ``[1 - jitter, 1 + jitter]`` so that many agents
    do not retry in step. ``retry_on`` decides which exceptions are worth a retry (all,
    by default); ``tool_names`` restricts it to some tool names. The last failure propagates
    (the model then sees it as an error result).

    Examples:
        >>> timeouts = lambda exc: isinstance(exc, TimeoutError)
        >>> retry = ToolRetryMiddleware(3, initial_delay=0.5, retry_on=timeouts)
    """

    max_retries: int = attrs.field(validator=non_negative_int())
    """Retries after the first attempt."""
    initial_delay: float = attrs.field(default=1.0, kw_only=True, validator=number(minimum=0))
    """Seconds before the first retry."""
    backoff: float = attrs.field(default=2.0, kw_only=True, validator=number(minimum=1))
    """The factor between successive delays."""
    max_delay: float = attrs.field(default=60.0, kw_only=True, validator=number(minimum=0))
    """The longest wait."""
    jitter: float = attrs.field(default=0.1, kw_only=True, validator=number(minimum=0, maximum=1))
    """The relative spread of each wait."""
    retry_on: Callable[[Exception], bool] = attrs.field(
        default=any_error, kw_only=True, validator=callable_()
    )
    """Whether an exception is worth a retry."""
    tool_names: frozenset[str] | None = attrs.field(default=None, kw_only=True, converter=_to_names)
    """Only these tools are retried (``None``: all); a collection of names, never a lone
    ``str``."""
    rng: random.Random = attrs.field(factory=random.Random, kw_only=True, repr=False)
    """The source of jitter (seed it for reproducible waits)."""

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based).

        Saturates at ``max_delay``: the growth is computed in floats, and one too large
        for a float is infinite, so no attempt number overflows or takes long to compute.
        """
        attempt = require_int(attempt, "ToolRetryMiddleware.delay: attempt", minimum=1)
        try:
            growth = float(self.backoff) ** (attempt - 1)
        except OverflowError:
            growth = math.inf
        initial = float(self.initial_delay)
        base = min(self.max_delay, initial * growth) if initial else 0.0
        spread = self.rng.uniform(1 - self.jitter, 1 + self.jitter) if self.jitter else 1.0
        return min(self.max_delay, base * spread)

    async def wrap_tool_call(self, request: ToolCallRequest, next: ToolHandler) -> ToolResult:
        """Call ``next``; on a retryable exception wait and call it again."""
        if self.tool_names is not None and request.tool_use.name not in self.tool_names:
            return await next(request)
        attempt = 1
        while True:
            try:
                return await next(request)
            except AgentError:
                raise
            except Exception as exc:
                if attempt > self.max_retries or not self.retry_on(exc):
                    raise
                wait = self.delay(attempt)
                context, use = request.context, request.tool_use
                context.emit(
                    ToolRetried(
                        context.turn,
                        use.name,
                        use.id,
                        attempt,
                        wait,
                        described(exc),
                    )
                )
            await anyio.sleep(wait)
            attempt += 1
