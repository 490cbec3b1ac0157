"""The :class:`ContextStrategy` interface and what the built-in strategies share.

Written once here, so each strategy holds only its own idea:

- :class:`BudgetedStrategy`: the ``counter`` field, the trigger (strictly over the
  budget: ``token_count > max_tokens``) and ``token_estimate``; :func:`max_tokens_field`
  declares the ``max_tokens`` field (a factory, because it is positional and attrs
  orders a base class's positional fields before a subclass's);
- :class:`PureStrategy`: a strategy that needs no I/O implements the synchronous
  :meth:`~PureStrategy.apply` alone and gets ``compact`` from it, so a synchronous agent
  loop calls ``apply`` each turn without an event loop, and that checks its input is a
  sequence of :class:`Message` only when the work fails
  (:class:`~neuron_context._messages.checks.CheckOnFailure`).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from typing import Any

import attrs

from .. import _tracing as tracing
from .._counting.counter import BaseCounter
from .._counting.heuristic import to_counter
from .._errors import show
from .._messages.checks import CheckOnFailure
from .._messages.message import Message
from .._stores.batch import offloading
from .._validators import fail, non_negative_int

__all__ = [
    "BudgetedStrategy",
    "ContextStrategy",
    "PureStrategy",
    "check_token_count",
    "counter_of",
    "max_tokens_field",
    "to_counter",
]


class ContextStrategy(abc.ABC):
    """Decides whether a conversation must shrink, and shrinks it.

    Implementations never mutate their input and return a new list. A subclass's
    ``compact`` (and a pure strategy's ``apply``) called directly, as in a user's own
    loop, is an OpenTelemetry compaction span when a tracer provider is set (see
    :mod:`neuron_context._tracing`).
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        tracing.trace_compactions(cls)

    @abc.abstractmethod
    def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
        """Whether ``messages`` (costing ``token_count``) must be compacted."""

    @abc.abstractmethod
    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Return a compacted copy of ``messages``; always does its work when called."""

    @abc.abstractmethod
    def token_estimate(self, messages: Sequence[Message]) -> int:
        """The estimated token cost of ``messages``."""


def counter_of(strategy: ContextStrategy) -> BaseCounter:
    """The counter ``strategy`` measures with (a wrapper's, such as a fallback's primary),
    or the default :class:`~neuron_context.TokenCounter` for a strategy without one."""
    for candidate in (strategy, getattr(strategy, "primary", None)):
        counter = getattr(candidate, "counter", None)
        if isinstance(counter, BaseCounter):
            return counter
    return to_counter(None)


def max_tokens_field() -> Any:
    """The ``max_tokens`` field: a non-negative int, default 0 (always compact)."""
    return attrs.field(default=0, validator=non_negative_int())


def check_token_count(token_count: object, owner: str) -> int:
    """``token_count`` if it is a non-negative int (a finite, integral float is accepted)."""
    if type(token_count) is int and token_count >= 0:
        return token_count
    if (
        isinstance(token_count, float)
        and math.isfinite(token_count)
        and token_count >= 0
        and token_count.is_integer()
    ):
        return int(token_count)
    if isinstance(token_count, int) and not isinstance(token_count, bool) and token_count >= 0:
        return int(token_count)
    where = f"{owner}.should_compact: token_count"
    raise fail(where, f"must be an int >= 0, got {show(token_count)}")


@attrs.define
class BudgetedStrategy(ContextStrategy):
    """A strategy with a ``max_tokens`` trigger and a ``counter`` (the built-in ones).

    Subclasses declare ``max_tokens = max_tokens_field()`` where it belongs in their
    positional order.
    """

    max_tokens: int = attrs.field(init=False, default=0)
    counter: BaseCounter = attrs.field(default=None, kw_only=True, converter=to_counter)
    """Prices messages (default: the heuristic :class:`~neuron_context.TokenCounter`)."""

    def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
        """``token_count > max_tokens`` (strict: a history of exactly ``max_tokens`` is
        not compacted)."""
        return check_token_count(token_count, type(self).__name__) > self.max_tokens

    def token_estimate(self, messages: Sequence[Message]) -> int:
        """``counter.estimate_messages(messages)``."""
        return self.counter.estimate_messages(messages)


@attrs.define
class PureStrategy(BudgetedStrategy):
    """A strategy that needs no I/O: :meth:`apply` is its work, ``compact`` awaits nothing.

    A synchronous loop calls ``strategy.apply(messages)`` each turn; an asynchronous one
    ``await strategy.compact(messages)``; both give the same result.
    """

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """:meth:`apply`, for the asynchronous interface."""
        return self.apply(messages)

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        """Compact ``messages`` synchronously (what :meth:`compact` returns).

        Raises:
            ConfigurationError: ``messages`` is not a sequence of :class:`Message`
                objects (checked only when the work fails, so a turn pays nothing).
        """
        with offloading(), CheckOnFailure(messages, type(self).__name__):
            return self._apply(messages)

    @abc.abstractmethod
    def _apply(self, messages: Sequence[Message]) -> list[Message]:
        """The work of :meth:`apply`, on messages assumed to be :class:`Message` s."""
