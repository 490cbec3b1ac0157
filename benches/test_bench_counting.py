"""Counting a history: cold, and once per agent turn, beside LangChain's counter.

- ``count-cold``: :meth:`TokenCounter.estimate_messages` on messages never counted
  before (no cached cost, a new counter every round) vs ``count_tokens_approximately``.
  Target: at least 5x faster.
- ``turn``: the agent's history of N messages plus one new message, counted again as at
  every turn (the older messages were counted at the previous turn) vs LangChain's full
  recount. Target: at least 100x faster at 20k messages. ``ours-running`` is the
  same turn counted by a running count (``counter.running``): only the new message.

The contenders of a group run one after the other, so they see the same machine load.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import count_tokens_approximately
from workloads import (
    DATASETS,
    SIZES,
    TURN_SIZES,
    Benchmark,
    Dataset,
    agreeable,
    expected_total,
    fresh,
    priced,
    rounds,
    workload,
)

from neuron_context import Message, TokenCounter

Contender = Callable[[Benchmark, Dataset, int], None]


def _ours_cold(benchmark: Benchmark, dataset: Dataset, size: int) -> None:
    messages = list(workload(dataset, size).messages)

    def setup() -> tuple[tuple[TokenCounter, list[Message]], dict[str, object]]:
        return (TokenCounter(), fresh(messages)), {}

    total = benchmark.pedantic(TokenCounter.estimate_messages, setup=setup, rounds=rounds(size))
    assert total == expected_total(dataset, size)


def _peer_cold(benchmark: Benchmark, dataset: Dataset, size: int) -> None:
    peer = list(workload(dataset, size).peer)
    total = benchmark.pedantic(count_tokens_approximately, (peer,), rounds=rounds(size))
    assert agreeable(expected_total(dataset, size), total)


def _ours_turn(benchmark: Benchmark, dataset: Dataset, size: int, *, memo: bool) -> None:
    work = workload(dataset, size)
    history = list(work.messages)
    counter = TokenCounter()
    counter.estimate_messages(history)  # the previous turn

    def setup() -> tuple[tuple[list[Message]], dict[str, object]]:
        history.append(work.new_turn(len(history))[0])
        return (history,), {}

    running = counter.running(history)
    if memo:
        total = benchmark.pedantic(
            counter.estimate_messages, setup=setup, rounds=rounds(size, budget=1e8)
        )
    else:

        def running_setup() -> tuple[tuple[list[Message]], dict[str, object]]:
            new = work.new_turn(len(history))[0]
            history.append(new)
            return ([new],), {}

        total = benchmark.pedantic(running.add, setup=running_setup, rounds=100)
    assert total == priced(history)


def _peer_turn(benchmark: Benchmark, dataset: Dataset, size: int) -> None:
    work = workload(dataset, size)
    history: list[BaseMessage] = list(work.peer)

    def setup() -> tuple[tuple[list[BaseMessage]], dict[str, object]]:
        history.append(work.new_turn(len(history))[1])
        return (history,), {}

    total = benchmark.pedantic(count_tokens_approximately, setup=setup, rounds=rounds(size))
    assert agreeable(expected_total(dataset, size), total)


COLD: dict[str, Contender] = {"ours": _ours_cold, "peer": _peer_cold}
TURN: dict[str, Contender] = {
    "ours": lambda benchmark, dataset, size: _ours_turn(benchmark, dataset, size, memo=True),
    "ours-running": lambda benchmark, dataset, size: _ours_turn(
        benchmark, dataset, size, memo=False
    ),
    "peer": _peer_turn,
}


@pytest.mark.parametrize("contender", list(COLD))
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dataset", DATASETS)
def test_count_cold(benchmark: Benchmark, dataset: Dataset, size: int, contender: str) -> None:
    """A whole history that was never counted before."""
    benchmark.group = f"count-cold {dataset} {size}"
    COLD[contender](benchmark, dataset, size)


@pytest.mark.parametrize("contender", list(TURN))
@pytest.mark.parametrize("size", TURN_SIZES)
@pytest.mark.parametrize("dataset", DATASETS)
def test_turn(benchmark: Benchmark, dataset: Dataset, size: int, contender: str) -> None:
    """The history counted again after one more message, as an agent does every turn."""
    benchmark.group = f"turn {dataset} {size}"
    TURN[contender](benchmark, dataset, size)
