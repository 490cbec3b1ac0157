"""Which conversation a store is used for: one context variable, set by whoever runs it.

The agent loop runs each of its runs, and the adapters each compaction and each recall,
inside :func:`conversation` with the conversation's name (our agent's
``state.conversation``, LangChain's ``thread_id``, pydantic-ai's ``conversation_id``,
the ``session_id`` of an Agents SDK run's ``CompactingSession``; the SDK hands its filter
and tools no session, so a run without a ``CompactingSession`` is named by its user,
inside ``conversation(session.session_id)``); an unscoped store used inside is that
conversation's view (``store.scoped(name)``), so one conversation's recall never reads
what another offloaded. A store the user scoped stays in its own scope. A loop of one's
own enters it the same way. Tasks and worker threads started inside
(``anyio.to_thread``) inherit it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

from .._errors import ConfigurationError, show

__all__ = ["conversation", "conversation_name"]

_CONVERSATION: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "neuron_context_conversation", default=None
)


def conversation_name() -> str | None:
    """The conversation the current code runs for, or ``None``."""
    return _CONVERSATION.get()


@contextlib.contextmanager
def conversation(name: str | None) -> Iterator[None]:
    """Inside the block, an unscoped store is the view of conversation ``name``
    (``None``: as outside it).

    Raises:
        ConfigurationError: ``name`` is neither ``None`` nor a non-empty string.
    """
    if name is None:
        yield
        return
    if not isinstance(name, str) or not name:
        msg = f"conversation: name must be a non-empty str or None, got {show(name)}"
        raise ConfigurationError(msg)
    token = _CONVERSATION.set(name)
    try:
        yield
    finally:
        _CONVERSATION.reset(token)
