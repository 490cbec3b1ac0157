"""The index line of page keys: the oldest entries of an index, a key each.

An index line costs about 25 tokens even terse (``- earlier: 5 entries, 1,843 tokens —
recall: <key>``), and most of it is the words around the key, which a BPE tokenizer
charges about 10 tokens. Where an index's terse lines do not fit its room, its oldest
entries of at most a page (the groups of up to a page, the segments of a long text)
give up their words and stand on one line as keys alone, oldest first::

    - earlier, a page each, oldest first: recall: 3f2a0c9d81e4b756, recall: 9c41d2e07f3b6a58

about 13 tokens a page instead of 25: the same room shows about twice as many pages
before anything rolls up into one entry beyond a page. Each key keeps its ``recall:``
(every reader of references finds it), and a search with a query names the key and line
of what it finds, so an agent reads these pages in order or goes to the one it needs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .serialized import KEY_LENGTH

__all__ = ["PAGES_LABEL", "is_pages_line", "page_keys", "pages_line"]

PAGES_LABEL = "earlier, a page each, oldest first"
"""What the line of page keys says before its keys."""

_PAGES = re.compile(
    rf"^- {re.escape(PAGES_LABEL)}: ((?:recall: [0-9a-f]{{{KEY_LENGTH}}}(?:, |$))+)",
    re.MULTILINE,
)
_KEY = re.compile(rf"recall: ([0-9a-f]{{{KEY_LENGTH}}})")


def pages_line(keys: Sequence[str]) -> str:
    """The index line of ``keys``, each a page, oldest first."""
    return f"- {PAGES_LABEL}: " + ", ".join(f"recall: {key}" for key in keys)


def page_keys(text: str) -> list[str]:
    """The keys of the lines of page keys in ``text``, in order."""
    return [key for found in _PAGES.finditer(text) for key in _KEY.findall(found.group(1))]


def is_pages_line(line: str) -> bool:
    """Whether ``line`` is a line of page keys."""
    return _PAGES.match(line) is not None
