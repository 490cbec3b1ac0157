"""What only OpenAIProvider does, with the real ``openai`` SDK over HTTP on 127.0.0.1.

The contract both SDK providers share is tested once, for both, in
``test_sdk_providers.py``.
"""

from __future__ import annotations

from typing import Any

import openai
import pytest
from fake_llm_server import (
    CONVERSATION,
    HISTORY,
    OPENAI,
    OPENAI_PATH,
    PNG,
    SUMMARY,
    WEATHER,
    FakeLLMServer,
    Reply,
    isolate_environment,
    openai_completion,
)

from neuron_context import (
    Compaction,
    CompletionRequest,
    ConfigurationError,
    Document,
    Message,
    Role,
    StopReason,
    SummarizationStrategy,
    TokenUsage,
    ToolUse,
)
from neuron_context.errors import ProviderError
from neuron_context.providers import OpenAIProvider

pytestmark = pytest.mark.anyio


def make_provider(server: FakeLLMServer, **kwargs: Any) -> OpenAIProvider:
    """An OpenAIProvider whose client talks to ``server`` and never retries."""
    provider = OPENAI.make(server, **kwargs)
    assert isinstance(provider, OpenAIProvider)
    return provider


class TestOpenAIProviderRequest:
    """What OpenAIProvider sends."""

    async def test_exact_body_of_a_full_conversation(self, server: FakeLLMServer) -> None:
        """System prompt, image, parallel tool calls, an error result and tools are sent exactly."""
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
        assert recorded.path == OPENAI_PATH
        assert recorded.headers["authorization"] == "Bearer test-key"
        assert recorded.body == {
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "Summarize carefully."},
                {"role": "system", "content": "You are terse."},
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "text",
                            "text": "What is in this picture? And the weather in Paris and Rome?",
                        },
                        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                    ],
                },
                {
                    "role": "assistant",
                    "content": "A cat. Checking both cities.",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                        },
                        {
                            "id": "call_2",
                            "type": "function",
                            "function": {
                                "name": "get_weather",
                                "arguments": '{"city":"Rome","units":"°C"}',
                            },
                        },
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": "18°C, sunny"},
                {"role": "tool", "tool_call_id": "call_2", "content": "upstream timeout"},
                {"role": "assistant", "content": "Paris is sunny; the Rome lookup failed."},
                {"role": "user", "content": "Try Rome again."},
            ],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "description": "Current weather for a city.",
                        "parameters": {
                            "type": "object",
                            "properties": {
                                "city": {"type": "string"},
                                "units": {"type": "string"},
                            },
                            "required": ["city"],
                        },
                    },
                }
            ],
            "max_tokens": 256,
            "temperature": 0.2,
        }

    async def test_minimal_body(self, server: FakeLLMServer) -> None:
        """Without system, tools, max_tokens or temperature only model and messages are sent."""
        async with make_provider(server) as provider:
            await provider.complete(CompletionRequest([Message.user("hi")]))
        assert server.requests[0].body == {
            "model": "gpt-test",
            "messages": [{"role": "user", "content": "hi"}],
        }

    async def test_max_completion_tokens_when_asked(self, server: FakeLLMServer) -> None:
        """``max_tokens_param="max_completion_tokens"`` renames the field."""
        async with make_provider(server, max_tokens_param="max_completion_tokens") as provider:
            await provider.complete(CompletionRequest([Message.user("hi")], max_tokens=9))
        body = server.requests[0].body
        assert isinstance(body, dict)
        assert body["max_completion_tokens"] == 9
        assert "max_tokens" not in body

    async def test_unsendable_message_fails_before_sending(self, server: FakeLLMServer) -> None:
        """A block Chat Completions cannot express raises ConfigurationError; nothing is sent."""
        document = Document(media_type="application/pdf", url="https://example.test/a.pdf")
        message = Message(role=Role.USER, content=(document,))
        async with make_provider(server) as provider:
            with pytest.raises(ConfigurationError, match=r"messages\[0\]"):
                await provider.complete(CompletionRequest([message]))
        assert server.requests == []


class TestOpenAIProviderResponse:
    """How OpenAIProvider reads replies."""

    async def test_parallel_tool_calls_round_trip(self, server: FakeLLMServer) -> None:
        """A tool-call reply becomes an assistant message with ToolUse blocks and parsed input."""
        calls: list[dict[str, object]] = [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'},
            },
            {
                "id": "call_b",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Oslo","n":[1,2]}'},
            },
        ]
        server.enqueue(
            Reply.json(
                openai_completion(
                    None,
                    tool_calls=calls,
                    finish_reason="tool_calls",
                    usage={"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150},
                )
            )
        )
        async with make_provider(server) as provider:
            response = await provider.complete(CompletionRequest(CONVERSATION, tools=(WEATHER,)))
            assert response.message == Message.assistant(
                tool_uses=[
                    ToolUse(id="call_a", name="get_weather", input={"city": "Rome"}),
                    ToolUse(id="call_b", name="get_weather", input={"city": "Oslo", "n": [1, 2]}),
                ]
            )
            assert response.stop_reason == StopReason.TOOL_USE
            assert response.usage == TokenUsage(input_tokens=120, output_tokens=30)
            follow_up = [*CONVERSATION, response.message]
            await provider.complete(CompletionRequest(follow_up))
        body = server.requests[1].body
        assert isinstance(body, dict)
        assert body["messages"][-1] == {
            "role": "assistant",
            "content": None,
            "tool_calls": calls,
        }

    @pytest.mark.parametrize(
        ("finish_reason", "expected"),
        [
            ("stop", StopReason.END_TURN),
            ("length", StopReason.MAX_TOKENS),
            ("tool_calls", StopReason.TOOL_USE),
            ("eos", StopReason.END_TURN),
        ],
    )
    async def test_finish_reason_mapping(
        self, server: FakeLLMServer, finish_reason: str, expected: StopReason
    ) -> None:
        """finish_reason maps to a StopReason (an unknown one reads as ``end_turn``)."""
        server.enqueue(Reply.json(openai_completion("x", finish_reason=finish_reason)))
        async with make_provider(server) as provider:
            response = await provider.complete(CompletionRequest([Message.user("hi")]))
        assert response.stop_reason == expected

    async def test_tool_calls_with_stop_are_tool_use(self, server: FakeLLMServer) -> None:
        """A reply with tool calls is ``tool_use`` even when the server says ``stop``."""
        call: dict[str, object] = {
            "id": "c",
            "type": "function",
            "function": {"name": "get_weather", "arguments": "{}"},
        }
        server.enqueue(Reply.json(openai_completion(None, tool_calls=[call])))
        async with make_provider(server) as provider:
            response = await provider.complete(CompletionRequest([Message.user("hi")]))
        assert response.stop_reason == StopReason.TOOL_USE

    @pytest.mark.parametrize(
        "reply",
        [
            openai_completion("partial", finish_reason="content_filter"),
            {
                **openai_completion(None),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": None, "refusal": "I can't."},
                    }
                ],
            },
        ],
        ids=["content_filter", "refusal"],
    )
    async def test_declined_reply_is_an_error(
        self, server: FakeLLMServer, reply: dict[str, object]
    ) -> None:
        """A filtered or refused reply raises a non-retryable ProviderError, never an answer."""
        server.enqueue(Reply.json(reply))
        async with make_provider(server) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert info.value.retryable is False


class TestOpenAIProviderErrors:
    """How OpenAIProvider maps failures to ProviderError."""

    @pytest.mark.parametrize(
        "body",
        [
            {"foo": 1},
            {"choices": []},
            {"choices": [{"index": 0, "message": "text"}]},
            {"choices": [{"message": {"content": None, "tool_calls": [{"id": 5}]}}]},
        ],
        ids=["no-choices", "empty-choices", "message-not-object", "bad-tool-call"],
    )
    async def test_unreadable_reply(self, server: FakeLLMServer, body: object) -> None:
        """JSON that is not a chat completion raises a non-retryable ProviderError."""
        server.enqueue(Reply.json(body))
        async with make_provider(server) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert info.value.retryable is False


class TestOpenAIProviderConstruction:
    """Building an OpenAIProvider."""

    def test_max_tokens_param_default(self, server: FakeLLMServer) -> None:
        """OpenAI's own API gets ``max_completion_tokens``, any other server ``max_tokens``."""
        official = OpenAIProvider("m", api_key="k")
        local = OpenAIProvider("m", base_url=server.openai_base_url, api_key="k")
        assert (official.max_tokens_param, local.max_tokens_param) == (
            "max_completion_tokens",
            "max_tokens",
        )

    def test_max_tokens_param_default_for_azure(self) -> None:
        """An Azure OpenAI client gets ``max_completion_tokens``."""
        client = openai.AsyncAzureOpenAI(
            api_key="k", azure_endpoint="https://example.openai.azure.com", api_version="2024-10-21"
        )
        provider = OpenAIProvider("m", client=client)
        assert provider.max_tokens_param == "max_completion_tokens"

    @pytest.mark.parametrize(
        "kwargs",
        [
            {"model": ""},
            {"model": "m", "max_tokens_param": "tokens"},
            {"model": "m", "request_params": {"messages": []}},
            {"model": "m", "request_params": ["top_p"]},
        ],
    )
    def test_bad_arguments(self, server: FakeLLMServer, kwargs: dict[str, Any]) -> None:
        """Invalid arguments raise ConfigurationError naming the field."""
        with pytest.raises(ConfigurationError, match="OpenAIProvider"):
            OpenAIProvider(**kwargs, api_key="k", base_url=server.openai_base_url)

    def test_missing_api_key(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """No API key anywhere is a ConfigurationError from the SDK's error."""
        isolate_environment(monkeypatch)
        with pytest.raises(ConfigurationError) as info:
            OpenAIProvider("m")
        assert isinstance(info.value.__cause__, openai.OpenAIError)


class TestOpenAIProviderSummarization:
    """SummarizationStrategy over OpenAIProvider, end to end through HTTP."""

    async def test_compacts_through_the_server(self, server: FakeLLMServer) -> None:
        """The older messages become one summary written by the server's reply."""
        server.enqueue(Reply.json(openai_completion(SUMMARY)))
        async with make_provider(server) as provider:
            strategy = SummarizationStrategy(provider, 2, 0)
            output = await strategy.compact(HISTORY)
        assert output == [
            Message.system("You are terse."),
            Message(role=Role.USER, content=(Compaction(content=SUMMARY),)),
            *HISTORY[-2:],
        ]
        (recorded,) = server.requests
        body = recorded.body
        assert isinstance(body, dict)
        assert body["model"] == "gpt-test"
        assert body["max_tokens"] == 1024
        assert body["temperature"] == 0.0
        assert "tools" not in body
        system, user = body["messages"]
        assert system["role"] == "system"
        assert "## Goal and constraints" in system["content"]
        assert user["role"] == "user"
        assert "get_weather" in user["content"]
        assert "upstream timeout" in user["content"]
