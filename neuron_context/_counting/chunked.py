"""Long texts counted in bounded memory: cut where the encodings must split, counted a
batch at a time, the counts summed.

``tokenizers`` keeps an ``Encoding`` (ids, offsets, tokens, masks) of about 100 times the
text's size while it encodes, so one 10 MB log would cost a gigabyte. A text of the
tiktoken encodings longer than :data:`CHUNK` is cut into pieces of about that size,
counted a few at a time, and the counts summed. The cuts fall only where the encodings'
pre-tokenizer must split anyway, so the sum is exactly the whole text's count: right
after a newline that is followed by an ASCII letter or digit (no alternative of either
pattern matches across it, and a whitespace run ending in that newline is one pre-token
whether or not the text continues), or between an ASCII letter or digit and a space
followed by an ASCII letter (the word ends there; the next pre-token is the space and
the word after it). A property test compares the pieces' sum with the whole count.
Other tokenizers (a ``tokenizer.json`` may normalize, or have no pre-tokenizer at all)
are given each text whole.

Used by :class:`~neuron_context._counting.tokenizer.TokenizerCounter`, with tiktoken's
encoder (:func:`fast_counts`) or a ``tokenizers`` tokenizer (:func:`batched_counts`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence, Sized

from .._errors import TokenizerError

__all__ = ["CHUNK", "batched_counts", "fast_counts", "pieces"]

CHUNK = 1 << 15
"""Texts of the tiktoken encodings longer than this (in characters) are counted in pieces
of about this size (see the module docstring)."""
_BATCH = 1 << 20
"""At most about this many characters are encoded at once."""
_CUT = re.compile(r"\n(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?= [A-Za-z])")
"""Where the tiktoken encodings' pre-tokenizers must split (see the module docstring)."""


def fast_counts(encode: Callable[[str], list[int]], texts: list[str]) -> list[int]:
    """The count of each text by tiktoken's ``encode``, long texts in pieces (its token
    lists cost 36 bytes a token)."""
    try:
        return [
            len(encode(text))
            if len(text) <= CHUNK
            else sum(len(encode(piece)) for piece in pieces(text))
            for text in texts
        ]
    except Exception as exc:
        msg = f"the tokenizer failed to encode text: {exc}"
        raise TokenizerError(msg) from exc


def batched_counts(
    encode: Callable[[list[str]], Sequence[Sized]], texts: list[str], *, in_pieces: bool
) -> list[int]:
    """The count of each (non-empty) text: the length of what ``encode`` makes of it,
    encoded in batches of about :data:`_BATCH` characters (long texts in pieces, with
    ``in_pieces``: a tiktoken encoding's)."""
    if (not in_pieces or max(map(len, texts)) <= CHUNK) and sum(map(len, texts)) <= _BATCH:
        return list(map(len, encode(texts)))
    counts = [0] * len(texts)
    batch: list[str] = []
    owners: list[int] = []
    size = 0
    for index, text in enumerate(texts):
        for piece in pieces(text) if in_pieces else (text,):
            batch.append(piece)
            owners.append(index)
            size += len(piece)
            if size >= _BATCH:
                for owner, encoding in zip(owners, encode(batch), strict=True):
                    counts[owner] += len(encoding)
                batch, owners, size = [], [], 0
    if batch:
        for owner, encoding in zip(owners, encode(batch), strict=True):
            counts[owner] += len(encoding)
    return counts


def pieces(text: str) -> Iterator[str]:
    """``text`` cut at pre-token boundaries into pieces of about :data:`CHUNK` characters."""
    start = 0
    length = len(text)
    search = _CUT.search
    while length - start > CHUNK:
        match = search(text, start + CHUNK)
        if match is None:
            break
        end = match.end()
        yield text[start:end]
        start = end
    yield text[start:]
