"""What the counters remember: each message's costs, and the last history a counter summed.

Both caches exist for speed and are invisible otherwise: a count through them always
equals a recount, they never keep a message alive that the caller dropped, and they are
no part of any value (not compared, not pickled, not copied). This module is their only
owner: no other module reads or writes the state they keep.

**Per-message costs.** Messages are immutable, so what a message costs under a counter's
rules never changes. The costs live in a private slot of the message (declared by
:class:`~neuron_context.Message` for this module alone), keyed by a :class:`CacheKey` that
stands for one counter class and configuration: equal counters share it, a subclass that
counts differently never reads its parent's costs. The slot holds a few costs at most
(:data:`SLOTS`), and each store replaces the dict (copy on write), so threads counting the
same message never see a half-evicted dict. A message dies with its costs; a copy
(``copy.copy``, ``attrs.evolve``, pickling) starts without them.

**The history memo.** An agent loop counts a history that grew by a message or two since
the last turn. :class:`HistoryMemo` remembers the last long histories a counter summed
(:data:`SNAPSHOTS`), by identity: the ``id`` of each message plus a weak reference to
it, so it never keeps a message alive, and a message that died (and whose address may be
reused) invalidates the entry. A list whose first messages are exactly those objects
costs a C-speed comparison of ids plus the new messages; anything else is counted
afresh. A list is remembered only when it extends one of the few lists summed just
before (:data:`RECENT`; same first message, and that list's last message in the same
place), so a one-off count, or a strategy measuring its own outputs, pays nothing for
the memo, and those outputs, counted between two turns, do not hide the history that
grew. A loop that wants each turn to cost only its new messages keeps a
:class:`~neuron_context.RunningCount` instead.
"""

from __future__ import annotations

import operator
import threading
import weakref
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from typing import cast

from .._messages.message import Message

__all__ = [
    "SLOTS",
    "CacheKey",
    "HistoryMemo",
    "cache_key",
    "cached_cost",
    "store_cost",
    "sum_costs",
]

SLOTS = 4
"""How many counters' costs a message keeps (the newest)."""

MEMO_MIN_LENGTH = 64
"""Shorter lists are summed directly and never remembered."""

SNAPSHOTS = 2
"""How many histories the memo remembers (the most recently used): a loop's history, and
a list that grew beside it (the output of a strategy that keeps growing, a second loop
sharing the counter) without either pushing the other out."""

RECENT = 4
"""How many of the last lists summed without a match the memo compares a new list with
(a turn counts the history, then a strategy's own outputs)."""

_set = object.__setattr__


class CacheKey:
    """Stands for one counter class and configuration; compared by identity (fast)."""

    __slots__ = ("__weakref__", "name")

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"CacheKey({self.name})"


_KEYS: weakref.WeakValueDictionary[tuple[type, Hashable], CacheKey] = weakref.WeakValueDictionary()
_KEYS_LOCK = threading.Lock()


def cache_key(kind: type, config: Hashable) -> CacheKey:
    """The one key of counters of class ``kind`` with configuration ``config``."""
    with _KEYS_LOCK:
        key = _KEYS.get((kind, config))
        if key is None:
            key = CacheKey(f"{kind.__qualname__}{config!r:.200}")
            _KEYS[(kind, config)] = key
        return key


def _costs(message: Message) -> dict[CacheKey, int] | None:
    return cast("dict[CacheKey, int] | None", message._cache)


def cached_cost(message: Message, key: CacheKey) -> int | None:
    """The cost of ``message`` under ``key``, if known."""
    costs = _costs(message)
    return None if costs is None else costs.get(key)


def store_cost(message: Message, key: CacheKey, cost: int) -> None:
    """Remember the cost of ``message`` under ``key`` (evicting the oldest beyond SLOTS)."""
    costs = _costs(message)
    if costs is None:
        new = {key: cost}
    elif len(costs) < SLOTS:
        new = costs.copy()
        new[key] = cost
    else:
        new = dict(list(costs.items())[1 - SLOTS :])
        new[key] = cost
    _set(message, "_cache", new)


def sum_costs(
    messages: Sequence[Message], key: CacheKey, price: Callable[[list[Message]], list[int]]
) -> int:
    """The total cost of ``messages``: known costs read, the others priced in one batch
    by ``price`` and remembered."""
    total = 0
    pending: list[Message] = []
    for message in messages:
        costs = message._cache
        if costs is not None:
            cost = costs.get(key)  # type: ignore[attr-defined]
            if cost is not None:
                total += cost
                continue
        pending.append(message)
    if pending:
        for message, cost in zip(pending, price(pending), strict=True):
            costs = message._cache
            if costs is None:
                _set(message, "_cache", {key: cost})
            else:
                store_cost(message, key, cost)
            total += cost
    return total


class _Snapshot:
    """A summed history, held weakly: the ids of its messages and their total."""

    __slots__ = ("__weakref__", "alive", "died", "ids", "refs", "total")

    def __init__(self, messages: Sequence[Message], total: int) -> None:
        self.ids: list[int] = []
        self.refs: list[weakref.ref[Message]] = []
        self.total = total
        self.alive = True
        self.died = self._died
        self.extend(messages)

    def _died(self, _: object) -> None:
        self.alive = False

    def extend(self, messages: Sequence[Message]) -> None:
        died = self.died
        refs = [weakref.ref(message, died) for message in messages]
        self.refs.extend(refs)
        self.ids.extend(map(id, messages))


class HistoryMemo:
    """The last long histories a counter summed, matched by the identity of their messages.

    See the module docstring. Thread-safe; no part of the counter's value: copies and
    pickles of a counter start with an empty memo.
    """

    __slots__ = ("_entries", "_last", "_lock")

    def __init__(self) -> None:
        # The remembered histories, the most recently used last (the oldest falls out).
        self._entries: deque[_Snapshot] = deque(maxlen=SNAPSHOTS)
        # The last RECENT lists summed without a match, newest last: each one's length
        # and the ids of its first and last messages (no reference). A list that strictly
        # extends one of them is a history that grew, and is remembered; other lists (a
        # strategy's output, a shorter list it measures) cost nothing more.
        self._last: deque[tuple[int, int, int]] = deque(maxlen=RECENT)
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[type[HistoryMemo], tuple[()]]:
        return (HistoryMemo, ())

    def __copy__(self) -> HistoryMemo:
        return HistoryMemo()

    def __deepcopy__(self, memo: dict[int, object]) -> HistoryMemo:
        return HistoryMemo()

    def _match(self, messages: Sequence[Message]) -> _Snapshot | None:
        """The remembered history that ``messages`` starts with (under the lock)."""
        entries = self._entries
        for entry in [entry for entry in entries if not entry.alive]:
            entries.remove(entry)
        length = len(messages)
        for entry in reversed(entries):
            if len(entry.ids) <= length and all(map(operator.eq, entry.ids, map(id, messages))):
                entries.remove(entry)
                entries.append(entry)
                return entry
        return None

    def total(self, messages: Sequence[Message], summed: Callable[[Sequence[Message]], int]) -> int:
        """The total of ``messages``, from a remembered prefix when one matches."""
        length = len(messages)
        with self._lock:
            entry = self._match(messages)
            if entry is not None:
                size = len(entry.ids)
                known = entry.total
        if entry is not None:
            if size == length:
                return known
            new = messages[size:]
            total = known + summed(new)
            with self._lock:
                if entry in self._entries and len(entry.ids) == size and entry.alive:
                    entry.extend(new)
                    entry.total = total
            return total
        total = summed(messages)
        if not length:
            return total
        first = id(messages[0])
        with self._lock:
            if any(
                known_length < length and head == first and tail == id(messages[known_length - 1])
                for known_length, head, tail in self._last
            ):
                self._entries.append(_Snapshot(messages, total))
            self._last.append((length, first, id(messages[-1])))
        return total
