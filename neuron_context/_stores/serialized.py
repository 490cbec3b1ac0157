"""What a store holds, written once: the content, its canonical text and its key.

A strategy offloads what it removes: a list of :class:`~neuron_context.Message` (cleared
turns, superseded exchanges) or a text (a result that was cut). Both are written as one
canonical JSON text (keys sorted, no whitespace, non-ASCII kept), messages in our own
format (:mod:`neuron_context.formats`, which reads back every field), so that

- every store holds the same bytes for the same content (SQLite, Redis and memory stores
  of one deployment can be swapped), and
- the key is a hash of that text: the same content stored twice, by any strategy in any
  process, gets the same key, and a key computed before the write is the key after it.

Keys are the first 16 hex digits of the SHA-256 (64 bits): short enough that a reference
costs a few tokens, long enough that two different contents of one deployment do not
meet by chance (at a billion entries, the odds of any collision are about 3%; a store
that expects more should be split).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TypeAlias

from .._errors import ConfigurationError, show
from .._messages.message import Message
from .._summary.transcript import entries_of, render_entries
from ..formats._native import from_dict, to_dict

__all__ = [
    "KEY_LENGTH",
    "Content",
    "content_key",
    "decode",
    "encode",
    "key_of_encoded",
    "render",
]

Content: TypeAlias = "list[Message] | str"
"""What a store holds: removed messages, or the text cut out of one."""

KEY_LENGTH = 16
"""Hex digits of a key."""


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
    checked = _check(content, where)
    data: object = {"text": checked} if isinstance(checked, str) else to_dict(checked)
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def decode(text: str) -> Content:
    """The content :func:`encode` wrote as ``text`` (equal to what was put)."""
    data = json.loads(text)
    if isinstance(data, dict) and set(data) == {"text"} and isinstance(data["text"], str):
        return data["text"]
    return from_dict(data)


def key_of_encoded(text: str) -> str:
    """The key of an encoded content."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_LENGTH]


def content_key(content: object) -> str:
    """The key any store gives ``content`` (a hash of :func:`encode`)."""
    return key_of_encoded(encode(content))


def render(content: Content) -> str:
    """``content`` as text for a model: a text as it is, messages as a transcript (one
    header line per entry, its text indented: the summarizer's format)."""
    if isinstance(content, str):
        return content
    return render_entries(entries_of(content))
