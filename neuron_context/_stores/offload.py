"""Offloading as a strategy does it: put, and never fail the compaction.

A strategy given a store calls :func:`offload` with what it removes and writes the key it
gets into what it keeps (:func:`reference`). A store that raises (a full disk, a Redis
that went away) costs only the offload: :func:`offload` logs a warning, records the
failure for whoever runs the compaction (the agent loop turns it into an
:class:`~neuron_context.events.OffloadFailed` event; see :func:`collect_failures`) and
returns ``None``, and the strategy then keeps what it would have kept without a store.
A strategy is synchronous, so the failures travel in a context variable rather than
through its return value; a worker thread started with ``anyio.to_thread`` shares it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

import attrs

from .._log import logger
from .serialized import Content
from .store import Store

__all__ = ["OffloadFailure", "collect_failures", "offload", "reference"]


@attrs.frozen
class OffloadFailure:
    """A put that failed: which store, for which strategy, and why."""

    store: str
    """The store's class name."""
    strategy: str
    """The strategy that offloaded."""
    reason: str
    """The exception, as ``Type: message``."""


_FAILURES: contextvars.ContextVar[list[OffloadFailure] | None] = contextvars.ContextVar(
    "neuron_context_offload_failures", default=None
)


@contextlib.contextmanager
def collect_failures() -> Iterator[list[OffloadFailure]]:
    """The failed offloads of the compaction run inside the block, in order."""
    failures: list[OffloadFailure] = []
    token = _FAILURES.set(failures)
    try:
        yield failures
    finally:
        _FAILURES.reset(token)


def offload(store: Store | None, content: Content, strategy: str) -> str | None:
    """Put ``content`` in ``store`` and return its key; ``None`` without a store or when
    the put fails (logged at WARNING and recorded, see the module)."""
    if store is None:
        return None
    try:
        return store.put(content)
    except Exception as exc:  # a store's failure costs only the offload
        reason = f"{type(exc).__name__}: {exc}"
        logger.warning(
            "%s: offload to %s failed, compacting without it: %s",
            strategy,
            type(store).__name__,
            reason,
            extra={"strategy": strategy, "store": type(store).__name__},
        )
        failures = _FAILURES.get()
        if failures is not None:
            failures.append(OffloadFailure(type(store).__name__, strategy, reason))
        return None


def reference(what: str, tokens: int, key: str) -> str:
    """The marker a removal leaves: ``[what, 2,314 tokens — recall: <key>]``."""
    return f"[{what}, {tokens:,} tokens — recall: {key}]"
