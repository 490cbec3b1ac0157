"""The exception tree of neuron_context.

Every error the library raises on purpose is a :class:`NeuronContextError`::

    NeuronContextError
    ├── ConfigurationError (also ValueError)      bad arguments, bad values
    ├── InvalidConversationError (also ValueError) a conversation that is not well formed
    ├── TokenizerError                             loading or running a tokenizer failed
    ├── ProviderError                              a model provider call failed (.retryable)
    └── CompactionError                            a strategy could not compact
        ├── SummarizationError                     the summary provider failed, timed out,
        │                                          or returned an unusable summary
        └── BudgetExceededError                    default_stack(strict=True) cannot meet
                                                   its budget (.excess)

Third-party errors are chained (``raise ... from exc``); when a compaction fails the
caller's messages are left exactly as they were.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "BudgetExceededError",
    "CompactionError",
    "ConfigurationError",
    "InvalidConversationError",
    "NeuronContextError",
    "ProviderError",
    "SummarizationError",
    "TokenizerError",
]


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
        self.ids: tuple[str, ...] = tuple(ids)


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
        self.retryable: bool = retryable
        self.status_code: int | None = status_code
        self.retry_after: float | None = retry_after


class BudgetExceededError(CompactionError):
    """The budget cannot be met: even the system messages and the newest request, cut as
    far as they can be, cost more (raised by ``default_stack(..., strict=True)``)."""

    def __init__(self, message: str, *, excess: int, max_tokens: int) -> None:
        super().__init__(message)
        self.excess = excess
        """How many tokens over the budget the best result is."""
        self.max_tokens = max_tokens
        """The budget."""
