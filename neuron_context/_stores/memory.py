"""The in-process store: a dict behind a lock, with an optional age and size limit."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterator

import attrs

from .._validators import optional, positive_int
from .batch import spared
from .growth import max_age_field
from .store import Store

__all__ = ["MemoryStore"]


@attrs.define
class MemoryStore(Store):
    """Holds offloaded content in this process (lost when it exits): the embedded default,
    for one process and its tests.

    Examples:
        >>> store = MemoryStore(max_items=10_000)
        >>> key = store.put("a long build log")
        >>> store.get(key)
        'a long build log'
    """

    max_items: int | None = attrs.field(
        default=None, kw_only=True, validator=optional(positive_int())
    )
    """Keep at most this many entries: a put beyond it evicts the oldest that the current
    compaction neither put nor shows (``None``: no cap)."""
    max_age: float | None = max_age_field()
    """Forget an entry this many seconds after its last put (``None``: never)."""
    _entries: OrderedDict[str, tuple[float, str]] = attrs.field(
        factory=OrderedDict, init=False, repr=False, eq=False
    )
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False, repr=False, eq=False)

    def _expired(self, stamp: float, now: float) -> bool:
        return self.max_age is not None and now - stamp > self.max_age

    def _write(self, key: str, text: str) -> None:
        now = time.monotonic()
        with self._lock:
            entries = self._entries
            entries[key] = (now, text)
            entries.move_to_end(key)
            if self.max_items is not None and len(entries) > self.max_items:
                self._evict(len(entries) - self.max_items, spared(self))
            while entries and self._expired(next(iter(entries.values()))[0], now):
                entries.popitem(last=False)

    def _evict(self, excess: int, kept: frozenset[str]) -> None:
        """Forget the ``excess`` oldest entries not in ``kept`` (fewer when too few are)."""
        entries = self._entries
        gone: list[str] = []
        for name in entries:  # oldest first; usually the first one goes
            if name not in kept:
                gone.append(name)
                if len(gone) == excess:
                    break
        for name in gone:
            del entries[name]

    def _read(self, key: str) -> str | None:
        with self._lock:
            entry = self._entries.get(key)
        if entry is None or self._expired(entry[0], time.monotonic()):
            return None
        return entry[1]

    def _keys(self) -> Iterator[str]:
        now = time.monotonic()
        with self._lock:
            keys = [
                key for key, (stamp, _) in self._entries.items() if not self._expired(stamp, now)
            ]
        return iter(keys)

    def __len__(self) -> int:
        """The entries of this store's namespace."""
        return sum(1 for _ in self)
