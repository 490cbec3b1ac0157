"""LangChain v1: a middleware for ``create_agent`` and conversion of ``langchain_core`` messages.

Install the ``langchain`` extra (``python -m pip install ".[langchain]"`` from a clone).
:class:`ContextMiddleware` runs any :class:`~neuron_context.ContextStrategy` on what each
model call receives::

    agent = create_agent(model, tools, middleware=[ContextMiddleware(strategy)])

By default (``persist=False``) it edits only the request (``wrap_model_call``): the
agent's state keeps the whole history, and the model is sent a compacted *view* of it.
The view is kept between calls, per conversation: each call extends it with the new
messages and compacts it again only when the view itself crosses the trigger, so a run
compacts as rarely as one that rewrites its state, the requests between two compactions
share their prefix (the provider's prompt cache serves it), and a call costs the new
messages, not the history. With ``persist=True`` the compaction is also written into the
state (``before_model``, replacing the messages as LangChain's ``SummarizationMiddleware``
does), so the history itself stops growing; the request is still checked with the
system prompt and the tools counted.

Why the view is the default: nothing is lost (the state, its checkpoints and whatever
reads them keep every message), and a view costs no more compactions than persisting.
Persist when the state's size matters more (a checkpointer storing every message of a
very long run).

The system prompt (``request.system_message``) and the tool definitions are counted
against the budget, as the model receives them; the system prompt is never edited.
Messages the strategy keeps reach the model as the very objects the agent holds; every
conversation sent is well formed. All of it goes through the one compaction step of
:mod:`neuron_context._compaction.step`: a failing strategy leaves the request as it was
(logged), it never fails the model call.

Offloading: give the strategy a ``store=`` (ours, or :class:`LangGraphStore` over the
LangGraph ``BaseStore`` the agent already uses) and add :func:`recall_tool` to the agent's
tools, so the model can read back what compaction removed.

A model call the provider refuses as too long for the model (OpenAI's
``context_length_exceeded``, Anthropic's ``prompt is too long``, ...) is compacted to the
size the refusal shows and sent once more; the smaller budget is kept for the calls after,
and a second refusal is a :class:`~neuron_context.errors.ContextOverflowError` (see
:mod:`neuron_context.ext._recovery`).

For code that trims by hand with ``trim_messages``, :func:`compact_messages` (and
:func:`acompact_messages`) take a list of LangChain messages and a strategy.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

import attrs

from .._compaction.overflow import refused_again
from .._compaction.request import RequestCounter
from .._compaction.step import StepResult, compact_step, decide
from .._messages.message import Message, ToolDefinition
from .._overflow import Overflow, context_overflow
from .._strategies.strategy import ContextStrategy, counter_of
from .._validators import require_bool, require_sequence_of
from ._core import (
    Converted,
    Reader,
    Session,
    Sessions,
    ToolDefinitions,
    check_strategy,
    missing_extra,
    run_sync,
    session_factory,
)
from ._recovery import recover

try:
    from langchain.agents.middleware import (
        AgentMiddleware,
        AgentState,
        ModelRequest,
        ModelResponse,
    )
    from langchain_core.messages import AnyMessage, BaseMessage, RemoveMessage, ToolMessage
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langgraph.graph.message import REMOVE_ALL_MESSAGES
    from langgraph.runtime import Runtime

    from ._langchain_messages import (
        from_langchain,
        read_message,
        stamp,
        to_langchain,
        tool_message,
    )
    from ._langchain_stores import LangGraphStore, recall_tool
except ModuleNotFoundError as exc:  # pragma: no cover - exercised by a test in a subprocess
    raise missing_extra(__name__) from exc

__all__ = [
    "ContextMiddleware",
    "LangGraphStore",
    "acompact_messages",
    "compact_messages",
    "from_langchain",
    "recall_tool",
    "to_langchain",
]


def _read(items: Sequence[BaseMessage], offset: int) -> tuple[list[Message], list[int]]:
    """Our messages for LangChain's, one each (see :class:`~._core.Reader`)."""
    checked = require_sequence_of(items, "messages", BaseMessage, "LangChain messages")
    messages = [read_message(message, offset + index) for index, message in enumerate(checked)]
    return messages, list(range(offset, offset + len(messages)))


def _reader() -> Reader[BaseMessage, int]:
    return Reader(_read, span=lambda index: (index, index), stamp=stamp)


async def acompact_messages(
    messages: Sequence[BaseMessage], strategy: ContextStrategy
) -> list[BaseMessage]:
    """Compact LangChain ``messages`` with ``strategy`` when its trigger fires.

    The replacement for ``trim_messages``: system messages are kept, tool calls stay with
    their results, and kept messages are the objects given. Returns a new list (equal to
    ``messages`` when there is nothing to do).
    """
    originals = list(messages)
    converted = _reader()(originals)
    start = converted.sendable("compact_messages")
    result = await compact_step(
        strategy,
        start,
        counter=RequestCounter(counter_of(strategy)),
        label="compact_messages",
    )
    if not result.compacted and start is converted.messages:
        return originals
    return _rebuild(result.messages, converted)


def compact_messages(
    messages: Sequence[BaseMessage], strategy: ContextStrategy
) -> list[BaseMessage]:
    """The sync form of :func:`acompact_messages`."""
    return run_sync(lambda: acompact_messages(messages, strategy))


class ContextMiddleware(AgentMiddleware[AgentState[Any], Any]):
    """Compacts what each model call of a LangChain agent receives.

    Args:
        strategy: any strategy, typically ``default_stack(...)``; its own trigger
            decides when to compact (the system prompt and the tools counted).
        persist: also write the compaction into the agent's state before each model
            call, so the history itself shrinks (default: send a compacted view, keep
            the state whole; see the module docstring for why).

    Examples:
        >>> middleware = ContextMiddleware(SlidingWindowStrategy(20, 8_000))
    """

    def __new__(cls, strategy: ContextStrategy, *, persist: bool = False) -> ContextMiddleware:
        # LangChain adds a graph node for every middleware whose class overrides
        # before_model, and runs it on every model call: only the persisting kind has it.
        kind = _PersistingContextMiddleware if persist is True else cls
        return super().__new__(kind)

    def __init__(self, strategy: ContextStrategy, *, persist: bool = False) -> None:
        self.strategy = check_strategy("ContextMiddleware", strategy)
        self.persist = require_bool(persist, "ContextMiddleware.persist")
        self._sessions: Sessions[BaseMessage, int] = Sessions(session_factory(strategy, _reader))
        self._tools = ToolDefinitions(_definition)
        # What the last request held besides its messages, for the state's compaction
        # (before_model sees the state alone): its system prompt and tool definitions.
        self._overhead: tuple[str | None, tuple[ToolDefinition, ...]] = (None, ())

    def __repr__(self) -> str:
        return f"ContextMiddleware({self.strategy!r}, persist={self.persist})"

    @property
    def name(self) -> str:
        """``ContextMiddleware`` (LangChain names the middleware's graph nodes with it)."""
        return "ContextMiddleware"

    # -- the request (both modes) ---------------------------------------------------

    def _prepare(self, request: ModelRequest[Any]) -> _Call:
        """Read the request and ask the trigger (synchronous: no event loop is needed
        unless the view must be compacted)."""
        items = request.messages
        system = _system_text(request.system_message)
        tools = self._tools.of(request.tools)
        self._overhead = (system, tools)
        session = self._sessions.take(items)
        try:
            converted = session.reader(items)
            start = converted.sendable("ContextMiddleware")
            decided = session.view.prepare(start, system_prompt=system, tools=tools)
        except BaseException:
            self._sessions.put(session)
            raise
        repaired = start is not converted.messages
        return _Call(request, session, converted, decided, system, tools, repaired)

    async def _compact(self, call: _Call) -> StepResult:
        return await call.session.view.compact(
            call.decided,
            system_prompt=call.system,
            tools=call.tools,
            label="ContextMiddleware",
        )

    def _finish(self, call: _Call, result: StepResult) -> ModelRequest[Any]:
        """The request to send: as it was while the view is the history, else the view."""
        request = call.request
        assert request is not None
        try:
            if not call.session.view.compacted and not call.repaired:
                return request
            rebuilt = _rebuild(result.messages, call.converted)
        finally:
            self._sessions.put(call.session)
        return request.override(messages=cast("list[AnyMessage]", rebuilt))

    async def _recover(self, request: ModelRequest[Any], overflow: Overflow) -> _Recovery:
        """The request refused as too long, compacted to the size the refusal showed
        (see :mod:`neuron_context.ext._recovery`)."""
        call = self._prepare(request)
        try:
            result, budget = await recover(
                self._sessions,
                call.session,
                overflow,
                call.decided.messages,
                system_prompt=call.system,
                tools=call.tools,
                label="ContextMiddleware",
            )
        except BaseException:
            self._sessions.put(call.session)
            raise
        return _Recovery(self._finish(call, result), budget)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """Send the model the compacted request (refused as too long: compacted to fit
        and sent once more)."""
        call = self._prepare(request)
        try:
            result = (
                run_sync(lambda: self._compact(call)) if call.decided.triggered else call.decided
            )
        except BaseException:
            self._sessions.put(call.session)
            raise
        try:
            return handler(self._finish(call, result))
        except Exception as exc:
            overflow = context_overflow(exc)
            if overflow is None:
                raise
        retry = run_sync(lambda: self._recover(request, overflow))
        try:
            return handler(retry.request)
        except Exception as exc:
            error = refused_again(exc, retry.budget)
            if error is None:
                raise
            raise error from exc

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """Send the model the compacted request (refused as too long: compacted to fit
        and sent once more)."""
        call = self._prepare(request)
        try:
            result = await self._compact(call) if call.decided.triggered else call.decided
        except BaseException:
            self._sessions.put(call.session)
            raise
        try:
            return await handler(self._finish(call, result))
        except Exception as exc:
            overflow = context_overflow(exc)
            if overflow is None:
                raise
        retry = await self._recover(request, overflow)
        try:
            return await handler(retry.request)
        except Exception as exc:
            error = refused_again(exc, retry.budget)
            if error is None:
                raise
            raise error from exc


@attrs.frozen
class _Recovery:
    """The request to send again after an overflow error, and the budget it was cut to."""

    request: ModelRequest[Any]
    budget: int


class _PersistingContextMiddleware(ContextMiddleware):
    """A :class:`ContextMiddleware` with ``persist=True``: it also compacts the state."""

    def _prepare_state(self, state: AgentState[Any]) -> _Call | None:
        """Read the state's messages and ask the trigger (``None``: nothing to do)."""
        items = state["messages"]
        system, tools = self._overhead
        session = self._sessions.take(items)
        converted = session.reader(items)
        decided = decide(
            self.strategy,
            converted.messages,
            counter=session.view.counter,
            system_prompt=system,
            tools=tools,
        )
        if not decided.triggered:
            self._sessions.put(session)
            return None
        # Not returned to the pool: once the state is compacted, its messages are new.
        return _Call(None, session, converted, decided, system, tools, repaired=False)

    async def _compact_state(self, call: _Call) -> dict[str, Any] | None:
        result = await compact_step(
            self.strategy,
            call.converted.messages,
            counter=call.session.view.counter,
            system_prompt=call.system,
            tools=call.tools,
            decided=call.decided,
            label="ContextMiddleware",
        )
        if not result.compacted:
            return None
        replaced = _rebuild(result.messages, call.converted)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *replaced]}

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Replace the state's messages with their compaction, when it fires."""
        call = self._prepare_state(state)
        if call is None:
            return None
        return run_sync(lambda: self._compact_state(call))

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Replace the state's messages with their compaction, when it fires."""
        call = self._prepare_state(state)
        if call is None:
            return None
        return await self._compact_state(call)


# -- one model call -----------------------------------------------------------------------


@attrs.frozen
class _Call:
    """One model call's request (``None`` for the state's compaction), read and decided
    on, with the session it belongs to."""

    request: ModelRequest[Any] | None
    session: Session[BaseMessage, int]
    converted: Converted[BaseMessage, int]
    decided: StepResult
    system: str | None
    tools: tuple[ToolDefinition, ...]
    repaired: bool
    """Whether the messages were not well formed (what is sent is their repair)."""


# -- what a request holds besides its messages --------------------------------------------


def _system_text(message: BaseMessage | None) -> str | None:
    """The system prompt's text, as we count it (``None`` without one)."""
    if message is None:
        return None
    return read_message(message, 0).text or None


def _definition(tool: object) -> ToolDefinition | None:
    try:
        spec = convert_to_openai_tool(tool)  # type: ignore[arg-type]
        function = spec["function"]
        return ToolDefinition(
            name=str(function["name"]),
            description=str(function.get("description") or ""),
            input_schema=function.get("parameters") or {"type": "object", "properties": {}},
        )
    except Exception:  # a provider's built-in tool: no schema to count
        return None


# -- after a compaction -----------------------------------------------------------------


def _rebuild(
    compacted: Sequence[Message], converted: Converted[BaseMessage, int]
) -> list[BaseMessage]:
    """The LangChain messages for a compaction of ``converted.messages``.

    A message the strategy kept is its original object (its id, metadata and provider
    format intact); a tool result it edited (a cleared result) is a copy of the original
    ``ToolMessage`` with the new content; anything else is converted. O(len(compacted)).
    """
    originals = converted.items
    names: dict[str, str] = {}
    out: list[BaseMessage] = []
    last = -1
    for message in compacted:
        names.update((use.id, use.name) for use in message.tool_uses)
        kept = converted.index(message)
        if kept >= 0:
            out.append(originals[converted.sources[kept]])
            last = kept
        elif message.is_tool:
            for result in message.tool_results:
                fresh = tool_message(result, names.get(result.tool_use_id))
                later = next((i for i in converted.results(result.tool_use_id) if i > last), -1)
                original = originals[converted.sources[later]] if later >= 0 else None
                if isinstance(original, ToolMessage):
                    last = later
                    update = {"content": fresh.content, "status": fresh.status}
                    fresh = original.model_copy(update=update)
                out.append(fresh)
        else:
            out.extend(to_langchain([message]))
    return out
