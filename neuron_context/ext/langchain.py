"""LangChain v1: a middleware for ``create_agent`` and conversion of ``langchain_core`` messages.

Install with ``pip install "neuron-context[langchain]"``. :class:`ContextMiddleware` runs
any :class:`~neuron_context.ContextStrategy` on what each model call receives::

    agent = create_agent(model, tools, middleware=[ContextMiddleware(strategy)])

By default it edits only the request (``wrap_model_call``): the agent's state keeps the
whole history, the model sees the compacted one, and a later turn compacts again from the
full history. With ``persist=True`` it also writes the compaction into the state
(``before_model``, replacing the messages as LangChain's ``SummarizationMiddleware``
does), so the history stops growing; the request is still checked with the system prompt
counted.

The system prompt (``request.system_message``) is counted against the budget but never
edited. Tool definitions are not counted. Messages the strategy keeps reach the model as
the very objects the agent holds; every conversation sent is well formed (checked after
each compaction, repaired with a warning if a strategy broke it).

For code that trims by hand with ``trim_messages``, :func:`compact_messages` (and
:func:`acompact_messages`) take a list of LangChain messages and a strategy.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

from .._errors import ConfigurationError, show
from .._messages.message import Message
from .._strategies.base import ContextStrategy
from .._validators import require_bool
from ._core import Memo, compact_conversation, missing_extra, run_sync

try:
    from langchain.agents.middleware import (
        AgentMiddleware,
        AgentState,
        ModelRequest,
        ModelResponse,
    )
    from langchain_core.messages import AnyMessage, BaseMessage, RemoveMessage, ToolMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES
    from langgraph.runtime import Runtime

    from ._langchain_messages import (
        from_langchain,
        read_message,
        stamp,
        to_langchain,
        tool_message,
    )
except ModuleNotFoundError as exc:  # pragma: no cover - exercised by a test in a subprocess
    raise missing_extra(__name__) from exc

__all__ = [
    "ContextMiddleware",
    "acompact_messages",
    "compact_messages",
    "from_langchain",
    "to_langchain",
]


async def acompact_messages(
    messages: Sequence[BaseMessage], strategy: ContextStrategy
) -> list[BaseMessage]:
    """Compact LangChain ``messages`` with ``strategy`` when its trigger fires.

    The replacement for ``trim_messages``: system messages are kept, tool calls stay with
    their results, and kept messages are the objects given. Returns a new list (equal to
    ``messages`` when there is nothing to do).
    """
    originals = list(messages)
    ours = from_langchain(originals)
    compacted = await compact_conversation(strategy, ours)
    return originals if compacted is None else _rebuild(compacted, ours, originals)


def compact_messages(
    messages: Sequence[BaseMessage], strategy: ContextStrategy
) -> list[BaseMessage]:
    """The sync form of :func:`acompact_messages`."""
    return run_sync(lambda: acompact_messages(messages, strategy))


class ContextMiddleware(AgentMiddleware[AgentState[Any], Any]):
    """Compacts what each model call of a LangChain agent receives.

    Args:
        strategy: any strategy, typically ``default_stack(...)``; its own trigger
            decides when to compact (the system prompt counted).
        persist: also write the compaction into the agent's state before each model
            call, so the history itself shrinks (default: edit only the request).

    Examples:
        >>> middleware = ContextMiddleware(SlidingWindowStrategy(20, 8_000))
    """

    def __init__(self, strategy: ContextStrategy, *, persist: bool = False) -> None:
        if not isinstance(strategy, ContextStrategy):
            msg = f"ContextMiddleware.strategy must be a ContextStrategy, got {show(strategy)}"
            raise ConfigurationError(msg)
        self.strategy = strategy
        self.persist = require_bool(persist, "ContextMiddleware.persist")
        self._memo: Memo[BaseMessage, Message] = Memo()

    def _read(self, messages: Sequence[BaseMessage]) -> list[Message]:
        return self._memo.convert(messages, stamp, read_message)

    def __repr__(self) -> str:
        return f"ContextMiddleware({self.strategy!r}, persist={self.persist})"

    # -- the request (both modes) ---------------------------------------------------

    async def _compact_request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        originals = list(request.messages)
        ours = self._read(originals)
        system = from_langchain([request.system_message]) if request.system_message else []
        compacted = await compact_conversation(self.strategy, [*system, *ours])
        if compacted is None:
            return request
        kept = [message for message in compacted if not any(message is s for s in system)]
        return request.override(messages=cast("list[AnyMessage]", _rebuild(kept, ours, originals)))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """Send the model the compacted request."""
        return handler(run_sync(lambda: self._compact_request(request)))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """Send the model the compacted request."""
        return await handler(await self._compact_request(request))

    # -- the state (persist=True) -----------------------------------------------------

    async def _compact_state(self, state: AgentState[Any]) -> dict[str, Any] | None:
        if not self.persist:
            return None
        originals = list(state["messages"])
        ours = self._read(originals)
        compacted = await compact_conversation(self.strategy, ours)
        if compacted is None:
            return None
        replaced = _rebuild(compacted, ours, originals)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *replaced]}

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """With ``persist=True``, replace the state's messages with their compaction."""
        if not self.persist:
            return None
        return run_sync(lambda: self._compact_state(state))

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """With ``persist=True``, replace the state's messages with their compaction."""
        return await self._compact_state(state)


# -- after a compaction -----------------------------------------------------------------


def _rebuild(
    compacted: Sequence[Message], ours: Sequence[Message], originals: Sequence[BaseMessage]
) -> list[BaseMessage]:
    """The LangChain messages for a compaction of ``ours`` (read from ``originals``).

    A message the strategy kept is its original object (its id, metadata and provider
    format intact); a tool result it edited (a cleared result) is a copy of the original
    ``ToolMessage`` with the new content; anything else is converted.
    """
    index_of = {id(message): index for index, message in enumerate(ours)}
    results: dict[str, list[int]] = {}
    for index, message in enumerate(ours):
        for result in message.tool_results:
            results.setdefault(result.tool_use_id, []).append(index)
    names: dict[str, str] = {}
    out: list[BaseMessage] = []
    last = -1
    for message in compacted:
        names.update((use.id, use.name) for use in message.tool_uses)
        kept = index_of.get(id(message), -1)
        if kept >= 0:
            out.append(originals[kept])
            last = kept
        elif message.is_tool:
            for result in message.tool_results:
                fresh = tool_message(result, names.get(result.tool_use_id))
                later = next((i for i in results.get(result.tool_use_id, ()) if i > last), -1)
                original = originals[later] if later >= 0 else None
                if isinstance(original, ToolMessage):
                    last = later
                    update = {"content": fresh.content, "status": fresh.status}
                    fresh = original.model_copy(update=update)
                out.append(fresh)
        else:
            out.extend(to_langchain([message]))
    return out
