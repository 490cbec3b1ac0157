"""Composites: run strategies in order until the history fits, or fall back on failure."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import attrs

from .._counting.base import BaseCounter
from .._errors import ConfigurationError, NeuronContextError
from .._log import log_compaction, logger
from .._messages.message import Message
from .base import BudgetedStrategy, ContextStrategy, check_count, to_counter

__all__ = ["CompositeStrategy", "FallbackStrategy"]


def _to_strategies(value: Iterable[ContextStrategy]) -> tuple[ContextStrategy, ...]:
    if isinstance(value, ContextStrategy):
        msg = "CompositeStrategy.strategies must be a sequence of strategies, not one strategy"
        raise ConfigurationError(msg)
    strategies = tuple(value)
    for strategy in strategies:
        if not isinstance(strategy, ContextStrategy):
            msg = (
                "CompositeStrategy.strategies must hold ContextStrategy instances, "
                f"got {type(strategy).__name__}"
            )
            raise ConfigurationError(msg)
    return strategies


@attrs.define
class CompositeStrategy(BudgetedStrategy):
    """Runs its strategies in order, stopping as soon as the history fits.

    Before each strategy it measures the history with its own ``counter`` and stops when
    the estimate is ``<= max_tokens``; each child's ``compact`` is called directly (its own
    trigger is not consulted). After the last strategy it measures once more and logs a
    warning if the target was not met. A nested composite with the same ``max_tokens``
    and counter is flattened into this one (that cannot change the result).

    Examples:
        >>> strategy = CompositeStrategy(
        ...     [ToolResultClearingStrategy(2), SlidingWindowStrategy(20)], 100_000
        ... )
    """

    strategies: tuple[ContextStrategy, ...] = attrs.field(converter=_to_strategies)
    """The strategies, cheapest first."""
    max_tokens: int = attrs.field(default=0, validator=check_count("CompositeStrategy"))
    """The budget (and the trigger: compact when the history costs more than this)."""
    counter: BaseCounter = attrs.field(default=None, kw_only=True, converter=to_counter)
    """Measures the history between strategies."""

    def __attrs_post_init__(self) -> None:
        flat: list[ContextStrategy] = []
        for strategy in self.strategies:
            if (
                isinstance(strategy, CompositeStrategy)
                and strategy.max_tokens == self.max_tokens
                and strategy.counter == self.counter
            ):
                flat.extend(strategy.strategies)
            else:
                flat.append(strategy)
        self.strategies = tuple(flat)

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Run the strategies in order until the history fits ``max_tokens``."""
        counter = self.counter
        current = list(messages)
        ran: list[str] = []
        for strategy in self.strategies:
            if counter.estimate_messages(current) <= self.max_tokens:
                break
            current = await strategy.compact(current)
            ran.append(type(strategy).__name__)
        final = counter.estimate_messages(current)
        if final > self.max_tokens:
            logger.warning(
                "CompositeStrategy: still over budget after all strategies: %d > %d tokens",
                final,
                self.max_tokens,
                extra={"tokens_after": final, "max_tokens": self.max_tokens},
            )
        if ran:
            log_compaction("CompositeStrategy", counter, messages, current, {"ran": ran})
        return current


class FallbackStrategy(ContextStrategy):
    """Runs ``primary``; if it raises a :class:`NeuronContextError`, runs the next fallback.

    Each fallback gets the original messages. The last error is re-raised if all fail.
    ``should_compact`` and ``token_estimate`` are the primary's.

    Examples:
        >>> strategy = FallbackStrategy(
        ...     SummarizationStrategy(provider, 10, 100_000), SlidingWindowStrategy(20, 100_000)
        ... )  # doctest: +SKIP
    """

    __slots__ = ("fallbacks", "primary")

    def __init__(self, primary: ContextStrategy, *fallbacks: ContextStrategy) -> None:
        for index, strategy in enumerate((primary, *fallbacks)):
            if not isinstance(strategy, ContextStrategy):
                name = "primary" if index == 0 else f"fallbacks[{index - 1}]"
                msg = f"FallbackStrategy.{name} must be a ContextStrategy, got {strategy!r}"
                raise ConfigurationError(msg)
        self.primary = primary
        self.fallbacks = fallbacks

    def __repr__(self) -> str:
        parts = ", ".join(repr(s) for s in (self.primary, *self.fallbacks))
        return f"FallbackStrategy({parts})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FallbackStrategy):
            return NotImplemented
        return (self.primary, self.fallbacks) == (other.primary, other.fallbacks)

    __hash__ = None  # type: ignore[assignment]

    def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
        """The primary's trigger."""
        return self.primary.should_compact(messages, token_count)

    def token_estimate(self, messages: Sequence[Message]) -> int:
        """The primary's estimate."""
        return self.primary.token_estimate(messages)

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Run the primary, then each fallback in turn while they fail."""
        strategies = (self.primary, *self.fallbacks)
        for index, strategy in enumerate(strategies):
            try:
                return await strategy.compact(messages)
            except NeuronContextError as exc:
                if index == len(strategies) - 1:
                    raise
                logger.warning(
                    "FallbackStrategy: %s failed (%s); trying %s",
                    type(strategy).__name__,
                    exc,
                    type(strategies[index + 1]).__name__,
                    exc_info=logger.isEnabledFor(logging.DEBUG),
                )
        msg = "unreachable"  # pragma: no cover
        raise AssertionError(msg)  # pragma: no cover
