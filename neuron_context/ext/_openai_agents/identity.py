"""Which conversation an Agents SDK model call belongs to, by the SDK's own identity.

The SDK hands a ``call_model_input_filter`` the input items, the agent and the user's
context, but neither the run's session nor its ``conversation_id``. Two identities
reach the filter all the same:

- the conversation the run goes in (:func:`neuron_context.stores.conversation`, entered
  by the caller around ``Runner.run``: ``with conversation(session.session_id): ...``);
- the session of the run, when it is a :class:`~.session.CompactingSession`: its
  ``get_items``, which the SDK calls at the start of a run, notes its ``session_id`` here
  (:func:`note_session`) with the run it was called in, and a call of the same run
  reads it. A run is told from another by the object the SDK sets for each
  ``Runner.run`` (streamed or not, nested or not) in a context variable of its own
  before it reads the session (its tool-configuration guard); in an SDK without it, by
  the run's trace, which exists when the session is read only with tracing disabled
  (``RunConfig(tracing_disabled=True)``) or inside a ``trace(...)`` the caller opened.

:func:`conversation_of` gives the first of these, or ``None``: the filter then finds a
conversation by its items, and a store its strategy offloads to is not scoped for it (a
one-time warning says so, :func:`warn_unscoped`).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterable, Iterator
from typing import Any

from agents.tracing import get_current_trace

from ..._log import logger
from ..._stores.scope import conversation, conversation_name
from ..._stores.store import Store
from ..._strategies.strategy import ContextStrategy

_sdk_run: contextvars.ContextVar[Any] | None
try:  # the SDK's own object for each run (openai-agents 0.24 and later)
    from agents.run_internal.agent_tool_configuration import _current_run as _sdk_run
except ImportError:  # pragma: no cover - an SDK without it: the run's trace tells runs apart
    _sdk_run = None

__all__ = [
    "conversation_of",
    "in_conversation",
    "name_of",
    "note_session",
    "offloads",
    "stores_of",
    "warn_unscoped",
]

_SESSION: contextvars.ContextVar[tuple[str, object] | None] = contextvars.ContextVar(
    "neuron_context_agents_session", default=None
)
"""The ``session_id`` of the ``CompactingSession`` the current run read, with the run
(what tells this run from a later one in the same task, or from one nested in it)."""


def _run() -> object | None:
    """The run the current code runs in, as the SDK knows it (see the module), or
    ``None`` outside any."""
    run: object | None = get_current_trace() if _sdk_run is None else _sdk_run.get(None)
    return run


def name_of(session_id: object) -> str | None:
    """The conversation a session's ``session_id`` names: the id itself, an int as its
    decimal text (``SQLiteSession(user.id)``, which SQLite stores as that text), or
    ``None`` for anything else (an empty id names nothing)."""
    if isinstance(session_id, str):
        return session_id or None
    if isinstance(session_id, int) and not isinstance(session_id, bool):
        return str(session_id)
    return None


def note_session(session_id: object) -> None:
    """Note that the run this code runs in reads the session ``session_id``."""
    name = name_of(session_id)
    if name is not None:
        _SESSION.set((name, _run()))


def conversation_of() -> str | None:
    """The conversation the current call belongs to: the name the caller entered, else the
    session the run read (see the module), else ``None``."""
    name = conversation_name()
    if name is not None:
        return name
    noted = _SESSION.get()
    if noted is None:
        return None
    session_id, run = noted
    return session_id if run is not None and run is _run() else None


def in_conversation() -> contextlib.AbstractContextManager[None]:
    """The block's conversation is :func:`conversation_of` (an unscoped store used inside
    is its view)."""
    return conversation(conversation_of())


def offloads(strategy: ContextStrategy) -> bool:
    """Whether ``strategy`` (or one it holds) puts what it removes in an unscoped store."""
    return any(not store.scope for store in stores_of(strategy))


def stores_of(strategy: object, depth: int = 0) -> Iterator[Store]:
    """The stores ``strategy`` and the strategies it holds offload to, in order."""
    if depth > 8:  # strategies nest a few levels; a cycle is not followed
        return
    store = getattr(strategy, "store", None)
    if isinstance(store, Store):
        yield store
    inner: Iterable[object] = getattr(strategy, "strategies", None) or ()
    for held in (*inner, getattr(strategy, "primary", None), *getattr(strategy, "fallbacks", ())):
        if held is not None:
            yield from stores_of(held, depth + 1)


def warn_unscoped(label: str) -> None:
    """Warn that a call of ``label`` found no conversation while its strategy offloads to
    an unscoped store: what it offloads is not scoped by conversation (the caller warns
    once: a filter, at its first such call)."""
    logger.warning(
        "%s: the Agents SDK names no conversation for this call (no CompactingSession, no "
        "neuron_context.stores.conversation(...) around the run), so the strategy's store "
        "is not scoped by conversation: every conversation's recall can read what any "
        "other offloaded. Run the agent inside conversation(session.session_id), or give "
        "the strategy store.scoped(name)",
        label,
    )
