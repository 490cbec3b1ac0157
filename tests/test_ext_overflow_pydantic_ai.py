"""pydantic-ai: HistoryProcessor.wrap recovers from a provider's overflow error (a
scripted model that counts more tokens than the strategy's counter and refuses what
exceeds its window, raising the official SDKs' errors and pydantic-ai's own)."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import pytest
from overflow_support import OPENAI_BODY, anthropic_overflow, openai_overflow

from neuron_context import default_stack
from neuron_context.errors import ContextOverflowError

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.direct import model_request_stream
from pydantic_ai.exceptions import ModelHTTPError, ModelRequestTimeout
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from neuron_context.ext.pydantic_ai import HistoryProcessor, to_pydantic_ai

WINDOW = 6_000
"""The model's window, in its own tokens (two characters each)."""

Refusal = Callable[[int, int], Exception]


def _framework_overflow(tokens: int, limit: int) -> Exception:
    """pydantic-ai's own wrapping of an OpenAI refusal (its OpenAI model raises this)."""
    error = openai_overflow(tokens, limit)
    return ModelHTTPError(400, "gpt-test", body=getattr(error, "body", OPENAI_BODY))


def _size(messages: list[ModelMessage]) -> int:
    return sum(len(str(getattr(part, "content", ""))) for m in messages for part in m.parts) // 2


class Windowed:
    """A scripted model refusing what exceeds ``window`` (0: everything once it answered
    ``after`` calls); ``calls`` tool calls, then done."""

    def __init__(self, refusal: Refusal, calls: int, window: int = WINDOW, after: int = 0) -> None:
        self.refusal, self.calls, self.window, self.after = refusal, calls, window, after
        self.answered = 0
        self.refused: list[int] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        size = _size(messages)
        if size > self.window if self.window else self.answered >= self.after:
            self.refused.append(size)
            raise self.refusal(max(size, WINDOW + 1), max(self.window, WINDOW))
        self.answered += 1
        turn = self.answered
        if turn <= self.calls:
            call = ToolCallPart("read_file", {"path": f"f{turn}.py"}, tool_call_id=f"call_{turn}")
            return ModelResponse(parts=[TextPart(f"reading f{turn}.py"), call])
        return ModelResponse(parts=[TextPart("done")])


class StreamWindowed(Windowed):
    """:class:`Windowed`, streamed: the refusal comes before the stream's first event
    (as a provider's refusal of a request's size does)."""

    async def stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        response = self(messages, info)
        for part in response.parts:
            if isinstance(part, TextPart):
                yield part.content
            elif isinstance(part, ToolCallPart):
                call = DeltaToolCall(
                    part.tool_name, part.args_as_json_str(), tool_call_id=part.tool_call_id
                )
                yield {0: call}


class LateRefusal(WrapperModel):
    """Opens every stream; one over ``window`` (0: every one) fails at its first event
    instead, as an OpenAI Responses stream that sends ``response.failed`` after
    ``response.created`` does."""

    def __init__(
        self, wrapped: Model, refusal: Refusal, window: int = WINDOW, after: int = 0
    ) -> None:
        super().__init__(wrapped)
        self.refusal, self.window, self.after = refusal, window, after
        self.opened = 0
        self.refused: list[int] = []

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncIterator[StreamedResponse]:
        async with super().request_stream(
            messages, model_settings, model_request_parameters, run_context
        ) as response:
            size = _size(messages)
            self.opened += 1
            if size > self.window if self.window else self.opened > self.after:
                self.refused.append(size)
                error = self.refusal(max(size, WINDOW + 1), max(self.window, WINDOW))

                async def failing() -> AsyncIterator[Any]:
                    raise error
                    yield  # an async generator that fails at its first event

                response._event_iterator = failing()
            yield response


def _agent(
    script: Windowed, processor: HistoryProcessor, late: LateRefusal | None = None
) -> Agent[None, str]:
    stream: Any = script.stream if isinstance(script, StreamWindowed) else None
    inner: Model = FunctionModel(script, stream_function=stream)
    if late is not None:
        late.wrapped = inner
        inner = late
    model = processor.wrap(inner)
    agent = Agent(model, instructions="Be terse.", capabilities=[ProcessHistory(processor)])

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file (4,000 characters: 2,000 of the model's tokens)."""
        return f"# {path}\n" + "x" * 4_000

    return agent


REFUSALS = [
    pytest.param(openai_overflow, id="openai"),
    pytest.param(anthropic_overflow, id="anthropic"),
    pytest.param(_framework_overflow, id="pydantic-ai-http-error"),
]


class TestHistoryProcessorWrap:
    @pytest.mark.parametrize("refusal", REFUSALS)
    def test_recovers_and_learns(self, refusal: Refusal) -> None:
        """Refused once, the request is compacted and sent again; the processor keeps
        the learned budget, so the later requests fit."""
        script = Windowed(refusal, 12)
        processor = HistoryProcessor(default_stack(1_000_000))
        result = anyio.run(_agent(script, processor).run, "read the files")
        assert result.output == "done"
        assert len(script.refused) == 1
        assert processor.strategy.max_tokens < 1_000_000  # type: ignore[attr-defined]

    @pytest.mark.parametrize("refusal", REFUSALS)
    def test_second_refusal_is_a_library_error(self, refusal: Refusal) -> None:
        script = Windowed(refusal, 12, window=0, after=3)  # refused once files were read
        history = to_pydantic_ai([])
        agent = _agent(script, HistoryProcessor(default_stack(10**6)))
        with pytest.raises(ContextOverflowError):
            anyio.run(lambda: agent.run("read the files", message_history=history))
        assert len(script.refused) == 2
        assert history == []


async def _streamed(agent: Agent[None, str], **kwargs: Any) -> str:
    """``agent.run`` with an event stream handler: every request is streamed."""
    events: list[object] = []

    async def handler(_: object, stream: AsyncIterable[object]) -> None:
        events.extend([event async for event in stream])

    result = await agent.run("read the files", event_stream_handler=handler, **kwargs)
    assert events
    return str(result.output)


class TestHistoryProcessorWrapStreamed:
    @pytest.mark.parametrize("refusal", REFUSALS)
    def test_recovers_and_learns(self, refusal: Refusal) -> None:
        """A streamed request refused before its stream opened is compacted and sent
        again, as a non-streamed one is."""
        script = StreamWindowed(refusal, 12)
        processor = HistoryProcessor(default_stack(1_000_000))
        assert anyio.run(lambda: _streamed(_agent(script, processor))) == "done"
        assert len(script.refused) == 1
        assert processor.strategy.max_tokens < 1_000_000  # type: ignore[attr-defined]

    @pytest.mark.parametrize("refusal", REFUSALS)
    def test_second_refusal_is_a_library_error(self, refusal: Refusal) -> None:
        script = StreamWindowed(refusal, 12, window=0, after=3)
        history = to_pydantic_ai([])
        agent = _agent(script, HistoryProcessor(default_stack(10**6)))
        with pytest.raises(ContextOverflowError):
            anyio.run(lambda: _streamed(agent, message_history=history))
        assert len(script.refused) == 2
        assert history == []

    def test_other_errors_pass_through(self) -> None:
        """An error that is not a refusal of the size is the caller's, unchanged."""

        def refusal(tokens: int, limit: int) -> Exception:
            return RuntimeError("the provider is down")

        agent = _agent(StreamWindowed(refusal, 2, window=0), HistoryProcessor(default_stack(10**6)))
        with pytest.raises(RuntimeError, match="down"):
            anyio.run(lambda: _streamed(agent))

    @pytest.mark.parametrize("refusal", REFUSALS)
    def test_a_refusal_at_the_first_event_is_recovered(self, refusal: Refusal) -> None:
        """A stream that opens and then fails at its first event with a refusal of the
        size (no output yet) is recovered as one refused as it opens."""
        late = LateRefusal(FunctionModel(lambda m, i: ModelResponse(parts=[])), refusal)
        processor = HistoryProcessor(default_stack(1_000_000))
        agent = _agent(StreamWindowed(refusal, 12, window=10**9), processor, late)
        assert anyio.run(lambda: _streamed(agent)) == "done"
        assert len(late.refused) == 1
        assert processor.strategy.max_tokens < 1_000_000  # type: ignore[attr-defined]

    @pytest.mark.parametrize("refusal", REFUSALS)
    def test_a_refusal_at_the_first_event_twice_is_a_library_error(self, refusal: Refusal) -> None:
        late = LateRefusal(FunctionModel(lambda m, i: ModelResponse(parts=[])), refusal, 0, 3)
        agent = _agent(
            StreamWindowed(refusal, 12, window=10**9), HistoryProcessor(default_stack(10**6)), late
        )
        with pytest.raises(ContextOverflowError):
            anyio.run(lambda: _streamed(agent))
        assert len(late.refused) == 2


class TestStreamDeadlines:
    """A stream the wrapper opens up to its first event, under the caller's
    ``request_timeout`` / ``first_event_timeout``."""

    @pytest.mark.parametrize("setting", ["request_timeout", "first_event_timeout"])
    def test_a_streamed_request_with_a_deadline_opens(self, setting: str) -> None:
        async def stream(messages: Any, info: Any) -> AsyncIterator[str]:
            yield "hello"

        model = HistoryProcessor(default_stack(10**6)).wrap(FunctionModel(stream_function=stream))

        async def run() -> list[Any]:
            async with model_request_stream(
                model,
                [ModelRequest.user_text_prompt("hi")],
                model_settings=cast("ModelSettings", {setting: 30}),
            ) as events:
                return [event async for event in events]

        assert anyio.run(run)  # a stream opened up to its first event takes the deadline

    def test_first_event_timeout_still_bounds_the_wait(self) -> None:
        async def stream(messages: Any, info: Any) -> AsyncIterator[str]:
            await anyio.sleep(5)
            yield "late"

        model = HistoryProcessor(default_stack(10**6)).wrap(FunctionModel(stream_function=stream))

        async def run() -> None:
            async with model_request_stream(
                model,
                [ModelRequest.user_text_prompt("hi")],
                model_settings={"first_event_timeout": 0.2},
            ) as events:
                [event async for event in events]

        with pytest.raises(ModelRequestTimeout):
            anyio.run(run)

    def test_an_empty_stream_under_a_primed_agent_stream(self) -> None:
        """A stream with no event at all is handed over as it is."""

        class Empty(WrapperModel):
            @asynccontextmanager
            async def request_stream(
                self, *args: Any, **kw: Any
            ) -> AsyncIterator[StreamedResponse]:
                async with super().request_stream(*args, **kw) as response:

                    async def nothing() -> AsyncIterator[Any]:
                        return
                        yield

                    response._event_iterator = nothing()
                    yield response

        async def one(messages: Any, info: Any) -> AsyncIterator[str]:
            yield "x"

        model = HistoryProcessor(default_stack(10**6)).wrap(
            Empty(FunctionModel(stream_function=one))
        )

        async def run() -> list[Any]:
            async with model_request_stream(model, [ModelRequest.user_text_prompt("hi")]) as events:
                return [event async for event in events]

        assert anyio.run(run) == []
