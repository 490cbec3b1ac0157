"""A conversation's compacted view kept where LangGraph keeps the conversation.

Behind a load balancer a conversation's calls land on different workers, each with its
own ``ContextMiddleware``; a view kept only in the memory of the worker that built it
would make every other worker compact the whole history anew: another request, and the
provider's prompt cache lost. So the middleware (in its default mode, the view) writes
each new compaction into the agent's state, in a private channel the checkpointer
stores with the thread (:data:`VIEW_KEY`: the view's messages as sent, how many of the
state's messages it stands for, and a digest of those, so a history edited since is
compacted anew, as one process would). A worker that meets the thread for the first time,
or again after dropping it from memory, reads the history once and continues the view
from there: the same requests, the same prefix, no compaction of its own.

The sessions of a thread are found by its ``thread_id`` (:func:`thread_id`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentState
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import BaseMessage

from ..._messages.message import Message
from .._core import Converted, Session
from .messages import read_message

__all__ = ["VIEW_KEY", "ContextState", "forget", "keep", "restore", "thread_id", "written"]

VIEW_KEY = "neuron_context_view"
"""The state channel the view is kept in (private: neither input nor output)."""


class ContextState(AgentState[Any]):
    """The agent's state with the compacted view of its messages."""

    neuron_context_view: NotRequired[Annotated[dict[str, Any], PrivateStateAttr]]


def thread_id() -> str | None:
    """The ``thread_id`` of the LangGraph run this code runs in, or ``None`` outside one."""
    try:
        from langgraph.config import get_config

        configurable = get_config().get("configurable") or {}
    except Exception:  # outside a runnable: no thread
        return None
    thread = configurable.get("thread_id")
    return None if thread is None or thread == "" else str(thread)


_kept: ContextVar[dict[str, Any] | None] = ContextVar("neuron_context_view", default=None)
"""The compaction a model call made, for the middleware to write into the state when the
call returns (set and read in the call's own context: the handler's thread or task)."""


def keep(
    session: Session[BaseMessage, int], items: Sequence[BaseMessage], sent: Sequence[BaseMessage]
) -> None:
    """Note that the view of ``items`` was compacted to the messages ``sent``: what the
    state is to keep (see :func:`written`), and the session knows it as its own."""
    last = _digest(items)
    kept = {"through": len(items), "last": last, "view": list(sent)}
    session.kept = (len(items), last)
    _kept.set(kept)


def _digest(items: Sequence[BaseMessage]) -> str:
    """What tells the history a view stands for from any other (an edited one included:
    LangGraph replaces a message by its id): a digest of each message's kind, id, content
    and tool calls, at C speed."""
    digest = hashlib.blake2b(digest_size=16)
    for message in items:
        calls = getattr(message, "tool_calls", None)
        digest.update(
            repr((message.type, message.id, message.content, calls)).encode(
                "utf-8", "surrogatepass"
            )
        )
    return digest.hexdigest()


def written() -> dict[str, Any] | None:
    """The state update for the compaction this call made (``None``: it made none), once."""
    kept = _kept.get()
    if kept is None:
        return None
    _kept.set(None)
    return {VIEW_KEY: kept}


def forget() -> None:
    """Start a call: no compaction noted yet."""
    _kept.set(None)


def restore(
    session: Session[BaseMessage, int],
    converted: Converted[BaseMessage, int],
    state: Mapping[str, Any] | None,
) -> bool:
    """Continue the view ``state`` keeps, when the session does not know it (a worker new
    to the thread, or one another worker's compaction overtook) and the state's messages
    still begin with the history it stands for. Whether it did.

    A message of the kept view that is one of the history's (the same id, equal) is read
    as the very message of ours the history reads as, so the request rebuilt from it
    holds the agent's own object, as the worker that compacted sent it.
    """
    kept = state.get(VIEW_KEY) if isinstance(state, Mapping) else None
    if not isinstance(kept, Mapping):
        return False
    through, last, sent = kept.get("through"), kept.get("last"), kept.get("view")
    if session.kept == (through, last):
        return False
    items = converted.items
    if (
        type(through) is not int
        or not 0 < through <= len(items)
        or not isinstance(sent, list)
        or not all(isinstance(message, BaseMessage) for message in sent)
        or _digest(items[:through]) != last
    ):
        return False
    sources = converted.sources
    stands = 0
    while stands < len(sources) and sources[stands] < through:
        stands += 1
    by_id: dict[str, int] = {}
    for position in range(stands):
        ident = items[sources[position]].id
        if ident is not None:
            by_id[ident] = position
    ours: list[Message] = []
    for index, message in enumerate(sent):
        position = by_id.get(message.id, -1) if message.id is not None else -1
        if position >= 0 and items[sources[position]] == message:
            ours.append(converted.messages[position])
        else:
            ours.append(read_message(message, index))
    session.view.restore(converted.messages[:stands], ours)
    session.kept = (through, last)
    return True
