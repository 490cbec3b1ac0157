"""The provider contract, run against both SDK providers over HTTP on 127.0.0.1.

Each test takes the ``flavour`` fixture (OpenAI, then Anthropic) and the ``server``
fixture (a :class:`fake_llm_server.FakeLLMServer`); the official SDK talks real HTTP to
it, under asyncio and trio. What only one API has (its exact body, its stop reasons, its
construction options) is tested in ``test_openai_provider.py`` and
``test_anthropic_provider.py``.
"""

from __future__ import annotations

import copy
import email.utils
import importlib.metadata
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from fake_llm_server import (
    SUMMARY,
    WEATHER,
    FakeLLMServer,
    Flavour,
    Reply,
    api_key_of,
    body_of,
    conversation,
    history,
    isolate_environment,
    serve,
)

from neuron_context import (
    Compaction,
    CompletionRequest,
    ConfigurationError,
    Image,
    Message,
    Role,
    StopReason,
    SummarizationError,
    SummarizationStrategy,
    TokenUsage,
    formats,
)
from neuron_context.errors import ProviderError

pytestmark = pytest.mark.anyio

KEY_VARIABLE = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
"""The environment variable each SDK reads its API key from."""


def _without_sdk_credentials(monkeypatch: pytest.MonkeyPatch, config_dir: Path) -> None:
    """No credentials the Anthropic SDK could find on its own: no profile, no workload
    identity, an empty configuration directory."""
    for name in (
        "ANTHROPIC_PROFILE",
        "ANTHROPIC_IDENTITY_TOKEN",
        "ANTHROPIC_IDENTITY_TOKEN_FILE",
        "ANTHROPIC_FEDERATION_RULE_ID",
        "ANTHROPIC_ORGANIZATION_ID",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(config_dir))


HI = CompletionRequest([Message.user("hi")])


async def _error_of(flavour: Flavour, server: FakeLLMServer, **kwargs: object) -> ProviderError:
    """The ProviderError that completing ``HI`` raises."""
    async with flavour.make(server, **kwargs) as provider:
        with pytest.raises(ProviderError) as info:
            await provider.complete(HI)
    return info.value


class TestProviderRequest:
    """What an SDK provider sends."""

    async def test_request_model_wins(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """A model named by the request replaces the provider's."""
        async with flavour.make(server) as provider:
            await provider.complete(CompletionRequest([Message.user("hi")], model="other"))
        assert body_of(server)["model"] == "other"

    async def test_request_params_are_sent(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """Extra request params are sent; the request's temperature wins over theirs."""
        params = {"top_p": 0.5, "temperature": 1.0, "seed": 7}
        async with flavour.make(server, request_params=params) as provider:
            await provider.complete(CompletionRequest([Message.user("hi")], temperature=0.0))
        body = body_of(server)
        assert (body["top_p"], body["seed"], body["temperature"]) == (0.5, 7, 0.0)

    async def test_tools_are_rendered_by_formats(
        self, flavour: Flavour, server: FakeLLMServer
    ) -> None:
        """Tool definitions are sent exactly as the public formats function renders them."""
        render = formats.tools_to_openai if flavour.name == "openai" else formats.tools_to_anthropic
        async with flavour.make(server) as provider:
            await provider.complete(CompletionRequest([Message.user("hi")], tools=(WEATHER,)))
        assert body_of(server)["tools"] == render([WEATHER])

    async def test_unsendable_message_fails_before_sending(
        self, flavour: Flavour, server: FakeLLMServer
    ) -> None:
        """An image given as data without a media type is a ConfigurationError; nothing is sent."""
        message = Message(role=Role.USER, content=(Image(data="aGk="),))
        async with flavour.make(server) as provider:
            with pytest.raises(ConfigurationError, match=r"messages\[0\]"):
                await provider.complete(CompletionRequest([message]))
        assert server.requests == []

    async def test_request_is_not_mutated(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """Completing leaves the request's messages and tools as they were."""
        request = CompletionRequest(conversation(flavour.prefix), tools=(WEATHER,))
        before = copy.deepcopy(request)
        async with flavour.make(server) as provider:
            await provider.complete(request)
        assert request == before

    async def test_not_a_request(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """Anything but a CompletionRequest is a ConfigurationError naming the method."""
        async with flavour.make(server) as provider:
            with pytest.raises(ConfigurationError, match=r"complete takes a CompletionRequest"):
                await provider.complete([Message.user("hi")])  # type: ignore[arg-type]
            with pytest.raises(ConfigurationError, match=r"request_body takes a Completion"):
                provider.request_body(None)  # type: ignore[arg-type]
        assert server.requests == []


class TestProviderResponse:
    """How an SDK provider reads replies."""

    async def test_text_reply(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """A text reply becomes an assistant text message, ``end_turn``, with its usage."""
        server.enqueue(Reply.json(flavour.reply("The summary.")))
        async with flavour.make(server) as provider:
            response = await provider.complete(HI)
        assert response.message == Message.assistant("The summary.")
        assert response.stop_reason == StopReason.END_TURN
        assert response.usage == TokenUsage(input_tokens=11, output_tokens=3)

    async def test_cut_off_reply(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """A reply cut off at the limit is ``max_tokens``."""
        server.enqueue(Reply.json(flavour.reply("cut", "max_tokens")))
        async with flavour.make(server) as provider:
            response = await provider.complete(HI)
        assert response.stop_reason == StopReason.MAX_TOKENS

    async def test_missing_usage_is_none(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """A reply without usage has ``usage=None``."""
        body = flavour.reply("x")
        del body["usage"]
        server.enqueue(Reply.json(body))
        async with flavour.make(server) as provider:
            response = await provider.complete(HI)
        assert response.usage is None

    @pytest.mark.parametrize("stop", ["end_turn", "max_tokens"])
    async def test_the_reply_as_the_api_reported_it(
        self, flavour: Flavour, server: FakeLLMServer, stop: str
    ) -> None:
        """The finish reason as the API sent it (OpenAI's ``stop``, ``length``), the model
        that answered and the reply's id are kept beside the mapped StopReason."""
        body = flavour.reply("ok", stop)
        server.enqueue(Reply.json(body))
        async with flavour.make(server) as provider:
            response = await provider.complete(HI)
        assert response.stop_reason == stop
        choices: Any = body.get("choices")
        sent = body["stop_reason"] if flavour.name == "anthropic" else choices[0]["finish_reason"]
        assert response.finish_reason == sent
        assert response.model == body["model"]
        assert response.response_id == body["id"]

    @pytest.mark.parametrize("value", [None, 5, "", "m" * 257, ["gpt"]])
    async def test_reported_fields_that_are_not_short_strings_are_dropped(
        self, flavour: Flavour, server: FakeLLMServer, value: object
    ) -> None:
        """A model or id that is not a short string is not taken (the reply still is)."""
        body = {**flavour.reply("ok", "end_turn"), "model": value, "id": value}
        server.enqueue(Reply.json(body))
        async with flavour.make(server) as provider:
            response = await provider.complete(HI)
        assert response.text == "ok"
        assert response.model is None
        assert response.response_id is None

    async def test_declined_reply_is_an_error(
        self, flavour: Flavour, server: FakeLLMServer
    ) -> None:
        """A refused or filtered reply raises a non-retryable ProviderError, never an answer."""
        server.enqueue(Reply.json(flavour.reply("partial", "declined")))
        error = await _error_of(flavour, server)
        assert error.retryable is False


def _nested(depth: int) -> bytes:
    return ("[" * depth + "]" * depth).encode()


HOSTILE_BODIES = [
    pytest.param(b'{"foo": 1}', id="not-a-reply"),
    pytest.param(b"[]", id="list"),
    pytest.param(b"null", id="null"),
    pytest.param(b'"text"', id="string"),
    pytest.param(b"42", id="number"),
    pytest.param(b"plain text, not JSON", id="plain-text"),
    pytest.param(b" \n", id="blank"),
    pytest.param(b"\xff\xfe\x00", id="not-utf8"),
    pytest.param(_nested(100_000), id="nested-100k"),
    pytest.param(b'{"choices": ' + _nested(5_000) + b"}", id="nested-choices"),
    pytest.param(b'{"content": ' + _nested(5_000) + b"}", id="nested-content"),
]


class TestProviderErrors:
    """How an SDK provider maps failures to ProviderError."""

    async def test_rate_limit_is_retryable_with_retry_after(
        self, flavour: Flavour, server: FakeLLMServer
    ) -> None:
        """429 with retry-after is retryable and carries the wait."""
        server.enqueue(Reply.rate_limited(retry_after="7"))
        error = await _error_of(flavour, server)
        assert (error.retryable, error.status_code, error.retry_after) == (True, 429, 7.0)
        assert isinstance(error.__cause__, flavour.sdk.RateLimitError)

    @pytest.mark.parametrize("status", [500, 502, 503, 529, 408, 409])
    async def test_server_errors_are_retryable(
        self, flavour: Flavour, server: FakeLLMServer, status: int
    ) -> None:
        """5xx (529 is Anthropic's overloaded), 408 and 409 are retryable."""
        server.enqueue(
            Reply.server_error(status) if status >= 500 else Reply.error(status, "x", "y")
        )
        error = await _error_of(flavour, server)
        assert (error.retryable, error.status_code) == (True, status)
        assert isinstance(error.__cause__, flavour.sdk.APIStatusError)
        if status >= 500:
            assert isinstance(error.__cause__, flavour.sdk.InternalServerError)

    @pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
    async def test_client_errors_are_not_retryable(
        self, flavour: Flavour, server: FakeLLMServer, status: int
    ) -> None:
        """4xx other than 408, 409 and 429 are not retryable."""
        server.enqueue(Reply.error(status, "invalid_request_error", "no"))
        error = await _error_of(flavour, server)
        assert (error.retryable, error.status_code) == (False, status)
        assert error.retry_after is None
        assert isinstance(error.__cause__, flavour.sdk.APIStatusError)

    async def test_malformed_json(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """A body that is not JSON raises a non-retryable ProviderError."""
        server.enqueue(Reply.malformed())
        error = await _error_of(flavour, server)
        assert error.retryable is False
        assert isinstance(error.__cause__, ValueError)

    @pytest.mark.parametrize("body", HOSTILE_BODIES)
    async def test_hostile_body(self, flavour: Flavour, server: FakeLLMServer, body: bytes) -> None:
        """A 200 whose body is not a reply (any JSON, no JSON, deep nesting) is a ProviderError."""
        server.enqueue(Reply(body=body, headers=(("content-type", "application/json"),)))
        error = await _error_of(flavour, server)
        assert error.retryable is False
        assert "cannot be read" in str(error)

    async def test_timeout_is_retryable(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """A reply slower than the client's timeout raises a retryable ProviderError."""
        server.enqueue(Reply.slow(5.0))
        error = await _error_of(flavour, server, timeout=0.2)
        assert error.retryable is True
        assert isinstance(error.__cause__, flavour.sdk.APITimeoutError)

    async def test_cancellation_propagates(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """Cancelling a call in flight cancels it; no ProviderError replaces the cancellation."""
        server.enqueue(Reply.slow(5.0))
        async with flavour.make(server) as provider:
            with anyio.move_on_after(0.2) as scope:
                await provider.complete(HI)
        assert scope.cancelled_caught

    async def test_connection_refused_is_retryable(
        self, flavour: Flavour, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A server that is gone raises a retryable ProviderError."""
        isolate_environment(monkeypatch)
        with serve() as gone:
            url = flavour.base_url(gone)
        async with flavour.provider("m", base_url=url, api_key="k", max_retries=0) as provider:
            with pytest.raises(ProviderError) as info:
                await provider.complete(HI)
        assert (info.value.retryable, info.value.status_code) == (True, None)
        assert isinstance(info.value.__cause__, flavour.sdk.APIConnectionError)

    async def test_cut_off_body_is_retryable(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """A reply whose body stops short (the connection dropped) raises a retryable
        ProviderError naming what happened; the SDK's own exception is chained."""
        server.enqueue(Reply.cut_off())
        error = await _error_of(flavour, server)
        assert (error.retryable, error.status_code) == (True, None)
        assert isinstance(error.__cause__, flavour.sdk.APIConnectionError)
        assert "RemoteProtocolError" in str(error)

    async def test_sdk_retries_stack_before_the_error(
        self, flavour: Flavour, server: FakeLLMServer
    ) -> None:
        """With ``max_retries=1`` the SDK retries once itself before the error reaches us."""
        server.enqueue(Reply.rate_limited("0"), Reply.rate_limited("0"))
        await _error_of(flavour, server, max_retries=1)
        assert len(server.requests) == 2


class TestRetryAfter:
    """Reading the wait a server asks for, from the headers of a 429."""

    @pytest.mark.parametrize(
        ("headers", "expected"),
        [
            ({"retry-after": "7"}, 7.0),
            ({"retry-after": "1.5"}, 1.5),
            ({"retry-after-ms": "250"}, 0.25),
            ({"retry-after-ms": "1500", "retry-after": "3"}, 1.5),
            ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
            ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),
            ({"retry-after": "-3"}, 0.0),
            ({"retry-after": "nan"}, None),
            ({"retry-after": "soon"}, None),
            ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
            ({"retry-after": str(10**9)}, 86400.0),
            ({}, None),
        ],
    )
    async def test_values(
        self,
        flavour: Flavour,
        server: FakeLLMServer,
        headers: dict[str, str],
        expected: float | None,
    ) -> None:
        """Seconds, milliseconds and HTTP dates are read; the result is clamped to [0, 1 day]."""
        server.enqueue(Reply.error(429, "rate_limit_error", "slow down", headers=headers))
        error = await _error_of(flavour, server)
        assert error.retry_after == expected

    async def test_future_date(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """An HTTP date in the future is the seconds until then."""
        when = email.utils.formatdate(time.time() + 120, usegmt=True)
        server.enqueue(Reply.rate_limited(retry_after=when))
        wait = (await _error_of(flavour, server)).retry_after
        assert wait is not None
        assert 100 < wait <= 121


class TestProviderConstruction:
    """Building an SDK provider."""

    async def test_given_client_is_used_and_left_open(
        self, flavour: Flavour, server: FakeLLMServer
    ) -> None:
        """A client passed in is used and not closed by ``aclose``."""
        client = flavour.client(server, "given")
        async with client:
            async with flavour.provider("m", client=client) as provider:
                assert provider.client is client
                await provider.complete(HI)
            assert not client.is_closed()
        assert api_key_of(server.requests[0].headers) == "given"

    @pytest.mark.parametrize("client", [5, "client", object()])
    def test_client_of_another_kind(self, flavour: Flavour, client: object) -> None:
        """A client that is not the SDK's async client is a ConfigurationError."""
        with pytest.raises(ConfigurationError, match=r"\.client must be an "):
            flavour.provider("m", client=client)  # type: ignore[arg-type]

    def test_client_and_kwargs_conflict(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """Passing both a client and client keyword arguments is a ConfigurationError."""
        client = flavour.client(server, "k")
        with pytest.raises(ConfigurationError, match="either client"):
            flavour.provider("m", client=client, api_key="k")

    @pytest.mark.parametrize(
        "kwargs",
        [
            {"model": ""},
            {"model": 5},
            {"model": "m", "request_params": {"messages": []}},
            {"model": "m", "request_params": {"max_tokens": 5}},
            {"model": "m", "request_params": ["top_p"]},
            {"model": "m", "request_params": {1: 2}},
        ],
    )
    def test_bad_arguments(
        self, flavour: Flavour, server: FakeLLMServer, kwargs: dict[str, object]
    ) -> None:
        """Invalid arguments raise ConfigurationError naming the provider and field."""
        with pytest.raises(ConfigurationError, match=flavour.provider.__name__):
            flavour.provider(**kwargs, api_key="k", base_url=flavour.base_url(server))  # type: ignore[arg-type]

    def test_repr_hides_the_key(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """The repr shows model and base URL, never the API key."""
        provider = flavour.provider("m", base_url=flavour.base_url(server), api_key="sk-secret")
        assert "sk-secret" not in repr(provider)
        assert "'m'" in repr(provider)
        assert repr(provider).startswith(flavour.provider.__name__)

    def test_no_key_fails_at_construction_naming_the_variable(
        self, flavour: Flavour, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """Without an API key (argument or environment), building the provider raises a
        ConfigurationError naming the SDK's environment variable; nothing waits for the
        first call."""
        isolate_environment(monkeypatch)
        _without_sdk_credentials(monkeypatch, tmp_path)
        variable = KEY_VARIABLE[flavour.name]
        with pytest.raises(ConfigurationError, match=rf"\b{variable}\b") as info:
            flavour.provider("m", max_retries=0)
        assert flavour.provider.__name__ in str(info.value)
        for empty in ("", None):
            with pytest.raises(ConfigurationError, match=variable):
                flavour.provider("m", api_key=empty)

    async def test_key_from_the_environment(
        self, flavour: Flavour, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The environment variable the error names is the one the SDK sends."""
        monkeypatch.setenv(KEY_VARIABLE[flavour.name], "from-env")
        provider = flavour.provider("m", base_url=flavour.base_url(server), max_retries=0)
        async with provider:
            await provider.complete(HI)
        assert api_key_of(server.requests[0].headers) == "from-env"

    async def test_a_given_client_is_not_checked(
        self, flavour: Flavour, server: FakeLLMServer
    ) -> None:
        """A client the caller built is taken as it is, whatever its credentials (a proxy
        may add them; OpenAI's SDK builds none without a key)."""
        client = flavour.client(server, "" if flavour.name == "anthropic" else "k")
        async with client:
            provider = flavour.provider("m", client=client)
            assert provider.client is client

    def test_missing_sdk(self, flavour: Flavour, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without the SDK package, building one says which extra to install."""
        monkeypatch.setitem(sys.modules, flavour.name, None)
        with pytest.raises(ConfigurationError, match=rf'pip install "\.\[{flavour.name}\]"'):
            flavour.provider("m", api_key="k")


class TestSDKImports:
    """What importing the providers needs."""

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
        # Not on a registry: the hint says how to install from a clone.
        assert 'python -m pip install ".[openai]"' in result.stdout
        assert 'python -m pip install ".[anthropic]"' in result.stdout
        assert "neuron-context[" not in result.stdout

    def test_providers_need_only_their_sdk(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """A provider is built and answers with nothing installed but its SDK and what the
        SDK depends on: ``httpx`` is blocked unless the installed SDK requires it (openai 3
        and anthropic 2 are built on ``httpx2``)."""
        requires = importlib.metadata.requires(flavour.name) or []
        needs_httpx = any(re.match(r"httpx\b(?!2)", requirement) for requirement in requires)
        code = (
            "import sys\n"
            f"if not {needs_httpx}:\n"
            "    sys.modules['httpx'] = None\n"
            "import anyio\n"
            "from neuron_context import CompletionRequest, Message\n"
            f"from neuron_context.providers import {flavour.provider.__name__} as P\n"
            "async def main():\n"
            f"    async with P('m', base_url={flavour.base_url(server)!r}, api_key='k',\n"
            "                 max_retries=0) as provider:\n"
            "        reply = await provider.complete(CompletionRequest([Message.user('hi')]))\n"
            "    print(reply.text)\n"
            "anyio.run(main)\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "ok"


class TestProviderSummarization:
    """SummarizationStrategy over an SDK provider, end to end through HTTP."""

    async def test_compacts_through_the_server(
        self, flavour: Flavour, server: FakeLLMServer
    ) -> None:
        """The older messages become one summary written by the server's reply."""
        messages = history(flavour.prefix)
        server.enqueue(Reply.json(flavour.reply(SUMMARY)))
        async with flavour.make(server) as provider:
            output = await SummarizationStrategy(provider, 2, 0).compact(messages)
        assert output == [
            Message.system("You are terse."),
            Message(role=Role.USER, content=(Compaction(content=SUMMARY),)),
            *messages[-2:],
        ]
        body = body_of(server)
        assert "tools" not in body
        assert "get_weather" in json.dumps(body)

    async def test_retries_a_rate_limit_then_succeeds(
        self, flavour: Flavour, server: FakeLLMServer
    ) -> None:
        """A 429 is retried by the strategy (the SDK's own retries are off)."""
        server.enqueue(Reply.rate_limited(retry_after="0"), Reply.json(flavour.reply(SUMMARY)))
        async with flavour.make(server) as provider:
            strategy = SummarizationStrategy(provider, 2, 0, retries=1, retry_delay=0.01)
            output = await strategy.compact(history(flavour.prefix))
        assert output[1] == Message(role=Role.USER, content=(Compaction(content=SUMMARY),))
        assert len(server.requests) == 2

    @pytest.mark.parametrize(
        "script",
        ["500-twice", "529-twice", "400", "malformed", "truncated", "blank", "declined"],
    )
    async def test_failure_leaves_the_input_untouched(
        self, flavour: Flavour, server: FakeLLMServer, script: str
    ) -> None:
        """A failed summary raises SummarizationError and leaves the input equal to a copy."""
        replies = {
            "500-twice": [Reply.server_error(), Reply.server_error()],
            "529-twice": [Reply.server_error(529), Reply.server_error(529)],
            "400": [Reply.bad_request()],
            "malformed": [Reply.malformed()],
            "truncated": [Reply.json(flavour.reply("cut", "max_tokens"))],
            "blank": [Reply.json(flavour.reply("   "))],
            "declined": [Reply.json(flavour.reply("x", "declined"))],
        }[script]
        messages = history(flavour.prefix)
        before = copy.deepcopy(messages)
        server.enqueue(*replies)
        async with flavour.make(server) as provider:
            strategy = SummarizationStrategy(provider, 2, 0, retries=1, retry_delay=0.01)
            with pytest.raises(SummarizationError):
                await strategy.compact(messages)
        assert messages == before

    async def test_slow_server_times_out(self, flavour: Flavour, server: FakeLLMServer) -> None:
        """A reply slower than the strategy's timeout fails without touching the input."""
        messages = history(flavour.prefix)
        before = copy.deepcopy(messages)
        server.enqueue(Reply.slow(5.0))
        async with flavour.make(server) as provider:
            strategy = SummarizationStrategy(provider, 2, 0, timeout=0.2, retries=0)
            with pytest.raises(SummarizationError) as info:
                await strategy.compact(messages)
        assert isinstance(info.value.__cause__, TimeoutError)
        assert messages == before
