"""OpenAI Agents SDK: CallModelInputFilter.wrap recovers from a provider's overflow error
(a scripted model that counts more tokens than the strategy's counter and refuses what
exceeds its window, raising the official SDKs' exception classes)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace
from typing import Any

import pytest
from overflow_support import anthropic_overflow, openai_overflow

from neuron_context import default_stack
from neuron_context.errors import ContextOverflowError

pytest.importorskip("agents")

from agents import Agent, ModelResponse, ModelSettings, RunConfig, Runner
from agents.models.interface import Model, ModelTracing
from agents.retry import ModelRetryAdvice
from agents_sdk_support import read_file, reply
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseError,
    ResponseErrorEvent,
    ResponseFailedEvent,
)

from neuron_context.ext.openai_agents import CallModelInputFilter

WINDOW = 6_000
"""The model's window, in its own tokens (two characters each)."""

Refusal = Callable[[int, int], Exception]


class Windowed(Model):
    """A model refusing an input over ``window`` (0: every input once it answered
    ``after`` calls), calling ``read_file`` ``calls`` times, then answering."""

    def __init__(self, refusal: Refusal, calls: int, window: int = WINDOW, after: int = 0) -> None:
        self.refusal, self.calls, self.window, self.after = refusal, calls, window, after
        self.answered = 0
        self.refused: list[int] = []

    async def get_response(  # noqa: PLR0917 - the SDK's signature
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
    ) -> ModelResponse:
        return self._answer(input)

    def _answer(self, given: str | list[Any]) -> ModelResponse:
        size = len(json.dumps(given, default=str)) // 2
        if size > self.window if self.window else self.answered >= self.after:
            self.refused.append(size)
            raise self.refusal(max(size, WINDOW + 1), max(self.window, WINDOW))
        self.answered += 1
        turn = self.answered
        return reply(turn, self.calls)

    async def stream_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        *args: Any,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """The reply as one ``response.completed`` event; a refusal comes before any
        event (as a provider's refusal of the input's size does)."""
        answer = self._answer(input)
        response = Response.model_construct(id=None, output=answer.output, usage=None)
        yield ResponseCompletedEvent.model_construct(
            type="response.completed", response=response, sequence_number=0
        )


class EventWindowed(Windowed):
    """:class:`Windowed`, streamed as the Responses API and the proxies that copy it may
    refuse a size: the response opens (``response.created``), then a ``kind`` event
    (``error`` or ``response.failed``) carries the refusal's words."""

    def __init__(
        self, kind: str, message: str, calls: int, window: int = WINDOW, after: int = 0
    ) -> None:
        super().__init__(openai_overflow, calls, window, after)
        self.kind, self.message = kind, message

    async def stream_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        *args: Any,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        opening = Response.model_construct(id="resp_1", output=[], usage=None, status="in_progress")
        yield ResponseCreatedEvent.model_construct(
            type="response.created", response=opening, sequence_number=0
        )
        try:
            answer = self._answer(input)
        except Exception:
            if self.kind == "error":
                yield ResponseErrorEvent.model_construct(
                    type="error", code=None, message=self.message, param=None, sequence_number=1
                )
            else:
                error = ResponseError.model_construct(code="server_error", message=self.message)
                failed = Response.model_construct(
                    id="resp_1", output=[], usage=None, status="failed", error=error
                )
                yield ResponseFailedEvent.model_construct(
                    type="response.failed", response=failed, sequence_number=1
                )
            return
        response = Response.model_construct(id="resp_1", output=answer.output, usage=None)
        yield ResponseCompletedEvent.model_construct(
            type="response.completed", response=response, sequence_number=1
        )


TOO_LONG = (
    "Your input exceeds the context window of this model. Please adjust your input and try again."
)

REFUSALS = [
    pytest.param(openai_overflow, id="openai"),
    pytest.param(anthropic_overflow, id="anthropic"),
]


async def _run(
    script: Windowed, compacting: CallModelInputFilter, *, streamed: bool = False
) -> Any:
    agent = Agent(
        name="reader", instructions="Be terse.", model=compacting.wrap(script), tools=[read_file]
    )
    config = RunConfig(call_model_input_filter=compacting, tracing_disabled=True)
    if not streamed:
        return await Runner.run(agent, "read the files", max_turns=30, run_config=config)
    result = Runner.run_streamed(agent, "read the files", max_turns=30, run_config=config)
    events = [event async for event in result.stream_events()]
    assert events
    return result


STREAMED = pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])


class TestCallModelInputFilterWrap:
    @pytest.mark.anyio
    @pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the SDK runs on asyncio
    @pytest.mark.parametrize("refusal", REFUSALS)
    @STREAMED
    async def test_recovers_and_learns(self, refusal: Refusal, streamed: bool) -> None:
        """Refused once, the input is compacted and sent again; the filter keeps the
        learned budget, so the later inputs fit. A streamed call refused before its
        first event is recovered the same way."""
        script = Windowed(refusal, 12)
        compacting = CallModelInputFilter(default_stack(1_000_000))
        result = await _run(script, compacting, streamed=streamed)
        assert result.final_output == "done"
        assert len(script.refused) == 1
        assert compacting.strategy.max_tokens < 1_000_000  # type: ignore[attr-defined]

    @pytest.mark.anyio
    @pytest.mark.parametrize("anyio_backend", ["asyncio"])
    @pytest.mark.parametrize("refusal", REFUSALS)
    @STREAMED
    async def test_second_refusal_is_a_library_error(
        self, refusal: Refusal, streamed: bool
    ) -> None:
        script = Windowed(refusal, 12, window=0, after=3)  # refused once files were read
        with pytest.raises(ContextOverflowError):
            await _run(script, CallModelInputFilter(default_stack(10**6)), streamed=streamed)
        assert len(script.refused) == 2

    @pytest.mark.anyio
    @pytest.mark.parametrize("anyio_backend", ["asyncio"])
    @STREAMED
    async def test_other_errors_pass_through(self, streamed: bool) -> None:
        """An error that is not a refusal of the size is the caller's, unchanged."""

        def refusal(tokens: int, limit: int) -> Exception:
            return RuntimeError("the provider is down")

        script = Windowed(refusal, 2, window=0)
        with pytest.raises(RuntimeError, match="down"):
            await _run(script, CallModelInputFilter(default_stack(10**6)), streamed=streamed)
        assert len(script.refused) == 1

    @pytest.mark.anyio
    @pytest.mark.parametrize("anyio_backend", ["asyncio"])
    async def test_the_models_own_hooks_are_its_own(self) -> None:
        """Retry advice, close and the end-of-run cleanup reach the wrapped model (the
        SDK's base class defines them, so they are forwarded, not inherited)."""
        calls: list[str] = []

        advice = ModelRetryAdvice(suggested=False)

        class Hooked(Windowed):
            def get_retry_advice(self, request: Any) -> Any:
                calls.append("advice")
                return advice

            async def close(self) -> None:
                calls.append("close")

            async def _cleanup_on_run_end(self, owner: object) -> None:
                calls.append("cleanup")

        model = CallModelInputFilter(default_stack(10**6)).wrap(Hooked(openai_overflow, 0))
        assert model.get_retry_advice(object()) is advice  # type: ignore[arg-type]
        await model.close()
        await model._cleanup_on_run_end(object())
        assert calls == ["advice", "close", "cleanup"]

    @pytest.mark.anyio
    @pytest.mark.parametrize("anyio_backend", ["asyncio"])
    @pytest.mark.parametrize("kind", ["error", "response.failed"])
    async def test_a_refusal_as_an_event_is_recovered(self, kind: str) -> None:
        """Streamed, a refusal that comes as an event after the response opened (no
        output yet) is recovered as a raised one is; the opening of the refused
        response never reaches the caller."""
        script = EventWindowed(kind, TOO_LONG, 12)
        compacting = CallModelInputFilter(default_stack(1_000_000))
        result = await _run(script, compacting, streamed=True)
        assert result.final_output == "done"
        assert len(script.refused) == 1
        assert compacting.strategy.max_tokens < 1_000_000  # type: ignore[attr-defined]

    @pytest.mark.anyio
    @pytest.mark.parametrize("anyio_backend", ["asyncio"])
    @pytest.mark.parametrize("kind", ["error", "response.failed"])
    async def test_a_refusal_as_an_event_twice_is_a_library_error(self, kind: str) -> None:
        script = EventWindowed(kind, TOO_LONG, 12, window=0, after=3)
        with pytest.raises(ContextOverflowError):
            await _run(script, CallModelInputFilter(default_stack(10**6)), streamed=True)
        assert len(script.refused) == 2

    @pytest.mark.anyio
    @pytest.mark.parametrize("anyio_backend", ["asyncio"])
    @pytest.mark.parametrize("kind", ["error", "response.failed"])
    async def test_another_failure_event_reaches_the_sdk(self, kind: str) -> None:
        """A failure event that is not about the size is passed on as it came: the SDK
        raises its own error for it, and nothing is retried."""
        script = EventWindowed(kind, "The server had an error.", 2, window=0)
        with pytest.raises(Exception, match="server had an error") as raised:
            await _run(script, CallModelInputFilter(default_stack(10**6)), streamed=True)
        assert not isinstance(raised.value, ContextOverflowError)
        assert len(script.refused) == 1


class TestStreamClosing:
    """The wrapped stream is closed when the consumer stops the wrapper's stream early."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("anyio_backend", ["asyncio"])
    async def test_early_close_closes_the_wrapped_stream_at_once(self) -> None:
        """A consumer's break (the SDK closes the stream on an error or a timeout, in
        the task that opened it) closes the provider's stream there and then."""
        closed: list[bool] = []

        class Streaming(Windowed):
            async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
                try:
                    yield SimpleNamespace(type="response.created")
                    yield SimpleNamespace(type="response.output_text.delta")
                    yield SimpleNamespace(type="response.output_text.delta")
                finally:
                    closed.append(True)

        model = CallModelInputFilter(default_stack(10**6)).wrap(Streaming(openai_overflow, 0))
        stream = model.stream_response(
            None,
            "hi",
            ModelSettings(),
            [],
            None,
            [],
            ModelTracing.DISABLED,
            previous_response_id=None,
            conversation_id=None,
            prompt=None,
        )
        await anext(stream)
        await anext(stream)
        await stream.aclose()  # type: ignore[attr-defined]
        assert closed == [True]


class TestServerManagedRecovery:
    """A refused input of a server-managed run keeps the outputs of the server's calls."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("anyio_backend", ["asyncio"])
    async def test_the_servers_outputs_are_resent_as_they_came(self) -> None:
        """Refused as too long, the input is compacted after the outputs whose calls the
        server holds, and those go first, as they came (they were dropped as orphans)."""

        class Recording(Windowed):
            def __init__(self) -> None:
                super().__init__(openai_overflow, 0, window=3_000)
                self.inputs: list[Any] = []

            def _answer(self, given: str | list[Any]) -> ModelResponse:
                self.inputs.append(given)
                return super()._answer(given)

        server_output = {"type": "function_call_output", "call_id": "call_srv", "output": "42"}
        items: list[Any] = [server_output, {"role": "user", "content": "the task"}]
        for turn in range(12):
            call = {"type": "function_call", "call_id": f"c{turn}", "name": "read_file"}
            items += [
                {**call, "arguments": json.dumps({"path": f"f{turn}.py"})},
                {"type": "function_call_output", "call_id": f"c{turn}", "output": "x" * 800},
            ]
        items.append({"role": "user", "content": "and now?"})
        model = Recording()
        wrapped = CallModelInputFilter(default_stack(10**6)).wrap(model)
        await wrapped.get_response(
            None,
            items,
            ModelSettings(),
            [],
            None,
            [],
            ModelTracing.DISABLED,
            previous_response_id="resp_1",
            conversation_id=None,
            prompt=None,
        )
        assert len(model.refused) == 1
        resent = model.inputs[-1]
        assert resent[0] is server_output
        assert resent[-1] == {"role": "user", "content": "and now?"}
        assert len(resent) < len(items)
