"""The exception tree of neuron_context.

Every error the library raises on purpose is a :class:`NeuronContextError`::

    NeuronContextError
    ├── ConfigurationError (also ValueError)      bad arguments, bad values
    ├── InvalidConversationError (also ValueError) a conversation that is not well formed
    ├── TokenizerError                             loading or running a tokenizer failed
    ├── ProviderError                              a model provider call failed (.retryable)
    │   └── ContextOverflowError                   the request stayed too long for the model
    │                                              after one compaction and retry (.tokens, .limit)
    ├── AgentError                                 the agent loop stopped a run
    │   ├── MiddlewareError (also ConfigurationError) a hook returned what the loop cannot
    │   │                                          use (.middleware, .hook)
    │   └── AgentLimitError                        a configured limit was reached (.limit, .count)
    │       ├── MaxTurnsExceededError              AgentOptions.max_turns
    │       ├── ModelCallLimitExceededError        ModelCallLimitMiddleware
    │       └── ToolCallLimitExceededError         ToolCallLimitMiddleware (.tool_name)
    └── CompactionError                            a strategy could not compact
        ├── SummarizationError                     the summary provider failed, timed out,
        │                                          or returned an unusable summary
        └── BudgetExceededError                    default_stack(strict=True) cannot meet
                                                   its budget (.excess)

Third-party errors are chained (``raise ... from exc``); when a compaction fails the
caller's messages are left exactly as they were.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Iterable

__all__ = [
    "AgentError",
    "AgentLimitError",
    "BudgetExceededError",
    "CompactionError",
    "ConfigurationError",
    "InvalidConversationError",
    "MaxTurnsExceededError",
    "MiddlewareError",
    "ModelCallLimitExceededError",
    "NeuronContextError",
    "ProviderError",
    "SummarizationError",
    "TokenizerError",
    "ToolCallLimitExceededError",
    "described",
    "show",
]


_SHOW = reprlib.Repr()
_SHOW.maxlevel = 3
_SHOW.maxstring = 80
_SHOW.maxother = 80
_SHOW.maxlong = 40


def show(value: object, width: int = 80) -> str:
    """A short ``repr`` of ``value`` for an error message, at most ``width`` characters.

    Bounded in depth and length, so showing a hostile value (nested thousands of levels
    deep, megabytes long, an int too long to print such as ``10**5000``, or with a
    ``__repr__`` that fails) never raises and never builds a huge message.
    """
    try:
        text = _SHOW.repr(value)
    except Exception:
        return f"<{type(value).__name__}>"
    return text if len(text) <= width else text[: width - 3] + "..."


def described(exc: BaseException) -> str:
    """``exc`` as ``"Type: text"`` for a message, an event or a tool's error result; an
    exception whose ``__str__`` raises (a user's, a framework's) is described by its
    type, so describing a failure never raises a second one."""
    try:
        text = str(exc)
    except Exception:
        text = "<its text could not be read>"
    return f"{type(exc).__name__}: {text}"


class NeuronContextError(Exception):
    """Base class of every error raised by neuron_context."""


class ConfigurationError(NeuronContextError, ValueError):
    """An argument or field has a value the library cannot accept.

    The message names the offending field.
    """


class InvalidConversationError(NeuronContextError, ValueError):
    """A conversation breaks the tool-call pairing rules.

    Attributes:
        ids: every offending tool-use id, in the order they were found.
    """

    def __init__(self, message: str, *, ids: Iterable[str] = ()) -> None:
        super().__init__(message)
        checked = tuple(ids) if isinstance(ids, Iterable) and not isinstance(ids, str) else None
        if checked is None or not all(isinstance(one, str) for one in checked):
            msg = f"InvalidConversationError.ids must be an iterable of str, got {show(ids)}"
            raise ConfigurationError(msg)
        self.ids: tuple[str, ...] = checked


class TokenizerError(NeuronContextError):
    """A tokenizer could not be loaded or failed to encode text."""


class CompactionError(NeuronContextError):
    """A strategy could not compact the conversation."""


class SummarizationError(CompactionError):
    """The summary provider failed, timed out, or returned an unusable summary.

    The cause (provider exception, timeout) is chained as ``__cause__``.
    """


class ProviderError(NeuronContextError):
    """A call to a model provider failed.

    Providers raise it for failed calls and for replies that cannot be used, with the
    SDK's exception chained. :class:`~neuron_context.SummarizationStrategy` retries it
    only when :attr:`retryable` is true.

    Attributes:
        retryable: whether the same request may succeed when tried again (rate limit,
            overload, server error, timeout, lost connection).
        status_code: the HTTP status, when the call got one.
        retry_after: seconds the server asked to wait before retrying, when it said.

    Raises:
        ConfigurationError: ``retryable`` is not a ``bool``, ``status_code`` not an HTTP
            status or ``None``, or ``retry_after`` not a finite number >= 0 or ``None``
            (so a retry loop never meets a wait it cannot sleep).
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        # Checked here, not with the validators module (which imports this one): a
        # wrong value would otherwise surface later, as a TypeError in a retry loop.
        if not isinstance(retryable, bool):
            msg = f"ProviderError.retryable must be a bool, got {show(retryable)}"
            raise ConfigurationError(msg)
        if status_code is not None and (
            isinstance(status_code, bool)
            or not isinstance(status_code, int)
            or not 100 <= status_code <= 999
        ):
            msg = (
                f"ProviderError.status_code must be an HTTP status or None, got {show(status_code)}"
            )
            raise ConfigurationError(msg)
        self.retryable: bool = retryable
        self.status_code: int | None = status_code
        self.retry_after: float | None = _seconds(retry_after)


class ContextOverflowError(ProviderError):
    """The provider refused a request as too long for the model, and still did after the
    caller (the agent loop, an adapter) compacted it to the size the refusal implied and
    retried once. The caller's history is as it was before the refused call; the second
    refusal is chained as ``__cause__``.

    Attributes:
        tokens: the provider's count of the last refused request, when it said.
        limit: the model's window as the provider stated it, when it said.
    """

    def __init__(
        self,
        message: str,
        *,
        tokens: int | None = None,
        limit: int | None = None,
        status_code: int | None = None,
    ) -> None:
        super().__init__(message, retryable=False, status_code=status_code)
        self.tokens: int | None = tokens
        self.limit: int | None = limit


def _seconds(value: object) -> float | None:
    """``value`` as seconds to wait: ``None``, or a finite number >= 0."""
    if value is None:
        return None
    seconds = math.nan
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            seconds = float(value)
        except OverflowError:  # an int beyond the float range
            seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):
        msg = f"ProviderError.retry_after must be a finite number >= 0 or None, got {show(value)}"
        raise ConfigurationError(msg)
    return seconds


class BudgetExceededError(CompactionError):
    """The budget cannot be met: even the system messages and the newest request, cut as
    far as they can be, cost more (raised by ``default_stack(..., strict=True)``)."""

    def __init__(self, message: str, *, excess: int, max_tokens: int) -> None:
        super().__init__(message)
        self.excess = excess
        """How many tokens over the budget the best result is."""
        self.max_tokens = max_tokens
        """The budget."""


class AgentError(NeuronContextError):
    """The agent loop stopped a run; it propagates out of :meth:`Agent.run`."""


class MiddlewareError(AgentError, ConfigurationError):
    """A middleware's hook returned a value the agent loop cannot use (a ``before_model``
    returning a ``str``, a ``wrap_tool_call`` returning ``None``, a ``before_agent``
    returning a list that holds something other than messages).

    Raised where the value crosses into the loop, before anything is recorded: the
    history is left as it was. An :class:`AgentError`, so it stops the run (it is never
    turned into an error result for the model, retried or sent to a fallback provider);
    also a :class:`ConfigurationError`, as every bad value is.

    Attributes:
        middleware: the middleware's name (its class name).
        hook: the hook (``"after_model"``).
    """

    def __init__(self, message: str, *, middleware: str, hook: str) -> None:
        super().__init__(message)
        self.middleware: str = middleware
        self.hook: str = hook


class AgentLimitError(AgentError):
    """A configured limit was reached; the call over the limit was not made.

    Attributes:
        limit: the configured maximum.
        count: the number the run would have reached (``limit + 1``).
    """

    def __init__(self, message: str, *, limit: int, count: int) -> None:
        super().__init__(message)
        self.limit: int = limit
        self.count: int = count


class MaxTurnsExceededError(AgentLimitError):
    """The run needed more model turns than ``AgentOptions.max_turns``."""


class ModelCallLimitExceededError(AgentLimitError):
    """A :class:`ModelCallLimitMiddleware` stopped the run before one more model call."""


class ToolCallLimitExceededError(AgentLimitError):
    """A :class:`ToolCallLimitMiddleware` stopped the run before one more tool call.

    Attributes:
        tool_name: the tool whose own limit was reached, or ``None`` for the run-wide one.
    """

    def __init__(
        self, message: str, *, limit: int, count: int, tool_name: str | None = None
    ) -> None:
        super().__init__(message, limit=limit, count=count)
        self.tool_name: str | None = tool_name
