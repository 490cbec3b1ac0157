"""One model call of ``ContextMiddleware``: the request compacted, and sent once more,
smaller, when the provider refuses it as too long.

LangChain hands the middleware's ``wrap_model_call`` (sync) or ``awrap_model_call``
(async) the request and the handler that sends it. Both run the same steps: read the
request (the session of its conversation, its system prompt and tools), ask the trigger,
compact the view when it fires, and send through the recovery step
(:mod:`neuron_context._compaction.recovery`: refused as too long, the view is recompacted
to fit and the request sent once more; the reply's usage calibrates the counter).
:class:`ModelCalls` holds those steps and the state they share, written once for both,
so the middleware's own module keeps to LangChain's hooks and its two modes (a view, or
the state persisted).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

import attrs
from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AnyMessage, BaseMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from ... import _tracing as tracing
from ..._compaction.recovery import Attempt, resend, resend_sync
from ..._compaction.refusal import Overflow
from ..._compaction.step import StepResult
from ..._errors import show
from ..._log import logger
from ..._messages.message import ToolDefinition
from ..._strategies.strategy import ContextStrategy, counter_of
from .._core import (
    Converted,
    CounterLoad,
    Session,
    Sessions,
    ToolDefinitions,
    run_sync,
    session_factory,
)
from .fleet import keep, restore, thread_id
from .messages import read_message
from .reader import reader, rebuild

__all__ = ["Call", "ModelCalls", "unreadable"]


class ModelCalls:
    """The model calls of one ``ContextMiddleware``: the sessions of the conversations it
    serves, its tools' definitions, and what the last request held besides its messages.
    """

    __slots__ = ("_tools", "counter", "load", "overhead", "sessions")

    def __init__(self, strategy: ContextStrategy) -> None:
        self.sessions: Sessions[BaseMessage, int] = Sessions(session_factory(strategy, reader))
        self.counter = counter_of(strategy)
        """What the provider's reported input tokens calibrate (a ``CalibratedCounter``)."""
        self._tools = ToolDefinitions(_definition)
        # What the last request held besides its messages, for the state's compaction
        # (before_model sees the state alone): its system prompt and tool definitions.
        self.overhead: tuple[str | None, tuple[ToolDefinition, ...]] = (None, ())
        # The async hooks' first count, in a worker thread (a tokenizer loads there).
        self.load = CounterLoad(strategy)

    def send(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """``handler``'s response to the compacted request (refused as too long:
        compacted to fit and sent once more)."""
        call = self._prepare(request)
        if call is None:
            return handler(request)
        try:
            result = (
                run_sync(lambda: self._compact(call)) if call.decided.triggered else call.decided
            )
        except BaseException:
            self.sessions.put(call.session)
            raise
        with tracing.model_request("ContextMiddleware") as span:
            return resend_sync(
                handler,
                self._attempt(call, self._finish(call, result), result),
                lambda overflow, _: run_sync(lambda: self._recover(request, overflow)),
                counter=self.counter,
                usage=_input_tokens,
                label="ContextMiddleware",
                span=span,
            )

    async def asend(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """The async form of :meth:`send`."""
        call = self._prepare(request)
        if call is None:
            return await handler(request)
        try:
            result = await self._compact(call) if call.decided.triggered else call.decided
        except BaseException:
            self.sessions.put(call.session)
            raise

        async def recover(overflow: Overflow, _: Attempt[Any]) -> Attempt[Any]:
            return await self._recover(request, overflow)

        with tracing.model_request("ContextMiddleware") as span:
            return await resend(
                handler,
                self._attempt(call, self._finish(call, result), result),
                recover,
                counter=self.counter,
                usage=_input_tokens,
                label="ContextMiddleware",
                span=span,
            )

    def _prepare(self, request: ModelRequest[Any]) -> Call | None:
        """Read the request and ask the trigger (synchronous: no event loop is needed
        unless the view must be compacted); ``None`` when the request cannot be read: it
        goes out as LangChain built it (see :func:`unreadable`)."""
        items = request.messages
        try:
            system = _system_text(request.system_message)
        except Exception as exc:
            unreadable(exc)
            return None
        tools = self._tools.of(request.tools)
        self.overhead = (system, tools)
        session = self.sessions.take(items, thread_id())
        try:
            converted = session.reader(items)
            restore(session, converted, request.state)
            start = converted.sendable("ContextMiddleware")
            decided = session.view.prepare(start, system_prompt=system, tools=tools)
        except Exception as exc:
            self.sessions.put(session)
            unreadable(exc)
            return None
        except BaseException:
            self.sessions.put(session)
            raise
        repaired = start is not converted.messages
        return Call(request, session, converted, decided, system, tools, repaired)

    async def _compact(self, call: Call) -> StepResult:
        return await call.session.view.compact(
            call.decided,
            system_prompt=call.system,
            tools=call.tools,
            label="ContextMiddleware",
        )

    def _finish(self, call: Call, result: StepResult) -> ModelRequest[Any]:
        """The request to send: as it was while the view is the history, else the view."""
        request = call.request
        assert request is not None
        try:
            if not call.session.view.compacted and not call.repaired:
                return request
            rebuilt = rebuild(result.messages, call.converted)
            if result.compacted:
                keep(call.session, call.converted.items, rebuilt)
        except Exception as exc:
            logger.warning(
                "ContextMiddleware: the compacted request cannot be written as LangChain "
                "messages (%s: %s); sending the request as LangChain built it",
                type(exc).__name__,
                show(str(exc), 200),
            )
            return request
        finally:
            self.sessions.put(call.session)
        return request.override(messages=cast("list[AnyMessage]", rebuilt))

    def _attempt(
        self, call: Call, request: ModelRequest[Any], result: StepResult, budget: int | None = None
    ) -> Attempt[ModelRequest[Any]]:
        """``request`` as the recovery step sends it: with what it holds, as we count it."""
        return Attempt(
            request,
            read=lambda: result.messages,
            system_prompt=call.system,
            tools=call.tools,
            budget=budget,
        )

    async def _recover(
        self, request: ModelRequest[Any], overflow: Overflow
    ) -> Attempt[ModelRequest[Any]]:
        """The request refused as too long, recompacted to the size the refusal showed
        (the smaller strategy kept for every conversation after)."""
        call = self._prepare(request)
        assert call is not None  # it was read before it was sent
        try:
            result, budget = await call.session.view.recover(
                overflow,
                call.decided.messages,
                system_prompt=call.system,
                tools=call.tools,
                label="ContextMiddleware",
            )
            self.sessions.learn(call.session.view.strategy)
        except BaseException:
            self.sessions.put(call.session)
            raise
        return self._attempt(call, self._finish(call, result), result, budget)


@attrs.frozen
class Call:
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


def unreadable(exc: Exception) -> None:
    """Log that a request's messages cannot be read (``exc``): the compaction step's
    failure policy, so the request goes out as LangChain built it and the model call is
    never lost to the adapter."""
    logger.warning(
        "ContextMiddleware: the request's messages cannot be read (%s: %s); sending the "
        "request as LangChain built it",
        type(exc).__name__,
        show(str(exc), 200),
    )


# -- what a request holds besides its messages --------------------------------------------


def _input_tokens(response: ModelResponse[Any]) -> int | None:
    """The provider's input tokens for the reply (LangChain's ``usage_metadata``)."""
    messages = getattr(response, "result", None)
    for message in reversed(messages if isinstance(messages, list) else [response]):
        usage = getattr(message, "usage_metadata", None)
        if isinstance(usage, dict):
            tokens = usage.get("input_tokens")
            return tokens if isinstance(tokens, int) else None
    return None


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
