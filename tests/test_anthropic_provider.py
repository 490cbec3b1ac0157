"""AnthropicProvider with the real ``anthropic`` SDK talking HTTP to a fake server on 127.0.0.1."""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator
from typing import Any

import anthropic
import anyio
import pytest
from fake_llm_server import (
    ANTHROPIC_PATH,
    FakeLLMServer,
    Reply,
    anthropic_message,
    isolate_environment,
    serve,
)

from neuron_context import (
    Compaction,
    ConfigurationError,
    Image,
    Message,
    RedactedThinking,
    Role,
    SummarizationError,
    Text,
    Thinking,
    ToolDefinition,
    ToolUse,
)
from neuron_context._errors import ProviderError
from neuron_context._strategies.summarization import SummarizationStrategy
from neuron_context.providers import AnthropicProvider
from neuron_context.providers._base import CompletionRequest, StopReason, TokenUsage

pytestmark = pytest.mark.anyio

PNG = "iVBORw0KGgoAAAANSUhEUg=="
WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    input_schema={
        "type": "object",
        "properties": {"city": {"type": "string"}, "units": {"type": "string"}},
        "required": ["city"],
    },
)
CONVERSATION = [
    Message.system("You are terse."),
    Message(
        role=Role.USER,
        content=(
            Text(text="What is in this picture? And the weather in Paris and Rome?"),
            Image(media_type="image/png", data=PNG),
        ),
    ),
    Message(
        role=Role.ASSISTANT,
        content=(
            Thinking(thinking="Two cities: call the tool twice.", signature="sig-1"),
            Text(text="A cat. Checking both cities."),
            ToolUse(id="toolu_1", name="get_weather", input={"city": "Paris"}),
            ToolUse(id="toolu_2", name="get_weather", input={"city": "Rome", "units": "°C"}),
        ),
    ),
    Message.tool_result("toolu_1", "18°C, sunny"),
    Message.tool_result("toolu_2", "upstream timeout", is_error=True),
    Message.assistant("Paris is sunny; the Rome lookup failed."),
    Message.user("Try Rome again."),
]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    """A fake LLM server on 127.0.0.1, with no proxy or API key taken from the environment."""
    isolate_environment(monkeypatch)
    with serve() as running:
        yield running


def make_provider(server: FakeLLMServer, **kwargs: Any) -> AnthropicProvider:
    """An AnthropicProvider whose client talks to ``server`` and never retries."""
    options: dict[str, Any] = {
        "base_url": server.url,
        "api_key": "test-key",
        "max_retries": 0,
        "timeout": 10.0,
        # Plain HTTP to loopback: no proxies from the environment, no TLS set-up.
        "http_client": anthropic.DefaultAsyncHttpxClient(trust_env=False, verify=False),
    }
    options.update(kwargs)
    return AnthropicProvider("claude-test", **options)


def body_of(server: FakeLLMServer, index: int = 0) -> dict[str, object]:
    """The JSON body of the ``index``-th request the server received."""
    body = server.requests[index].body
    assert isinstance(body, dict)
    return body


def api_key_of(headers: dict[str, str]) -> str | None:
    """The API key a request carried (``x-api-key``, or a bearer token in newer SDKs)."""
    if "x-api-key" in headers:
        return headers["x-api-key"]
    authorization = headers.get("authorization", "")
    return authorization.removeprefix("Bearer ") if authorization.startswith("Bearer ") else None


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

    async def test_request_is_not_mutated(self, server: FakeLLMServer) -> None:
        """Completing leaves the request's messages and tools as they were."""
        request = CompletionRequest(CONVERSATION, tools=(WEATHER,))
        before = copy.deepcopy(request)
        async with make_provider(server) as provider:
            await provider.complete(request)
        assert request == before


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

    async def test_rate_limit_is_retryable_with_retry_after(self, server: FakeLLMServer) -> None:
        """429 with retry-after is retryable and carries the wait."""
        server.enqueue(Reply.rate_limited(retry_after="3"))
        async with make_provider(server) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        error = info.value
        assert (error.retryable, error.status_code, error.retry_after) == (True, 429, 3.0)
        assert isinstance(error.__cause__, anthropic.RateLimitError)

    async def test_retry_after_ms_wins(self, server: FakeLLMServer) -> None:
        """``retry-after-ms`` is read before ``retry-after``."""
        headers = {"retry-after": "3", "retry-after-ms": "1500"}
        server.enqueue(Reply.error(429, "rate_limit_error", "slow down", headers=headers))
        async with make_provider(server) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert info.value.retry_after == 1.5

    async def test_overloaded_is_retryable(self, server: FakeLLMServer) -> None:
        """529 overloaded is retryable."""
        server.enqueue(Reply.server_error(529))
        async with make_provider(server) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert (info.value.retryable, info.value.status_code) == (True, 529)
        assert isinstance(info.value.__cause__, anthropic.InternalServerError)

    @pytest.mark.parametrize("status", [500, 502, 408, 409])
    async def test_server_errors_are_retryable(self, server: FakeLLMServer, status: int) -> None:
        """5xx, 408 and 409 are retryable."""
        server.enqueue(Reply.error(status, "api_error", "broken"))
        async with make_provider(server) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert (info.value.retryable, info.value.status_code) == (True, status)

    @pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
    async def test_client_errors_are_not_retryable(
        self, server: FakeLLMServer, status: int
    ) -> None:
        """4xx other than 408, 409 and 429 are not retryable."""
        server.enqueue(Reply.error(status, "invalid_request_error", "no"))
        async with make_provider(server) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert (info.value.retryable, info.value.status_code) == (False, status)
        assert isinstance(info.value.__cause__, anthropic.APIStatusError)

    async def test_malformed_json(self, server: FakeLLMServer) -> None:
        """A body that is not JSON raises a non-retryable ProviderError."""
        server.enqueue(Reply.malformed())
        async with make_provider(server) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert info.value.retryable is False
        assert isinstance(info.value.__cause__, ValueError)

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

    async def test_timeout_is_retryable(self, server: FakeLLMServer) -> None:
        """A reply slower than the client's timeout raises a retryable ProviderError."""
        server.enqueue(Reply.slow(5.0))
        async with make_provider(server, timeout=0.2) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert info.value.retryable is True
        assert isinstance(info.value.__cause__, anthropic.APITimeoutError)

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

    async def test_cancellation_propagates(self, server: FakeLLMServer) -> None:
        """Cancelling a call in flight cancels it; no ProviderError replaces the cancellation."""
        server.enqueue(Reply.slow(5.0))
        async with make_provider(server) as provider:
            with anyio.move_on_after(0.2) as scope:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert scope.cancelled_caught

    async def test_connection_refused_is_retryable(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A server that is gone raises a retryable ProviderError."""
        isolate_environment(monkeypatch)
        with serve() as gone:
            url = gone.url
        async with AnthropicProvider("m", base_url=url, api_key="k", max_retries=0) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert (info.value.retryable, info.value.status_code) == (True, None)
        assert isinstance(info.value.__cause__, anthropic.APIConnectionError)


class TestAnthropicProviderConstruction:
    """Building an AnthropicProvider."""

    async def test_given_client_is_used_and_left_open(self, server: FakeLLMServer) -> None:
        """A client passed in is used and not closed by ``aclose``."""
        client = anthropic.AsyncAnthropic(base_url=server.url, api_key="given", max_retries=0)
        async with client:
            async with AnthropicProvider("claude-test", client=client) as provider:
                assert provider.client is client
                await provider.complete(CompletionRequest([Message.user("hi")]))
            assert not client.is_closed()
        assert api_key_of(server.requests[0].headers) == "given"

    def test_client_and_kwargs_conflict(self, server: FakeLLMServer) -> None:
        """Passing both a client and client keyword arguments is a ConfigurationError."""
        client = anthropic.AsyncAnthropic(base_url=server.url, api_key="k")
        with pytest.raises(ConfigurationError, match="either client"):
            AnthropicProvider("m", client=client, api_key="k")

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

    def test_repr_hides_the_key(self, server: FakeLLMServer) -> None:
        """The repr shows model and base URL, never the API key."""
        provider = AnthropicProvider("m", base_url=server.url, api_key="sk-ant-secret")
        assert "sk-ant-secret" not in repr(provider)

    def test_missing_sdk(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without the anthropic package, building one says which extra to install."""
        monkeypatch.setitem(sys.modules, "anthropic", None)
        with pytest.raises(ConfigurationError, match=r"neuron-context\[anthropic\]"):
            AnthropicProvider("m", api_key="k")


LONG_LOG = "\n".join(f"line {n}: INFO fetched https://example.test/weather/{n}" for n in range(200))
HISTORY = [
    *CONVERSATION[:3],
    Message.tool_result("toolu_1", LONG_LOG),
    *CONVERSATION[4:],
    Message.assistant("Rome: 21°C."),
    Message.user("Thanks. Now Oslo?"),
]
SUMMARY = "## Goal and constraints\nWeather in Paris and Rome.\n## Next steps\nOslo."


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

    @pytest.mark.parametrize(
        "replies",
        [
            [Reply.server_error(529), Reply.server_error(529)],
            [Reply.json(anthropic_message(stop_reason="max_tokens"))],
            [Reply.json(anthropic_message(stop_reason="refusal"))],
        ],
        ids=["overloaded-twice", "truncated", "refusal"],
    )
    async def test_failure_leaves_the_input_untouched(
        self, server: FakeLLMServer, replies: list[Reply]
    ) -> None:
        """A failed summary raises SummarizationError and leaves the input equal to a copy."""
        history = list(HISTORY)
        before = copy.deepcopy(history)
        server.enqueue(*replies)
        async with make_provider(server) as provider:
            strategy = SummarizationStrategy(provider, 2, 0, retries=1, retry_delay=0.01)
            with pytest.raises(SummarizationError):
                await strategy.compact(history)
        assert history == before
