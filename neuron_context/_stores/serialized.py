"""What a store holds, written once: the content, its canonical text and its key.

A strategy offloads what it removes: a list of :class:`~neuron_context.Message` (cleared
turns, superseded exchanges) or a text (a result that was cut). Both are written as one
canonical JSON text (keys sorted, no whitespace, non-ASCII kept), messages in our own
format (:mod:`neuron_context.formats`, which reads back every field), so that

- every store holds the same bytes for the same content (SQLite, Redis and memory stores
  of one deployment can be swapped), and
- the key is a hash of that text: the same content stored twice, by any strategy in any
  process, gets the same key, and a key computed before the write is the key after it.

A text may hold lone surrogates (a tool's output decoded with ``surrogateescape``): the key
hashes the text's UTF-8 with ``surrogatepass``, and a store that holds bytes writes them
the same way (:func:`to_bytes`, :func:`from_bytes`), so every store holds and gives back
every text a :class:`~neuron_context.Message` accepts, under the same key.

Keys are the first 16 hex digits of the SHA-256 (64 bits): short enough that a reference
costs a few tokens, long enough that two different contents of one deployment do not
meet by chance (at a billion entries, the odds of any collision are about 3%; a store
that expects more should be split).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import TypeAlias

from .._errors import ConfigurationError, show
from .._messages.content import Compaction
from .._messages.message import Message

__all__ = [
    "COSTLIEST_KEY",
    "KEY_LENGTH",
    "Content",
    "content_key",
    "decode",
    "encode",
    "from_bytes",
    "is_key",
    "key_of_encoded",
    "render",
    "shown_key",
    "to_bytes",
]

Content: TypeAlias = "list[Message] | str"
"""What a store holds: removed messages, or the text cut out of one."""

KEY_LENGTH = 16
"""Hex digits of a key."""

COSTLIEST_KEY = "1a2b3c4d5e6f7a8b"
"""A key as costly as any, for pricing a reference before its key exists: digits and
letters alternating, which a BPE tokenizer splits at every change (16 tokens in o200k,
where a real key averages 9; a character-based counter prices every key alike)."""

_KEY_SHAPE = re.compile(f"[0-9a-f]{{{KEY_LENGTH}}}")

_SHOWN = 80
"""Characters of a bad key an error text shows."""


def is_key(value: object) -> bool:
    """Whether ``value`` has the shape of a key (16 lowercase hex digits): a store reads
    nothing else, so no string reaches past a store's prefix or scope."""
    return isinstance(value, str) and _KEY_SHAPE.fullmatch(value) is not None


def shown_key(value: str) -> str:
    """``value`` quoted for an error text, cut to about 80 characters."""
    if len(value) <= _SHOWN:
        return repr(value)
    return f"{value[:_SHOWN]!r}… ({len(value):,} characters)"


def to_bytes(text: str) -> bytes:
    """``text`` as UTF-8, lone surrogates included (``surrogatepass``)."""
    return text.encode("utf-8", "surrogatepass")


def from_bytes(data: bytes) -> str:
    """The text :func:`to_bytes` wrote."""
    return data.decode("utf-8", "surrogatepass")


def _check(content: object, where: str) -> Content:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence) and all(isinstance(item, Message) for item in content):
        return list(content)
    msg = f"{where}: content must be a str or a list of Message, got {show(content)}"
    raise ConfigurationError(msg)


def encode(content: object, where: str = "Store.put") -> str:
    """The canonical JSON text of ``content`` (what a store writes).

    Raises:
        ConfigurationError: ``content`` is neither a ``str`` nor a list of ``Message``.
    """
    from ..formats._native import to_dict  # on first use: the import stays light

    checked = _check(content, where)
    data: object = {"text": checked} if isinstance(checked, str) else to_dict(checked)
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def decode(text: str) -> Content:
    """The content :func:`encode` wrote as ``text`` (equal to what was put)."""
    from ..formats._native import from_dict  # on first use: the import stays light

    data = json.loads(text)
    if isinstance(data, dict) and set(data) == {"text"} and isinstance(data["text"], str):
        return data["text"]
    return from_dict(data)


def key_of_encoded(text: str) -> str:
    """The key of an encoded content."""
    return hashlib.sha256(to_bytes(text)).hexdigest()[:KEY_LENGTH]


def content_key(content: object) -> str:
    """The key any store gives ``content`` (a hash of :func:`encode`)."""
    return key_of_encoded(encode(content))


def render(content: Content) -> str:
    """``content`` as text for a model: a text as it is, messages as a transcript (one
    header line per entry, its text indented: the summarizer's format), a summary or
    an index among them as ``summary:`` and its text (the summarizer's transcript
    leaves summaries out; a recall shows what was put)."""
    from .._summary.transcript import INDENT, entries_of, render_entries  # on first use

    if isinstance(content, str):
        return content
    parts: list[str] = []
    run: list[Message] = []
    for message in content:
        if not message.is_compaction:
            run.append(message)
            continue
        if run:
            parts.append(render_entries(entries_of(run)))
            run = []
        for block in message.content:
            if isinstance(block, Compaction):
                text = block.content.split("\n")
                lines = (INDENT + line if line.strip() else "" for line in text)
                parts.append("\n".join(["summary:", *lines]))
    if run:
        parts.append(render_entries(entries_of(run)))
    return "\n".join(part for part in parts if part)
