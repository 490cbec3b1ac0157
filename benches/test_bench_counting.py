"""Counting a history, cold and once per agent turn, and parsing it, beside LangChain.

Every group is a :func:`~workloads.paired` run (CPU time, ours and the peer back to
back in rotating order, the median of the per-round ratios):

- ``count-cold``: ``TokenCounter().estimate_messages`` on messages never counted (a new
  counter and new message objects every round) vs ``count_tokens_approximately`` on the
  same conversation as LangChain messages. Target: at least 5x.
- ``turn``: one agent turn at N messages: the history grows by a freshly built message
  (garbage allocated and collected between rounds) and is counted again, vs LangChain's
  full recount of the grown history. Target: at least 100x at 20k for a loop that keeps
  its history. Three loops:

  - ``running``: the loop keeps a :class:`~neuron_context.RunningCount` and adds the new
    message (the agent loop's path: the cost is the new message's);
  - ``memo``: the loop calls ``estimate_messages(history)`` on the list it keeps (the
    counter's history memo compares the known prefix at C speed);
  - ``reparse``: the loop keeps only wire dicts and re-parses them every turn
    (``from_openai``, then count) vs ``convert_to_messages`` then
    ``count_tokens_approximately``.

- ``parse``: ``from_openai`` vs ``convert_to_messages`` on the same Chat Completions
  dicts. Target: no slower.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, convert_to_messages
from langchain_core.messages.utils import count_tokens_approximately
from workloads import (
    DATASETS,
    SIZES,
    TURN_SIZES,
    Benchmark,
    Contenders,
    Dataset,
    agreeable,
    expected_total,
    fresh,
    paired,
    priced,
    workload,
)

from neuron_context import Message, TokenCounter
from neuron_context.formats import from_openai, to_openai

LOOPS = ("running", "memo", "reparse")


def _rounds(size: int, budget: float = 4e5) -> int:
    return max(3, min(50, int(budget // size)))


@functools.cache
def _wire(dataset: Dataset, size: int) -> tuple[dict[str, Any], ...]:
    """The workload as Chat Completions dicts (built once)."""
    return tuple(to_openai(list(workload(dataset, size).messages)))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dataset", DATASETS)
def test_count_cold(benchmark: Benchmark, dataset: Dataset, size: int) -> None:
    """A whole history that was never counted before."""
    benchmark.group = f"count-cold {dataset} {size}"
    work = workload(dataset, size)
    peer = list(work.peer)

    def make() -> Contenders:
        counter, messages = TokenCounter(), fresh(work.messages)
        return {
            "ours": lambda: counter.estimate_messages(messages),
            "peer": lambda: count_tokens_approximately(peer),
        }

    results = paired(benchmark, make, rounds=_rounds(size))
    assert results["ours"] == expected_total(dataset, size)
    assert agreeable(expected_total(dataset, size), results["peer"])  # type: ignore[arg-type]


def _turns(
    dataset: Dataset, size: int, loop: str
) -> tuple[Callable[[], Contenders], list[Message]]:
    """Each call: one more fresh message in the history, and the turn of each side."""
    work = workload(dataset, size)
    history = list(work.messages)
    peer_history: list[BaseMessage] = list(work.peer)
    wire = list(_wire(dataset, size))
    counter = TokenCounter()
    running = counter.running(history)
    counter.estimate_messages(history)  # the previous turns
    counter.estimate_messages(history)

    def make() -> Contenders:
        ours_new, peer_new = work.new_turn(len(history))
        history.append(ours_new)
        peer_history.append(peer_new)
        if loop == "running":
            return {
                "ours": lambda: running.add([ours_new]),
                "peer": lambda: count_tokens_approximately(peer_history),
            }
        if loop == "memo":
            return {
                "ours": lambda: counter.estimate_messages(history),
                "peer": lambda: count_tokens_approximately(peer_history),
            }
        wire.extend(to_openai([ours_new]))
        return {
            "ours": lambda: counter.estimate_messages(from_openai(wire)),
            "peer": lambda: count_tokens_approximately(convert_to_messages(wire)),
        }

    return make, history


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("size", TURN_SIZES)
@pytest.mark.parametrize("dataset", DATASETS)
def test_turn(benchmark: Benchmark, dataset: Dataset, size: int, loop: str) -> None:
    """The history counted again after one more message, as an agent does every turn."""
    benchmark.group = f"turn-{loop} {dataset} {size}"
    make, history = _turns(dataset, size, loop)
    results = paired(benchmark, make, rounds=_rounds(size, 1e6 if loop != "reparse" else 2e5))
    assert results["ours"] == priced(history)
    assert agreeable(priced(history), results["peer"])  # type: ignore[arg-type]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dataset", DATASETS)
def test_parse(benchmark: Benchmark, dataset: Dataset, size: int) -> None:
    """Chat Completions dicts read into messages."""
    benchmark.group = f"parse {dataset} {size}"
    wire = list(_wire(dataset, size))
    results = paired(
        benchmark,
        lambda: {"ours": lambda: from_openai(wire), "peer": lambda: convert_to_messages(wire)},
        rounds=_rounds(size),
    )
    parsed = results["ours"]
    assert isinstance(parsed, list)
    assert all(isinstance(message, Message) for message in parsed)
    assert TokenCounter().estimate_messages(parsed) == expected_total(dataset, size)
