"""Property tests of the counters' caches, through behaviour only.

Two caches: each message's cost per counter class and configuration, and each counter's
memo of the last long history it counted. Counting through them must always give what a
full recount gives; they stay small, never keep a dropped message alive, are no part of
any value, and counters with different settings (or classes) never read each other's
cached costs. Last, the sliding window's tail-only cut (another shortcut for long
histories) must agree with the full conversation structure.
"""

from __future__ import annotations

import copy
import gc
import pickle
import threading
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
    CompositeStrategy,
    Message,
    Role,
    SlidingWindowStrategy,
    StripToolCallsStrategy,
    TokenCounter,
    ToolResultClearingStrategy,
    ToolUse,
)
from neuron_context.strategies import Structure


def fresh(messages: Sequence[Message]) -> list[Message]:
    """Equal messages with an empty cache (``attrs.evolve`` builds new objects)."""
    return [attrs.evolve(message) for message in messages]


def recount(counter: TokenCounter, messages: Sequence[Message]) -> int:
    """The full recount: each message priced from its blocks, bypassing every cache."""
    return sum(counter.message_overhead + counter.estimate_content(m.content) for m in messages)


MEMO_MIN_LENGTH = 64
"""Lists at least this long go through a counter's history memo."""
STALE = 8
"""A remembered history no count matched this many times in a row is let go."""


@attrs.frozen
class Recording(TokenCounter):
    """A TokenCounter that records each batch of texts it counts.

    Changing how texts are counted takes it onto the general rules, which cache each
    message's cost: what it records is what was not cached.
    """

    batches: list[list[str]] = attrs.field(factory=list, kw_only=True, eq=False, repr=False)

    def estimate_texts(self, texts: Sequence[str]) -> list[int]:
        """Record the batch, then count it as the heuristic does."""
        self.batches.append(list(texts))
        return super().estimate_texts(texts)


@attrs.frozen
class Doubling(TokenCounter):
    """A subclass that counts every text twice as heavy as its parent."""

    def estimate_text(self, text: str) -> int:
        """Twice the heuristic's count."""
        return 2 * super().estimate_text(text)


def _chunks() -> st.SearchStrategy[list[Message]]:
    return well_formed_conversations(max_turns=4, running=False, summaries=False)


class CachedHistory(RuleBasedStateMachine):
    """An agent loop: the history grows, gets compacted, and is counted by many counters.

    The history starts long enough to go through the history memo.
    """

    def __init__(self) -> None:
        super().__init__()
        self.history: list[Message] = []
        self.counter: TokenCounter = TokenCounter()

    @initialize(messages=well_formed_conversations(running=False))
    def start(self, messages: list[Message]) -> None:
        """The first request, behind a long stretch of earlier chat."""
        earlier = [Message.user(f"earlier {i}") for i in range(MEMO_MIN_LENGTH)]
        self.history = [*earlier, *messages]

    @rule(messages=_chunks())
    def append(self, messages: list[Message]) -> None:
        """A turn: the model answers, tools run, the user speaks."""
        self.history.extend(messages)

    @rule(counter=st.one_of(counters(), st.builds(Recording), st.builds(Doubling)))
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

    @rule(window=st.integers(MEMO_MIN_LENGTH, 2 * MEMO_MIN_LENGTH))
    def count_a_strategy_output(self, window: int) -> None:
        """A strategy's output, counted between turns (a list that may grow beside the
        history: the memo remembers both)."""
        output = SlidingWindowStrategy(window, counter=self.counter).apply(self.history)
        assert self.counter.estimate_messages(output) == recount(self.counter, output)

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

    def test_near_identical_settings_are_kept_apart(self) -> None:
        """Counters differing in one setting each (same result for text) have own entries."""
        message = Message.user("x" * 10)
        variants = [
            Recording(),
            Recording(4.000000001),
            Recording(message_overhead=5),
            Recording(image_tokens=301),
        ]
        costs = [counter.estimate_message(message) for counter in variants]
        assert costs == [7, 7, 8, 7]
        assert all(counter.batches == [["x" * 10]] for counter in variants)
        # The second pass reads the cache and still gives each counter its own value.
        assert [counter.estimate_message(message) for counter in variants] == costs
        assert all(len(counter.batches) == 1 for counter in variants)

    def test_equal_counters_share_one_entry(self) -> None:
        """Two equal counters are the same rules: one cached cost serves both."""
        message = Message.user("hello world")
        first, second = Recording(), Recording(4)
        first.estimate_message(message)
        second.estimate_message(message)
        assert second.batches == []

    def test_the_cache_holds_at_most_four_costs(self) -> None:
        """Counting one message with ten configurations keeps only the newest four."""
        message = Message.user("some text to count")
        pool = [Recording(message_overhead=n) for n in range(10)]
        for counter in pool:
            counter.estimate_message(message)
        # The newest four are cached; the oldest were evicted and are counted again.
        assert [counter.estimate_message(message) for counter in pool[6:]] == [11, 12, 13, 14]
        assert [len(counter.batches) for counter in pool] == [1] * 10
        assert pool[0].estimate_message(message) == 5
        assert len(pool[0].batches) == 2

    def test_a_subclass_never_reads_its_parents_costs(self) -> None:
        """A subclass that counts text differently counts right after its parent counted."""
        message = Message.user("x" * 40)
        history = [Message.user(f"message {i}") for i in range(100)]
        assert TokenCounter().estimate_message(message) == 14
        assert TokenCounter().estimate_messages(history) == sum(
            4 + -(-len(f"message {i}") // 4) for i in range(100)
        )
        assert Doubling().estimate_message(message) == 4 + 20
        assert Doubling().estimate_messages(history) == sum(
            4 + 2 * -(-len(f"message {i}") // 4) for i in range(100)
        )
        assert TokenCounter().estimate_message(message) == 14

    def test_a_changed_message_is_a_new_message_with_an_empty_cache(self) -> None:
        """``attrs.evolve`` (how strategies change a message) never carries the cache."""
        counter = Recording()
        message = Message.user("x" * 40)
        assert counter.estimate_message(message) == 14
        shorter = attrs.evolve(message, content="x" * 4)
        assert counter.estimate_message(shorter) == 5
        assert counter.estimate_message(message) == 14
        assert counter.batches == [["x" * 40], ["x" * 4]]

    @pytest.mark.parametrize(
        "clone",
        [copy.copy, copy.deepcopy, lambda m: pickle.loads(pickle.dumps(m))],
        ids=["copy", "deepcopy", "pickle"],
    )
    def test_copies_and_pickles_start_without_costs(self, clone: object) -> None:
        """A copy or an unpickled message equals the original and caches its own costs."""
        counter = Recording()
        message = Message.user("x" * 40)
        counter.estimate_message(message)
        copied = clone(message)  # type: ignore[operator]
        assert copied == message
        assert counter.estimate_message(copied) == 14
        assert counter.batches == [["x" * 40], ["x" * 40]]

    def test_threads_counting_the_same_messages_agree(self) -> None:
        """Many threads and more configurations than cache slots: no error, right counts."""
        messages = [Message.user("y" * n) for n in range(200)]
        pool = [TokenCounter(message_overhead=n) for n in range(8)]
        pool += [Recording(message_overhead=n) for n in range(8)]
        errors: list[BaseException] = []

        def work(offset: int) -> None:
            try:
                for turn in range(40):
                    counter = pool[(offset + turn) % len(pool)]
                    expected = sum(counter.message_overhead + -(-n // 4) for n in range(200))
                    assert counter.estimate_messages(messages) == expected
                    for message in messages[::17]:
                        counter.estimate_message(message)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []

    def test_short_lists_are_not_kept_alive_by_counting(self) -> None:
        """Messages counted one by one or in short lists are garbage once the caller drops them."""
        counter = Recording()
        history = [Message.user(f"message {i}") for i in range(MEMO_MIN_LENGTH - 1)]
        counter.estimate_messages(history)
        for message in history[:10]:
            counter.estimate_message(message)
        refs = [weakref.ref(message) for message in history]
        del history, message
        gc.collect()
        assert all(ref() is None for ref in refs)

    def test_a_dropped_history_is_released_within_a_few_counts(self) -> None:
        """A long history counted twice (so remembered) is garbage once the caller drops
        it and the counter has counted other lists a few times, while the counter lives on."""
        for counter in (TokenCounter(), Recording()):
            history = [Message.user(f"message {i}") for i in range(1_000)]
            counter.estimate_messages(history)
            history.append(Message.user("one more"))
            counter.estimate_messages(history)
            refs = [weakref.ref(message) for message in history]
            del history
            other = [Message.user("x" * 40)] * 70
            for _ in range(STALE + 1):
                assert counter.estimate_messages(other) == 70 * 14
            gc.collect()
            assert all(ref() is None for ref in refs)

    def test_a_compaction_drops_what_it_removed(self) -> None:
        """After a window compacted a counted history, the counter holds none of the
        messages it dropped once the loop has gone on for a few turns."""
        counter = TokenCounter()
        history = [Message.user(f"message {i}") for i in range(10_000)]
        counter.estimate_messages(history)
        history.append(Message.assistant("reply"))
        counter.estimate_messages(history)
        strategy = SlidingWindowStrategy(100, counter=counter)
        kept = strategy.apply(history)
        assert strategy.token_estimate(kept) == counter.estimate_messages(kept)
        kept_ids = {id(message) for message in kept}
        dropped = [weakref.ref(m) for m in history if id(m) not in kept_ids]
        assert len(dropped) == 10_001 - 100
        del history
        for turn in range(STALE + 1):
            kept.append(Message.user(f"turn {turn}"))
            assert counter.estimate_messages(kept) == recount(counter, kept)
        gc.collect()
        assert all(ref() is None for ref in dropped)

    def test_the_memo_is_not_part_of_the_counter(self) -> None:
        """Counting leaves a counter equal to a new one; copies and pickles count the same."""
        counter = TokenCounter()
        history = [Message.user(str(i)) for i in range(500)]
        total = counter.estimate_messages(history)
        counter.estimate_messages(history)
        assert counter == TokenCounter()
        assert hash(counter) == hash(TokenCounter())
        assert "memo" not in repr(counter)
        for clone in (
            copy.copy(counter),
            copy.deepcopy(counter),
            pickle.loads(pickle.dumps(counter)),
            attrs.evolve(counter),
        ):
            assert clone == counter
            assert clone.estimate_messages(history) == total

    def test_a_grown_history_counts_only_the_new_messages(self) -> None:
        """Counting N + 2 messages after N prices just the two new ones."""
        counter = Recording()
        history = [Message.user("x" * 40) for _ in range(500)]
        assert counter.estimate_messages(history) == 500 * 14
        counter.batches.clear()
        history += [Message.user("y" * 4), Message.assistant("z" * 8)]
        assert counter.estimate_messages(history) == 500 * 14 + 5 + 6
        assert counter.batches == [["y" * 4, "z" * 8]]
        assert counter.estimate_messages(tuple(history)) == 500 * 14 + 5 + 6
        assert counter.batches == [["y" * 4, "z" * 8]]

    def test_two_lists_growing_side_by_side_count_right(self) -> None:
        """A history and a strategy's output that both grow, each counted every turn,
        with a list of fresh copies between them: every count equals a recount."""
        counter = TokenCounter()
        history = [Message.user(f"message {i}") for i in range(100)]
        for turn in range(20):
            history.append(Message.assistant("x" * turn))
            window = [history[0], *history[-80:]]
            for messages in (history, window, fresh(history), history[:-1], window):
                assert counter.estimate_messages(messages) == recount(counter, messages)

    def test_a_changed_middle_is_not_taken_for_a_prefix(self) -> None:
        """Replacing, removing or inserting a message in a counted history is noticed."""
        for counter in (TokenCounter(), Recording()):
            history = [Message.user("x" * 40) for _ in range(300)]
            assert counter.estimate_messages(history) == 300 * 14
            assert counter.estimate_messages(history) == 300 * 14
            replaced = [*history[:100], Message.user("x" * 4), *history[101:]]
            assert counter.estimate_messages(replaced) == 299 * 14 + 5
            assert counter.estimate_messages(history[:150] + history[151:]) == 299 * 14
            inserted = [*history[:10], Message.user(""), *history[10:]]
            assert counter.estimate_messages(inserted) == 300 * 14 + 4
            assert counter.estimate_messages(history) == 300 * 14
            history[5] = Message.user("x")
            assert counter.estimate_messages(history) == 299 * 14 + 5

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
        Recording().estimate_message(counted)
        assert counted == Message.user("hello")
        assert repr(counted) == repr(Message.user("hello"))

    @pytest.mark.parametrize("repeat", [2, 3])
    def test_the_same_message_twice_in_a_history_counts_twice(self, repeat: int) -> None:
        """A history may hold one message object several times; each occurrence counts."""
        message = Message.user("x" * 40)
        assert TokenCounter().estimate_messages([message] * repeat) == 14 * repeat
        assert Recording().estimate_messages([message] * repeat) == 14 * repeat
        assert Recording().estimate_messages([message] * 100) == 14 * 100


class TestRunningCount:
    """The running count of a history that grows (the agent loop's per-turn path)."""

    @given(
        start=well_formed_conversations(),
        turns=st.lists(_chunks(), max_size=5),
        counter=st.one_of(counters(), st.builds(Doubling)),
    )
    def test_it_equals_a_recount(
        self, start: list[Message], turns: list[list[Message]], counter: TokenCounter
    ) -> None:
        """After any number of turns the running total equals a count of the whole history."""
        running = counter.running(start)
        history = list(start)
        assert running.total == counter.estimate_messages(history)
        for turn in turns:
            history.extend(turn)
            assert running.add(turn) == recount(counter, history)
        assert running.total == counter.estimate_messages(history)
        assert len(running) == len(history)

    def test_it_keeps_no_message_alive(self) -> None:
        """The running count holds the total, not the messages."""
        counter = TokenCounter()
        history = [Message.user(f"message {i}") for i in range(100)]
        running = counter.running(history)
        refs = [weakref.ref(message) for message in history]
        del history
        gc.collect()
        assert all(ref() is None for ref in refs)
        assert running.total == sum(4 + -(-len(f"message {i}") // 4) for i in range(100))


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
    """The sliding window's cut, computed from the tail of a long history (one rule)."""

    @given(
        messages=st.one_of(
            conversations(), st.lists(st.sampled_from(_SHAPES), max_size=30).map(_shaped)
        ),
    )
    def test_it_is_the_first_safe_cut(self, messages: list[Message]) -> None:
        """Each safe cut is the first index at or after the asked one that is neither a
        tool message nor inside a tool exchange (checked against the exchanges)."""
        structure = Structure.of(messages)
        inside = {i for e in structure.exchanges for i in range(e.start + 1, e.stop)}

        def safe(index: int) -> bool:
            if index == len(messages):
                return True
            return index not in inside and messages[index].role is not Role.TOOL

        for index in range(-1, len(messages) + 2):
            start = max(0, min(index, len(messages)))
            cut = structure.safe_cut(index)
            assert start <= cut <= len(messages)
            assert safe(cut)
            assert not any(safe(i) for i in range(start, cut))
