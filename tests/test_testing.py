"""The public test doubles in neuron_context.testing."""

from __future__ import annotations

import functools
import threading

import anyio
import pytest

from neuron_context import (
    CompactionError,
    CompletionRequest,
    CompletionResponse,
    ConfigurationError,
    ContextStrategy,
    Message,
    SlidingWindowStrategy,
    StopReason,
    SummarizationError,
    SummarizationStrategy,
    TokenCounter,
    ToolUse,
)
from neuron_context.testing import CompactCall, FunctionProvider, RecordingStrategy

REQUEST = CompletionRequest([Message.user("ping")], max_tokens=5)


def sync_reply(request: CompletionRequest) -> str:
    """A sync function answering with the last message's text."""
    return "sync " + request.messages[-1].text


async def async_reply(request: CompletionRequest) -> CompletionResponse:
    """An async function answering with a full response."""
    return CompletionResponse(
        Message.assistant("async " + request.messages[-1].text), stop_reason="stop_sequence"
    )


class TestFunctionProvider:
    """FunctionProvider."""

    @pytest.mark.anyio
    async def test_sync_function_str(self) -> None:
        """A str from a sync function becomes an assistant reply ending the turn."""
        provider = FunctionProvider(sync_reply)
        response = await provider.complete(REQUEST)
        assert response.message == Message.assistant("sync ping")
        assert response.stop_reason is StopReason.END_TURN
        assert provider.requests == [REQUEST]

    @pytest.mark.anyio
    async def test_async_function_response(self) -> None:
        """A response from an async function is returned as it is."""
        provider = FunctionProvider(async_reply)
        response = await provider.complete(REQUEST)
        assert response.text == "async ping"
        assert response.stop_reason is StopReason.STOP_SEQUENCE

    @pytest.mark.anyio
    async def test_message_gets_its_stop_reason(self) -> None:
        """A returned Message is the reply: ``tool_use`` when it calls tools, else
        ``end_turn``."""
        call = ToolUse(id="c1", name="get_time", input={})
        replies = iter([Message.assistant(tool_uses=[call]), Message.assistant("noon")])
        provider = FunctionProvider(lambda request: next(replies))
        first, second = await provider.complete(REQUEST), await provider.complete(REQUEST)
        assert (first.tool_uses, first.stop_reason) == ((call,), StopReason.TOOL_USE)
        assert (second.text, second.stop_reason) == ("noon", StopReason.END_TURN)

    @pytest.mark.anyio
    async def test_a_message_not_from_the_assistant_is_refused(self) -> None:
        """A reply is an assistant message: a user message is a ConfigurationError."""
        provider = FunctionProvider(lambda request: Message.user("hi"))
        with pytest.raises(ConfigurationError, match="assistant message"):
            await provider.complete(REQUEST)

    @pytest.mark.anyio
    async def test_awaitable_from_a_partial(self) -> None:
        """An awaitable returned by a plain callable is awaited."""
        provider = FunctionProvider(functools.partial(async_reply))
        assert (await provider.complete(REQUEST)).text == "async ping"

    @pytest.mark.anyio
    async def test_records_every_request_even_when_fn_raises(self) -> None:
        """Requests are recorded before the function runs, and its errors propagate."""

        def fail(request: CompletionRequest) -> str:
            msg = "down"
            raise RuntimeError(msg)

        provider = FunctionProvider(fail)
        for _ in range(2):
            with pytest.raises(RuntimeError, match="down"):
                await provider.complete(REQUEST)
        assert provider.requests == [REQUEST, REQUEST]

    @pytest.mark.anyio
    async def test_bad_return_value(self) -> None:
        """A function returning something else is a ConfigurationError."""
        provider = FunctionProvider(lambda request: 42)  # type: ignore[arg-type, return-value]
        with pytest.raises(ConfigurationError, match=r"FunctionProvider\.fn"):
            await provider.complete(REQUEST)

    def test_not_callable(self) -> None:
        """The function must be callable."""
        with pytest.raises(ConfigurationError, match=r"FunctionProvider\.fn"):
            FunctionProvider("hello")  # type: ignore[arg-type]

    @pytest.mark.anyio
    async def test_blocking_sync_function_honours_a_timeout(self) -> None:
        """A sync function that blocks does not block the loop: the caller's timeout fires."""
        release = threading.Event()
        returned = threading.Event()

        def blocking(request: CompletionRequest) -> str:
            release.wait(30.0)  # released once the test has seen the timeout
            returned.set()
            return "late"

        provider = FunctionProvider(blocking)
        try:
            with pytest.raises(TimeoutError):
                with anyio.fail_after(0.2):
                    await provider.complete(REQUEST)
            # The timeout fired while the function still blocked (a blocked loop would
            # only get to the deadline after the function returned).
            assert not returned.is_set()
        finally:
            release.set()

    @pytest.mark.anyio
    async def test_late_result_is_not_used(self) -> None:
        """A summary that arrives after the strategy's timeout is not used; the input stays."""
        release = threading.Event()

        def blocking(request: CompletionRequest) -> str:
            release.wait(5.0)
            return "a late summary"

        history = [Message.user("a" * 400), Message.assistant("b" * 400), Message.user("c")]
        strategy = SummarizationStrategy(FunctionProvider(blocking), 1, 0, timeout=0.2, retries=0)
        try:
            with pytest.raises(SummarizationError):
                await strategy.compact(history)
        finally:
            release.set()
        assert history[0] == Message.user("a" * 400)

    @pytest.mark.anyio
    async def test_sync_function_runs_in_a_worker_thread(self) -> None:
        """A sync function runs off the event loop's thread; an async one on it."""
        threads: list[int] = []

        def sync(request: CompletionRequest) -> str:
            threads.append(threading.get_ident())
            return "x"

        async def run_async(request: CompletionRequest) -> str:
            threads.append(threading.get_ident())
            return "y"

        await FunctionProvider(sync).complete(REQUEST)
        await FunctionProvider(run_async).complete(REQUEST)
        assert threads[0] != threading.get_ident()
        assert threads[1] == threading.get_ident()


class TestRecordingStrategy:
    """RecordingStrategy."""

    MESSAGES = (Message.system("s"), Message.user("a"), Message.assistant("b"))

    @pytest.mark.anyio
    async def test_without_inner(self) -> None:
        """Without an inner strategy the input comes back unchanged and is recorded."""
        recorder = RecordingStrategy()
        output = await recorder.compact(self.MESSAGES)
        assert output == list(self.MESSAGES)
        assert recorder.calls == [CompactCall(list(self.MESSAGES), list(self.MESSAGES))]
        assert recorder.should_compact(self.MESSAGES, 0)
        assert recorder.token_estimate(self.MESSAGES) == TokenCounter().estimate_messages(
            self.MESSAGES
        )

    @pytest.mark.anyio
    async def test_with_inner(self) -> None:
        """With an inner strategy its result is returned and recorded."""
        inner = SlidingWindowStrategy(1, 10, counter=TokenCounter(2.0))
        recorder = RecordingStrategy(inner)
        output = await recorder.compact(self.MESSAGES)
        assert output == [self.MESSAGES[0], self.MESSAGES[2]]
        assert recorder.calls[0].result == output
        assert recorder.calls[0].messages == list(self.MESSAGES)
        assert recorder.should_compact(self.MESSAGES, 11)
        assert not recorder.should_compact(self.MESSAGES, 10)
        assert recorder.token_estimate(self.MESSAGES) == inner.token_estimate(self.MESSAGES)

    @pytest.mark.anyio
    async def test_records_failures(self) -> None:
        """A failing inner strategy is recorded with its error, which propagates."""

        class Failing(ContextStrategy):
            def should_compact(self, messages: object, token_count: int) -> bool:
                return True

            async def compact(self, messages: object) -> list[Message]:
                msg = "nope"
                raise CompactionError(msg)

            def token_estimate(self, messages: object) -> int:
                return 0

        recorder = RecordingStrategy(Failing())
        with pytest.raises(CompactionError):
            await recorder.compact(self.MESSAGES)
        (call,) = recorder.calls
        assert call.result is None
        assert isinstance(call.error, CompactionError)

    def test_bad_inner(self) -> None:
        """The inner strategy must be a ContextStrategy."""
        with pytest.raises(ConfigurationError, match=r"RecordingStrategy\.inner"):
            RecordingStrategy("window")  # type: ignore[arg-type]
