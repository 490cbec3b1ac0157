"""Every shared real transcript through every strategy at 10%, 25% and 50% of its size."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from transcripts import load_transcript, requires_transcripts, transcript_paths

from neuron_context import (
    CompositeStrategy,
    ContextStrategy,
    ExtractiveSummarizer,
    Message,
    Role,
    SlidingWindowStrategy,
    StripToolCallsStrategy,
    SummarizationStrategy,
    TokenCounter,
    ToolResultClearingStrategy,
    validate,
)

FRACTIONS = (0.10, 0.25, 0.50)
COUNTER = TokenCounter()


def _strategies(budget: int) -> dict[str, ContextStrategy]:
    window = SlidingWindowStrategy(10, budget)
    clearing = ToolResultClearingStrategy(3, budget)
    summarize = SummarizationStrategy(ExtractiveSummarizer(), 8, budget, retries=0)
    return {
        "window": window,
        "clearing": clearing,
        "strip": StripToolCallsStrategy(budget),
        "summarize": summarize,
        "composite": CompositeStrategy([clearing, summarize, window], budget),
    }


def _systems(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.role is Role.SYSTEM]


@requires_transcripts
@pytest.mark.parametrize("path", transcript_paths(), ids=lambda p: Path(p).stem)
def test_every_strategy_keeps_transcript_well_formed(path: Path) -> None:
    """Output is well formed, keeps every system message and never costs more."""
    messages = load_transcript(path)
    before = COUNTER.estimate_messages(messages)
    for fraction in FRACTIONS:
        budget = int(before * fraction)
        for name, strategy in _strategies(budget).items():
            output = anyio.run(strategy.compact, messages)
            validate(output)
            assert _systems(output) == _systems(messages), (name, fraction)
            assert strategy.token_estimate(output) <= before, (name, fraction)
