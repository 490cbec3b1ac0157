"""OpenAIProvider with the real ``openai`` SDK talking HTTP to a fake server on 127.0.0.1."""

from __future__ import annotations

import copy
import email.utils
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import anyio
import openai
import pytest
from fake_llm_server import (
    OPENAI_PATH,
    FakeLLMServer,
    Reply,
    isolate_environment,
    openai_completion,
    serve,
)

from neuron_context import (
    Compaction,
    ConfigurationError,
    Document,
    Image,
    Message,
    Role,
    SummarizationError,
    Text,
    Thinking,
    ToolDefinition,
    ToolUse,
)
from neuron_context._errors import ProviderError
from neuron_context._strategies.summarization import SummarizationStrategy
from neuron_context.providers import OpenAIProvider
from neuron_context.providers._base import CompletionRequest, StopReason, TokenUsage
from neuron_context.providers._sdk import parse_retry_after

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
            ToolUse(id="call_1", name="get_weather", input={"city": "Paris"}),
            ToolUse(id="call_2", name="get_weather", input={"city": "Rome", "units": "°C"}),
        ),
    ),
    Message.tool_result("call_1", "18°C, sunny"),
    Message.tool_result("call_2", "upstream timeout", is_error=True),
    Message.assistant("Paris is sunny; the Rome lookup failed."),
    Message.user("Try Rome again."),
]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    """A fake LLM server on 127.0.0.1, with no proxy or API key taken from the environment."""
    isolate_environment(monkeypatch)
    with serve() as running:
        yield running


def make_provider(server: FakeLLMServer, **kwargs: Any) -> OpenAIProvider:
    """An OpenAIProvider whose client talks to ``server`` and never retries."""
    options: dict[str, Any] = {
        "base_url": server.openai_base_url,
        "api_key": "test-key",
        "max_retries": 0,
        "timeout": 10.0,
        # Plain HTTP to loopback: no proxies from the environment, no TLS set-up.
        "http_client": openai.DefaultAsyncHttpxClient(trust_env=False, verify=False),
    }
    options.update(kwargs)
    return OpenAIProvider("gpt-test", **options)


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
                            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                        },
                        {
                            "id": "call_2",
                            "type": "function",
                            "function": {
                                "name": "get_weather",
                                "arguments": '{"city": "Rome", "units": "°C"}',
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

    async def test_request_model_wins(self, server: FakeLLMServer) -> None:
        """A model named by the request replaces the provider's."""
        async with make_provider(server) as provider:
            await provider.complete(CompletionRequest([Message.user("hi")], model="other"))
        body = server.requests[0].body
        assert isinstance(body, dict)
        assert body["model"] == "other"

    async def test_max_completion_tokens_when_asked(self, server: FakeLLMServer) -> None:
        """``max_tokens_param="max_completion_tokens"`` renames the field."""
        async with make_provider(server, max_tokens_param="max_completion_tokens") as provider:
            await provider.complete(CompletionRequest([Message.user("hi")], max_tokens=9))
        body = server.requests[0].body
        assert isinstance(body, dict)
        assert body["max_completion_tokens"] == 9
        assert "max_tokens" not in body

    async def test_request_params_are_sent(self, server: FakeLLMServer) -> None:
        """Extra request params are sent; the request's temperature wins over theirs."""
        params = {"top_p": 0.5, "temperature": 1.0, "seed": 7}
        async with make_provider(server, request_params=params) as provider:
            await provider.complete(CompletionRequest([Message.user("hi")], temperature=0.0))
        body = server.requests[0].body
        assert isinstance(body, dict)
        assert (body["top_p"], body["seed"], body["temperature"]) == (0.5, 7, 0.0)

    async def test_unsendable_message_fails_before_sending(self, server: FakeLLMServer) -> None:
        """A block Chat Completions cannot express raises ConfigurationError; nothing is sent."""
        document = Document(media_type="application/pdf", url="https://example.test/a.pdf")
        message = Message(role=Role.USER, content=(document,))
        async with make_provider(server) as provider:
            with pytest.raises(ConfigurationError, match=r"messages\[0\]"):
                await provider.complete(CompletionRequest([message]))
        assert server.requests == []

    async def test_request_is_not_mutated(self, server: FakeLLMServer) -> None:
        """Completing leaves the request's messages and tools as they were."""
        request = CompletionRequest(CONVERSATION, tools=(WEATHER,))
        before = copy.deepcopy(request)
        async with make_provider(server) as provider:
            await provider.complete(request)
        assert request == before


class TestOpenAIProviderResponse:
    """How OpenAIProvider reads replies."""

    async def test_parallel_tool_calls_round_trip(self, server: FakeLLMServer) -> None:
        """A tool-call reply becomes an assistant message with ToolUse blocks and parsed input."""
        calls: list[dict[str, object]] = [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
            },
            {
                "id": "call_b",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Oslo", "n": [1, 2]}'},
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

    async def test_text_reply(self, server: FakeLLMServer) -> None:
        """A text reply becomes an assistant text message, ``end_turn``."""
        server.enqueue(Reply.json(openai_completion("The summary.")))
        async with make_provider(server) as provider:
            response = await provider.complete(CompletionRequest([Message.user("hi")]))
        assert response.message == Message.assistant("The summary.")
        assert response.stop_reason == StopReason.END_TURN
        assert response.usage == TokenUsage(input_tokens=11, output_tokens=3)

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

    async def test_missing_usage_is_none(self, server: FakeLLMServer) -> None:
        """A reply without usage has ``usage=None``."""
        body = openai_completion("x")
        del body["usage"]
        server.enqueue(Reply.json(body))
        async with make_provider(server) as provider:
            response = await provider.complete(CompletionRequest([Message.user("hi")]))
        assert response.usage is None

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

    async def test_rate_limit_is_retryable_with_retry_after(self, server: FakeLLMServer) -> None:
        """429 with retry-after is retryable and carries the wait."""
        server.enqueue(Reply.rate_limited(retry_after="7"))
        async with make_provider(server) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        error = info.value
        assert (error.retryable, error.status_code, error.retry_after) == (True, 429, 7.0)
        assert isinstance(error.__cause__, openai.RateLimitError)

    @pytest.mark.parametrize("status", [500, 503, 529, 408, 409])
    async def test_server_errors_are_retryable(self, server: FakeLLMServer, status: int) -> None:
        """5xx, 408 and 409 are retryable."""
        server.enqueue(
            Reply.server_error(status) if status >= 500 else Reply.error(status, "x", "y")
        )
        async with make_provider(server) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert (info.value.retryable, info.value.status_code) == (True, status)
        assert isinstance(info.value.__cause__, openai.APIStatusError)

    @pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
    async def test_client_errors_are_not_retryable(
        self, server: FakeLLMServer, status: int
    ) -> None:
        """400, 401, 403, 404 and 422 are not retryable."""
        server.enqueue(Reply.error(status, "invalid_request_error", "no"))
        async with make_provider(server) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert (info.value.retryable, info.value.status_code) == (False, status)
        assert info.value.retry_after is None

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

    async def test_timeout_is_retryable(self, server: FakeLLMServer) -> None:
        """A reply slower than the client's timeout raises a retryable ProviderError."""
        server.enqueue(Reply.slow(5.0))
        async with make_provider(server, timeout=0.2) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert info.value.retryable is True
        assert isinstance(info.value.__cause__, openai.APITimeoutError)

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
            url = gone.openai_base_url
        async with OpenAIProvider("m", base_url=url, api_key="k", max_retries=0) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert (info.value.retryable, info.value.status_code) == (True, None)
        assert isinstance(info.value.__cause__, openai.APIConnectionError)

    async def test_sdk_retries_stack_before_the_error(self, server: FakeLLMServer) -> None:
        """With ``max_retries=1`` the SDK retries once itself before the error reaches us."""
        server.enqueue(Reply.rate_limited("0"), Reply.rate_limited("0"))
        async with make_provider(server, max_retries=1) as provider:
            with pytest.raises(ProviderError):
                await provider.complete(CompletionRequest([Message.user("hi")]))
        assert len(server.requests) == 2


class TestParseRetryAfter:
    """Reading the wait a server asks for."""

    @pytest.mark.parametrize(
        ("headers", "expected"),
        [
            ({"retry-after": "7"}, 7.0),
            ({"retry-after": "1.5"}, 1.5),
            ({"retry-after-ms": "250"}, 0.25),
            ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
            ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),
            ({"retry-after": "-3"}, 0.0),
            ({"retry-after": "nan"}, None),
            ({"retry-after": "soon"}, None),
            ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
            ({"retry-after": str(10**9)}, 86400.0),
            ({}, None),
            (None, None),
        ],
    )
    def test_values(self, headers: dict[str, str] | None, expected: float | None) -> None:
        """Seconds, milliseconds and HTTP dates are read; the result is clamped to [0, 1 day]."""
        assert parse_retry_after(headers) == expected

    def test_future_date(self) -> None:
        """An HTTP date in the future is the seconds until then."""
        when = email.utils.formatdate(time.time() + 120, usegmt=True)
        wait = parse_retry_after({"retry-after": when})
        assert wait is not None
        assert 100 < wait <= 121


class TestOpenAIProviderConstruction:
    """Building an OpenAIProvider."""

    async def test_given_client_is_used_and_left_open(self, server: FakeLLMServer) -> None:
        """A client passed in is used and not closed by ``aclose``."""
        client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="given", max_retries=0)
        async with client:
            async with OpenAIProvider("gpt-test", client=client) as provider:
                assert provider.client is client
                await provider.complete(CompletionRequest([Message.user("hi")]))
            assert not client.is_closed()
        assert server.requests[0].headers["authorization"] == "Bearer given"

    def test_client_and_kwargs_conflict(self, server: FakeLLMServer) -> None:
        """Passing both a client and client keyword arguments is a ConfigurationError."""
        client = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="k")
        with pytest.raises(ConfigurationError, match="either client"):
            OpenAIProvider("m", client=client, api_key="k")

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

    def test_repr_hides_the_key(self, server: FakeLLMServer) -> None:
        """The repr shows model and base URL, never the API key."""
        provider = OpenAIProvider("m", base_url=server.openai_base_url, api_key="sk-secret")
        assert "sk-secret" not in repr(provider)
        assert "'m'" in repr(provider)

    def test_missing_sdk(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without the openai package, building one says which extra to install."""
        monkeypatch.setitem(sys.modules, "openai", None)
        with pytest.raises(ConfigurationError, match=r"neuron-context\[openai\]"):
            OpenAIProvider("m", api_key="k")

    def test_import_needs_no_sdk(self) -> None:
        """``import neuron_context`` and its providers work with neither SDK installed."""
        code = (
            "import sys\n"
            "sys.modules['openai'] = None\n"
            "sys.modules['anthropic'] = None\n"
            "import neuron_context, neuron_context.providers\n"
            "from neuron_context.providers import AnthropicProvider, OpenAIProvider\n"
            "for cls in (OpenAIProvider, AnthropicProvider):\n"
            "    try:\n"
            "        cls('m')\n"
            "    except neuron_context.ConfigurationError as exc:\n"
            "        print(exc)\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
        )
        assert "neuron-context[openai]" in result.stdout
        assert "neuron-context[anthropic]" in result.stdout


LONG_LOG = "\n".join(f"line {n}: INFO fetched https://example.test/weather/{n}" for n in range(200))
HISTORY = [
    *CONVERSATION[:3],
    Message.tool_result("call_1", LONG_LOG),
    *CONVERSATION[4:],
    Message.assistant("Rome: 21°C."),
    Message.user("Thanks. Now Oslo?"),
]
SUMMARY = "## Goal and constraints\nWeather in Paris and Rome.\n## Next steps\nOslo."


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

    async def test_retries_a_rate_limit_then_succeeds(self, server: FakeLLMServer) -> None:
        """A 429 is retried by the strategy (the SDK's own retries are off)."""
        server.enqueue(Reply.rate_limited(retry_after="0"), Reply.json(openai_completion(SUMMARY)))
        async with make_provider(server) as provider:
            strategy = SummarizationStrategy(provider, 2, 0, retries=1, retry_delay=0.01)
            output = await strategy.compact(HISTORY)
        assert output[1] == Message(role=Role.USER, content=(Compaction(content=SUMMARY),))
        assert len(server.requests) == 2

    @pytest.mark.parametrize(
        "replies",
        [
            [Reply.server_error(), Reply.server_error()],
            [Reply.bad_request()],
            [Reply.malformed()],
            [Reply.json(openai_completion("cut", finish_reason="length"))],
            [Reply.json(openai_completion("   "))],
            [Reply.json(openai_completion("x", finish_reason="content_filter"))],
        ],
        ids=["500-twice", "400", "malformed", "truncated", "blank", "content-filter"],
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

    async def test_slow_server_times_out(self, server: FakeLLMServer) -> None:
        """A reply slower than the strategy's timeout fails without touching the input."""
        history = list(HISTORY)
        before = copy.deepcopy(history)
        server.enqueue(Reply.slow(5.0))
        async with make_provider(server) as provider:
            strategy = SummarizationStrategy(provider, 2, 0, timeout=0.2, retries=0)
            with pytest.raises(SummarizationError) as info:
                await strategy.compact(history)
        assert isinstance(info.value.__cause__, TimeoutError)
        assert history == before
