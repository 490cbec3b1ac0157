"""Truncation: the last resort that can always shrink a text, a result or a message.

When a budget must hold and nothing else can shrink the history (one tool result bigger
than the whole budget; a pasted log in the user's request), a text is cut in the
middle: its head and its tail are kept, since the head of a file or log says what it
is and the tail holds how it ended (a test summary, the last error), and a marker in
between says how much was cut, so neither the model nor the user mistakes the rest for
the whole::

    [... 41,802 characters (about 10,450 tokens) cut ...]

Everything here is priced by the caller's counter, so "fits" means what the budget
means. Images, documents and thinking (signed by the provider) are left as they are; tool
uses, ids and flags are never touched, so truncation keeps a conversation well formed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

import attrs

from .content import ContentBlock, Image, Text, ToolResult
from .message import Message

if TYPE_CHECKING:  # the counter is a parameter: no import of a higher room at run time
    from .._counting.counter import BaseCounter

__all__ = ["HEAD_SHARE", "Describe", "marker", "truncate_message", "truncate_text"]

Describe: TypeAlias = Callable[[str], str]
"""Given the part of a text that is cut, a short note for the marker (or ``""``)."""

HEAD_SHARE = 0.6
"""The share of what is kept that comes from the head of the text (the rest: its tail)."""

_MIN_KEEP = 16
"""Characters below which a text is not worth cutting: it is replaced by the marker."""


def marker(cut_chars: int, cut_tokens: int) -> str:
    """The line that replaces ``cut_chars`` characters (about ``cut_tokens`` tokens)."""
    return f"\n[... {cut_chars:,} characters (about {cut_tokens:,} tokens) cut ...]\n"


_MARKER = re.compile(r"\[\.\.\. [\d,]+ characters \(about [\d,]+ tokens\) cut(?:;[^\n]*)? \.\.\.\]")
"""What :func:`marker` writes, with or without the note a ``describe`` function adds."""


def is_truncated(text: str) -> bool:
    """Whether ``text`` holds a :func:`marker`: it was cut already, and cutting it again
    would only cut the marker (strategies that truncate skip such texts)."""
    return _MARKER.search(text) is not None


def truncate_text(
    text: str, max_tokens: int, counter: BaseCounter, *, describe: Describe | None = None
) -> str:
    """``text`` if it costs at most ``max_tokens``, else its head and tail around a
    :func:`marker`, costing at most ``max_tokens``; ``""`` when not even the marker fits.

    Args:
        text: the text.
        max_tokens: what the result may cost.
        counter: prices the text.
        describe: given the part that is cut, a short note added to the marker (for
            example the paths it mentions), or ``None``.
    """
    cost = counter.estimate_text(text)
    if cost <= max_tokens:
        return text
    keep = int(len(text) * max(max_tokens, 0) / cost)
    best = ""
    for _ in range(12):
        candidate = _cut(text, keep, cost, counter, describe)
        if counter.estimate_text(candidate) <= max_tokens:
            return candidate
        best = candidate
        if keep <= 0:
            break
        over = counter.estimate_text(candidate) - max_tokens
        # Shrink by the overshoot (in characters at this text's density) and a bit more.
        keep = max(0, keep - max(int(over * len(text) / cost * 1.1), keep // 10, 1))
    return best if counter.estimate_text(best) <= max_tokens else ""


def _cut(text: str, keep: int, cost: int, counter: BaseCounter, describe: Describe | None) -> str:
    if keep < _MIN_KEEP:
        head, tail = "", ""
    else:
        head_chars = int(keep * HEAD_SHARE)
        head = text[:head_chars]
        tail = text[len(text) - (keep - head_chars) :]
    cut_chars = len(text) - len(head) - len(tail)
    cut_tokens = max(0, cost - counter.estimate_text(head) - counter.estimate_text(tail))
    line = marker(cut_chars, cut_tokens)
    if describe is not None:
        note = describe(text[len(head) : len(text) - len(tail)])
        if note:
            line = line.removesuffix(" cut ...]\n") + f" cut; {note} ...]\n"
    return head.rstrip(" ") + line + tail.lstrip(" ")


def _text_cost(block: ContentBlock | Text | Image, counter: BaseCounter) -> int:
    if isinstance(block, Text):
        return counter.estimate_text(block.text)
    if isinstance(block, ToolResult):
        return sum(_text_cost(item, counter) for item in block.content)
    return 0


def _shrink(
    block: ContentBlock, share: float, counter: BaseCounter, describe: Describe | None
) -> ContentBlock:
    if isinstance(block, Text):
        limit = int(counter.estimate_text(block.text) * share)
        return Text(text=truncate_text(block.text, limit, counter, describe=describe))
    if isinstance(block, ToolResult):
        items: list[Text | Image] = []
        for item in block.content:
            if isinstance(item, Text):
                limit = int(counter.estimate_text(item.text) * share)
                text = truncate_text(item.text, limit, counter, describe=describe)
                items.append(Text(text=text))
            else:
                items.append(item)
        return attrs.evolve(block, content=tuple(items))
    return block


def truncate_message(
    message: Message, max_tokens: int, counter: BaseCounter, *, describe: Describe | None = None
) -> Message:
    """``message`` if it costs at most ``max_tokens``, else a copy whose texts (text and
    tool-result text) are cut in proportion to their size until it fits, or are as short
    as they can be. Its role, tool uses, ids and flags are unchanged, and so is thinking
    (a provider checks its signature)."""
    cost = counter.estimate_message(message)
    if cost <= max_tokens:
        return message
    texts = sum(_text_cost(block, counter) for block in message.content)
    if texts == 0:
        return message
    share = max(0.0, 1 - (cost - max_tokens) / texts)
    best = message
    for _ in range(8):
        content = tuple(_shrink(block, share, counter, describe) for block in message.content)
        candidate = attrs.evolve(message, content=content)
        candidate_cost = counter.estimate_message(candidate)
        best = candidate
        if candidate_cost <= max_tokens or share <= 0:
            break
        share = max(0.0, share - max((candidate_cost - max_tokens) / texts * 1.1, 0.02))
    return best
