"""The agent loop over the real SDKs, talking HTTP to the fake server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest
from fake_llm_server import (
    FakeLLMServer,
    Reply,
    anthropic_message,
    isolate_environment,
    openai_completion,
    serve,
)

from neuron_context import (
    AgentOptions,
    CalibratedCounter,
    ModelCallLimitMiddleware,
    ModelFallbackMiddleware,
    SlidingWindowStrategy,
    TokenCounter,
    ToolCallLimitMiddleware,
    create_agent,
    validate,
)
from neuron_context.events import (
    AgentEvent,
    ModelCalled,
)
from neuron_context.providers import AnthropicProvider, OpenAIProvider

pytestmark = pytest.mark.anyio


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    """A fake LLM server on 127.0.0.1, with no proxy or API key from the environment."""
    isolate_environment(monkeypatch)
    with serve() as running:
        yield running


def loopback(server: FakeLLMServer, sdk: str) -> dict[str, Any]:
    """Client options for ``sdk`` talking to ``server`` without retries."""
    module: Any = openai if sdk == "openai" else anthropic
    return {
        "base_url": server.openai_base_url if sdk == "openai" else server.url,
        "api_key": "test-key",
        "max_retries": 0,
        "timeout": 10.0,
        "http_client": module.DefaultAsyncHttpxClient(trust_env=False, verify=False),
    }


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city's name.
    """
    return f"sunny in {city}"


def options(events: list[AgentEvent], counter: CalibratedCounter) -> AgentOptions:
    """A context stack, limits and a calibrated counter."""
    return AgentOptions(
        system_prompt="You are terse.",
        context=SlidingWindowStrategy(20, 4_000, counter=counter),
        counter=counter,
        middleware=[ModelCallLimitMiddleware(5), ToolCallLimitMiddleware(5)],
        on_event=events.append,
    )


class TestOpenAIAgent:
    """An agent over OpenAIProvider."""

    async def test_tool_round_trip(self, server: FakeLLMServer) -> None:
        """The tool call and its result travel over Chat Completions, usage is recorded."""
        call: dict[str, object] = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
        }
        server.enqueue(
            Reply.json(openai_completion(None, tool_calls=[call], finish_reason="tool_calls")),
            Reply.json(
                openai_completion(
                    "Sunny.",
                    usage={"prompt_tokens": 90, "completion_tokens": 2, "total_tokens": 92},
                )
            ),
        )
        events: list[AgentEvent] = []
        counter = CalibratedCounter(TokenCounter())
        async with OpenAIProvider("gpt-test", **loopback(server, "openai")) as provider:
            agent = create_agent(provider, [get_weather], options(events, counter))
            result = await agent.run("Weather in Rome?")
        assert result.text == "Sunny."
        validate(result.messages)
        first, second = (request.body for request in server.requests)
        assert isinstance(first, dict)
        assert isinstance(second, dict)
        assert first["messages"][0] == {"role": "system", "content": "You are terse."}
        assert first["tools"][0]["function"]["name"] == "get_weather"
        assert second["messages"][-1] == {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "sunny in Rome",
        }
        called = [e for e in events if isinstance(e, ModelCalled)]
        assert [(e.input_tokens, e.output_tokens) for e in called] == [(11, 3), (90, 2)]
        assert counter.observations == 2


class TestAnthropicAgent:
    """An agent over AnthropicProvider."""

    async def test_tool_round_trip(self, server: FakeLLMServer) -> None:
        """The tool call and its result travel over the Messages API."""
        use: dict[str, object] = {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "get_weather",
            "input": {"city": "Oslo"},
        }
        server.enqueue(
            Reply.json(anthropic_message([use], stop_reason="tool_use")),
            Reply.json(anthropic_message([{"type": "text", "text": "Cold."}])),
        )
        events: list[AgentEvent] = []
        counter = CalibratedCounter(TokenCounter())
        async with AnthropicProvider("claude-test", **loopback(server, "anthropic")) as provider:
            agent = create_agent(provider, [get_weather], options(events, counter))
            result = await agent.run("Weather in Oslo?")
        assert result.text == "Cold."
        validate(result.messages)
        second = server.requests[1].body
        assert isinstance(second, dict)
        assert second["system"] == "You are terse."
        assert second["messages"][0]["role"] == "user"
        last = second["messages"][-1]
        assert last["role"] == "user"
        assert last["content"][0]["type"] == "tool_result"
        assert last["content"][0]["tool_use_id"] == "toolu_1"

    async def test_fallback_from_openai_to_anthropic(self, server: FakeLLMServer) -> None:
        """A failing OpenAI call falls back to Anthropic over the same server."""
        server.enqueue(Reply.server_error(500), Reply.json(anthropic_message()))
        async with (
            OpenAIProvider("gpt-test", **loopback(server, "openai")) as primary,
            AnthropicProvider("claude-test", **loopback(server, "anthropic")) as backup,
        ):
            agent = create_agent(
                primary,
                options=AgentOptions(middleware=[ModelFallbackMiddleware([backup])]),
            )
            result = await agent.run("hi")
        assert result.text == "ok"
        assert [r.path for r in server.requests] == ["/v1/chat/completions", "/v1/messages"]
