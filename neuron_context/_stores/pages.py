"""Pages: what one recall returns, bounded by tokens, saying what else is there.

An offloaded entry can be far larger than the context it was taken from (a whole
summarized span, a 300,000-character log). A recall returns lines of it, never more than
``max_tokens`` (about: counted with the given counter, the heuristic by default), and
when it stops short of the lines asked for, it ends with a line saying which lines it
gave, how many there are and how to read the next page. A line too long for a page on
its own is cut, and the note says so (a search with a query finds its other parts).
"""

from __future__ import annotations

from collections.abc import Sequence

from .._counting.counter import BaseCounter

__all__ = ["MIN_TOKENS", "NOTE_ROOM", "cut_end", "cut_to", "page"]

NOTE_ROOM = 80
"""Tokens kept for the note that ends a page cut short (the longest note costs about 60
with the heuristic counter)."""

MIN_TOKENS = 100
"""The smallest page: room for its note and some content."""


def cut_to(text: str, tokens: int, counter: BaseCounter) -> str:
    """The longest start of ``text`` that costs at most ``tokens`` (bisected: a counter
    may price characters unevenly)."""
    if counter.estimate_text(text) <= tokens:
        return text
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if counter.estimate_text(text[:middle]) <= tokens:
            low = middle
        else:
            high = middle - 1
    return text[:low]


def cut_end(text: str, start: int, tokens: int, counter: BaseCounter) -> int:
    """Where the longest piece of ``text`` from ``start`` that costs at most ``tokens``
    ends: :func:`cut_to` on a window that doubles from 8 characters a token while it
    fits, so cutting a long text into pieces is linear in it (each piece is priced on
    a window about its own size, never on the rest of the text)."""
    window = max(64, 8 * tokens)
    while start + window < len(text) and (
        counter.estimate_text(text[start : start + window]) <= tokens
    ):
        window *= 2
    return start + len(cut_to(text[start : start + window], tokens, counter))


def page(
    lines: Sequence[str],
    first: int,
    last: int,
    *,
    key: str,
    max_tokens: int,
    counter: BaseCounter,
) -> str:
    """Lines ``first``..``last`` (1-based, inclusive) of an entry's ``lines``, as many as
    fit ``max_tokens``; a page cut short ends with a note naming the next one."""
    asked = "\n".join(lines[first - 1 : last])
    if counter.estimate_text(asked) <= max_tokens:
        return asked
    budget = max_tokens - NOTE_ROOM
    taken: list[str] = []
    used = 0
    for number in range(first, last + 1):
        line = lines[number - 1]
        cost = counter.estimate_text(line) + (1 if taken else 0)  # the newline
        if used + cost > budget:
            if taken:
                break
            cut = cut_to(line, budget, counter)
            return (
                f"{cut}\n[recall: line {number} of {len(lines):,} of {key} cut at "
                f"{len(cut):,} of {len(line):,} characters to stay within {max_tokens:,} "
                f"tokens; recall key={key} start_line={number + 1} for the next lines, or "
                f"search this key with a query for a part of this line]"
            )
        taken.append(line)
        used += cost
    end = first + len(taken) - 1
    return "\n".join(
        [
            *taken,
            f"[recall: lines {first:,}-{end:,} of {len(lines):,} of {key} (a page stays "
            f"within {max_tokens:,} tokens); the next page: recall key={key} "
            f"start_line={end + 1}]",
        ]
    )
