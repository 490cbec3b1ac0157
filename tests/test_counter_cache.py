"""Property tests of the counters' caches (neuron_context._counting.base).

Two caches: each message's cost, stored on the message per counter configuration, and
each counter's memo of the last few long histories it counted with their totals.
Counting through them must always give what a full recount gives; both stay small,
nothing global keeps messages alive, and counters with different settings never read
each other's cached costs. Last, the sliding window's tail-only cut (another shortcut
for long histories) must agree with the full conversation structure.
"""

from __future__ import annotations

import copy
import gc
import pickle
import weakref
from collections.abc import Sequence

import anyio
import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)
from strategies import conversations, counters, well_formed_conversations

from neuron_context import (
    BaseCounter,
    CompositeStrategy,
    Message,
    SlidingWindowStrategy,
    StripToolCallsStrategy,
    TokenCounter,
    ToolResultClearingStrategy,
    ToolUse,
)
from neuron_context._counting import base as _counter
from neuron_context._counting.base import _CACHE_SLOTS, _MEMO_ENTRIES, _MEMO_MIN_LENGTH
from neuron_context._messages.conversation import Structure, cut_keeping_last, next_safe_cut


def fresh(messages: Sequence[Message]) -> list[Message]:
    """Equal messages with an empty cache (``attrs.evolve`` builds new objects)."""
    return [attrs.evolve(message) for message in messages]


def recount(counter: BaseCounter, messages: Sequence[Message]) -> int:
    """The full recount: each message priced from its blocks, bypassing every cache."""
    return sum(counter.message_overhead + counter.estimate_content(m.content) for m in messages)


def cache_sizes(messages: Sequence[Message]) -> list[int]:
    """How many costs each message has cached."""
    return [len(m._costs) if m._costs is not None else 0 for m in messages]


def _chunks() -> st.SearchStrategy[list[Message]]:
    return well_formed_conversations(max_turns=4, running=False, summaries=False)


class CachedHistory(RuleBasedStateMachine):
    """An agent loop: the history grows, gets compacted, and is counted by many counters.

    Every list goes through the history memo (its minimum length is lowered to 1).
    """

    def __init__(self) -> None:
        super().__init__()
        self.history: list[Message] = []
        self.counter = TokenCounter()
        self.patch = pytest.MonkeyPatch()
        self.patch.setattr(_counter, "_MEMO_MIN_LENGTH", 1)

    def teardown(self) -> None:
        """Restore the memo's minimum length."""
        self.patch.undo()

    @initialize(messages=well_formed_conversations(running=False))
    def start(self, messages: list[Message]) -> None:
        """The first request."""
        self.history = list(messages)

    @rule(messages=_chunks())
    def append(self, messages: list[Message]) -> None:
        """A turn: the model answers, tools run, the user speaks."""
        self.history.extend(messages)

    @rule(counter=counters())
    def switch_counter(self, counter: TokenCounter) -> None:
        """Count with other settings from now on (evicts older entries of the cache)."""
        self.counter = counter

    @rule(window=st.integers(0, 12))
    def window(self, window: int) -> None:
        """Compact with a sliding window."""
        self.history = SlidingWindowStrategy(window, counter=self.counter).apply(self.history)

    @rule(keep=st.integers(0, 4), inputs=st.booleans())
    def clear(self, keep: int, inputs: bool) -> None:
        """Clear old tool results (new message objects replace the cleared ones)."""
        strategy = ToolResultClearingStrategy(keep, counter=self.counter, clear_tool_inputs=inputs)
        self.history = strategy.apply(self.history)

    @precondition(lambda self: len(self.history) > 0)
    @rule(fraction=st.floats(0.0, 1.0))
    def composite(self, fraction: float) -> None:
        """Compact with a composite, which re-measures between its strategies."""
        budget = int(self.counter.estimate_messages(self.history) * fraction)
        strategy = CompositeStrategy(
            [
                ToolResultClearingStrategy(2),
                StripToolCallsStrategy(),
                SlidingWindowStrategy(6),
            ],
            budget,
            counter=self.counter,
        )
        self.history = anyio.run(strategy.compact, self.history)

    @rule(cut=st.integers(0, 5))
    def count_a_prefix(self, cut: int) -> None:
        """A shorter list (what was sent a few turns ago) is counted right too."""
        prefix = self.history[: max(0, len(self.history) - cut)]
        assert self.counter.estimate_messages(prefix) == recount(self.counter, prefix)

    @rule(data=st.data())
    def replace_one(self, data: st.DataObject) -> None:
        """A message in the middle replaced by an equal copy or another message."""
        if not self.history:
            return
        index = data.draw(st.integers(0, len(self.history) - 1))
        other = data.draw(st.sampled_from(self.history))
        self.history = [*self.history[:index], attrs.evolve(other), *self.history[index + 1 :]]

    @rule()
    def count_as_tuple(self) -> None:
        """A tuple is counted like the list it equals."""
        history = tuple(self.history)
        assert self.counter.estimate_messages(history) == recount(self.counter, history)

    @rule()
    def count_each(self) -> None:
        """Single-message counts read the same cache."""
        for message in self.history:
            cost = self.counter.estimate_message(message)
            assert cost == self.counter.message_overhead + self.counter.estimate_content(
                message.content
            )

    @invariant()
    def incremental_equals_full_recount(self) -> None:
        """The cached count equals a recount and a count by a fresh counter on fresh copies."""
        counter = self.counter
        cached = counter.estimate_messages(self.history)
        assert cached == recount(counter, self.history)
        assert cached == attrs.evolve(counter).estimate_messages(fresh(self.history))
        # Counted again: every cost now comes from the cache.
        assert counter.estimate_messages(self.history) == cached

    @invariant()
    def the_cache_is_bounded(self) -> None:
        """No message ever caches more than a few costs."""
        assert all(size <= _CACHE_SLOTS for size in cache_sizes(self.history))

    @invariant()
    def the_memo_is_bounded_and_right(self) -> None:
        """The counter remembers a few histories, each with its true total."""
        entries = self.counter._memo.entries
        assert len(entries) <= _MEMO_ENTRIES
        for snapshot, total in entries:
            assert total == recount(self.counter, snapshot)


TestCachedHistory = CachedHistory.TestCase
TestCachedHistory.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)


class TestCostCache:
    """The per-message cost cache of the counters."""

    @given(messages=well_formed_conversations(), new=_chunks(), counter=counters())
    def test_a_grown_history_counts_like_a_fresh_one(
        self, messages: list[Message], new: list[Message], counter: TokenCounter
    ) -> None:
        """Counting N messages, then N plus new ones, equals counting the whole afresh."""
        before = counter.estimate_messages(messages)
        assert before == recount(counter, messages)
        history = [*messages, *new]
        assert counter.estimate_messages(history) == recount(counter, history)
        assert counter.estimate_messages(history) == counter.estimate_messages(fresh(history))

    @given(
        messages=well_formed_conversations(min_turns=1),
        pool=st.lists(counters(), min_size=2, max_size=8),
        order=st.lists(st.integers(0, 7), max_size=30),
    )
    def test_counters_with_other_settings_never_read_each_others_costs(
        self, messages: list[Message], pool: list[TokenCounter], order: list[int]
    ) -> None:
        """Interleaved counters each get their own counts, even after evictions."""
        expected = [recount(counter, messages) for counter in pool]
        for drawn in [*order, *range(len(pool))]:
            counter = pool[drawn % len(pool)]
            assert counter.estimate_messages(messages) == expected[drawn % len(pool)]
            assert [counter.estimate_message(m) for m in messages[:3]] == [
                recount(counter, [m]) for m in messages[:3]
            ]
        assert all(size <= _CACHE_SLOTS for size in cache_sizes(messages))

    def test_near_identical_settings_are_kept_apart(self) -> None:
        """Counters differing in one setting each (same result for text) have own entries."""
        message = Message.user("x" * 10)
        variants = [
            TokenCounter(),
            TokenCounter(4.000000001),
            TokenCounter(message_overhead=5),
            TokenCounter(image_tokens=301),
        ]
        costs = [counter.estimate_message(message) for counter in variants]
        assert costs == [7, 7, 8, 7]
        assert message._costs is not None
        assert len(message._costs) == 4
        # The second pass reads the cache and still gives each counter its own value.
        assert [counter.estimate_message(message) for counter in variants] == costs

    def test_equal_counters_share_one_entry(self) -> None:
        """Two equal counters are the same rules: one cached cost serves both."""
        message = Message.user("hello world")
        TokenCounter().estimate_message(message)
        TokenCounter(4).estimate_message(message)
        assert message._costs is not None
        assert len(message._costs) == 1

    def test_the_cache_holds_at_most_four_costs(self) -> None:
        """Counting one message with ten configurations keeps only the newest four."""
        message = Message.user("some text to count")
        pool = [TokenCounter(message_overhead=n) for n in range(10)]
        for counter in pool:
            counter.estimate_message(message)
        assert cache_sizes([message]) == [4]
        assert [counter.estimate_message(message) for counter in pool] == [n + 5 for n in range(10)]
        assert cache_sizes([message]) == [4]

    def test_a_changed_message_is_a_new_message_with_an_empty_cache(self) -> None:
        """``attrs.evolve`` (how strategies change a message) never carries the cache."""
        counter = TokenCounter()
        message = Message.user("x" * 40)
        assert counter.estimate_message(message) == 14
        shorter = attrs.evolve(message, content="x" * 4)
        assert shorter._costs is None
        assert counter.estimate_message(shorter) == 5
        assert counter.estimate_message(message) == 14

    def test_short_lists_are_not_kept_alive_by_counting(self) -> None:
        """Messages counted one by one or in short lists are garbage once the caller drops them."""
        counter = TokenCounter()
        history = [Message.user(f"message {i}") for i in range(_MEMO_MIN_LENGTH - 1)]
        counter.estimate_messages(history)
        for message in history[:10]:
            counter.estimate_message(message)
        refs = [weakref.ref(message) for message in history]
        del history, message
        gc.collect()
        assert all(ref() is None for ref in refs)
        assert counter._memo.entries == ()

    def test_nothing_global_keeps_long_histories_alive(self) -> None:
        """A long history is garbage once the caller drops it and its counter."""
        counter = TokenCounter()
        history = [Message.user(f"message {i}") for i in range(1_000)]
        counter.estimate_messages(history)
        refs = [weakref.ref(message) for message in history]
        del history, counter
        gc.collect()
        assert all(ref() is None for ref in refs)

    def test_a_counter_remembers_only_the_last_few_histories(self) -> None:
        """After four other long histories, a dropped history is garbage: memory is bounded."""
        counter = TokenCounter()
        first = [Message.user(f"first {i}") for i in range(200)]
        counter.estimate_messages(first)
        refs = [weakref.ref(message) for message in first]
        del first
        for turn in range(_MEMO_ENTRIES):
            counter.estimate_messages([Message.user(f"{turn} {i}") for i in range(100)])
        gc.collect()
        assert all(ref() is None for ref in refs)
        assert len(counter._memo.entries) == _MEMO_ENTRIES

    def test_the_memo_is_not_part_of_the_counter(self) -> None:
        """Counting leaves a counter equal to a new one; copies and pickles start empty."""
        counter = TokenCounter()
        counter.estimate_messages([Message.user(str(i)) for i in range(500)])
        assert counter == TokenCounter()
        assert hash(counter) == hash(TokenCounter())
        assert "memo" not in repr(counter)
        assert copy.deepcopy(counter)._memo.entries == ()
        assert pickle.loads(pickle.dumps(counter))._memo.entries == ()
        assert attrs.evolve(counter)._memo.entries == ()

    def test_a_grown_history_counts_only_the_new_messages(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Counting N + 2 messages after N prices just the two new ones."""
        counter = TokenCounter()
        history = [Message.user("x" * 40) for _ in range(500)]
        assert counter.estimate_messages(history) == 500 * 14
        priced: list[int] = []
        original = TokenCounter._uncached_costs

        def spy(self: TokenCounter, messages: Sequence[Message]) -> list[int]:
            priced.append(len(messages))
            return original(self, messages)

        monkeypatch.setattr(TokenCounter, "_uncached_costs", spy)
        history += [Message.user("y" * 4), Message.assistant("z" * 8)]
        assert counter.estimate_messages(history) == 500 * 14 + 5 + 6
        assert priced == [2]
        assert counter.estimate_messages(tuple(history)) == 500 * 14 + 5 + 6
        assert priced == [2]

    def test_a_changed_middle_is_not_taken_for_a_prefix(self) -> None:
        """Replacing, removing or inserting a message in a counted history is noticed."""
        counter = TokenCounter()
        history = [Message.user("x" * 40) for _ in range(300)]
        assert counter.estimate_messages(history) == 300 * 14
        replaced = [*history[:100], Message.user("x" * 4), *history[101:]]
        assert counter.estimate_messages(replaced) == 299 * 14 + 5
        assert counter.estimate_messages(history[:150] + history[151:]) == 299 * 14
        inserted = [*history[:10], Message.user(""), *history[10:]]
        assert counter.estimate_messages(inserted) == 300 * 14 + 4
        assert counter.estimate_messages(history) == 300 * 14

    def test_equal_copies_of_a_counted_history_use_its_total(self) -> None:
        """A history rebuilt from the wire (equal, new objects) is counted right."""
        counter = TokenCounter()
        history = [Message.user(f"message {i}") for i in range(100)]
        total = counter.estimate_messages(history)
        rebuilt = [*fresh(history), Message.user("x" * 40)]
        assert counter.estimate_messages(rebuilt) == total + 14

    def test_a_cached_cost_is_not_part_of_the_value(self) -> None:
        """The cache does not change equality or the repr of a message."""
        counted = Message.user("hello")
        TokenCounter().estimate_message(counted)
        assert counted == Message.user("hello")
        assert repr(counted) == repr(Message.user("hello"))

    @pytest.mark.parametrize("repeat", [2, 3])
    def test_the_same_message_twice_in_a_history_counts_twice(self, repeat: int) -> None:
        """A history may hold one message object several times; each occurrence counts."""
        message = Message.user("x" * 40)
        assert TokenCounter().estimate_messages([message] * repeat) == 14 * repeat
        assert TokenCounter().estimate_messages([message] * repeat) == 14 * repeat


_SHAPES = ("system", "user", "assistant", "calls", "tool")


def _shaped(shapes: list[str]) -> list[Message]:
    """Any sequence of roles, tool messages answering nothing or anything."""
    messages: list[Message] = []
    for index, shape in enumerate(shapes):
        if shape == "system":
            messages.append(Message.system("s"))
        elif shape == "user":
            messages.append(Message.user("u"))
        elif shape == "assistant":
            messages.append(Message.assistant("a"))
        elif shape == "calls":
            messages.append(Message.assistant(tool_uses=[ToolUse(id=f"t{index}", name="f")]))
        else:
            messages.append(Message.tool_result(f"t{index - 1}", "r"))
    return messages


class TestTailCut:
    """The sliding window's cut, computed from the tail of a long history."""

    @given(
        messages=st.one_of(
            conversations(), st.lists(st.sampled_from(_SHAPES), max_size=30).map(_shaped)
        ),
        skip_summaries=st.booleans(),
    )
    def test_it_agrees_with_the_full_structure(
        self, messages: list[Message], skip_summaries: bool
    ) -> None:
        """Every safe cut and every window cut equals the one Structure computes."""
        structure = Structure.of(messages)
        for index in range(-1, len(messages) + 2):
            assert next_safe_cut(messages, index) == structure.safe_cut(index)
        for n in range(len(messages) + 2):
            assert cut_keeping_last(
                messages, n, skip_summaries=skip_summaries
            ) == structure.cut_keeping_last(n, skip_summaries=skip_summaries)
