"""Overflow recovery cannot make things worse: a refusal is evidence about the window, not
an order. The recogniser reads numbers of any length; the loop and every adapter (one
recovery step) never send a request without the newest user message, and raise
ContextOverflowError with the history as it was when the request cannot be made to fit."""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

import anyio
import pytest
from agent_support import answer
from hypothesis import given, settings
from hypothesis import strategies as st
from overflow_support import anthropic_overflow
from strategies import refusal_numbers, refusal_texts

from neuron_context import (
    AgentOptions,
    CalibratedCounter,
    CompletionRequest,
    CompletionResponse,
    MemoryStore,
    Message,
    TokenCounter,
    TokenUsage,
    ToolUse,
    create_agent,
    default_stack,
)
from neuron_context.errors import ContextOverflowError
from neuron_context.events import CompactionCompleted, CompactionOverBudget
from neuron_context.formats import to_dict
from neuron_context.overflow import context_overflow
from neuron_context.strategies import DefaultStack
from neuron_context.testing import FunctionProvider

HUGE = 10**18
"""What the recogniser reads a number of more than 18 digits as."""


def _history(turns: int = 10) -> list[Message]:
    messages = [Message.user("Read every module and fix the bug")]
    for turn in range(turns):
        use = ToolUse(id=f"c{turn}", name="read_file", input={"path": f"src/m{turn}.py"})
        messages.append(Message.assistant(tool_uses=[use]))
        messages.append(Message.tool_result(use.id, f"def f{turn}():\n    return {turn}\n" * 60))
    return messages


class TestRefusalNumbers:
    """The recogniser reads a refusal's numbers by their length first."""

    @given(refusal_texts())
    def test_any_refusal_is_read_without_error(self, text: str) -> None:
        """Every shape, numbers of any length: an Overflow whose numbers are at most
        HUGE, and a budget of at least one token."""
        overflow = context_overflow(ValueError(text))
        assert overflow is not None
        for number in (overflow.tokens, overflow.limit):
            assert number is None or 0 <= number <= HUGE
        assert overflow.budget(1_000) >= 1

    @given(st.text(max_size=300))
    def test_any_text_is_read_without_error(self, text: str) -> None:
        """Whatever an error says, the recogniser answers (an Overflow or None)."""
        context_overflow(RuntimeError(text))

    def test_five_thousand_digits(self) -> None:
        """A count of 5,000 digits is a very large count, not Python's ValueError."""
        overflow = context_overflow(
            ValueError(f"prompt is too long: {'9' * 5000} tokens > 200 maximum")
        )
        assert overflow is not None
        assert (overflow.tokens, overflow.limit) == (HUGE, 200)

    def test_an_exception_whose_text_raises(self) -> None:
        """An exception whose __str__ raises is read by its attributes, never raised."""

        class OddError(Exception):
            code = "context_length_exceeded"

            def __str__(self) -> str:
                msg = "no text"
                raise RuntimeError(msg)

        overflow = context_overflow(OddError())
        assert overflow is not None


class Refusing:
    """A scripted provider refusing the first ``times`` calls with ``text``; it records
    every request it was sent."""

    def __init__(self, text: str, times: int = 1) -> None:
        self.text, self.times = text, times
        self.sent: list[list[Message]] = []

    def __call__(self, request: CompletionRequest) -> CompletionResponse:
        self.sent.append(list(request.messages))
        if len(self.sent) <= self.times:
            raise ValueError(self.text)
        return answer("fixed")


class TestTheLoop:
    """The loop's recovery: never below the system prompt, tools and newest request."""

    @pytest.mark.parametrize("times", [1, 2])
    def test_a_one_token_window_wipes_nothing(self, times: int) -> None:
        """Refused with a 1-token window: ContextOverflowError at once, the history as it
        was before the run plus the run's input (nothing dropped, nothing replaced)."""
        script = Refusing("prompt is too long: 100000 tokens > 1 maximum", times)
        agent = create_agent(
            FunctionProvider(script),
            options=AgentOptions(context=default_stack(10**6), system_prompt="Be careful."),
        )
        before = _history()
        agent.state.messages = list(before)
        with pytest.raises(ContextOverflowError) as caught:
            agent.run_sync("go on")
        assert agent.state.messages == [*before, Message.user("go on")]
        assert len(script.sent) == 1  # nothing sent again
        assert caught.value.limit == 1
        assert isinstance(caught.value.__cause__, Exception)

    def test_the_newest_request_alone_cannot_fit(self) -> None:
        """Anthropic's 3838 > 200 where the newest request alone is over the budget it
        implies: ContextOverflowError, no request without the newest user message."""
        script = Refusing("prompt is too long: 3838 tokens > 200 maximum", times=1)
        agent = create_agent(FunctionProvider(script))
        before = [Message.user("the task")]
        agent.state.messages = list(before)
        request = "please " * 400
        with pytest.raises(ContextOverflowError):
            agent.run_sync(request)
        assert agent.state.messages == [*before, Message.user(request)]
        assert len(script.sent) == 1

    def test_five_thousand_digits_through_run_sync(self) -> None:
        """A refusal with a count of 5,000 digits: a ContextOverflowError from run_sync,
        never a raw ValueError."""
        script = Refusing(f"prompt is too long: {'4' * 5000} tokens > 200000 maximum")
        agent = create_agent(FunctionProvider(script))
        agent.state.messages = _history()
        with pytest.raises(ContextOverflowError):
            agent.run_sync("go on")

    @settings(max_examples=25, deadline=None)
    @given(refusal_numbers(), refusal_numbers())
    def test_any_refusal_numbers(self, tokens: str, limit: str) -> None:
        """Whatever the refusal claims: every request sent holds the newest user message;
        either the retry is answered or the run raises ContextOverflowError with the
        history as it was plus the input."""
        script = Refusing(f"prompt is too long: {tokens} tokens > {limit} maximum")
        agent = create_agent(FunctionProvider(script), options=AgentOptions(system_prompt="Hi"))
        before = _history(6)
        agent.state.messages = list(before)
        newest = Message.user("go on")
        try:
            result = agent.run_sync("go on")
        except ContextOverflowError:
            assert agent.state.messages == [*before, newest]
        else:
            assert result.text == "fixed"
            assert agent.state.messages[-2:] == [newest, Message.assistant("fixed")]
        assert all(newest in sent for sent in script.sent)

    def test_the_refusal_calibrates(self) -> None:
        """The provider's count in a refusal and in every answered call's usage reach a
        CalibratedCounter, through the one calibration the adapters use too."""
        counter = CalibratedCounter(TokenCounter())
        script = Refusing("prompt is too long: 9000 tokens > 6000 maximum")
        agent = create_agent(
            FunctionProvider(script),
            options=AgentOptions(context=default_stack(10**6, counter=counter)),
        )
        agent.state.messages = _history()
        result = agent.run_sync("go on")
        assert counter.observations == 2  # the refusal's count, then the reply's usage
        assert any(
            isinstance(e, CompactionCompleted) and e.trigger == "overflow" for e in result.events
        )


# -- every caller against the same refusing provider ------------------------------------


class Provider:
    """The refusing provider every caller is run against: sent the request's texts, it
    refuses the first ``times`` calls with ``text`` and then answers ``done``."""

    def __init__(self, text: str, times: int) -> None:
        self.text, self.times = text, times
        self.sent: list[str] = []

    def __call__(self, sent: str) -> str:
        self.sent.append(sent)
        if len(self.sent) <= self.times:
            raise anthropic_error_of(self.text)
        return "done"


def anthropic_error_of(text: str) -> Exception:
    tokens, limit = (
        int(n) for n in text.split(": ")[1].replace(" maximum", "").split(" tokens > ")
    )
    return anthropic_overflow(tokens, limit)


NEWEST = "now fix module seven"
REPORTED = 4_321
"""The input tokens every answered call reports."""


def _loop(
    provider: Provider, history: list[Message], stack: DefaultStack, newest: str
) -> tuple[str, bool]:
    def call(request: CompletionRequest) -> CompletionResponse:
        text = provider(json.dumps(to_dict(request.messages)))
        usage = TokenUsage(REPORTED, 5)
        return CompletionResponse(Message.assistant(text), stop_reason="end_turn", usage=usage)

    agent = create_agent(FunctionProvider(call), options=AgentOptions(context=stack))
    agent.state.messages = list(history)
    result = agent.run_sync(newest)
    # The loop keeps its recompacted history once the retry is answered: the newest
    # request and the answer are its end.
    return result.text, [m.text for m in agent.state.messages[-2:]] == [newest, "done"]


def _langchain(
    provider: Provider, history: list[Message], stack: DefaultStack, newest: str
) -> tuple[str, bool]:
    pytest.importorskip("langchain")
    from langchain.agents import create_agent as create_langchain_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, BaseMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    from neuron_context.ext.langchain import ContextMiddleware, to_langchain

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Model:
            return self

        def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
            text = provider(json.dumps([str(m.content) for m in messages]))
            usage = {"input_tokens": REPORTED, "output_tokens": 5, "total_tokens": REPORTED + 5}
            message = AIMessage(content=text, usage_metadata=usage)
            return ChatResult(generations=[ChatGeneration(message=message)])

    agent = create_langchain_agent(
        Model(messages=iter(())), [], middleware=[ContextMiddleware(stack)]
    )
    given = [*to_langchain(history), {"role": "user", "content": newest}]
    contents = [m.content for m in to_langchain(history)] + [newest]
    result: Any = agent.invoke({"messages": given})  # type: ignore[call-overload]
    # LangGraph gives the messages ids in place; the agent's state keeps every message.
    state = [m.content for m in result["messages"][:-1]]
    return str(result["messages"][-1].content), state == contents


def _pydantic_ai(
    provider: Provider,
    history: list[Message],
    stack: DefaultStack,
    newest: str,
    *,
    streamed: bool = False,
) -> tuple[str, bool]:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import RequestUsage

    from neuron_context.ext.pydantic_ai import HistoryProcessor, to_pydantic_ai

    def call(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        texts = [str(getattr(p, "content", "")) for m in messages for p in m.parts]
        usage = RequestUsage(input_tokens=REPORTED, output_tokens=5)
        return ModelResponse(parts=[TextPart(provider(json.dumps(texts)))], usage=usage)

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for part in call(messages, info).parts:
            yield str(getattr(part, "content", ""))

    async def handler(_: object, events: AsyncIterable[object]) -> None:
        async for _event in events:
            pass

    processor = HistoryProcessor(stack)
    model = FunctionModel(call, stream_function=stream)
    agent = Agent(processor.wrap(model), capabilities=[ProcessHistory(processor)])
    given = to_pydantic_ai(history)
    kept = copy.deepcopy(given)
    options: dict[str, Any] = {"event_stream_handler": handler} if streamed else {}
    result = anyio.run(lambda: agent.run(newest, message_history=given, **options))
    return str(result.output), given == kept


def _openai_agents(
    provider: Provider,
    history: list[Message],
    stack: DefaultStack,
    newest: str,
    *,
    streamed: bool = False,
) -> tuple[str, bool]:
    pytest.importorskip("agents")
    from agents import Agent, RunConfig, Runner, Usage
    from agents.models.interface import Model
    from agents_sdk_support import reply
    from openai.types.responses import Response, ResponseCompletedEvent, ResponseUsage

    from neuron_context.ext.openai_agents import CallModelInputFilter, to_responses_items

    class Scripted(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            given = kwargs["input"] if "input" in kwargs else args[1]
            provider(json.dumps(given, default=str))
            answered = reply(1, 0)
            answered.usage = Usage(requests=1, input_tokens=REPORTED, output_tokens=5)
            return answered

        async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            answered = await self.get_response(*args, **kwargs)
            usage = ResponseUsage.model_construct(input_tokens=REPORTED, output_tokens=5)
            response = Response.model_construct(id=None, output=answered.output, usage=usage)
            yield ResponseCompletedEvent.model_construct(
                type="response.completed", response=response, sequence_number=0
            )

    compacting = CallModelInputFilter(stack)
    agent = Agent(name="fixer", model=compacting.wrap(Scripted()))
    config = RunConfig(call_model_input_filter=compacting, tracing_disabled=True)
    given = [*to_responses_items(history), {"role": "user", "content": newest}]
    kept = copy.deepcopy(given)

    async def run() -> Any:
        if not streamed:
            return await Runner.run(agent, given, run_config=config)  # type: ignore[arg-type]
        running = Runner.run_streamed(agent, given, run_config=config)  # type: ignore[arg-type]
        async for _event in running.stream_events():
            pass
        return running

    result = anyio.run(run)
    return str(result.final_output), given == kept


CALLERS = [
    pytest.param(_loop, id="loop"),
    pytest.param(_langchain, id="langchain"),
    pytest.param(_pydantic_ai, id="pydantic-ai"),
    pytest.param(functools.partial(_pydantic_ai, streamed=True), id="pydantic-ai-streamed"),
    pytest.param(_openai_agents, id="openai-agents"),
    pytest.param(functools.partial(_openai_agents, streamed=True), id="openai-agents-streamed"),
]


class TestEveryCaller:
    """The loop and each adapter share one recovery rule, against the same provider."""

    @pytest.mark.parametrize("caller", CALLERS)
    def test_a_one_token_window_is_refused_not_obeyed(self, caller: Any) -> None:
        """A refusal claiming a 1-token window: ContextOverflowError, nothing sent again,
        the caller's history untouched."""
        counter = CalibratedCounter(TokenCounter())
        provider = Provider("prompt is too long: 100000 tokens > 1 maximum", times=10)
        with pytest.raises(ContextOverflowError):
            caller(provider, _history(), default_stack(10**6, counter=counter), NEWEST)
        assert len(provider.sent) == 1
        assert counter.observations == 0  # a window nothing fits teaches the counter nothing

    @pytest.mark.parametrize("caller", CALLERS)
    def test_the_newest_request_alone_cannot_fit(self, caller: Any) -> None:
        """Anthropic's 3838 > 200 where the newest request alone is over the window it
        implies: ContextOverflowError, no request without the newest user message."""
        provider = Provider("prompt is too long: 3838 tokens > 200 maximum", times=10)
        with pytest.raises(ContextOverflowError):
            caller(provider, [Message.user("the task")], default_stack(10**6), "please " * 400)
        assert len(provider.sent) == 1

    @pytest.mark.parametrize("caller", CALLERS)
    def test_a_window_that_fits_is_recovered_with_the_newest_request(self, caller: Any) -> None:
        """A refusal whose window holds the newest request: recompacted and sent once
        more, smaller, with the newest user message; the answer reaches the caller and
        the caller's own history is not edited by the recovery (the loop keeps the
        recompacted one, ending on the newest request and the answer)."""
        provider = Provider("prompt is too long: 20000 tokens > 10000 maximum", times=1)
        text, kept = caller(provider, _history(), default_stack(10**6), NEWEST)
        assert text == "done"
        assert kept
        first, retry = provider.sent
        assert len(retry) < len(first)
        assert NEWEST in retry

    @pytest.mark.parametrize("caller", CALLERS)
    def test_reported_input_tokens_calibrate(self, caller: Any) -> None:
        """The provider's reported input tokens reach the strategy's CalibratedCounter:
        the refusal's count, then the answered call's usage (one mechanism)."""
        counter = CalibratedCounter(TokenCounter())
        provider = Provider("prompt is too long: 20000 tokens > 10000 maximum", times=1)
        caller(provider, _history(), default_stack(10**6, counter=counter), NEWEST)
        assert counter.observations == 2
        assert counter.factor != 1.0


# -- the step in progress is never dropped to meet a budget -----------------------------


def _step() -> list[Message]:
    use = ToolUse(id="c1", name="get_weather", input={"city": "Paris"})
    return [
        Message.user("Give me the weather as JSON"),
        Message.assistant(tool_uses=[use]),
        Message.tool_result("c1", "sunny, 21C " * 40),
    ]


class TestStepInProgress:
    """A budget too small for the newest request with its tool exchange keeps them (the
    default: over budget, reported), drops the step's oldest messages (the budget holds,
    what goes is offloaded with a store) or raises, by the caller's choice."""

    def test_dropped_within_budget(self) -> None:
        stack = default_stack(30, counter=TokenCounter(), in_progress="drop")
        output = anyio.run(stack.compact, _step())
        assert TokenCounter().estimate_messages(output) <= 30
        assert output[0].text == "Give me the weather as JSON"

    @pytest.mark.parametrize("store", [None, MemoryStore()])
    def test_kept_by_default(self, store: MemoryStore | None) -> None:
        """The default never drops the step, with or without a store."""
        stack = default_stack(30, counter=TokenCounter(), store=store)
        output = anyio.run(stack.compact, _step())
        assert output[-2].tool_uses == _step()[1].tool_uses
        assert [r.tool_use_id for r in output[-1].tool_results] == ["c1"]
        assert output[0].text.startswith("Give me the weather")

    @pytest.mark.parametrize("budget", [5, 30, 60])
    def test_kept_over_budget(self, budget: int) -> None:
        stack = default_stack(budget, counter=TokenCounter(), in_progress="keep")
        output = anyio.run(stack.compact, _step())
        assert [m.role for m in output] == [m.role for m in _step()]
        assert output[1].tool_uses == _step()[1].tool_uses
        assert [r.tool_use_id for r in output[2].tool_results] == ["c1"]

    def test_or_raised(self) -> None:
        stack = default_stack(30, counter=TokenCounter(), in_progress="raise")
        with pytest.raises(ContextOverflowError):
            anyio.run(stack.compact, _step())

    def test_the_loop_reports_it(self) -> None:
        """The loop keeps the step and emits CompactionOverBudget after the compaction."""
        agent = create_agent(
            FunctionProvider(lambda request: answer("It is sunny.")),
            options=AgentOptions(
                context=default_stack(30, counter=TokenCounter(), in_progress="keep")
            ),
        )
        agent.state.messages = _step()
        result = agent.run_sync([])
        over = [e for e in result.events if isinstance(e, CompactionOverBudget)]
        assert len(over) == 1
        assert over[0].max_tokens == 30
        assert over[0].tokens_after > 30
        assert result.messages[1].tool_uses == _step()[1].tool_uses

    def test_langchain_does_not_redo_the_step(self) -> None:
        """At a budget too small for the step, with ``in_progress="keep"``, a LangChain
        agent whose model answers once it sees its tool's result answers (it loops to the
        recursion limit when the compaction keeps only the user message)."""
        pytest.importorskip("langchain")
        from langchain.agents import create_agent as create_langchain_agent
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
        from langchain_core.outputs import ChatGeneration, ChatResult
        from langchain_core.tools import tool

        from neuron_context.ext.langchain import ContextMiddleware

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return "sunny, 21C " * 40

        class Model(GenericFakeChatModel):
            def bind_tools(self, tools: Any, **kwargs: Any) -> Model:
                return self

            def _generate(
                self, messages: list[BaseMessage], *args: Any, **kwargs: Any
            ) -> ChatResult:
                if isinstance(messages[-1], ToolMessage):
                    reply = AIMessage(content="It is sunny.")
                else:
                    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}
                    reply = AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}])
                return ChatResult(generations=[ChatGeneration(message=reply)])

        stack = default_stack(40, counter=TokenCounter(), in_progress="keep")
        middleware = ContextMiddleware(stack)
        agent = create_langchain_agent(
            Model(messages=iter(())), [get_weather], middleware=[middleware]
        )
        question: Any = {"messages": [{"role": "user", "content": "Weather in Paris?"}]}
        result = agent.invoke(question, {"recursion_limit": 12})
        assert result["messages"][-1].content == "It is sunny."


class TestHomes:
    """The recogniser lives in neuron_context.overflow; errors holds only errors."""

    def test_errors_still_imports_the_recogniser(self) -> None:
        """``errors.context_overflow`` and ``errors.Overflow`` (documented before) are
        the overflow namespace's own objects, though not errors and not in its __all__."""
        from neuron_context import errors, overflow

        assert errors.context_overflow is overflow.context_overflow
        assert errors.Overflow is overflow.Overflow
        assert "context_overflow" not in errors.__all__
        with pytest.raises(AttributeError):
            errors.no_such_name  # noqa: B018


class TestCalibratedRequests:
    """What a request costs follows the calibration: the system prompt's and the tools'
    costs are priced anew when the factor moves."""

    def test_the_overhead_follows_the_factor(self) -> None:
        counter = CalibratedCounter(TokenCounter())
        prompt = "Follow the house style. " * 40
        agent = create_agent(
            FunctionProvider(lambda request: answer("ok")),
            [_lookup],
            AgentOptions(system_prompt=prompt, counter=counter),
        )
        before = agent.count_request([])
        assert counter.observe([Message.user("x" * 400)], 200)
        after = agent.count_request([])
        system = counter.estimate_message(Message.system(prompt))
        assert after == system + counter.estimate_tools(agent.definitions)
        assert after > before


def _lookup(key: str) -> str:
    """Look a key up."""
    return key
