"""The history memo: the last long histories a counter summed, with their cost tables.

An agent loop counts, every turn, a history that grew by a message or two since the
last turn, and a compaction needs what each of its messages costs. :class:`HistoryMemo`
remembers the last long histories a counter summed (:data:`SNAPSHOTS`): the messages
themselves (references, as the caller's list holds them) with a
:class:`~neuron_context._counting.cache.CostTable` of their costs. A list whose first
messages are those very objects is recognised by one comparison of references at C
speed (:func:`~neuron_context._prefix.starts_with`) and costs only its new messages: that
comparison is what makes a turn cheap, and it needs the references (ids alone would
have to be computed one by one). So a remembered history stays alive until newer
histories push it out of the memo (at most :data:`SNAPSHOTS` per counter) or it goes
unused for a few counts (:data:`STALE`: a loop that compacted its history releases the
old one within a turn or two). A list is remembered only when it extends one of the few
lists summed just before (:data:`RECENT`; same first message, and that list's last
message in the same place), so a one-off count, or a strategy measuring its own
outputs, neither pays for the memo nor pushes a history out of it.

Like the per-message costs (:mod:`~neuron_context._counting.cache`), the memo exists for
speed and is invisible otherwise: a count through it always equals a recount, and it is
no part of any value (not compared, not pickled, not copied). This module is its only
owner.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable, Sequence

from .._messages.message import Message
from .._prefix import catch_up
from .cache import Bounder, CostTable

__all__ = ["MEMO_MIN_LENGTH", "HistoryMemo"]

MEMO_MIN_LENGTH = 64
"""Shorter lists are summed directly and never remembered."""

SNAPSHOTS = 2
"""How many histories the memo remembers (the most recently used): a loop's history, and
a list that grew beside it (the output of a strategy that keeps growing, a second loop
sharing the counter) without either pushing the other out."""

STALE = 8
"""A remembered history that none of this many counts of long lists matched is dropped
(a loop that compacted its history no longer counts the old one: it goes within a turn
or two, not when two newer histories have pushed it out)."""

RECENT = 4
"""How many of the last lists summed without a match the memo compares a new list with
(a turn counts the history, then a strategy's own outputs)."""

Pricer = Callable[[Sequence[Message]], list[int]]
"""What the memo prices new messages with: each message's cost, in order."""


class _Entry:
    """A remembered history: its messages (references), the costs and running sums of
    the first ones, all append-only, so a :class:`CostTable` handed out earlier stays
    true. Messages past the priced ones are *pending*: only a bound of their total is
    known (``pending``), until a count needs them exactly."""

    __slots__ = ("costs", "messages", "pending", "sums", "used")

    def __init__(
        self, messages: Sequence[Message], costs: list[int], used: int, pending: int = 0
    ) -> None:
        self.messages = list(messages)
        self.costs = costs
        self.sums = [0, *itertools.accumulate(costs)]
        self.used = used  # the memo's tick when it last matched
        self.pending = pending  # at least what messages[len(costs):] cost

    def settle(self, price: Pricer) -> None:
        """Price the pending messages (on failure, they are no longer remembered)."""
        priced = len(self.costs)
        if priced == len(self.messages):
            return
        try:
            costs = price(self.messages[priced:])
        except BaseException:
            del self.messages[priced:]
            self.pending = 0
            raise
        running = itertools.accumulate(costs, initial=self.sums[-1])
        next(running)  # the total so far, already the last running sum
        self.costs.extend(costs)
        self.sums.extend(running)
        self.pending = 0

    def table(self, length: int) -> CostTable:
        return CostTable(self.costs, self.sums, length)


class HistoryMemo:
    """The last long histories a counter summed, with their cost tables.

    See the module docstring. Thread-safe; no part of the counter's value: copies and
    pickles of a counter start with an empty memo.
    """

    __slots__ = ("_entries", "_last", "_lock", "_tick")

    def __init__(self) -> None:
        self._tick = 0  # counts of long lists so far
        # The remembered histories, the most recently used last (the oldest falls out).
        self._entries: deque[_Entry] = deque(maxlen=SNAPSHOTS)
        # The last RECENT lists counted without a match, newest last: each one's length
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

    def total(
        self, messages: Sequence[Message], price: Pricer, summed: Callable[[Sequence[Message]], int]
    ) -> int:
        """The total of ``messages``: from a remembered history it extends (its new
        messages priced by ``price``), else ``summed(messages)``."""
        table = self._lookup(messages, price)
        if table is not None:
            return table.total
        total = summed(messages)
        self._note(messages, None, price)
        return total

    def table(self, messages: Sequence[Message], price: Pricer) -> CostTable:
        """The cost table of ``messages``: from a remembered history it extends, else
        priced whole by ``price``."""
        table = self._lookup(messages, price)
        if table is not None:
            return table
        costs = price(messages)
        remembered = self._note(messages, costs, price)
        return remembered if remembered is not None else CostTable(costs)

    def bound(
        self,
        messages: Sequence[Message],
        limit: int,
        price: Pricer,
        summed: Callable[[Sequence[Message]], int],
        bound: Bounder,
    ) -> int:
        """The total of ``messages`` when it is over ``limit``, else a bound of it no
        greater than ``limit``: what the remembered history it extends costs, plus
        ``bound`` of the messages not yet priced. Nothing is priced while that sum is at
        most ``limit``; once it is over, the messages not yet priced are priced (in one
        batch) and the exact total is returned."""
        length = len(messages)
        with self._lock:
            found = self._match(messages)
            if found is not None:
                entry, known = found
                if known < length:
                    try:
                        entry.pending += bound(messages[known:])
                    except BaseException:
                        del entry.messages[known:]
                        raise
                total = entry.sums[-1] + entry.pending
                if total <= limit:
                    return total
                entry.settle(price)
                return entry.sums[length]
        total = bound(messages)
        if total > limit:
            return self.total(messages, price, summed)
        if self._grew(messages):
            with self._lock:
                self._entries.append(_Entry(messages, [], self._tick, total))
        return total

    def forget(self) -> None:
        """Drop every remembered history."""
        with self._lock:
            self._entries.clear()
            self._last.clear()

    def _match(self, messages: Sequence[Message]) -> tuple[_Entry, int] | None:
        """The remembered history ``messages`` starts with, caught up with it (its new
        messages appended, pending), and how many messages it held before; under the
        lock. Counts as a use of the memo (stale entries are dropped)."""
        self._tick = tick = self._tick + 1
        entries = self._entries
        for entry in [entry for entry in entries if tick - entry.used > STALE]:
            entries.remove(entry)
        for entry in reversed(entries):
            known = len(entry.messages)
            if catch_up(entry.messages, messages):
                break
        else:
            return None
        entry.used = tick
        entries.remove(entry)
        entries.append(entry)
        return entry, known

    def _lookup(self, messages: Sequence[Message], price: Pricer) -> CostTable | None:
        """The table of ``messages`` from the remembered history it starts with."""
        with self._lock:
            found = self._match(messages)
            if found is None:
                return None
            entry = found[0]
            entry.settle(price)  # the new messages, and any pending ones
            return entry.table(len(messages))

    def _grew(self, messages: Sequence[Message]) -> bool:
        """Record a list counted afresh; whether it extends a list counted just before."""
        length = len(messages)
        if not length:
            return False
        first, last = id(messages[0]), id(messages[-1])
        with self._lock:
            grew = any(
                known < length and head == first and tail == id(messages[known - 1])
                for known, head, tail in self._last
            )
            self._last.append((length, first, last))
        return grew

    def _note(
        self, messages: Sequence[Message], costs: list[int] | None, price: Pricer
    ) -> CostTable | None:
        """Record a list counted afresh; remember it (and return its table) when it
        extends a list counted just before."""
        if not self._grew(messages):
            return None
        entry = _Entry(messages, costs if costs is not None else price(messages), self._tick)
        with self._lock:
            self._entries.append(entry)
        return entry.table(len(messages))
