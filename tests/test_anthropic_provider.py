"""What only AnthropicProvider does, with the real ``anthropic`` SDK over HTTP on 127.0.0.1.

The contract both SDK providers share is tested once, for both, in
``test_sdk_providers.py``.
"""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from fake_llm_server import (
    ANTHROPIC,
    ANTHROPIC_PATH,
    PNG,
    SUMMARY,
    WEATHER,
    FakeLLMServer,
    Reply,
    anthropic_message,
    api_key_of,
    body_of,
    conversation,
    history,
)

from neuron_context import (
    Compaction,
    CompletionRequest,
    ConfigurationError,
    Message,
    RedactedThinking,
    Role,
    StopReason,
    SummarizationStrategy,
    Text,
    Thinking,
    TokenUsage,
    ToolUse,
)
from neuron_context.errors import ProviderError
from neuron_context.providers import AnthropicProvider

pytestmark = pytest.mark.anyio

CONVERSATION = conversation("toolu_")
HISTORY = history("toolu_")


def make_provider(server: FakeLLMServer, **kwargs: Any) -> AnthropicProvider:
    """An AnthropicProvider whose client talks to ``server`` and never retries."""
    provider = ANTHROPIC.make(server, **kwargs)
    assert isinstance(provider, AnthropicProvider)
    return provider


class TestAnthropicProviderRequest:
    """What AnthropicProvider sends."""

    async def test_exact_body_of_a_full_conversation(self, server: FakeLLMServer) -> None:
        """System, image, signed thinking, parallel tool uses, an error result are sent exactly."""
        request = CompletionRequest(
            CONVERSATION,
            system="Summarize carefully.",
            tools=(WEATHER,),
            max_tokens=256,
            temperature=0.2,
        )
        async with make_provider(server) as provider:
            await provider.complete(request)
        (recorded,) = server.requests
        assert recorded.path == ANTHROPIC_PATH
        assert api_key_of(recorded.headers) == "test-key"
        assert "anthropic-version" in recorded.headers
        assert recorded.body == {
            "model": "claude-test",
            "max_tokens": 256,
            "system": "Summarize carefully.\n\nYou are terse.",
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "text",
                            "text": "What is in this picture? And the weather in Paris and Rome?",
                        },
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": PNG},
                        },
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "thinking",
                            "thinking": "Two cities: call the tool twice.",
                            "signature": "sig-1",
                        },
                        {"type": "text", "text": "A cat. Checking both cities."},
                        {
                            "type": "tool_use",
                            "id": "toolu_1",
                            "name": "get_weather",
                            "input": {"city": "Paris"},
                        },
                        {
                            "type": "tool_use",
                            "id": "toolu_2",
                            "name": "get_weather",
                            "input": {"city": "Rome", "units": "°C"},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1",
                            "content": [{"type": "text", "text": "18°C, sunny"}],
                        },
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_2",
                            "content": [{"type": "text", "text": "upstream timeout"}],
                            "is_error": True,
                        },
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Paris is sunny; the Rome lookup failed."}
                    ],
                },
                {"role": "user", "content": [{"type": "text", "text": "Try Rome again."}]},
            ],
            "tools": [
                {
                    "name": "get_weather",
                    "description": "Current weather for a city.",
                    "input_schema": {
                        "type": "object",
                        "properties": {
                            "city": {"type": "string"},
                            "units": {"type": "string"},
                        },
                        "required": ["city"],
                    },
                }
            ],
            "temperature": 0.2,
        }

    async def test_minimal_body_gets_default_max_tokens(self, server: FakeLLMServer) -> None:
        """Without max_tokens the default is sent (the API requires it); nothing else is added."""
        async with make_provider(server) as provider:
            await provider.complete(CompletionRequest([Message.user("hi")]))
        assert body_of(server) == {
            "model": "claude-test",
            "max_tokens": 4096,
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        }

    async def test_default_max_tokens_is_configurable(self, server: FakeLLMServer) -> None:
        """``default_max_tokens`` replaces 4096."""
        async with make_provider(server, default_max_tokens=77) as provider:
            await provider.complete(CompletionRequest([Message.user("hi")]))
        assert body_of(server)["max_tokens"] == 77

    async def test_tool_results_and_user_text_share_a_turn(self, server: FakeLLMServer) -> None:
        """A tool message followed by a user message is one user turn, tool results first."""
        conversation = [
            Message.user("go"),
            Message.assistant(tool_uses=[ToolUse(id="t1", name="ls", input={})]),
            Message.tool_result("t1", "a.txt"),
            Message.user("and now?"),
        ]
        async with make_provider(server) as provider:
            await provider.complete(CompletionRequest(conversation))
        assert body_of(server)["messages"] == [
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "a.txt"}],
                    },
                    {"type": "text", "text": "and now?"},
                ],
            },
        ]

    async def test_request_params_are_sent(self, server: FakeLLMServer) -> None:
        """Extra request params (thinking) are sent; the request's temperature wins."""
        params = {"thinking": {"type": "enabled", "budget_tokens": 1024}, "temperature": 1.0}
        async with make_provider(server, request_params=params) as provider:
            await provider.complete(CompletionRequest([Message.user("hi")], temperature=0.5))
        body = body_of(server)
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
        assert body["temperature"] == 0.5


class TestAnthropicProviderResponse:
    """How AnthropicProvider reads replies."""

    async def test_thinking_and_tool_uses_round_trip(self, server: FakeLLMServer) -> None:
        """Thinking keeps its signature, tool uses their input, and both go back verbatim."""
        content: list[dict[str, object]] = [
            {"type": "thinking", "thinking": "Retry Rome.", "signature": "EqQBCkYIBxgCKkB"},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"},
            {"type": "text", "text": "Retrying.", "citations": None},
            {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {"city": "Rome"}},
        ]
        server.enqueue(
            Reply.json(
                anthropic_message(
                    content,
                    stop_reason="tool_use",
                    usage={
                        "input_tokens": 20,
                        "cache_creation_input_tokens": 100,
                        "cache_read_input_tokens": 1000,
                        "output_tokens": 42,
                    },
                )
            )
        )
        async with make_provider(server) as provider:
            response = await provider.complete(CompletionRequest(CONVERSATION, tools=(WEATHER,)))
            assert response.message == Message(
                role=Role.ASSISTANT,
                content=(
                    Thinking(thinking="Retry Rome.", signature="EqQBCkYIBxgCKkB"),
                    RedactedThinking(data="EmwKAhgBEgy3va"),
                    Text(text="Retrying."),
                    ToolUse(id="toolu_9", name="get_weather", input={"city": "Rome"}),
                ),
            )
            assert response.stop_reason == StopReason.TOOL_USE
            assert response.usage == TokenUsage(input_tokens=1120, output_tokens=42)
            follow_up = [
                *CONVERSATION,
                response.message,
                Message.tool_result("toolu_9", "21°C"),
            ]
            await provider.complete(CompletionRequest(follow_up, tools=(WEATHER,)))
        messages = body_of(server, 1)["messages"]
        assert isinstance(messages, list)
        assert messages[-2] == {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Retry Rome.", "signature": "EqQBCkYIBxgCKkB"},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"},
                {"type": "text", "text": "Retrying."},
                {
                    "type": "tool_use",
                    "id": "toolu_9",
                    "name": "get_weather",
                    "input": {"city": "Rome"},
                },
            ],
        }

    @pytest.mark.parametrize(
        ("stop_reason", "expected"),
        [
            ("end_turn", StopReason.END_TURN),
            ("max_tokens", StopReason.MAX_TOKENS),
            ("stop_sequence", StopReason.STOP_SEQUENCE),
            ("tool_use", StopReason.TOOL_USE),
            ("model_context_window_exceeded", StopReason.MAX_TOKENS),
            ("something_new", StopReason.END_TURN),
        ],
    )
    async def test_stop_reason_mapping(
        self, server: FakeLLMServer, stop_reason: str, expected: StopReason
    ) -> None:
        """stop_reason maps to a StopReason (an unknown one reads by the content)."""
        server.enqueue(Reply.json(anthropic_message(stop_reason=stop_reason)))
        async with make_provider(server) as provider:
            response = await provider.complete(CompletionRequest([Message.user("hi")]))
        assert response.stop_reason == expected
        assert response.message == Message.assistant("ok")

    async def test_usage_without_cache_fields(self, server: FakeLLMServer) -> None:
        """Usage without cache fields is input_tokens / output_tokens."""
        server.enqueue(Reply.json(anthropic_message(usage={"input_tokens": 5, "output_tokens": 2})))
        async with make_provider(server) as provider:
            response = await provider.complete(CompletionRequest([Message.user("hi")]))
        assert response.usage == TokenUsage(input_tokens=5, output_tokens=2)

    @pytest.mark.parametrize("stop_reason", ["refusal", "pause_turn"])
    async def test_declined_reply_is_an_error(
        self, server: FakeLLMServer, stop_reason: str
    ) -> None:
        """A refusal or a paused turn raises a non-retryable ProviderError, never an answer."""
        server.enqueue(Reply.json(anthropic_message(stop_reason=stop_reason)))
        async with make_provider(server) as provider:
            with pytest.raises(ProviderError, match=stop_reason) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert info.value.retryable is False


class TestAnthropicProviderErrors:
    """How AnthropicProvider maps failures to ProviderError."""

    @pytest.mark.parametrize(
        "body",
        [
            {"foo": 1},
            anthropic_message([{"type": "server_tool_use", "id": "s", "name": "web_search"}]),
            anthropic_message([{"type": "tool_use", "id": "t", "name": "x", "input": "str"}]),
        ],
        ids=["not-a-message", "unsupported-block", "bad-tool-input"],
    )
    async def test_unreadable_reply(self, server: FakeLLMServer, body: object) -> None:
        """JSON that is not a usable message raises a non-retryable ProviderError."""
        server.enqueue(Reply.json(body))
        async with make_provider(server) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert info.value.retryable is False

    async def test_sdk_refusal_before_sending(self, server: FakeLLMServer) -> None:
        """A call the SDK refuses to make (a long non-streaming request) is a ProviderError."""
        client = anthropic.AsyncAnthropic(
            base_url=server.url,
            api_key="k",
            max_retries=0,
            http_client=anthropic.DefaultAsyncHttpxClient(trust_env=False, verify=False),
        )
        async with client, AnthropicProvider("claude-test", client=client) as provider:
            request = CompletionRequest([Message.user("hi")], max_tokens=128_000)
            with pytest.raises(ProviderError, match="refused the request") as info:
                await provider.complete(request)
        assert info.value.retryable is False
        assert server.requests == []


class TestAnthropicProviderConstruction:
    """Building an AnthropicProvider."""

    @pytest.mark.parametrize(
        "kwargs",
        [
            {"model": ""},
            {"model": "m", "default_max_tokens": 0},
            {"model": "m", "default_max_tokens": True},
            {"model": "m", "request_params": {"system": "x"}},
            {"model": "m", "request_params": {"max_tokens": 5}},
        ],
    )
    def test_bad_arguments(self, server: FakeLLMServer, kwargs: dict[str, Any]) -> None:
        """Invalid arguments raise ConfigurationError naming the field."""
        with pytest.raises(ConfigurationError, match="AnthropicProvider"):
            AnthropicProvider(**kwargs, api_key="k", base_url=server.url)


class TestAnthropicProviderSummarization:
    """SummarizationStrategy over AnthropicProvider, end to end through HTTP."""

    async def test_compacts_through_the_server(self, server: FakeLLMServer) -> None:
        """The older messages become one summary written by the server's reply."""
        server.enqueue(Reply.json(anthropic_message([{"type": "text", "text": SUMMARY}])))
        async with make_provider(server) as provider:
            output = await SummarizationStrategy(provider, 2, 0).compact(HISTORY)
        assert output == [
            Message.system("You are terse."),
            Message(role=Role.USER, content=(Compaction(content=SUMMARY),)),
            *HISTORY[-2:],
        ]
        body = body_of(server)
        assert body["max_tokens"] == 1024
        assert isinstance(body["system"], str)
        assert "## Goal and constraints" in body["system"]
        assert "tools" not in body
        messages = body["messages"]
        assert isinstance(messages, list)
        assert len(messages) == 1
        assert messages[0]["role"] == "user"
