"""Compacting a history over budget, as an agent does each turn, beside LangChain's
``trim_messages``.

Each round is one agent turn: one message arrives, the strategy checks the history
against its budget (``should_compact(messages, token_estimate(messages))``) and compacts
it. The history was checked and compacted at the previous turn too, so the costs of its
older messages are known (``ours-*``); ``ours-composite-cold`` is the first turn of a
process instead (no cached cost, a new counter every round). The peer trims the whole
history every turn with ``trim_messages(strategy="last", start_on="human",
include_system=True, token_counter=count_tokens_approximately)``. Target: at least 10x
faster at 100k messages.

The contenders of a group run one after the other, so they see the same machine load.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import count_tokens_approximately, trim_messages
from workloads import (
    DATASETS,
    SIZES,
    Benchmark,
    Dataset,
    fresh,
    rounds,
    workload,
)

from neuron_context import (
    CompositeStrategy,
    ContextStrategy,
    Message,
    Role,
    SlidingWindowStrategy,
    TokenCounter,
    ToolResultClearingStrategy,
    validate,
)

BUDGET = 100_000
"""The token budget: a 128k-token model with room left for the reply."""
WINDOW = 200
"""Messages the sliding window keeps."""
KEEP_RESULTS = 20
"""Tool results the clearing strategy keeps."""

Setup = Callable[[], tuple[tuple[list[Message]], dict[str, object]]]
Contender = Callable[[Benchmark, Dataset, int], None]


def _composite(counter: TokenCounter | None = None) -> CompositeStrategy:
    return CompositeStrategy(
        [ToolResultClearingStrategy(KEEP_RESULTS), SlidingWindowStrategy(WINDOW)],
        BUDGET,
        counter=counter,
    )


def _grown(dataset: Dataset, size: int) -> Setup:
    """A setup that appends one new message to the history each round."""
    work = workload(dataset, size)
    history = list(work.messages)

    def setup() -> tuple[tuple[list[Message]], dict[str, object]]:
        history.append(work.new_turn(len(history))[0])
        return (history,), {}

    return setup


def _agent_turn(
    strategy: ContextStrategy, compact: Callable[[list[Message]], list[Message]]
) -> Callable[[list[Message]], list[Message]]:
    def turn(history: list[Message]) -> list[Message]:
        if strategy.should_compact(history, strategy.token_estimate(history)):
            return compact(history)
        return history

    return turn


def _ours_window(benchmark: Benchmark, dataset: Dataset, size: int) -> None:
    strategy = SlidingWindowStrategy(WINDOW, BUDGET)
    turn = _agent_turn(strategy, strategy.apply)
    setup = _grown(dataset, size)
    turn(*setup()[0])  # the previous turn
    output = benchmark.pedantic(turn, setup=setup, rounds=rounds(size))
    validate(output)
    assert sum(m.role is not Role.SYSTEM for m in output) <= WINDOW
    assert output[0].role is Role.SYSTEM


def _ours_clearing(benchmark: Benchmark, dataset: Dataset, size: int) -> None:
    strategy = ToolResultClearingStrategy(KEEP_RESULTS, BUDGET)
    turn = _agent_turn(strategy, strategy.apply)
    setup = _grown(dataset, size)
    turn(*setup()[0])
    output = benchmark.pedantic(turn, setup=setup, rounds=rounds(size))
    validate(output)
    before = strategy.token_estimate(list(workload(dataset, size).messages))
    assert strategy.token_estimate(output) < before


def _ours_composite(benchmark: Benchmark, dataset: Dataset, size: int) -> None:
    strategy = _composite()
    with asyncio.Runner() as runner:
        turn = _agent_turn(strategy, lambda history: runner.run(strategy.compact(history)))
        setup = _grown(dataset, size)
        turn(*setup()[0])
        output = benchmark.pedantic(turn, setup=setup, rounds=rounds(size))
    validate(output)
    assert strategy.token_estimate(output) <= BUDGET


def _ours_composite_cold(benchmark: Benchmark, dataset: Dataset, size: int) -> None:
    messages = list(workload(dataset, size).messages)

    def setup() -> tuple[tuple[CompositeStrategy, list[Message]], dict[str, object]]:
        return (_composite(TokenCounter()), fresh(messages)), {}

    with asyncio.Runner() as runner:

        def turn(strategy: CompositeStrategy, history: list[Message]) -> list[Message]:
            if strategy.should_compact(history, strategy.token_estimate(history)):
                return runner.run(strategy.compact(history))
            return history

        output = benchmark.pedantic(turn, setup=setup, rounds=rounds(size))
    validate(output)
    assert TokenCounter().estimate_messages(output) <= BUDGET


def _peer(benchmark: Benchmark, dataset: Dataset, size: int) -> None:
    work = workload(dataset, size)
    history: list[BaseMessage] = list(work.peer)

    def setup() -> tuple[tuple[list[BaseMessage]], dict[str, object]]:
        history.append(work.new_turn(len(history))[1])
        return (history,), {}

    def turn(messages: list[BaseMessage]) -> list[BaseMessage]:
        trimmed: list[BaseMessage] = trim_messages(
            messages,
            max_tokens=BUDGET,
            strategy="last",
            start_on="human",
            include_system=True,
            token_counter=count_tokens_approximately,
        )
        return trimmed

    output = benchmark.pedantic(turn, setup=setup, rounds=rounds(size))
    assert 0 < count_tokens_approximately(output) <= BUDGET
    assert output[0].type == "system"


CONTENDERS: dict[str, Contender] = {
    "ours-window": _ours_window,
    "ours-clearing": _ours_clearing,
    "ours-composite": _ours_composite,
    "ours-composite-cold": _ours_composite_cold,
    "peer": _peer,
}


@pytest.mark.parametrize("contender", list(CONTENDERS))
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dataset", DATASETS)
def test_compact(benchmark: Benchmark, dataset: Dataset, size: int, contender: str) -> None:
    """One agent turn over budget: check, compact."""
    benchmark.group = f"compact {dataset} {size}"
    CONTENDERS[contender](benchmark, dataset, size)
