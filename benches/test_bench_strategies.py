"""Compacting a history over budget, as an agent does each turn, beside LangChain's
``trim_messages``.

Every group is a :func:`~workloads.paired` run (CPU time, ours and the peer back to
back in rotating order, the median of the per-round ratios). Each round is one agent
turn: a freshly built message arrives (and garbage is allocated and collected between
rounds), the strategy checks the history against its budget
(``should_compact(messages, token_estimate(messages))``) and compacts it. The history
was checked and compacted at the previous turns too (``compact-window``,
``compact-clearing``, ``compact-composite``); ``compact-composite-cold`` is the first turn
of a process instead (a new strategy and counter, and message objects never counted,
every round). ``compact-default`` is one ``default_stack`` compaction of the whole
history, as a first compaction or ``neuron-context compact`` runs it (a new stack every
round, so nothing of an earlier round is remembered; its offline summary included).
The peer trims the whole history every turn with ``trim_messages(strategy="last",
start_on="human", include_system=True, token_counter=count_tokens_approximately)``.
Targets: at least 10x faster at 100k messages; ``compact-default`` no slower than the
peer at 100k.
"""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import count_tokens_approximately, trim_messages
from workloads import (
    DATASETS,
    SIZES,
    Benchmark,
    Contenders,
    Dataset,
    fresh,
    paired,
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
    default_stack,
    validate,
)

BUDGET = 100_000
"""The token budget: a 128k-token model with room left for the reply."""
WINDOW = 200
"""Messages the sliding window keeps."""
KEEP_RESULTS = 20
"""Tool results the clearing strategy keeps."""
KINDS = ("window", "clearing", "composite", "composite-cold", "default")


def _rounds(size: int, budget: float = 1e6) -> int:
    return max(3, min(30, int(budget // size)))


def _composite(counter: TokenCounter | None = None) -> CompositeStrategy:
    return CompositeStrategy(
        [ToolResultClearingStrategy(KEEP_RESULTS), SlidingWindowStrategy(WINDOW)],
        BUDGET,
        counter=counter,
    )


def _strategy(kind: str) -> ContextStrategy:
    if kind == "window":
        return SlidingWindowStrategy(WINDOW, BUDGET)
    if kind == "clearing":
        return ToolResultClearingStrategy(KEEP_RESULTS, BUDGET)
    return _composite()


def _trim(messages: list[BaseMessage]) -> list[BaseMessage]:
    trimmed: list[BaseMessage] = trim_messages(
        messages,
        max_tokens=BUDGET,
        strategy="last",
        start_on="human",
        include_system=True,
        token_counter=count_tokens_approximately,
    )
    return trimmed


def _turn(
    strategy: ContextStrategy, runner: asyncio.Runner, history: list[Message]
) -> list[Message]:
    if strategy.should_compact(history, strategy.token_estimate(history)):
        return runner.run(strategy.compact(history))
    return history


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dataset", DATASETS)
def test_compact(benchmark: Benchmark, dataset: Dataset, size: int, kind: str) -> None:
    """One agent turn over budget: check, compact; beside ``trim_messages``."""
    benchmark.group = f"compact-{kind} {dataset} {size}"
    work = workload(dataset, size)
    history = list(work.messages)
    peer: list[BaseMessage] = list(work.peer)
    with asyncio.Runner() as runner:
        if kind == "default":

            def make() -> Contenders:
                stack = default_stack(BUDGET)
                return {
                    "ours": lambda: _turn(stack, runner, history),
                    "peer": lambda: _trim(peer),
                }

        elif kind == "composite-cold":

            def make() -> Contenders:
                strategy, messages = _composite(TokenCounter()), fresh(history)
                return {
                    "ours": lambda: _turn(strategy, runner, messages),
                    "peer": lambda: _trim(peer),
                }

        else:
            strategy = _strategy(kind)
            _turn(strategy, runner, history)  # the previous turns

            def make() -> Contenders:
                ours, theirs = work.new_turn(len(history))
                history.append(ours)
                peer.append(theirs)
                return {
                    "ours": lambda: _turn(strategy, runner, history),
                    "peer": lambda: _trim(peer),
                }

        results = paired(benchmark, make, rounds=_rounds(size))
    output = results["ours"]
    assert isinstance(output, list)
    validate(output)
    trimmed = results["peer"]
    assert isinstance(trimmed, list)
    assert 0 < count_tokens_approximately(trimmed) <= BUDGET
    if kind == "clearing":
        before = TokenCounter().estimate_messages(history)
        assert TokenCounter().estimate_messages(output) < before
    elif kind == "window":
        assert sum(m.role is not Role.SYSTEM for m in output) <= WINDOW
        assert output[0].role is Role.SYSTEM
    else:
        assert TokenCounter().estimate_messages(output) <= BUDGET
        assert output[0].role is Role.SYSTEM
