"""One compaction's puts, as a batch: which stores failed, which keys it put or shows,
and the failures to report.

A compaction may put dozens of entries (each cleared result its own). Two things must
hold across all of them, and neither a strategy nor a store can see them alone:

- **A failing store fails once.** After the first put that raises (a timeout, a
  connection refused), the compaction's other puts and reads on that store are skipped:
  a hung server costs one client timeout per compaction, not one per cleared result.
  The compaction goes on without references, and reports one failure.
- **A cap never breaks a reference the request shows.** A store with ``max_items``
  evicts only entries this compaction neither put nor marked as shown (:func:`spare`):
  a key the compacted request holds can always be read back. A compaction that puts
  more than ``max_items`` entries holds them all; the next put outside it evicts.

:func:`offloading` opens the compaction (the compaction step does, for the agent loop,
its middlewares, the adapters and the command line; each strategy's own ``compact``
does when called alone); an inner one joins the outer. A strategy is synchronous, so the
state travels in a context variable; a worker thread started with ``anyio.to_thread``
shares it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator

import attrs

__all__ = [
    "OffloadFailure",
    "Session",
    "collect_failures",
    "current",
    "offloading",
    "spared",
]


@attrs.frozen
class OffloadFailure:
    """A put that failed: which store, for which strategy, and why."""

    store: str
    """The store's class name."""
    strategy: str
    """The strategy that offloaded."""
    reason: str
    """The exception, as ``Type: message``."""


@attrs.define(eq=False)
class Session:
    """What one compaction's puts share (see the module)."""

    _down: dict[int, object] = attrs.field(factory=dict)
    """The stores that failed (by the identity of what holds their data), kept alive."""
    _spared: dict[int, set[str]] = attrs.field(factory=dict)
    """By store identity: the names of the entries eviction must keep."""
    _collectors: list[list[OffloadFailure]] = attrs.field(factory=list)

    def is_down(self, identity: object) -> bool:
        """Whether a store with this identity failed in this compaction."""
        return id(identity) in self._down

    def fail(self, identity: object, failure: OffloadFailure) -> None:
        """Record that the store failed: once (its later calls are skipped)."""
        if id(identity) in self._down:
            return
        self._down[id(identity)] = identity
        for collected in self._collectors:
            collected.append(failure)

    def spare(self, identity: object, names: Iterable[str]) -> None:
        """Keep ``names`` (a store's own entry names) from eviction in this compaction."""
        self._spared.setdefault(id(identity), set()).update(names)

    def spared(self, identity: object) -> frozenset[str]:
        """The names eviction must keep in the store with this identity."""
        return frozenset(self._spared.get(id(identity), ()))


_SESSION: contextvars.ContextVar[Session | None] = contextvars.ContextVar(
    "neuron_context_offload_session", default=None
)


def current() -> Session | None:
    """The compaction being offloaded, or ``None`` outside one."""
    return _SESSION.get()


@contextlib.contextmanager
def offloading() -> Iterator[Session]:
    """The puts inside the block are one compaction's (inside an open one: that one)."""
    session = _SESSION.get()
    if session is not None:
        yield session
        return
    session = Session()
    token = _SESSION.set(session)
    try:
        yield session
    finally:
        _SESSION.reset(token)


@contextlib.contextmanager
def collect_failures() -> Iterator[list[OffloadFailure]]:
    """The failed offloads of the compaction run inside the block, in order (one per
    store that failed)."""
    collected: list[OffloadFailure] = []
    with offloading() as session:
        session._collectors.append(collected)
        try:
            yield collected
        finally:
            session._collectors.remove(collected)


def spared(identity: object) -> frozenset[str]:
    """The entry names the current compaction keeps from eviction in a store (empty
    outside a compaction)."""
    session = _SESSION.get()
    return frozenset() if session is None else session.spared(identity)
