"""Composites: run strategies in order until the history fits, run them all (an edit
pipeline), or fall back on failure."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import attrs

from .._counting.heuristic import TokenCounter
from .._counting.tokenizer import TokenizerCounter
from .._errors import ConfigurationError, NeuronContextError, show
from .._log import log_compaction, logger
from .._messages.checks import CheckOnFailure
from .._messages.conversation import tool_results
from .._messages.message import Message
from .._validators import require_sequence_of
from .clearing import ToolResultClearingStrategy
from .strategy import (
    BudgetedStrategy,
    ContextStrategy,
    PureStrategy,
    max_tokens_field,
)
from .window import SlidingWindowStrategy

__all__ = ["CompositeStrategy", "EditPipeline", "FallbackStrategy"]


def _to_strategies(value: Iterable[ContextStrategy]) -> tuple[ContextStrategy, ...]:
    return require_sequence_of(value, "CompositeStrategy.strategies", ContextStrategy, "strategies")


@attrs.define
class CompositeStrategy(BudgetedStrategy):
    """Runs its strategies in order, stopping as soon as the history fits.

    Before each strategy it measures the history with its own ``counter`` and stops when
    the estimate is ``<= max_tokens``; each child's ``compact`` is called directly (its own
    trigger is not consulted). A child whose result costs more than what it was given,
    by this composite's counter (a child may price with another one), is undone: the
    composite keeps the previous result, so it never returns more than it was given.
    After the last strategy it measures once more and logs a warning if the target was
    not met. A nested composite with the same ``max_tokens`` and counter is flattened
    into this one (that cannot change the result).

    When every strategy is synchronous (:attr:`synchronous`: the pure built-in ones and
    composites of them), :meth:`apply` does the same work without an event loop.

    Examples:
        >>> strategy = CompositeStrategy(
        ...     [ToolResultClearingStrategy(2), SlidingWindowStrategy(20)], 100_000
        ... )
    """

    strategies: tuple[ContextStrategy, ...] = attrs.field(converter=_to_strategies)
    """The strategies, cheapest first."""
    max_tokens: int = max_tokens_field()
    """The budget (and the trigger: compact when the history costs more than this)."""

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

    def token_estimate(self, messages: Sequence[Message]) -> int:
        """``counter.estimate_messages(messages)`` (a history that grew since the last
        call costs only its new messages)."""
        return self.counter.estimate_messages(messages)

    @property
    def synchronous(self) -> bool:
        """Whether :meth:`apply` can run: every strategy has a synchronous ``apply``."""
        return all(_is_synchronous(strategy) for strategy in self.strategies)

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Run the strategies in order until the history fits ``max_tokens``."""
        run = _Run(self, messages)
        for strategy in self.strategies[_fused(self, run) :]:
            if run.fits():
                break
            run.record(strategy, await strategy.compact(run.current))
        return run.finish()

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        """:meth:`compact`, synchronously, when every strategy is synchronous.

        Raises:
            ConfigurationError: a strategy is asynchronous only (such as
                :class:`~neuron_context.SummarizationStrategy`): ``await compact(...)``.
        """
        for index, strategy in enumerate(self.strategies):
            if not _is_synchronous(strategy):
                msg = (
                    f"CompositeStrategy.apply needs synchronous strategies, but "
                    f"strategies[{index}] ({type(strategy).__name__}) is asynchronous only: "
                    "await compact(...) instead"
                )
                raise ConfigurationError(msg)
        run = _Run(self, messages)
        for strategy in self.strategies[_fused(self, run) :]:
            if run.fits():
                break
            run.record(strategy, strategy.apply(run.current))  # type: ignore[attr-defined]
        return run.finish()


def _fused(composite: CompositeStrategy, run: _Run) -> int:
    """Run a leading clearing and window as one step when that is exact; return how
    many strategies it ran (0 or 2).

    When clearing cannot bring the history under budget, the composite runs the window
    on the cleared history. The window's cut depends on the roles and exchanges only,
    which clearing leaves alone, and clearing decides each result on its own: so the
    window can run first and clearing then clear only what the window kept, the same
    results (the newest ``keep_recent_n`` are in the window when it holds that many
    results) with the same placeholders, without touching the dropped part. Exact only
    without the options that make clearing depend on other results
    (``exclude_tools``, ``clear_tool_inputs``, ``min_reclaim_tokens``), with the
    composite's counter (a frozen rule-based one, pricing each message at least its
    ``message_overhead``, so that ``len(history) * message_overhead > max_tokens`` proves
    clearing cannot fit), and when nothing is logged at INFO (the unfused steps log).
    """
    strategies = composite.strategies
    if len(strategies) < 2 or run.fits():
        return 0
    clearing, window = strategies[0], strategies[1]
    counter = composite.counter
    if (
        type(clearing) is not ToolResultClearingStrategy
        or type(window) is not SlidingWindowStrategy
        or clearing.exclude_tools
        or clearing.clear_tool_inputs
        or clearing.min_reclaim_tokens
        or not isinstance(counter, TokenCounter | TokenizerCounter)
        or type(counter) not in (TokenCounter, TokenizerCounter)
        or clearing.counter != counter
        or len(run.current) * counter.message_overhead <= composite.max_tokens
        or logger.isEnabledFor(logging.INFO)
    ):
        return 0
    kept = window.apply(run.current)
    if sum(1 for _ in tool_results(kept)) < clearing.keep_recent_n:
        return 0
    result = clearing.apply(kept)
    run.current, run.cost = result, counter.estimate_messages(result)
    run.ran += [ToolResultClearingStrategy.__name__, SlidingWindowStrategy.__name__]
    return 2


def _is_synchronous(strategy: ContextStrategy) -> bool:
    if isinstance(strategy, PureStrategy):
        return True
    if isinstance(strategy, CompositeStrategy | FallbackStrategy):
        return strategy.synchronous
    return False


class _Run:
    """One pass of a composite: the current result, measured once per step."""

    __slots__ = ("composite", "cost", "current", "messages", "ran")

    def __init__(self, composite: CompositeStrategy, messages: Sequence[Message]) -> None:
        self.composite = composite
        self.messages = messages
        self.ran: list[str] = []
        with CheckOnFailure(messages, "CompositeStrategy"):
            self.current = list(messages)
            self.cost = composite.counter.estimate_messages(self.current)

    def fits(self) -> bool:
        return self.cost <= self.composite.max_tokens

    def record(self, strategy: ContextStrategy, result: list[Message]) -> None:
        name = type(strategy).__name__
        cost = self.composite.counter.estimate_messages(result)
        if cost > self.cost:
            logger.info(
                "CompositeStrategy: %s made the history bigger by this composite's counter "
                "(%d -> %d tokens); keeping the previous result",
                name,
                self.cost,
                cost,
                extra={"strategy": name, "tokens_before": self.cost, "tokens_after": cost},
            )
            return
        self.current, self.cost = result, cost
        self.ran.append(name)

    def finish(self) -> list[Message]:
        composite = self.composite
        if self.cost > composite.max_tokens:
            logger.warning(
                "CompositeStrategy: still over budget after all strategies: %d > %d tokens",
                self.cost,
                composite.max_tokens,
                extra={"tokens_after": self.cost, "max_tokens": composite.max_tokens},
            )
        if self.ran:
            log_compaction(
                "CompositeStrategy",
                composite.counter,
                self.messages,
                self.current,
                {"ran": self.ran},
            )
        return self.current


@attrs.define
class EditPipeline(ContextStrategy):
    """Runs every strategy in order, always: the combinator of a request-only edit
    (``ContextEditingMiddleware.strip_and_truncate``), where a composite would stop once
    under budget and warn when a budget of 0 is never met."""

    strategies: tuple[ContextStrategy, ...]

    def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
        """Always."""
        return True

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Each strategy's ``compact``, one after the other."""
        current = list(messages)
        for strategy in self.strategies:
            current = await strategy.compact(current)
        return current

    def token_estimate(self, messages: Sequence[Message]) -> int:
        """The first strategy's estimate."""
        return self.strategies[0].token_estimate(messages)


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
                msg = f"FallbackStrategy.{name} must be a ContextStrategy, got {show(strategy)}"
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

    @property
    def synchronous(self) -> bool:
        """Whether :meth:`apply` can run: every strategy has a synchronous ``apply``."""
        return all(_is_synchronous(s) for s in (self.primary, *self.fallbacks))

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Run the primary, then each fallback in turn while they fail."""
        strategies = (self.primary, *self.fallbacks)
        for index, strategy in enumerate(strategies):
            try:
                return await strategy.compact(messages)
            except NeuronContextError as exc:
                self._failed(strategies, index, exc)
        msg = "unreachable"  # pragma: no cover
        raise AssertionError(msg)  # pragma: no cover

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        """:meth:`compact`, synchronously, when every strategy is synchronous.

        Raises:
            ConfigurationError: a strategy is asynchronous only: ``await compact(...)``.
        """
        strategies = (self.primary, *self.fallbacks)
        for index, strategy in enumerate(strategies):
            if not _is_synchronous(strategy):
                name = "primary" if index == 0 else f"fallbacks[{index - 1}]"
                msg = (
                    f"FallbackStrategy.apply needs synchronous strategies, but {name} "
                    f"({type(strategy).__name__}) is asynchronous only: await compact(...) instead"
                )
                raise ConfigurationError(msg)
        for index, strategy in enumerate(strategies):
            try:
                result: list[Message] = strategy.apply(messages)  # type: ignore[attr-defined]
            except NeuronContextError as exc:
                self._failed(strategies, index, exc)
            else:
                return result
        msg = "unreachable"  # pragma: no cover
        raise AssertionError(msg)  # pragma: no cover

    @staticmethod
    def _failed(
        strategies: tuple[ContextStrategy, ...], index: int, exc: NeuronContextError
    ) -> None:
        if index == len(strategies) - 1:
            raise exc
        logger.warning(
            "FallbackStrategy: %s failed (%s); trying %s",
            type(strategies[index]).__name__,
            exc,
            type(strategies[index + 1]).__name__,
            exc_info=logger.isEnabledFor(logging.DEBUG),
        )
