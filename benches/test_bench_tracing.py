"""What tracing costs a compaction when nobody traces: the direct-call span as a no-op.

Every strategy's ``compact`` and ``apply`` open a compaction span when called directly
(``neuron_context._tracing.trace_compactions``). Without a tracer provider (the common
case: many installs carry ``opentelemetry-api`` for another package) that must cost
well under a microsecond a call. A :func:`~workloads.paired` run (CPU time, back to back
in rotating order) times ``CALLS`` calls of a strategy that has nothing to remove, the
traced ``apply`` (``ours``) against the same function unwrapped (``untraced``), and
records the difference per call, in nanoseconds, as ``overhead_ns``. Target: under
1,000 ns (measured: 460 to 490 ns on a 2-core machine at load 10, where an empty Python call
costs 40 to 100 ns).
"""

from __future__ import annotations

import pytest
from workloads import Benchmark, Contenders, paired

from neuron_context import Message, SlidingWindowStrategy

CALLS = 2_000
"""Calls per contender per round (one call costs microseconds: too little to time)."""


@pytest.mark.parametrize("size", [10, 100])
def test_noop_span_of_a_direct_apply(benchmark: Benchmark, size: int) -> None:
    """``strategy.apply(messages)`` with no tracer provider, against the unwrapped one."""
    benchmark.group = f"tracing-noop {size}"
    messages = [Message.user(f"message {n}") for n in range(size)]
    strategy = SlidingWindowStrategy(size, 0)  # nothing to remove
    untraced = SlidingWindowStrategy.apply.__wrapped__  # type: ignore[attr-defined]

    def traced_calls() -> object:
        for _ in range(CALLS):
            strategy.apply(messages)
        return strategy.apply(messages)

    def untraced_calls() -> object:
        for _ in range(CALLS):
            untraced(strategy, messages)
        return untraced(strategy, messages)

    def make() -> Contenders:
        return {"ours": traced_calls, "untraced": untraced_calls}

    results = paired(benchmark, make, rounds=30)
    assert results["ours"] == results["untraced"] == messages
    if benchmark.enabled:
        info = benchmark.extra_info
        overhead = (info["cpu_ours"] - info["cpu_untraced"]) / (CALLS + 1) * 1e9
        info["overhead_ns"] = overhead
        assert overhead < 1_000
