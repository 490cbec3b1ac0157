"""The scripted recall scenario every loop runs: read two files, recall the first (cleared
by then) by the key its reference shows, answer with what it says."""

from __future__ import annotations

import re
from collections.abc import Iterable

from neuron_context import MemoryStore, ToolResultClearingStrategy
from neuron_context.stores import content_key

__all__ = ["FIRST_LINE", "KEY", "clearing", "file_text", "key_in"]


def file_text(path: str) -> str:
    """What ``read_file(path)`` returns: large enough to be cleared."""
    return f"{path}: the answer is 42 for {path}\n" + "filler line\n" * 300


FIRST_LINE = file_text("a.py").split("\n", 1)[0]
"""The line the scripted model quotes after recalling a.py."""

KEY = content_key(file_text("a.py"))
"""The key a.py's cleared result gets (a hash of its text: known before the run)."""


def clearing(store: MemoryStore) -> ToolResultClearingStrategy:
    """Clearing every result but the newest on every call, offloading to ``store``; the
    recall tool's own results are never cleared."""
    return ToolResultClearingStrategy(1, 0, store=store, exclude_tools={"recall"})


_KEY = re.compile(r"read_file a\.py, [\d,]+ tokens — recall: ([0-9a-f]{16})\]")


def key_in(texts: Iterable[str]) -> str | None:
    """The key of a.py's reference in ``texts``, when the model was shown one."""
    for text in texts:
        match = _KEY.search(text)
        if match:
            return match.group(1)
    return None
