"""OpenTelemetry spans: one per compaction, model call and tool call, through the API only.

The spans are read back with the OpenTelemetry SDK's in-memory exporter (the SDK is a test
dependency; the library needs only ``opentelemetry-api``, and nothing without it).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import attrs
import pytest
from agent_support import answer, calls, scripted
from callers_support import CALLERS, NEWEST, REPORTED, Provider, history
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import well_formed_conversations

pytest.importorskip("opentelemetry.sdk.trace")

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from neuron_context import (
    AgentOptions,
    CalibratedCounter,
    CompletionRequest,
    CompletionResponse,
    CompositeStrategy,
    ContextEditingMiddleware,
    ContextStrategy,
    Message,
    SlidingWindowStrategy,
    TokenCounter,
    TokenUsage,
    ToolResultClearingStrategy,
    ToolUse,
    create_agent,
    default_stack,
    validate,
)
from neuron_context.errors import ProviderError
from neuron_context.events import CompactionCompleted, ModelCalled
from neuron_context.testing import FunctionProvider, RecordingStrategy

if TYPE_CHECKING:
    from fake_llm_server import FakeLLMServer

pytestmark = pytest.mark.anyio


class _Switched(SimpleSpanProcessor):
    """Exports only while a test of this module runs: the global tracer provider, once
    set, stays for the whole process, and the other tests' spans are not kept."""

    on = False

    def on_end(self, span: ReadableSpan) -> None:
        if self.on:
            super().on_end(span)


_EXPORTER = InMemorySpanExporter()
_PROCESSOR = _Switched(_EXPORTER)
_ATTACHED: list[TracerProvider] = []


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The spans of the test. A process has one global tracer provider, set once: this
    sets an SDK one unless one is set (the tracing docs page may have), and adds the
    exporter to it."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider())
    provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    if provider not in _ATTACHED:
        provider.add_span_processor(_PROCESSOR)
        _ATTACHED.append(provider)
    _EXPORTER.clear()
    _PROCESSOR.on = True
    yield _EXPORTER
    _PROCESSOR.on = False
    _EXPORTER.clear()


def ours(exporter: InMemorySpanExporter, operation: str | None = None) -> list[ReadableSpan]:
    """The spans of neuron_context (an SDK may trace its own calls too), oldest first."""
    found = [
        span
        for span in exporter.get_finished_spans()
        if span.instrumentation_scope is not None
        and span.instrumentation_scope.name == "neuron_context"
    ]
    if operation is not None:
        found = [s for s in found if (s.attributes or {}).get("gen_ai.operation.name") == operation]
    return sorted(found, key=lambda span: span.start_time or 0)


def read_file(path: str) -> str:
    """Read a file.

    Args:
        path: the file.
    """
    return f"# {path}\n" + "x = 1\n" * 100


def reading_agent(reads: int = 3) -> FunctionProvider:
    """A provider that reads ``reads`` files, one per turn, then answers."""
    replies = [calls(("read_file", {"path": f"f{n}.py"})) for n in range(reads)]
    return scripted([*replies, answer("All read.")])


class TestCompactionSpans:
    """The compaction step's span: one per compaction, with its figures."""

    async def test_one_span_per_compaction_with_its_token_counts(
        self, spans: InMemorySpanExporter
    ) -> None:
        """Each compaction of a run is one ``compact_context`` span whose figures are the
        ones its event reports."""
        agent = create_agent(
            reading_agent(reads=4),
            [read_file],
            AgentOptions(context=SlidingWindowStrategy(2, 300)),
        )
        result = await agent.run("Read the files.")
        events = [e for e in result.events if isinstance(e, CompactionCompleted)]
        found = ours(spans, "compact_context")
        assert events
        assert len(found) == len(events)
        for span, event in zip(found, events, strict=True):
            attributes = span.attributes or {}
            assert span.name == "compact_context SlidingWindowStrategy"
            assert span.kind is SpanKind.INTERNAL
            assert span.status.status_code is StatusCode.UNSET
            assert attributes["neuron_context.compaction.strategy"] == "SlidingWindowStrategy"
            assert attributes["neuron_context.compaction.caller"] == "context"
            assert attributes["neuron_context.compaction.tokens_before"] == event.tokens_before
            assert attributes["neuron_context.compaction.tokens_after"] == event.tokens_after
            assert attributes["neuron_context.compaction.tokens_removed"] == (
                event.tokens_before - event.tokens_after
            )
            assert attributes["neuron_context.compaction.messages_before"] == event.messages_before
            assert attributes["neuron_context.compaction.messages_after"] == event.messages_after
            assert attributes["neuron_context.compaction.messages_removed"] == (
                event.messages_removed
            )
            assert attributes["neuron_context.compaction.compacted"] is True
            assert span.end_time is not None
            assert span.start_time is not None
            assert span.end_time >= span.start_time  # the span lasts the compaction

    async def test_no_span_when_the_trigger_does_not_fire(
        self, spans: InMemorySpanExporter
    ) -> None:
        """A step that decides not to compact did nothing, and traces nothing."""
        agent = create_agent(
            reading_agent(reads=1),
            [read_file],
            AgentOptions(context=SlidingWindowStrategy(50, 10**6)),
        )
        await agent.run("Read the file.")
        assert ours(spans, "compact_context") == []
        assert len(ours(spans, "chat")) == 2

    async def test_a_failed_compaction_is_an_error_span(self, spans: InMemorySpanExporter) -> None:
        """A strategy that raises: the history is kept, the span has status ERROR, the
        exception's class as ``error.type`` and the exception as an event."""

        class Broken(SlidingWindowStrategy):
            async def compact(self, messages: Sequence[Message]) -> list[Message]:
                msg = "the summarizer is down"
                raise RuntimeError(msg)

        agent = create_agent(reading_agent(reads=0), options=AgentOptions(context=Broken(2, 0)))
        result = await agent.run("Hi.")
        assert result.text == "All read."
        (span,) = ours(spans, "compact_context")
        attributes = span.attributes or {}
        assert span.status.status_code is StatusCode.ERROR
        assert attributes["error.type"] == "RuntimeError"
        assert attributes["neuron_context.compaction.compacted"] is False
        assert attributes["neuron_context.compaction.tokens_removed"] == 0
        assert [event.name for event in span.events] == ["exception"]

    async def test_the_compaction_span_is_current_while_it_runs(
        self, spans: InMemorySpanExporter
    ) -> None:
        """What a strategy traces (a summarizer's HTTP call, say) is a child of the
        compaction's span."""
        tracer = trace.get_tracer("a summarizer's SDK")

        class Traced(SlidingWindowStrategy):
            async def compact(self, messages: Sequence[Message]) -> list[Message]:
                with tracer.start_as_current_span("POST /v1/chat/completions"):
                    return await super().compact(messages)

        agent = create_agent(reading_agent(), [read_file], AgentOptions(context=Traced(2, 300)))
        await agent.run("Read the files.")
        compaction = ours(spans, "compact_context")[0]
        inner = next(s for s in spans.get_finished_spans() if s.name.startswith("POST"))
        assert inner.parent is not None
        assert compaction.context is not None
        assert inner.parent.span_id == compaction.context.span_id

    async def test_every_caller_gets_the_span(self, spans: InMemorySpanExporter) -> None:
        """The middlewares compact through the same step, and are traced by it too."""
        recorder = RecordingStrategy(SlidingWindowStrategy(1, 0))
        agent = create_agent(
            scripted([answer("ok")]),
            options=AgentOptions(middleware=[ContextEditingMiddleware(recorder)]),
        )
        await agent.run([Message.user("a"), Message.assistant("b"), Message.user("c")])
        (span,) = ours(spans, "compact_context")
        assert (span.attributes or {})["neuron_context.compaction.caller"] == (
            "ContextEditingMiddleware"
        )
        assert len(recorder.calls) == 1

    @pytest.mark.anyio
    async def test_a_recovery_records_the_refusal(self, spans: InMemorySpanExporter) -> None:
        """The recovery step's compaction span says what the refusal stated (its count and
        the window) and the budget compacted to; a compaction the trigger started says
        nothing of a refusal."""
        refusals = [RuntimeError("prompt is too long: 210000 tokens > 200000 maximum")]

        def refusing(request: Any) -> Any:
            if refusals:
                raise refusals.pop()
            return answer("fixed")

        agent = create_agent(
            FunctionProvider(refusing), options=AgentOptions(context=default_stack(1_000_000))
        )
        await agent.run(long_history())
        (span,) = ours(spans, "compact_context")
        attributes = span.attributes or {}
        assert attributes["neuron_context.compaction.caller"] == "overflow"
        assert attributes["neuron_context.overflow.input_tokens"] == 210_000
        assert attributes["neuron_context.overflow.limit"] == 200_000
        budget = attributes["neuron_context.overflow.budget"]
        after = attributes["neuron_context.compaction.tokens_after"]
        assert isinstance(budget, int)
        assert isinstance(after, int)
        assert after <= budget
        spans.clear()
        small = create_agent(
            scripted([answer("ok")]), options=AgentOptions(context=default_stack(600))
        )
        await small.run(long_history())
        (span,) = ours(spans, "compact_context")
        assert not any(k.startswith("neuron_context.overflow.") for k in span.attributes or {})


def long_history(turns: int = 12) -> list[Message]:
    """A system prompt, a task, and ``turns`` tool exchanges with large results."""
    history = [Message.system("You are terse."), Message.user("Read every file.")]
    for n in range(turns):
        use = ToolUse(id=f"c{n}", name="read_file", input={"path": f"f{n}.py"})
        history += [Message.assistant(tool_uses=[use]), Message.tool_result(f"c{n}", "x" * 800)]
    return history


class TestDirectCompactionSpans:
    """A strategy's ``compact`` or ``apply`` called directly, as in a user's own loop."""

    async def test_default_stack_compact_is_one_span(self, spans: InMemorySpanExporter) -> None:
        """``await default_stack(N).compact(history)`` is one ``compact_context`` span,
        caller ``direct``, with the strategy's own estimates before and after; the
        strategies it runs inside open none."""
        history = long_history()
        stack = default_stack(1_000)
        result = await stack.compact(history)
        (span,) = ours(spans)
        attributes = dict(span.attributes or {})
        name = type(stack).__name__
        assert span.name == f"compact_context {name}"
        assert span.kind is SpanKind.INTERNAL
        assert attributes == {
            "gen_ai.operation.name": "compact_context",
            "neuron_context.compaction.strategy": name,
            "neuron_context.compaction.caller": "direct",
            "neuron_context.compaction.tokens_before": stack.token_estimate(history),
            "neuron_context.compaction.tokens_after": stack.token_estimate(result),
            "neuron_context.compaction.tokens_removed": (
                stack.token_estimate(history) - stack.token_estimate(result)
            ),
            "neuron_context.compaction.messages_before": len(history),
            "neuron_context.compaction.messages_after": len(result),
            "neuron_context.compaction.messages_removed": len(history) - len(result),
            "neuron_context.compaction.compacted": True,
        }

    async def test_a_composite_and_a_sync_apply(self, spans: InMemorySpanExporter) -> None:
        """A composite's children open no span of their own; a pure strategy's sync
        ``apply`` is traced like ``compact``; nothing to remove is ``compacted=False``."""
        history = long_history()
        composite = CompositeStrategy(
            [ToolResultClearingStrategy(2, 0), SlidingWindowStrategy(4, 0)], 100
        )
        await composite.compact(history)
        SlidingWindowStrategy(100, 0).apply(history)
        first, second = ours(spans)
        assert first.name == "compact_context CompositeStrategy"
        assert second.name == "compact_context SlidingWindowStrategy"
        assert (second.attributes or {})["neuron_context.compaction.compacted"] is False

    async def test_a_subclass_using_super_is_traced_once(self, spans: InMemorySpanExporter) -> None:
        """A user's attrs subclass whose ``compact`` calls ``super().compact`` works (attrs
        rebuilds a slotted class) and is one span."""

        @attrs.define
        class Logged(SlidingWindowStrategy):
            seen: list[int] = attrs.field(factory=list, kw_only=True)

            async def compact(self, messages: Sequence[Message]) -> list[Message]:
                self.seen.append(len(messages))
                return await super().compact(messages)

        history = long_history()
        strategy = Logged(2, 0)
        assert len(await strategy.compact(history)) == 3
        assert strategy.seen == [len(history)]
        (span,) = ours(spans)
        assert span.name == "compact_context Logged"

    async def test_a_subclass_with_its_own_arguments(self, spans: InMemorySpanExporter) -> None:
        """A user's ``compact`` taking more arguments gets them as they were passed."""

        class Noted(SlidingWindowStrategy):
            async def compact(
                self, messages: Sequence[Message], *, note: str = ""
            ) -> list[Message]:
                assert note == "from my loop"
                return await super().compact(messages)

        history = long_history()
        strategy = Noted(2, 0)
        result = await strategy.compact(messages=history, note="from my loop")
        assert len(result) == 3
        (span,) = ours(spans)
        assert (span.attributes or {})["neuron_context.compaction.messages_before"] == len(history)

    @settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(messages=well_formed_conversations(max_turns=6), which=st.sampled_from(range(4)))
    def test_tracing_never_changes_a_result(
        self, spans: InMemorySpanExporter, messages: list[Message], which: int
    ) -> None:
        """A traced direct call returns what the untraced method returns, in one span
        whose figures are the strategy's own."""
        strategy: ContextStrategy = [
            SlidingWindowStrategy(3, 0),
            ToolResultClearingStrategy(1, 0),
            CompositeStrategy([ToolResultClearingStrategy(1, 0), SlidingWindowStrategy(4, 0)], 50),
            default_stack(300),
        ][which]
        untraced = type(strategy).compact.__wrapped__  # type: ignore[attr-defined]
        expected = anyio.run(untraced, strategy, messages)
        spans.clear()
        traced = anyio.run(strategy.compact, messages)
        assert traced == expected
        (span,) = ours(spans)
        attributes = span.attributes or {}
        assert attributes["neuron_context.compaction.messages_after"] == len(traced)
        assert attributes["neuron_context.compaction.tokens_after"] == strategy.token_estimate(
            traced
        )
        assert attributes["neuron_context.compaction.compacted"] is (traced != messages)

    async def test_a_failing_compact_is_an_error_span(self, spans: InMemorySpanExporter) -> None:
        """An exception leaves the direct call as it is, and the span is an error."""

        class Broken(SlidingWindowStrategy):
            async def compact(self, messages: Sequence[Message]) -> list[Message]:
                msg = "down"
                raise RuntimeError(msg)

        with pytest.raises(RuntimeError, match="down"):
            await Broken(2, 0).compact(long_history())
        (span,) = ours(spans)
        assert span.status.status_code is StatusCode.ERROR
        assert (span.attributes or {})["error.type"] == "RuntimeError"

    async def test_the_loop_compacting_is_still_one_span(self, spans: InMemorySpanExporter) -> None:
        """Inside the compaction step the strategy's own ``compact`` opens no second span."""
        agent = create_agent(
            reading_agent(reads=4), [read_file], AgentOptions(context=default_stack(400))
        )
        result = await agent.run("Read the files.")
        events = [e for e in result.events if isinstance(e, CompactionCompleted)]
        found = ours(spans, "compact_context")
        assert events
        assert len(found) == len(events)
        assert {(s.attributes or {})["neuron_context.compaction.caller"] for s in found} == {
            "context"
        }


class TestAgentRunSpan:
    """A run of our Agent: the GenAI ``invoke_agent`` span, parent of the run's spans."""

    async def test_attributes_and_children(self, spans: InMemorySpanExporter) -> None:
        """One ``invoke_agent`` span per run, with the provider, the model and the run's
        usage; every model and tool call of the run is its child."""

        class Acme(FunctionProvider):
            provider_name = "acme"

        replies = iter([calls(("read_file", {"path": "a.py"})), answer("Done.")])
        agent = create_agent(
            Acme(lambda request: next(replies)), [read_file], AgentOptions(model="acme-1")
        )
        result = await agent.run("Read a.py.")
        run = ours(spans, "invoke_agent")
        assert [s.name for s in run] == ["invoke_agent"]
        (span,) = run
        assert span.kind is SpanKind.INTERNAL
        assert dict(span.attributes or {}) == {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": "acme",
            "gen_ai.request.model": "acme-1",
            "gen_ai.usage.input_tokens": 200,
            "gen_ai.usage.output_tokens": 15,
        }
        assert result.usage == TokenUsage(200, 15)
        assert span.context is not None
        children = [s for s in ours(spans) if s is not span]
        assert [s.name for s in children] == [
            "chat acme-1",
            "execute_tool read_file",
            "chat acme-1",
        ]
        assert all(
            s.parent is not None and s.parent.span_id == span.context.span_id for s in children
        )

    async def test_a_failed_run(self, spans: InMemorySpanExporter) -> None:
        """A run that raises ends its span as an error, without usage."""

        def down(request: CompletionRequest) -> str:
            msg = "503"
            raise ConnectionError(msg)

        with pytest.raises(ProviderError):
            await create_agent(FunctionProvider(down)).run("Hello.")
        (span,) = ours(spans, "invoke_agent")
        assert span.status.status_code is StatusCode.ERROR
        assert (span.attributes or {})["error.type"] == "ProviderError"
        assert "gen_ai.usage.input_tokens" not in (span.attributes or {})


class TestSDKProviderSpans:
    """The ``chat`` spans of the SDK providers, over HTTP on 127.0.0.1."""

    @pytest.mark.parametrize(
        ("finish", "expected"), [("stop", "stop"), ("length", "length"), ("tool_calls", None)]
    )
    async def test_openai_finish_reasons_as_sent(
        self, spans: InMemorySpanExporter, server: FakeLLMServer, finish: str, expected: str | None
    ) -> None:
        """OpenAI's own finish reason (``stop``, not ``end_turn``), the model and id it
        reported, and its usage."""
        pytest.importorskip("openai")
        from fake_llm_server import OPENAI, Reply, openai_completion

        server.enqueue(
            Reply.json(openai_completion("ok", finish_reason=finish, model="gpt-test-0613"))
        )
        async with OPENAI.make(server) as provider:
            await create_agent(provider).run("Hello.")
        (span,) = ours(spans, "chat")
        attributes = span.attributes or {}
        assert attributes["gen_ai.provider.name"] == "openai"
        assert attributes["gen_ai.request.model"] == "gpt-test"
        assert attributes["gen_ai.response.model"] == "gpt-test-0613"
        assert attributes["gen_ai.response.id"] == "chatcmpl-test"
        assert attributes["gen_ai.response.finish_reasons"] == (expected or finish,)
        assert attributes["gen_ai.usage.input_tokens"] == 11
        assert attributes["gen_ai.usage.output_tokens"] == 3

    async def test_anthropic_finish_reasons_as_sent(
        self, spans: InMemorySpanExporter, server: FakeLLMServer
    ) -> None:
        """Anthropic's ``stop_reason`` as sent, the model and id it reported, and the
        whole prompt as input tokens (cache reads and writes included)."""
        pytest.importorskip("anthropic")
        from fake_llm_server import ANTHROPIC, Reply, anthropic_message

        usage = {
            "input_tokens": 5,
            "output_tokens": 3,
            "cache_read_input_tokens": 40,
            "cache_creation_input_tokens": 10,
        }
        server.enqueue(
            Reply.json(
                anthropic_message(
                    stop_reason="model_context_window_exceeded", usage=usage, model="claude-x"
                )
            )
        )
        async with ANTHROPIC.make(server) as provider:
            await create_agent(provider).run("Hello.")
        (span,) = ours(spans, "chat")
        attributes = span.attributes or {}
        assert attributes["gen_ai.provider.name"] == "anthropic"
        assert attributes["gen_ai.response.model"] == "claude-x"
        assert attributes["gen_ai.response.id"] == "msg_test"
        assert attributes["gen_ai.response.finish_reasons"] == ("model_context_window_exceeded",)
        assert attributes["gen_ai.usage.input_tokens"] == 55
        assert attributes["gen_ai.usage.output_tokens"] == 3


class TestModelCallSpans:
    """The agent loop's model calls: GenAI ``chat`` spans."""

    async def test_attributes_of_a_call(self, spans: InMemorySpanExporter) -> None:
        """Provider, model, request settings, usage and finish reason, as the GenAI
        conventions name them."""

        class Acme(FunctionProvider):
            provider_name = "acme"

        def reply(request: CompletionRequest) -> CompletionResponse:
            return CompletionResponse(
                Message.assistant("hi"), stop_reason="end_turn", usage=TokenUsage(120, 7)
            )

        agent = create_agent(
            Acme(reply), options=AgentOptions(model="acme-1", max_output_tokens=64, temperature=0.5)
        )
        await agent.run("Hello.")
        (span,) = ours(spans, "chat")
        attributes = dict(span.attributes or {})
        assert span.name == "chat acme-1"
        assert span.kind is SpanKind.CLIENT
        assert attributes.pop("neuron_context.request.tokens") == agent.count_request(
            [Message.user("Hello.")]
        )
        assert attributes == {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "acme",
            "gen_ai.request.model": "acme-1",
            "gen_ai.request.max_tokens": 64,
            "gen_ai.request.temperature": 0.5,
            "gen_ai.usage.input_tokens": 120,
            "gen_ai.usage.output_tokens": 7,
            "gen_ai.response.finish_reasons": ("end_turn",),
            "neuron_context.request.messages": 1,
        }

    async def test_a_provider_without_a_name_or_model(self, spans: InMemorySpanExporter) -> None:
        """Without ``provider_name`` the span names the class; without a model, ``chat``."""
        await create_agent(FunctionProvider(lambda request: "hi")).run("Hello.")
        (span,) = ours(spans, "chat")
        assert span.name == "chat"
        assert (span.attributes or {})["gen_ai.provider.name"] == "FunctionProvider"
        assert "gen_ai.request.model" not in (span.attributes or {})

    async def test_a_failed_call(self, spans: InMemorySpanExporter) -> None:
        """A provider that raises: the span is an error with the exception's class."""

        def down(request: CompletionRequest) -> str:
            msg = "503"
            raise ConnectionError(msg)

        with pytest.raises(ProviderError):
            await create_agent(FunctionProvider(down)).run("Hello.")
        (span,) = ours(spans, "chat")
        assert span.status.status_code is StatusCode.ERROR
        assert (span.attributes or {})["error.type"] == "ConnectionError"

    async def test_a_failure_without_text(self, spans: InMemorySpanExporter) -> None:
        """A provider's exception whose ``__str__`` raises: the caller gets our
        ProviderError chained to it (not the error of its ``__str__``), and the span is an
        error with the exception's class."""

        class Unprintable(Exception):  # noqa: N818 - a user's name
            def __str__(self) -> str:
                msg = "no text for you"
                raise RuntimeError(msg)

        def down(request: CompletionRequest) -> str:
            raise Unprintable

        with pytest.raises(ProviderError) as caught:
            await create_agent(FunctionProvider(down)).run("Hello.")
        assert isinstance(caught.value.__cause__, Unprintable)
        (span,) = ours(spans, "chat")
        assert span.status.status_code is StatusCode.ERROR
        assert (span.attributes or {})["error.type"] == "Unprintable"


class TestCalibration:
    """What the provider's reported input tokens teach a ``CalibratedCounter``, in our
    loop and in every adapter (one mechanism, the recovery step's calibration): on the
    model call's span, and in the loop's ``ModelCalled`` event."""

    @pytest.mark.parametrize("caller", CALLERS)
    def test_on_the_model_calls_span(self, spans: InMemorySpanExporter, caller: Any) -> None:
        """Each framework's own test model answering with usage: one span of ours holds
        the report (``neuron_context.calibration.input_tokens``), the counter's estimate of the same
        request before it learned, and the factor it learned (the loop's ``chat`` span;
        an adapter's ``model_request`` span)."""
        counter = CalibratedCounter(TokenCounter())
        caller(Provider("", times=0), history(), default_stack(10**6, counter=counter), NEWEST)
        (span,) = [s for s in ours(spans) if _FACTOR in (s.attributes or {})]
        attributes = span.attributes or {}
        reported = attributes["neuron_context.calibration.input_tokens"]
        # pydantic-ai's function model reports no usage for a stream: it counts one itself
        assert reported == REPORTED or getattr(caller, "keywords", {}) == {"streamed": True}
        estimated = attributes["neuron_context.calibration.estimated_tokens"]
        assert isinstance(reported, int)
        assert isinstance(estimated, int)
        assert estimated > 0
        learned = min(max(reported / estimated, counter.min_factor), counter.max_factor)
        assert attributes[_FACTOR] == counter.factor == pytest.approx(learned)
        if span.name != "chat":
            caller_name = attributes["neuron_context.caller"]
            assert isinstance(caller_name, str)
            assert span.name == f"model_request {caller_name}"
            assert caller_name in ("ContextMiddleware", "HistoryProcessor", "CallModelInputFilter")

    @pytest.mark.parametrize("caller", CALLERS)
    def test_nothing_without_a_calibrating_counter(
        self, spans: InMemorySpanExporter, caller: Any
    ) -> None:
        """A counter that does not calibrate learns nothing, and no span says it did."""
        caller(Provider("", times=0), history(), default_stack(10**6), NEWEST)
        assert not [s for s in ours(spans) if _FACTOR in (s.attributes or {})]

    def test_in_the_loops_event(self) -> None:
        """``ModelCalled.calibration_factor`` is the factor after the call's report,
        beside ``estimated_tokens`` and ``input_tokens``; ``None`` without calibration."""
        counter = CalibratedCounter(TokenCounter())

        def reply(request: CompletionRequest) -> CompletionResponse:
            usage = TokenUsage(REPORTED, 5)
            return CompletionResponse(Message.assistant("ok"), stop_reason="end_turn", usage=usage)

        calibrated = create_agent(
            FunctionProvider(reply),
            options=AgentOptions(context=default_stack(10**6, counter=counter)),
        )
        (event,) = [e for e in calibrated.run_sync("Hello.").events if isinstance(e, ModelCalled)]
        assert event.input_tokens == REPORTED
        assert event.calibration_factor == counter.factor
        assert event.to_dict()["calibration_factor"] == counter.factor
        plain = create_agent(FunctionProvider(reply)).run_sync("Hello.")
        (event,) = [e for e in plain.events if isinstance(e, ModelCalled)]
        assert event.calibration_factor is None

    def test_a_stream_read_in_part_is_no_error(self, spans: InMemorySpanExporter) -> None:
        """An Agents SDK stream whose reader stops after its first event ends its
        ``model_request`` span without an error."""
        pytest.importorskip("agents")
        from types import SimpleNamespace

        from agents.models.interface import Model

        from neuron_context.ext.openai_agents import CallModelInputFilter

        class Streaming(Model):
            async def get_response(self, *args: Any, **kwargs: Any) -> Any:
                raise NotImplementedError

            async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
                for _ in range(3):
                    yield SimpleNamespace(type="response.output_text.delta")

        model: Any = CallModelInputFilter(default_stack(10**6)).wrap(Streaming())

        async def read_one() -> None:
            stream = model.stream_response(
                None, [{"role": "user", "content": "hi"}], None, [], None, [], None
            )
            async for _event in stream:
                break
            await stream.aclose()

        anyio.run(read_one)
        (span,) = [s for s in ours(spans) if s.name == "model_request CallModelInputFilter"]
        assert span.status.status_code is StatusCode.UNSET
        assert "error.type" not in (span.attributes or {})


_FACTOR = "neuron_context.calibration.factor"


class TestToolCallSpans:
    """The agent loop's tool calls: GenAI ``execute_tool`` spans."""

    async def test_a_run_traces_every_call(self, spans: InMemorySpanExporter) -> None:
        """A run of three tool turns: the spans are in the order of the loop."""
        result = await create_agent(reading_agent(), [read_file]).run("Read the files.")
        validate(result.messages)
        names = [span.name for span in ours(spans)]
        assert names == ["invoke_agent", *["chat", "execute_tool read_file"] * 3, "chat"]
        tool = ours(spans, "execute_tool")[0]
        assert dict(tool.attributes or {}) == {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "read_file",
            "gen_ai.tool.call.id": result.messages[1].tool_uses[0].id,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.description": "Read a file.",
        }
        assert tool.status.status_code is StatusCode.UNSET

    async def test_failures(self, spans: InMemorySpanExporter) -> None:
        """A tool that raises has its exception's class as ``error.type``; an error
        result (an unknown tool) is ``tool_error``."""

        def explode(path: str) -> str:
            """Fail.

            Args:
                path: the file.
            """
            msg = "disk on fire"
            raise OSError(msg)

        provider = scripted([calls(("explode", {"path": "a"}), ("nothing", {}))])
        await create_agent(provider, [explode]).run("Go.")
        by_name = {span.name: span for span in ours(spans, "execute_tool")}  # concurrent
        first, second = by_name["execute_tool explode"], by_name["execute_tool nothing"]
        assert (first.attributes or {})["error.type"] == "OSError"
        assert first.status.status_code is StatusCode.ERROR
        assert [event.name for event in first.events] == ["exception"]
        assert (second.attributes or {})["error.type"] == "tool_error"
        assert "gen_ai.tool.description" not in (second.attributes or {})

    async def test_a_cancelled_call(self, spans: InMemorySpanExporter) -> None:
        """A run cancelled mid-tool ends the tool's span as ``cancelled``."""

        async def wait(path: str) -> str:
            """Wait.

            Args:
                path: the file.
            """
            await anyio.sleep(10)
            return "never"

        agent = create_agent(scripted([calls(("wait", {"path": "a"}))]), [wait])
        with anyio.move_on_after(0.2):
            await agent.run("Go.")
        (span,) = ours(spans, "execute_tool")
        assert (span.attributes or {})["error.type"] == "cancelled"
        assert span.events == ()  # a cancellation is not an exception to record


class TestWithoutTheSDK:
    """What the library does when nobody set a tracer provider, or without the API."""

    @staticmethod
    def _run(code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def test_import_does_not_import_opentelemetry(self) -> None:
        """``import neuron_context`` imports nothing of OpenTelemetry."""
        result = self._run(
            """
            import sys
            import neuron_context
            print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
            """
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "[]"

    def test_a_run_without_the_api(self) -> None:
        """Without ``opentelemetry-api`` a run that compacts and calls tools works, and
        traces nothing."""
        result = self._run(
            """
            import sys
            sys.modules["opentelemetry"] = None  # not installed
            from neuron_context import (
                AgentOptions, Message, SlidingWindowStrategy, ToolUse, create_agent,
            )
            from neuron_context.testing import FunctionProvider

            turns = iter(range(3))

            def model(request):
                n = next(turns, None)
                if n is None:
                    return "done"
                call = ToolUse(id=f"c{n}", name="echo", input={"text": "x" * 400})
                return Message.assistant(tool_uses=[call])

            def echo(text: str) -> str:
                "Echo."
                return text

            agent = create_agent(
                FunctionProvider(model), [echo],
                AgentOptions(context=SlidingWindowStrategy(2, 100)),
            )
            result = agent.run_sync("Go.")
            assert any(e.type == "compaction_completed" for e in result.events)
            print(result.text)
            """
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "done"
