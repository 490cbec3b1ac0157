"""Each message's costs under each counter, and the table of a list's costs.

The cache exists for speed and is invisible otherwise: a count through it always equals
a recount, and it is no part of any value (not compared, not pickled, not copied). This
module is its only owner: no other module reads or writes the costs a message keeps.
(The histories a counter summed are remembered by :mod:`~neuron_context._counting.memo`,
whose entries hand out :class:`CostTable` s of this module.)

**Per-message costs.** Messages are immutable, so what a message costs under a counter's
rules never changes. The costs live in a private slot of the message (declared by
:class:`~neuron_context.Message` for this module alone), keyed by a :class:`CacheKey` that
stands for one counter class and configuration: equal counters share it, a subclass that
counts differently never reads its parent's costs. The slot holds a few costs at most
(:data:`SLOTS`), and each store replaces the dict (copy on write), so threads counting the
same message never see a half-evicted dict. A message dies with its costs; a copy
(``copy.copy``, ``attrs.evolve``, pickling) starts without them.

**Cost tables.** A :class:`CostTable` holds what each message of one list costs, with
running sums: the total, one message's cost and the cost of any run of consecutive
messages in O(1).
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable, Hashable, Sequence
from typing import cast

from .._messages.message import Message

__all__ = [
    "SLOTS",
    "Bounder",
    "CacheKey",
    "CostTable",
    "bound_costs",
    "cache_key",
    "cached_cost",
    "cached_costs",
    "store_cost",
    "sum_costs",
]

SLOTS = 4
"""How many counters' costs a message keeps (the newest)."""

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


def cached_costs(
    messages: Sequence[Message], key: CacheKey, price: Callable[[list[Message]], list[int]]
) -> list[int]:
    """Each message's cost: known costs read, the others priced in one batch by
    ``price`` and remembered."""
    costs: list[int | None] = []
    pending: list[Message] = []
    for message in messages:
        known = message._cache
        cost = None if known is None else known.get(key)  # type: ignore[attr-defined]
        if cost is None:
            pending.append(message)
        costs.append(cost)
    if not pending:
        return costs  # type: ignore[return-value]
    priced = iter(price(pending))
    for index, cost in enumerate(costs):
        if cost is None:
            message = messages[index]
            value = costs[index] = next(priced)
            store_cost(message, key, value)
    return costs  # type: ignore[return-value]


def sum_costs(
    messages: Sequence[Message], key: CacheKey, price: Callable[[list[Message]], list[int]]
) -> int:
    """The total cost of ``messages``: known costs read, the others priced in one batch
    by ``price`` and remembered."""
    total, pending = _known(messages, key)
    if pending:
        for message, cost in zip(pending, price(pending), strict=True):
            costs = message._cache
            if costs is None:
                _set(message, "_cache", {key: cost})
            else:
                store_cost(message, key, cost)
            total += cost
    return total


class CostTable:
    """What each message of one list costs under one counter, with running sums.

    The total, one message's cost and the cost of any run of consecutive messages are
    O(1). Made by :meth:`~neuron_context.BaseCounter.cost_table` (from the history memo
    when the list extends a history the counter remembers, so a grown history costs its
    new messages). Immutable: it describes the list it was made for, as it was then.
    """

    __slots__ = ("_costs", "_length", "_sums")

    def __init__(self, costs: list[int], sums: list[int] | None = None, length: int = -1) -> None:
        # ``costs`` and ``sums`` may be a memo entry's append-only lists, longer than
        # this table: it reads their first ``length`` items, which never change.
        self._costs = costs
        self._sums = sums if sums is not None else [0, *itertools.accumulate(costs)]
        self._length = len(costs) if length < 0 else length

    def __len__(self) -> int:
        return self._length

    def __repr__(self) -> str:
        return f"CostTable(messages={self._length}, total={self.total})"

    @property
    def total(self) -> int:
        """The cost of every message."""
        return self._sums[self._length]

    def cost(self, index: int) -> int:
        """The cost of message ``index``."""
        if not -self._length <= index < self._length:
            msg = f"CostTable index {index} out of range for {self._length} messages"
            raise IndexError(msg)
        return self._costs[index % self._length]

    def span(self, start: int, stop: int) -> int:
        """The cost of messages ``start`` to ``stop - 1`` (clamped to the list)."""
        length = self._length
        start = max(0, min(start, length))
        stop = max(start, min(stop, length))
        return self._sums[stop] - self._sums[start]

    def costs(self) -> list[int]:
        """Every message's cost, in order (a new list)."""
        return self._costs[: self._length]


Bounder = Callable[[Sequence[Message]], int]
"""What messages not yet priced are bounded with (by :func:`bound_costs` and the memo):
at least their total cost."""


def bound_costs(messages: Sequence[Message], key: CacheKey, bound: Bounder) -> int:
    """At least the total cost of ``messages``: known costs read (exact), the others
    bounded together by ``bound``; nothing is priced or remembered."""
    total, unknown = _known(messages, key)
    return total + bound(unknown) if unknown else total


def _known(messages: Sequence[Message], key: CacheKey) -> tuple[int, list[Message]]:
    """The total of the costs ``messages`` remember under ``key``, and those that
    remember none."""
    total = 0
    unknown: list[Message] = []
    for message in messages:
        costs = message._cache
        if costs is not None:
            cost = costs.get(key)  # type: ignore[attr-defined]
            if cost is not None:
                total += cost
                continue
        unknown.append(message)
    return total, unknown
