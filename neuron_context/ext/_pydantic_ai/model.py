"""The model of a pydantic-ai agent, wrapped to recover from its provider's overflow errors.

:meth:`~neuron_context.ext.pydantic_ai.HistoryProcessor.wrap` returns a
:class:`RecoveringModel`, which sends through the recovery step
(:mod:`neuron_context._compaction.recovery`): a request the provider refuses as too long
is recompacted by the processor to the size the refusal showed and sent once more, and an
answered request's reported input tokens calibrate the processor's counter; a streamed
request is opened up to its first event, so a refusal sent as that event is recovered
from the same way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from ... import _tracing as tracing
from ..._compaction.recovery import Attempt, observe, resend
from ..._compaction.refusal import Overflow
from ..._counting.counter import BaseCounter
from ..._messages.message import ToolDefinition

__all__ = ["Prepare", "Recover", "RecoveringModel"]

_until_first_event: Callable[..., Any] | None
try:
    # pydantic-ai's own way to open a stream up to its first event (its fallback model
    # and primed streams use it), so a refusal sent as the first event is seen here.
    from pydantic_ai._fallback import request_stream_until_first_event
except ImportError:  # pragma: no cover - another pydantic-ai: a stream as it opens
    _until_first_event = None
else:
    _until_first_event = request_stream_until_first_event

Prepare = Callable[[list[ModelMessage], Sequence[ToolDefinition]], Attempt[list[ModelMessage]]]
"""The processor's attempt of a request: its messages and tools, as the step sends them."""
Recover = Callable[[Overflow, Attempt[list[ModelMessage]]], Awaitable[Attempt[list[ModelMessage]]]]
"""The processor's recovery: the refused attempt's messages recompacted to the size the
overflow showed (the request's tools counted in it)."""


class RecoveringModel(WrapperModel):
    """A pydantic-ai model that recovers from its provider's overflow errors (see
    :meth:`~neuron_context.ext.pydantic_ai.HistoryProcessor.wrap`)."""

    def __init__(
        self,
        wrapped: Model,
        recover: Recover,
        prepare: Prepare,
        counter: BaseCounter | None = None,
    ) -> None:
        super().__init__(wrapped)
        self._recover = recover
        self._prepare = prepare
        self._counter = counter

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        async def send(sent: list[ModelMessage]) -> ModelResponse:
            return await super(RecoveringModel, self).request(
                sent, model_settings, model_request_parameters
            )

        with tracing.model_request("HistoryProcessor") as span:
            return await resend(
                send,
                self._prepare(messages, _definitions(model_request_parameters)),
                self._recover,
                counter=self._counter,
                usage=_input_tokens,
                label="HistoryProcessor",
                span=span,
            )

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
            span = stack.enter_context(tracing.model_request("HistoryProcessor"))

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

            answered: list[list[ModelMessage]] = []

            async def send(sent: list[ModelMessage]) -> StreamedResponse:
                opened: StreamedResponse = await stack.enter_async_context(opening(sent))
                answered.append(sent)
                return opened

            tools = _definitions(model_request_parameters)
            stream = await resend(
                send, self._prepare(messages, tools), self._recover, label="HistoryProcessor"
            )
            yield stream
            # The stream's usage is known once the caller has read it.
            usage: Any = getattr(stream, "usage", None)
            usage = usage() if callable(usage) else usage  # a method in older versions
            reported = getattr(usage, "input_tokens", None)
            attempt = self._prepare(answered[-1], tools)
            observe(self._counter, attempt, reported, label="HistoryProcessor", span=span)


def _input_tokens(response: ModelResponse) -> int | None:
    """The provider's input tokens for ``response`` (``None`` when it reported none)."""
    tokens = getattr(getattr(response, "usage", None), "input_tokens", None)
    return tokens if isinstance(tokens, int) and tokens > 0 else None


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
