"""The conversations an adapter serves: one reader and one compacted view each.

One adapter object serves every conversation of a process (one LangChain middleware for
every thread of a deployment, one Agents SDK filter for every run), and a conversation
costs a turn its new messages only while its :class:`Session` is kept: its
:class:`~._incremental.Reader` (our messages, with the token costs cached on them) and its
:class:`~neuron_context._compaction.view.ContextView` (the compacted view, extended with
the new messages and compacted again only when it crosses the trigger). A session
dropped and made again re-reads the whole history into new objects (tokenized again) and
compacts it from scratch: a different request, and the provider's prompt cache lost.

So :class:`Sessions` keeps sessions by **memory, not by count**: every session a process
has room for (:attr:`Sessions.max_bytes`, about the bytes of the histories read; the
least recently used goes first when they exceed it). A call finds its session

- by the framework's own identity of the conversation when the adapter has one
  (``key``: LangChain's ``thread_id``; the name an Agents SDK run goes under;
  pydantic-ai's ``conversation_id``), in O(1);
- otherwise by its messages: the session whose messages the call's messages start with
  (:meth:`~._incremental.Reader.follows`, the ends compared first, so each other conversation
  is told apart in about a microsecond), most recently used first.

A session is taken out of the pool while in use, so concurrent calls never share one.

When a provider refuses a request as too long, :meth:`Sessions.learn` keeps the smaller
strategy the refusal implies for every conversation after (see
:mod:`neuron_context._compaction.recovery`).
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

from .._compaction.view import ContextView
from .._counting.request import RequestCounter
from .._errors import ConfigurationError
from .._strategies.strategy import ContextStrategy, counter_of
from ._incremental import Reader

__all__ = ["MAX_BYTES", "Session", "Sessions", "session_factory"]

K = TypeVar("K")
S = TypeVar("S")

MAX_BYTES = 512 * 2**20
"""How many bytes of conversations an adapter keeps by default (about: see
:attr:`~._incremental.Reader.footprint`): 512 MiB, some 550 conversations of 300 tool-using
messages."""

_anonymous = itertools.count()


class Session(Generic[K, S]):
    """One conversation an adapter serves: its reader and its compacted view."""

    __slots__ = ("footprint", "kept", "reader", "token", "view")

    def __init__(self, reader: Reader[K, S], view: ContextView) -> None:
        self.reader = reader
        self.view = view
        self.token: tuple[bool, Hashable] = (False, next(_anonymous))
        """The session's place in the pool: the conversation's key, or a number."""
        self.footprint = 0
        """Its bytes, as last counted in the pool."""
        self.kept: object = None
        """Which compaction of the view the framework keeps, as far as this session knows
        (an adapter that keeps the view with the conversation tells a newer one by it)."""


class Sessions(Generic[K, S]):
    """The conversations an adapter served, kept while they fit in ``max_bytes`` and
    found by their key or their messages (see the module). Thread-safe.
    """

    __slots__ = ("_bytes", "_learned", "_lock", "_make", "_pool", "max_bytes")

    def __init__(self, make: Callable[[], Session[K, S]], *, max_bytes: int = MAX_BYTES) -> None:
        if type(max_bytes) is not int or max_bytes < 0:
            msg = f"max_bytes must be a non-negative int, got {max_bytes!r}"
            raise ConfigurationError(msg)
        self._make = make
        self.max_bytes = max_bytes
        """The pool's size, in bytes of the histories read (the newest session is kept
        whatever its size)."""
        self._pool: OrderedDict[tuple[bool, Hashable], Session[K, S]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._learned: ContextStrategy | None = None

    def __len__(self) -> int:
        return len(self._pool)

    @property
    def footprint(self) -> int:
        """About how many bytes the kept sessions hold."""
        return self._bytes

    def take(self, items: Sequence[K], key: Hashable | None = None) -> Session[K, S]:
        """The session of the conversation ``key`` names or ``items`` continues, or a new
        one (the conversation's first call, or one dropped from the pool)."""
        token: tuple[bool, Hashable] | None = None
        with self._lock:
            if key is not None:
                token = (True, key)
                session = self._pool.pop(token, None)
            else:
                session = None
                for kept in reversed(self._pool.values()):
                    if kept.reader.follows(items):
                        session = self._pool.pop(kept.token)
                        break
            if session is not None:
                self._bytes -= session.footprint
                return session
            learned = self._learned
        session = self._make()
        if token is not None:
            session.token = token
        if learned is not None:
            session.view.strategy = learned
        return session

    def learn(self, strategy: ContextStrategy) -> None:
        """Compact every conversation with ``strategy`` from now on: the strategy sized
        to the window a provider's overflow error showed."""
        with self._lock:
            self._learned = strategy
            for session in self._pool.values():
                session.view.strategy = strategy

    def put(self, session: Session[K, S]) -> None:
        """Return ``session`` to the pool, the most recently used; the least recently
        used go while the pool holds more than :attr:`max_bytes`."""
        footprint = session.reader.footprint
        with self._lock:
            replaced = self._pool.pop(session.token, None)  # a concurrent call's, older
            if replaced is not None:
                self._bytes -= replaced.footprint
            session.footprint = footprint
            self._pool[session.token] = session
            self._bytes += footprint
            while self._bytes > self.max_bytes and len(self._pool) > 1:
                _, dropped = self._pool.popitem(last=False)
                self._bytes -= dropped.footprint


def session_factory(
    strategy: ContextStrategy, reader: Callable[[], Reader[K, S]]
) -> Callable[[], Session[K, S]]:
    """What makes a new session of an adapter: a new ``reader()`` and a view of
    ``strategy``, all counting with the strategy's counter through one request counter."""
    requests = RequestCounter(counter_of(strategy))

    def make() -> Session[K, S]:
        return Session(reader(), ContextView(strategy, requests))

    return make
