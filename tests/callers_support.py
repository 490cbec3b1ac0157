"""Our loop and each adapter driven the same way, with their frameworks' own test models,
against one scripted provider (see ``test_recovery.py``, ``test_tracing.py``): a caller
is ``caller(provider, history, stack, newest) -> (answer, history kept)``."""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

import anyio
import pytest
from overflow_support import anthropic_overflow

from neuron_context import (
    AgentOptions,
    CompletionRequest,
    CompletionResponse,
    Message,
    TokenUsage,
    ToolUse,
    create_agent,
)
from neuron_context.formats import to_dict
from neuron_context.strategies import DefaultStack
from neuron_context.testing import FunctionProvider

__all__ = ["CALLERS", "NEWEST", "REPORTED", "Provider", "history"]


def history(turns: int = 10) -> list[Message]:
    messages = [Message.user("Read every module and fix the bug")]
    for turn in range(turns):
        use = ToolUse(id=f"c{turn}", name="read_file", input={"path": f"src/m{turn}.py"})
        messages.append(Message.assistant(tool_uses=[use]))
        messages.append(Message.tool_result(use.id, f"def f{turn}():\n    return {turn}\n" * 60))
    return messages


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


def loop(
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


def langchain(
    provider: Provider,
    history: list[Message],
    stack: DefaultStack,
    newest: str,
    *,
    asynchronous: bool = False,
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
    if asynchronous:
        result: Any = anyio.run(lambda: agent.ainvoke({"messages": given}))  # type: ignore[call-overload]
    else:
        result = agent.invoke({"messages": given})  # type: ignore[call-overload]
    # LangGraph gives the messages ids in place; the agent's state keeps every message.
    state = [m.content for m in result["messages"][:-1]]
    return str(result["messages"][-1].content), state == contents


def pydantic_ai(
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


def openai_agents(
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
    pytest.param(loop, id="loop"),
    pytest.param(langchain, id="langchain"),
    pytest.param(functools.partial(langchain, asynchronous=True), id="langchain-async"),
    pytest.param(pydantic_ai, id="pydantic-ai"),
    pytest.param(functools.partial(pydantic_ai, streamed=True), id="pydantic-ai-streamed"),
    pytest.param(openai_agents, id="openai-agents"),
    pytest.param(functools.partial(openai_agents, streamed=True), id="openai-agents-streamed"),
]
