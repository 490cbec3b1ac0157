"""Exact at the floor: the UTF-8 bound, ``bound_messages``, the fast encoder and the
default stack's trigger deciding as with the exact count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import conversations, hostile_texts
from transcripts import load_transcript, requires_transcripts, transcript_name, transcript_paths

from neuron_context import (
    BaseCounter,
    ConfigurationError,
    Message,
    TokenCounter,
    TokenizerCounter,
    ToolUse,
    default_stack,
)
from neuron_context.counting import load_encoding

ENCODINGS = ("o200k_base", "cl100k_base")
REFERENCE: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "tiktoken_reference.json").read_text(encoding="utf-8")
)


def _wtf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


@pytest.fixture(scope="module", params=ENCODINGS)
def pair(
    request: pytest.FixtureRequest, session_cache_dir: Path
) -> tuple[BaseCounter, BaseCounter]:
    """The encoding's counter (tiktoken's encoder) and one over the converted tokenizer."""
    name: str = request.param
    return TokenizerCounter.from_encoding(name), TokenizerCounter(load_encoding(name))


def _fresh(counter: BaseCounter) -> BaseCounter:
    """A counter with the same rules and no memo of its own (the cached costs are shared)."""
    assert isinstance(counter, TokenizerCounter)
    assert counter.encoding is not None
    return TokenizerCounter.from_encoding(counter.encoding)


class TestFastEncoder:
    """The encodings' counter (tiktoken's encoder where the ``tiktoken`` extra is
    installed; without it, both sides are the converted tokenizer)."""

    @given(text=hostile_texts())
    def test_same_counts_on_hostile_text(
        self, pair: tuple[BaseCounter, BaseCounter], text: str
    ) -> None:
        """tiktoken's encoder built from the shipped ranks counts as the converted tokenizer."""
        fast, converted = pair
        assert fast.estimate_texts([text]) == converted.estimate_texts([text])

    @pytest.mark.parametrize("name", ENCODINGS)
    def test_reference_counts(self, name: str, session_cache_dir: Path) -> None:
        """Every case of the tiktoken reference file counts as tiktoken counted it."""
        counter = TokenizerCounter.from_encoding(name)
        texts = [case["text"] for case in REFERENCE["cases"]]
        assert counter.estimate_texts(texts) == [case[name]["count"] for case in REFERENCE["cases"]]

    def test_long_text_in_pieces(self, pair: tuple[BaseCounter, BaseCounter]) -> None:
        """A text longer than a piece counts as the converted tokenizer counts it whole."""
        fast, converted = pair
        text = "log line 12345 of the build\n" * 4000 + "tail words " * 3000
        assert fast.estimate_text(text) == converted.estimate_text(text)

    @requires_transcripts
    @pytest.mark.parametrize("path", transcript_paths()[::5], ids=transcript_name)
    def test_same_counts_on_transcripts(
        self, pair: tuple[BaseCounter, BaseCounter], path: Path
    ) -> None:
        """Every message of a shared transcript costs the same with either encoder."""
        fast, converted = pair
        messages = load_transcript(path)
        assert fast.cost_table(messages).costs() == converted.cost_table(messages).costs()


class TestUtf8Bound:
    @given(text=hostile_texts())
    def test_tokens_never_exceed_bytes(
        self, pair: tuple[BaseCounter, BaseCounter], text: str
    ) -> None:
        """A text's count is never above its UTF-8 size (WTF-8 for lone surrogates)."""
        fast, converted = pair
        assert fast.estimate_text(text) <= _wtf8(text)
        assert converted.estimate_text(text) <= _wtf8(text)


def _check_bound(counter: BaseCounter, messages: list[Message], limit: int) -> int:
    exact = _fresh(counter).estimate_messages(list(messages))
    bound = counter.bound_messages(messages, limit)
    assert bound >= exact
    if bound > limit:
        assert bound == exact
    assert (bound > limit) == (exact > limit)
    return bound


class TestBoundMessages:
    @given(messages=conversations(), limit=st.integers(0, 3000))
    def test_exact_over_the_limit_a_bound_below(
        self, pair: tuple[BaseCounter, BaseCounter], messages: list[Message], limit: int
    ) -> None:
        """Over the limit the result is the count; at or below, between it and the limit."""
        _check_bound(pair[0], messages, limit)

    @given(
        start=st.lists(st.sampled_from(["hi", "a longer line of text", "12345 é 🙂"]), min_size=64),
        grow=st.lists(st.integers(1, 5), min_size=1, max_size=8),
        limits=st.lists(st.integers(0, 20_000), min_size=8, max_size=8),
    )
    def test_a_growing_history(
        self,
        pair: tuple[BaseCounter, BaseCounter],
        start: list[str],
        grow: list[int],
        limits: list[int],
    ) -> None:
        """A history that grows turn by turn (through the memo, new messages pending):
        the result is the count over the limit and never below it."""
        counter = TokenizerCounter.from_encoding(pair[0].encoding)  # type: ignore[attr-defined]
        history = [Message.user(text) for text in start]
        for turn, (size, limit) in enumerate(zip(grow, limits, strict=False)):
            history.extend(Message.assistant(f"turn {turn} reply {i} " * 3) for i in range(size))
            _check_bound(counter, history, limit)
        assert counter.bound_messages(history, -1) == _fresh(counter).estimate_messages(history)

    def test_nothing_tokenized_far_from_the_limit(self, session_cache_dir: Path) -> None:
        """Far below the limit, the new messages are not tokenized: their bytes are added."""
        counter = TokenizerCounter.from_encoding("o200k_base")
        history = [Message.user(f"message {i}") for i in range(100)]
        exact = counter.estimate_messages(history)
        counter.estimate_messages(history)
        call = ToolUse(id="1", name="f", input={})
        new = Message.assistant("hello world, " * 10, tool_uses=[call])
        history.append(new)
        bound = counter.bound_messages(history, 10**9)
        assert bound == exact + TokenCounter(1.0).estimate_message(new)
        assert counter.bound_messages(history, bound - 1) == counter.estimate_messages(history)

    def test_a_changed_middle_is_not_taken_for_a_prefix(self, session_cache_dir: Path) -> None:
        """A list that keeps the remembered history's ends but not its middle is counted
        afresh, and the remembered history still serves the next turn."""
        counter = TokenizerCounter.from_encoding("o200k_base")
        history = [Message.user(f"message {i}") for i in range(100)]
        counter.estimate_messages(history)
        counter.estimate_messages([*history, Message.assistant("a")])
        edited = [*history, Message.assistant("b")]
        edited[50] = Message.user("a much longer replacement of message fifty " * 20)
        for limit in (0, 10**9):
            _check_bound(counter, edited, limit)
        grown = [*history, Message.assistant("a"), Message.user("c")]
        for limit in (0, 10**9):
            _check_bound(counter, grown, limit)

    def test_heuristic_and_default_counters_are_exact(self) -> None:
        """Counters without a cheap bound return the count (the base class's default)."""
        messages = [Message.user("x" * 40), Message.assistant("y" * 9)]
        for counter in (TokenCounter(), TokenCounter(3.0)):
            assert counter.bound_messages(messages, 10**6) == counter.estimate_messages(messages)

    @pytest.mark.parametrize("limit", [1.5, "10", None, True])
    def test_limit_must_be_an_int(self, limit: object) -> None:
        """A limit that is not an int is a ConfigurationError naming it."""
        counter = TokenizerCounter.lazy("o200k_base")
        for each in (counter, TokenCounter()):
            with pytest.raises(ConfigurationError, match="limit must be an int"):
                each.bound_messages([], limit)  # type: ignore[arg-type]

    def test_not_messages(self) -> None:
        """Something that is not messages is a ConfigurationError, as for estimate_messages."""
        with pytest.raises(ConfigurationError):
            TokenizerCounter.lazy("o200k_base").bound_messages("hello", 10)  # type: ignore[arg-type]


class TestDefaultStackTrigger:
    @given(
        start=st.integers(64, 200),
        turns=st.lists(st.integers(1, 4), min_size=1, max_size=10),
        budget=st.integers(1, 6000),
    )
    def test_decides_as_with_the_exact_count(
        self, session_cache_dir: Path, start: int, turns: list[int], budget: int
    ) -> None:
        """``should_compact(h, token_estimate(h))`` is ``should_compact(h, exact)`` every
        turn of a growing history, and the estimate is exact wherever it is compared."""
        stack = default_stack(budget)
        exact = TokenizerCounter.from_encoding("o200k_base")
        floor = int(budget * (1 - stack.reserve))
        history = [Message.system("be brief")] + [Message.user(f"q{i}") for i in range(start)]
        for turn, size in enumerate(turns):
            history.extend(Message.assistant(f"answer {turn}.{i} " * 5) for i in range(size))
            estimate = stack.token_estimate(history)
            count = exact.estimate_messages(history)
            assert estimate >= count
            if estimate > floor:
                assert estimate == count
            assert stack.should_compact(history, estimate) == stack.should_compact(history, count)
