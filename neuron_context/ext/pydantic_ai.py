"""pydantic-ai: a history processor and conversion of ``ModelMessage`` s.

Install the ``pydantic-ai`` extra (``python -m pip install ".[pydantic-ai]"`` from a
clone). :class:`HistoryProcessor` runs any :class:`~neuron_context.ContextStrategy` on the
history before each model request::

    agent = Agent(model, capabilities=[ProcessHistory(HistoryProcessor(strategy))])

:meth:`HistoryProcessor.wrap` gives the model the recovery from a provider's overflow
error (a request refused as too long is compacted to fit and sent once more)::

    processor = HistoryProcessor(strategy)
    agent = Agent(processor.wrap(model), capabilities=[ProcessHistory(processor)])

It is an async callable ``list[ModelMessage] -> list[ModelMessage]``, so it also serves
as an entry of ``history_processors=[...]`` in the pydantic-ai versions that have that
argument. pydantic-ai keeps what a processor returns as the run's history, so the
compaction persists (the history stops growing): pydantic-ai decides this, not the
processor, which is why this adapter has no non-destructive mode; each compaction then
starts from the last one (the earlier summary updated with what was evicted since), as
in a loop of our own.

A call converts only the messages added since the last one (the others are the same
objects as last time), so a turn costs its new messages. The request's instructions (the
system prompt pydantic-ai sends) are counted against the budget; the tool definitions
are not (a history processor is given the messages alone).

Messages the strategy keeps come back as the very objects pydantic-ai gave (a request
that lost some parts is a copy of the original with the remaining parts, so its
``instructions``, timestamps and run id stay); the conversation returned is well formed
(the one compaction step of :mod:`neuron_context._compaction.step` keeps the history as
it was when a strategy fails or breaks it), so no tool call is left without its return
and no return without its call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, cast

from .._compaction.overflow import refused_again
from .._compaction.step import compact_step
from .._messages.message import Message, Role, ToolDefinition
from .._overflow import Overflow, context_overflow
from .._stores.recall import RECALL_DESCRIPTION, RECALL_TOOL_NAME, text_reader
from .._stores.store import Store
from .._strategies.strategy import ContextStrategy
from ._core import Converted, Reader, Sessions, check_strategy, missing_extra, session_factory
from ._recovery import recover

try:
    from pydantic_ai import Tool
    from pydantic_ai.messages import (
        ERROR_OUTCOMES,
        ModelMessage,
        ModelRequest,
        ModelRequestPart,
        ModelResponse,
        ToolReturnPart,
    )
    from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
    from pydantic_ai.models.wrapper import WrapperModel
    from pydantic_ai.settings import ModelSettings

    _until_first_event: Callable[..., Any] | None
    try:
        # pydantic-ai's own way to open a stream up to its first event (its fallback model
        # and primed streams use it), so a refusal sent as the first event is seen here.
        from pydantic_ai._fallback import request_stream_until_first_event
    except ImportError:  # pragma: no cover - another pydantic-ai: a stream as it opens
        _until_first_event = None
    else:
        _until_first_event = request_stream_until_first_event

    from ._pydantic_ai_messages import DOCUMENT_METADATA, Origin, from_pydantic_ai, read, stamp
    from ._to_pydantic_ai import request_parts, response_parts, to_pydantic_ai, tool_return
except ModuleNotFoundError as exc:  # pragma: no cover - exercised by a test in a subprocess
    raise missing_extra(__name__) from exc

__all__ = [
    "DOCUMENT_METADATA",
    "HistoryProcessor",
    "from_pydantic_ai",
    "recall_tool",
    "to_pydantic_ai",
]


def _reader() -> Reader[ModelMessage, Origin]:
    return Reader(read, span=lambda origin: (origin[0], origin[0]), stamp=stamp)


def _instructions(messages: Sequence[ModelMessage]) -> str | None:
    """The instructions pydantic-ai sends with the next request: the newest request's."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            return message.instructions or None
    return None


class HistoryProcessor:
    """Compacts a pydantic-ai agent's history before each model request.

    Args:
        strategy: any strategy, typically ``default_stack(...)``; its own trigger
            decides when to compact (the instructions counted).

    Examples:
        >>> processor = HistoryProcessor(SlidingWindowStrategy(20, 8_000))
    """

    __slots__ = ("_sessions", "strategy")
    # ``strategy`` becomes the smaller one after an overflow error (see :meth:`wrap`).

    def __init__(self, strategy: ContextStrategy) -> None:
        self.strategy = check_strategy("HistoryProcessor", strategy)
        self._sessions: Sessions[ModelMessage, Origin] = Sessions(
            session_factory(strategy, _reader)
        )

    def __repr__(self) -> str:
        return f"HistoryProcessor({self.strategy!r})"

    async def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The history to send: ``messages`` itself, or its compaction."""
        session = self._sessions.take(messages)
        converted = session.reader(messages)
        start = converted.sendable("HistoryProcessor")
        result = await compact_step(
            self.strategy,
            start,
            counter=session.view.counter,
            system_prompt=_instructions(messages),
            label="HistoryProcessor",
        )
        if not result.compacted and start is converted.messages:
            self._sessions.put(session)
            return messages
        # Not returned to the pool: pydantic-ai continues from the compacted (or
        # repaired) history.
        return _rebuild(result.messages, converted)

    def wrap(self, model: Model) -> Model:
        """``model``, recovering from its provider's overflow errors: a request refused as
        too long for the model is compacted to the size the refusal shows and sent once
        more, and this processor compacts to that smaller budget from then on; a second
        refusal is a :class:`~neuron_context.errors.ContextOverflowError` (the run's
        history is not edited by the recovery). A streamed request (``agent.run_stream``,
        an event stream handler) is recovered the same way when the refusal comes before
        its first event (as the stream opens, as a provider's HTTP refusal does, or as
        that first event, as an OpenAI Responses ``response.failed`` does).

        Examples:
            >>> from pydantic_ai.models.test import TestModel
            >>> model = HistoryProcessor(SlidingWindowStrategy(20, 8_000)).wrap(TestModel())
        """
        return _RecoveringModel(model, self)

    async def _recover(
        self,
        messages: list[ModelMessage],
        overflow: Overflow,
        tools: Sequence[ToolDefinition] = (),
    ) -> tuple[list[ModelMessage], int]:
        """The refused request's messages compacted to the size ``overflow`` showed, and
        that budget (the request's ``tools`` counted in it); the processor keeps the
        smaller strategy."""
        session = self._sessions.take(messages)
        try:
            converted = session.reader(messages)
            result, budget = await recover(
                self._sessions,
                session,
                overflow,
                converted.sendable("HistoryProcessor"),
                system_prompt=_instructions(messages),
                tools=tools,
                label="HistoryProcessor",
            )
        finally:
            self._sessions.put(session)
        self.strategy = session.view.strategy
        return _rebuild(result.messages, converted), budget


class _RecoveringModel(WrapperModel):
    """A pydantic-ai model that recovers from its provider's overflow errors (see
    :meth:`HistoryProcessor.wrap`)."""

    def __init__(self, wrapped: Model, processor: HistoryProcessor) -> None:
        super().__init__(wrapped)
        self._processor = processor

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        try:
            return await super().request(messages, model_settings, model_request_parameters)
        except Exception as exc:
            overflow = context_overflow(exc)
            if overflow is None:
                raise
        tools = _definitions(model_request_parameters)
        smaller, budget = await self._processor._recover(messages, overflow, tools)
        try:
            return await super().request(smaller, model_settings, model_request_parameters)
        except Exception as exc:
            error = refused_again(exc, budget)
            if error is None:
                raise
            raise error from exc

    def _start_request_deadline(self, model_settings: Any, *, stream: bool) -> Any:
        # A streamed request is opened (primed) here under the wrapped model's deadlines,
        # one per attempt; the caller's stream_under_deadline would assert on a primed one.
        if stream and _until_first_event is not None:
            return None
        return self.wrapped._start_request_deadline(model_settings, stream=stream)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncIterator[StreamedResponse]:
        """The wrapped model's stream, opened up to its first event; refused as too long
        before that (as it opened, or as its first event: an OpenAI Responses
        ``response.failed`` after ``response.created``): once more, compacted. What
        fails after the first event is the caller's, as it is."""
        async with AsyncExitStack() as stack:

            def opening(sent: list[ModelMessage]) -> Any:
                if _until_first_event is None:  # pragma: no cover - an older pydantic-ai
                    return self.wrapped.request_stream(
                        sent, model_settings, model_request_parameters, run_context
                    )
                # The wrapped model's deadlines, fresh for each attempt, as FallbackModel
                # does: a primed stream can no longer take them from the caller.
                deadline = self.wrapped._start_request_deadline(model_settings, stream=True)
                return _until_first_event(
                    self.wrapped,
                    deadline,
                    sent,
                    model_settings,
                    model_request_parameters,
                    run_context,
                )

            try:
                stream = await stack.enter_async_context(opening(messages))
            except Exception as exc:
                overflow = context_overflow(exc)
                if overflow is None:
                    raise
                tools = _definitions(model_request_parameters)
                smaller, budget = await self._processor._recover(messages, overflow, tools)
                try:
                    stream = await stack.enter_async_context(opening(smaller))
                except Exception as again:
                    error = refused_again(again, budget)
                    if error is None:
                        raise
                    raise error from again
            yield stream


def _definitions(parameters: ModelRequestParameters) -> tuple[ToolDefinition, ...]:
    """The tool definitions a pydantic-ai request sends, as ours (what they cost)."""
    return tuple(
        ToolDefinition(
            name=tool.name,
            description=tool.description or "",
            input_schema=tool.parameters_json_schema,
        )
        for tool in [*parameters.function_tools, *parameters.output_tools]
    )


# -- after a compaction -----------------------------------------------------------------


def _rebuild(
    compacted: Sequence[Message], converted: Converted[ModelMessage, Origin]
) -> list[ModelMessage]:
    """The pydantic-ai messages for a compaction of ``converted.messages``.

    A response the strategy kept is its original object; a request whose parts were all
    kept is the original request; a request that lost or changed parts is a copy of the
    original (instructions, timestamps and run id kept) holding the remaining parts; an
    edited tool return (a cleared result) is a copy of the original part with the new
    content; anything else is converted.
    """
    originals = converted.items
    origins = converted.sources
    expressed: dict[int, list[int]] = {}
    for source, part in origins:
        expressed.setdefault(source, []).append(part)
    out: list[ModelMessage] = []
    group: list[tuple[ModelRequestPart, Origin | None]] = []

    def flush() -> None:
        if not group:
            return
        parts = [part for part, _ in group]
        sources = [origin for _, origin in group if origin is not None]
        template = originals[sources[0][0]] if sources else None
        if not isinstance(template, ModelRequest):
            out.append(ModelRequest(parts=parts))
        elif [o for _, o in group] == [
            (sources[0][0], p) for p in expressed[sources[0][0]]
        ] and all(
            origin is not None and part is template.parts[origin[1]] for part, origin in group
        ):
            out.append(template)  # every part kept as it was
        else:
            out.append(dataclasses.replace(template, parts=parts))
        group.clear()

    names: dict[str, str] = {}
    last = -1
    for position, message in enumerate(compacted):
        path = f"messages[{position}]"
        names.update((use.id, use.name) for use in message.tool_uses)
        kept = converted.index(message)
        if kept >= 0:
            last = kept
        if message.role is Role.ASSISTANT:
            flush()
            kept_response = originals[origins[kept][0]] if kept >= 0 else None
            out.append(kept_response or ModelResponse(parts=response_parts(message)))
        elif kept >= 0:
            source, part = origins[kept]
            original = cast("ModelRequest", originals[source])
            group.append((original.parts[part], origins[kept]))
        elif message.is_tool:
            for result in message.tool_results:
                name = names.get(result.tool_use_id, "")
                fresh = tool_return(result, name, path)
                later = next((i for i in converted.results(result.tool_use_id) if i > last), -1)
                edited = _edited_return(fresh, later, origins, originals)
                if edited is None:
                    group.append((fresh, None))
                else:
                    group.append((edited, origins[later]))
                    last = later
        else:
            group.extend((part, None) for part in request_parts(message, names, path))
    flush()
    return out


def _edited_return(
    fresh: ToolReturnPart, index: int, origins: Sequence[Origin], originals: Sequence[ModelMessage]
) -> ToolReturnPart | None:
    if index < 0:
        return None
    source, part = origins[index]
    original = originals[source].parts[part]
    if type(original) is not ToolReturnPart:  # not a typed subclass (tool search, ...)
        return None
    plain = cast("ToolReturnPart[Any]", original)
    same_kind = (plain.outcome in ERROR_OUTCOMES) == (fresh.outcome in ERROR_OUTCOMES)
    outcome = plain.outcome if same_kind else fresh.outcome
    return dataclasses.replace(plain, content=fresh.content, outcome=outcome)


def recall_tool(store: Store) -> Tool[Any]:
    """The recall tool as a pydantic-ai :class:`~pydantic_ai.Tool` (``recall``), for an
    agent's ``tools=[...]``.

    It reads ``store`` in a worker thread (pydantic-ai runs a sync tool there). A tool
    return has no error flag in pydantic-ai, so an unknown key, a bad range or a failing
    store returns the error's text (``recall: no content under key ...``): never an
    exception, and no retry counted against the run.

    Examples:
        >>> from neuron_context import MemoryStore
        >>> recall_tool(MemoryStore()).name
        'recall'
    """

    read = text_reader(store)
    return Tool(read, name=RECALL_TOOL_NAME, description=RECALL_DESCRIPTION, takes_ctx=False)
