"""The exact counter beside the raw tokenizer it wraps.

``TokenizerCounter.from_encoding("o200k_base")`` counting a history never counted before
(``ours-cold``: no cached cost) vs ``Tokenizer.encode_batch_fast`` called directly:

- ``raw-unique``: on the distinct non-empty texts of the history, the texts the counter
  tokenizes (it tokenizes each distinct text once). Target: ours within 1.2x of it.
- ``raw-all``: on every text of the history, duplicates included, as a caller that does
  not deduplicate would; only up to ``RAW_ALL_MAX`` messages (beyond that the histories
  repeat their transcripts, so this would measure the repetition; it also takes close to
  a minute per round at 100k).

``ours-warm-turn``: the history plus one new message, counted again as at every agent
turn (the older messages were counted before). Target: at least 100x faster than cold.

The contenders of a group run one after the other, so they see the same machine load.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence

import pytest
from tokenizers import Encoding
from workloads import DATASETS, SIZES, Benchmark, Dataset, fresh, rounds, workload

from neuron_context import Message, Text, TokenizerCounter, ToolResult, ToolUse

RAW_ALL_MAX = 1_000
"""The largest history the ``raw-all`` baseline runs on."""

Contender = Callable[[Benchmark, TokenizerCounter, Dataset, int], None]


@functools.cache
def _counter() -> TokenizerCounter:
    """The o200k_base counter (loaded once: reading the converted ranks takes seconds)."""
    return TokenizerCounter.from_encoding("o200k_base")


def _parts(counter: TokenizerCounter, message: Message, texts: list[str]) -> int:
    """Append the texts the counting rules tokenize (CONTRACT §2); return the fixed cost.

    Only the blocks the workloads hold: text, tool uses, tool results of text and images.
    """
    fixed = counter.message_overhead
    for block in message.content:
        if isinstance(block, Text):
            texts.append(block.text)
        elif isinstance(block, ToolUse):
            texts += [
                block.name,
                json.dumps(block.input, separators=(",", ":"), ensure_ascii=False),
            ]
        elif isinstance(block, ToolResult):
            for item in block.content:
                if isinstance(item, Text):
                    texts.append(item.text)
                else:
                    fixed += counter.image_tokens
        else:
            fixed += counter.image_tokens
    return fixed


def _texts(counter: TokenizerCounter, messages: Sequence[Message]) -> list[str]:
    """Every text the counting rules tokenize, in order (tool inputs as compact JSON)."""
    texts: list[str] = []
    for message in messages:
        _parts(counter, message, texts)
    return texts


def _encode(counter: TokenizerCounter, texts: list[str]) -> list[Encoding]:
    encodings: list[Encoding] = counter.tokenizer.encode_batch_fast(texts, add_special_tokens=False)
    return encodings


def _exact(counter: TokenizerCounter, messages: Sequence[Message]) -> int:
    """The exact count from the raw tokenizer: fixed costs plus each text's tokens."""
    texts: list[str] = []
    fixed = sum(_parts(counter, message, texts) for message in messages)
    unique = list(dict.fromkeys(text for text in texts if text))
    tokens = dict(zip(unique, map(len, _encode(counter, unique)), strict=True))
    return fixed + sum(tokens.get(text, 0) for text in texts)


@functools.cache
def _reference(dataset: Dataset, size: int) -> int:
    """The exact count of ``workload(dataset, size)`` (computed once)."""
    return _exact(_counter(), workload(dataset, size).messages)


def _ours_cold(
    benchmark: Benchmark, counter: TokenizerCounter, dataset: Dataset, size: int
) -> None:
    messages = list(workload(dataset, size).messages)

    def setup() -> tuple[tuple[TokenizerCounter, list[Message]], dict[str, object]]:
        return (TokenizerCounter.from_encoding("o200k_base"), fresh(messages)), {}

    total = benchmark.pedantic(
        TokenizerCounter.estimate_messages, setup=setup, rounds=rounds(size, budget=1e4)
    )
    assert total == _reference(dataset, size)


def _raw_unique(
    benchmark: Benchmark, counter: TokenizerCounter, dataset: Dataset, size: int
) -> None:
    texts = _texts(counter, workload(dataset, size).messages)
    unique = list(dict.fromkeys(text for text in texts if text))
    encodings = benchmark.pedantic(_encode, (counter, unique), rounds=rounds(size, budget=1e4))
    assert len(encodings) == len(unique)


def _raw_all(benchmark: Benchmark, counter: TokenizerCounter, dataset: Dataset, size: int) -> None:
    texts = _texts(counter, workload(dataset, size).messages)
    encodings = benchmark.pedantic(_encode, (counter, texts), rounds=rounds(size, budget=1e4))
    assert len(encodings) == len(texts)


def _ours_warm_turn(
    benchmark: Benchmark, counter: TokenizerCounter, dataset: Dataset, size: int
) -> None:
    work = workload(dataset, size)
    history = list(work.messages)
    counter.estimate_messages(history)  # the previous turn

    def setup() -> tuple[tuple[list[Message]], dict[str, object]]:
        history.append(work.new_turn(len(history))[0])
        return (history,), {}

    total = benchmark.pedantic(counter.estimate_messages, setup=setup, rounds=100)
    new = history[len(work.messages) :]
    assert total == _reference(dataset, size) + _exact(counter, new)


CONTENDERS: dict[str, Contender] = {
    "ours-cold": _ours_cold,
    "raw-unique": _raw_unique,
    "raw-all": _raw_all,
    "ours-warm-turn": _ours_warm_turn,
}


def _cases() -> list[tuple[Dataset, int, str]]:
    return [
        (dataset, size, contender)
        for dataset in DATASETS
        for size in SIZES
        for contender in CONTENDERS
        if contender != "raw-all" or size <= RAW_ALL_MAX
    ]


@pytest.mark.parametrize(("dataset", "size", "contender"), _cases())
def test_tokenizer(benchmark: Benchmark, dataset: Dataset, size: int, contender: str) -> None:
    """The exact counter, cold and warm, and the raw tokenizer on the same texts."""
    benchmark.group = f"tokenizer {dataset} {size}"
    CONTENDERS[contender](benchmark, _counter(), dataset, size)
