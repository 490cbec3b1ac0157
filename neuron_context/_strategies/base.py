"""The :class:`ContextStrategy` interface and what the built-in strategies share."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

from .._counting.base import BaseCounter
from .._counting.heuristic import TokenCounter
from .._errors import ConfigurationError
from .._messages.message import Message

__all__ = ["ContextStrategy"]


class ContextStrategy(abc.ABC):
    """Decides whether a conversation must shrink, and shrinks it.

    Implementations never mutate their input and return a new list.
    """

    @abc.abstractmethod
    def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
        """Whether ``messages`` (costing ``token_count``) must be compacted."""

    @abc.abstractmethod
    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Return a compacted copy of ``messages``; always does its work when called."""

    @abc.abstractmethod
    def token_estimate(self, messages: Sequence[Message]) -> int:
        """The estimated token cost of ``messages``."""


class BudgetedStrategy(ContextStrategy):
    """A strategy with a ``max_tokens`` trigger and a ``counter`` (the built-in ones)."""

    max_tokens: int
    counter: BaseCounter

    def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
        """``token_count > max_tokens`` (strict, as in the crate)."""
        return token_count > self.max_tokens

    def token_estimate(self, messages: Sequence[Message]) -> int:
        """``counter.estimate_messages(messages)``."""
        return self.counter.estimate_messages(messages)


def to_counter(value: BaseCounter | None) -> BaseCounter:
    """The given counter, or the default heuristic one."""
    if value is None:
        return TokenCounter()
    if not isinstance(value, BaseCounter):
        msg = f"counter must be a TokenCounter or TokenizerCounter, got {type(value).__name__}"
        raise ConfigurationError(msg)
    return value


def check_count(owner: str) -> Any:
    """An attrs validator: a non-negative ``int``, naming ``owner.field`` on failure."""

    def check(_: object, attribute: Any, value: object) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            msg = f"{owner}.{attribute.name} must be a non-negative int, got {value!r}"
            raise ConfigurationError(msg)

    return check
