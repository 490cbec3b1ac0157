"""Property tests of the collection strategies: CONTRACT.md §3 invariants 1-6.

Each collection strategy (superseded calls, processed images, re-fetched URLs, stale
file reads, repeated calls, large results) alone and inside random composites with the
other built-in strategies, on generated conversations whose calls repeat (see
``repetitive_conversations`` in ``tests/strategies.py``) and on malformed ones; then
every shared real transcript through each.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import (
    COLLECTION_KEYS,
    Case,
    cases,
    collection_stacks,
    collection_strategies,
    collection_user_first_stacks,
    malformed_conversations,
    repetitive_conversations,
    well_formed_conversations,
)
from transcripts import load_transcript, requires_transcripts, transcript_paths

from neuron_context import (
    ContextStrategy,
    Message,
    Role,
    StripProcessedImagesStrategy,
    SupersededToolCallsStrategy,
    TokenCounter,
    ToolResult,
    ToolUse,
    validate,
)
from neuron_context.strategies import (
    CollapseRepeatedCallsStrategy,
    DedupeFetchesStrategy,
    StaleFileReadsStrategy,
    TruncateLargeResultsStrategy,
)


def run(strategy: ContextStrategy, messages: Sequence[Message]) -> list[Message]:
    """``strategy.compact(messages)`` (the asynchronous interface every strategy has)."""
    return anyio.run(strategy.compact, messages)


def derived(new: Message, old: Message) -> bool:
    """Whether ``new`` may come from ``old``: itself, or the same role with a subset of its
    calls and results (ids and error flags kept) and its other blocks edited in place."""
    if new is old:
        return True
    if new.role is not old.role:
        return False
    old_uses = {(u.id, u.name) for u in old.content if isinstance(u, ToolUse)}
    old_results = {(r.tool_use_id, r.is_error) for r in old.content if isinstance(r, ToolResult)}
    for block in new.content:
        if isinstance(block, ToolUse) and (block.id, block.name) not in old_uses:
            return False
        if isinstance(block, ToolResult) and (block.tool_use_id, block.is_error) not in old_results:
            return False
    return True


def in_order(before: Sequence[Message], after: Sequence[Message]) -> None:
    """Every output message comes from a later input message than the one before it."""
    start = 0
    for message in after:
        for index in range(start, len(before)):
            if derived(message, before[index]):
                start = index + 1
                break
        else:
            msg = f"{message!r} comes from no later input message"
            raise AssertionError(msg)


def first_turn(messages: Sequence[Message]) -> Role | None:
    """The role of the first non-system message."""
    return next((m.role for m in messages if m.role is not Role.SYSTEM), None)


def check(
    strategy: ContextStrategy,
    messages: Sequence[Message],
    *,
    well_formed: bool = True,
    user_first: bool = True,
) -> list[Message]:
    """Run ``strategy`` and assert invariants 1-5 (1 only for a well-formed input) and,
    with ``user_first``, that an input starting on a user message gives an output that
    does too (a collection strategy removes no user message; a window may)."""
    copies = copy.deepcopy(list(messages))
    objects = tuple(messages)
    output = run(strategy, messages)
    assert type(output) is list
    assert all(isinstance(m, Message) for m in output)
    assert all(a is b for a, b in zip(messages, objects, strict=True))  # 2. no mutation
    assert list(messages) == copies
    if well_formed:
        validate(output)  # 1. well formed
        if user_first and first_turn(messages) is Role.USER:
            assert first_turn(output) in {Role.USER, None}  # starts on a user message
    systems = [m for m in messages if m.role is Role.SYSTEM]
    assert [m for m in output if m.role is Role.SYSTEM] == systems  # 3. system messages
    in_order(messages, output)  # 4. order
    assert strategy.token_estimate(output) <= strategy.token_estimate(messages)  # 5.
    return output


class TestCollectionStrategies:
    """Invariants of each collection strategy on its own."""

    @given(cases(collection_strategies, repetitive_conversations()))
    def test_invariants_on_repetitive_conversations(self, case: Case[ContextStrategy]) -> None:
        """Well formed in and out, no mutation, systems kept, order kept, never worse."""
        check(case.strategy, case.messages)

    @given(cases(collection_strategies))
    def test_invariants_on_generated_conversations(self, case: Case[ContextStrategy]) -> None:
        """The invariants hold on the general conversation generator too."""
        check(case.strategy, case.messages)

    @given(cases(collection_strategies, malformed_conversations()))
    def test_malformed_input_raises_nothing_and_keeps_the_rest(
        self, case: Case[ContextStrategy]
    ) -> None:
        """On a malformed conversation the invariants other than 1 hold and nothing raises."""
        check(case.strategy, case.messages, well_formed=False)

    @given(cases(collection_strategies, repetitive_conversations()))
    def test_nothing_left_to_do_returns_an_equal_list(self, case: Case[ContextStrategy]) -> None:
        """A second pass finds nothing to do and returns an equal list (invariant 6)."""
        strategy = case.strategy
        once = run(strategy, case.messages)
        twice = run(strategy, once)
        assert type(twice) is list
        assert twice == once

    @given(
        st.sampled_from(
            (
                SupersededToolCallsStrategy(COLLECTION_KEYS),
                DedupeFetchesStrategy(),
                StaleFileReadsStrategy(max_age=0),
                CollapseRepeatedCallsStrategy(similarity=0.5),
                TruncateLargeResultsStrategy(max_result_tokens=1),
            )
        ),
        well_formed_conversations(tools=False),
    )
    def test_no_tool_calls_returns_an_equal_list(
        self, strategy: ContextStrategy, messages: list[Message]
    ) -> None:
        """A conversation without tool calls comes back as an equal list."""
        output = run(strategy, messages)
        assert type(output) is list
        assert output == messages

    @given(repetitive_conversations())
    def test_no_answered_image_returns_an_equal_list(self, messages: list[Message]) -> None:
        """With no assistant message after an image, the images strategy changes nothing."""
        unanswered = [m for m in messages if m.role is not Role.ASSISTANT]
        output = StripProcessedImagesStrategy().apply(unanswered)
        assert output == list(unanswered)

    @given(cases(collection_strategies), st.integers(0, 10_000))
    def test_should_compact_is_the_strict_trigger(
        self, case: Case[ContextStrategy], count: int
    ) -> None:
        """should_compact is token_count > max_tokens; token_estimate is the counter's."""
        strategy = case.strategy
        assert strategy.should_compact(case.messages, count) == (count > strategy.max_tokens)  # type: ignore[attr-defined]
        assert strategy.token_estimate(case.messages) == case.estimate


class TestCollectionComposites:
    """Invariants of random composites mixing collection and other built-in strategies."""

    @given(cases(collection_stacks, repetitive_conversations()))
    def test_invariants_inside_composites(self, case: Case[ContextStrategy]) -> None:
        """A composite of collection and other strategies keeps invariants 1-5."""
        check(case.strategy, case.messages, user_first=False)

    @given(cases(collection_user_first_stacks, repetitive_conversations()))
    def test_composites_with_user_first_windows_start_on_a_user_message(
        self, case: Case[ContextStrategy]
    ) -> None:
        """With windows set to start_on_user, a composite keeps a first user message."""
        check(case.strategy, case.messages, user_first=True)

    @given(cases(collection_stacks, malformed_conversations()))
    def test_composites_on_malformed_input(self, case: Case[ContextStrategy]) -> None:
        """On malformed input a composite raises nothing and keeps invariants 2-5."""
        check(case.strategy, case.messages, well_formed=False)


COUNTER = TokenCounter()
TRANSCRIPT_STRATEGIES: dict[str, ContextStrategy] = {
    "superseded": SupersededToolCallsStrategy(
        {"Write": "file_path", "create_python_script": "path", **COLLECTION_KEYS}
    ),
    "images": StripProcessedImagesStrategy(),
    "fetches": DedupeFetchesStrategy(),
    "reads": StaleFileReadsStrategy(max_age=20),
    "repeats": CollapseRepeatedCallsStrategy(similarity=0.95),
    "large": TruncateLargeResultsStrategy(),
}


@requires_transcripts
@pytest.mark.parametrize("path", transcript_paths(), ids=lambda p: Path(p).stem)
def test_every_transcript_through_every_collection_strategy(path: Path) -> None:
    """Each strategy keeps a real transcript well formed, its systems kept, never worse,
    and a second pass changes nothing."""
    messages = load_transcript(path)
    for name, strategy in TRANSCRIPT_STRATEGIES.items():
        output = check(strategy, messages)
        assert run(strategy, output) == output, name
