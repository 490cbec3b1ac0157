"""The conversations an adapter serves: one reader and one compacted view each.

A framework hands an adapter a history, not a conversation id (one LangChain middleware
serves every thread of a LangGraph deployment, an Agents SDK filter every run it is
given to), so a conversation is found by its messages: :class:`Sessions` keeps the last
few, and a call whose messages continue one of them (:meth:`~._reader.Reader.follows`)
takes that :class:`Session`, its :class:`~._reader.Reader` and its
:class:`~neuron_context._compaction.view.ContextView` (the compacted view, extended with
the new messages and compacted again only when it crosses the trigger). A session is
taken out of the pool while in use, so concurrent calls never share one.

When a provider refuses a request as too long, :meth:`Sessions.learn` keeps the smaller
strategy the refusal implies for every conversation after (see
:mod:`neuron_context.ext._recovery`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from .._compaction.request import RequestCounter
from .._compaction.view import ContextView
from .._strategies.strategy import ContextStrategy, counter_of
from ._reader import Reader

__all__ = ["Session", "Sessions", "session_factory"]

K = TypeVar("K")
S = TypeVar("S")


class Session(Generic[K, S]):
    """One conversation an adapter serves: its reader and its compacted view."""

    __slots__ = ("reader", "view")

    def __init__(self, reader: Reader[K, S], view: ContextView) -> None:
        self.reader = reader
        self.view = view


class Sessions(Generic[K, S]):
    """The last :data:`KEPT` conversations an adapter served, found by their messages.

    :meth:`take` gives the session whose messages the call's messages start with (taken
    out of the pool while in use, so concurrent calls never share one) or a new one;
    :meth:`put` returns it. Thread-safe.
    """

    KEPT = 8

    __slots__ = ("_learned", "_lock", "_make", "_pool")

    def __init__(self, make: Callable[[], Session[K, S]]) -> None:
        self._make = make
        self._pool: list[Session[K, S]] = []
        self._lock = threading.Lock()
        self._learned: ContextStrategy | None = None

    def take(self, items: Sequence[K]) -> Session[K, S]:
        """The session of the conversation ``items`` continues, or a new one."""
        with self._lock:
            for position in range(len(self._pool) - 1, -1, -1):
                session = self._pool[position]
                if session.reader.follows(items):
                    del self._pool[position]
                    return session
            learned = self._learned
        session = self._make()
        if learned is not None:
            session.view.strategy = learned
        return session

    def learn(self, strategy: ContextStrategy) -> None:
        """Compact every conversation with ``strategy`` from now on: the strategy sized
        to the window a provider's overflow error showed."""
        with self._lock:
            self._learned = strategy
            for session in self._pool:
                session.view.strategy = strategy

    def put(self, session: Session[K, S]) -> None:
        """Return ``session`` to the pool (the most recent; the oldest beyond KEPT goes)."""
        with self._lock:
            self._pool.append(session)
            del self._pool[: -self.KEPT]


def session_factory(
    strategy: ContextStrategy, reader: Callable[[], Reader[K, S]]
) -> Callable[[], Session[K, S]]:
    """What makes a new session of an adapter: a new ``reader()`` and a view of
    ``strategy``, all counting with the strategy's counter through one request counter."""
    requests = RequestCounter(counter_of(strategy))

    def make() -> Session[K, S]:
        return Session(reader(), ContextView(strategy, requests))

    return make
