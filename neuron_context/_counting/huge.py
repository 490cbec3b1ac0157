"""The counts of the last few huge texts: a compaction that cuts one huge message counts
it more than once (its cost, then its share of the cut), and tokenizing megabytes costs
seconds each time (tiktoken reads about 2 MB/s of an unbroken run such as a base64 blob),
so the encodings' counter remembers the counts of the last four texts of at least
:data:`HUGE` characters. They are kept alive while remembered; a lookup of the same
object is an identity check, of an equal one a hash and a comparison: cheap beside
tokenizing."""

from __future__ import annotations

import threading

__all__ = ["HUGE", "HUGE_COUNTS", "HugeCounts"]

HUGE = 1 << 18
"""Characters from which a text's count is remembered (256k: a pasted file, a log, a
base64 blob in a tool result)."""


class HugeCounts:
    """The counts of the last :attr:`KEPT` huge texts, by encoding (thread-safe)."""

    KEPT = 4

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str], int] = {}

    def get(self, encoding: str, text: str) -> int | None:
        """The count of ``text`` in ``encoding``, when remembered."""
        if len(text) < HUGE:
            return None
        with self._lock:
            return self._counts.get((encoding, text))

    def put(self, encoding: str, text: str, count: int) -> None:
        """Remember the count of a huge ``text`` (the oldest of five is forgotten)."""
        if len(text) < HUGE:
            return
        with self._lock:
            self._counts[(encoding, text)] = count
            while len(self._counts) > self.KEPT:
                del self._counts[next(iter(self._counts))]


HUGE_COUNTS = HugeCounts()
"""The one memory every encodings' counter shares."""
