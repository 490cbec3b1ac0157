"""A scripted LLM server on 127.0.0.1 that speaks the OpenAI and Anthropic wire formats.

The official SDKs talk real HTTP to it, so the tests see exactly the JSON bodies we send
and exercise the SDKs' own error handling::

    with serve() as server:
        server.enqueue(Reply.rate_limited(retry_after="7"), Reply.json(openai_completion("hi")))
        client = AsyncOpenAI(base_url=server.openai_base_url, api_key="test", max_retries=0)
        ...
        assert server.requests[0].body["model"] == "gpt-test"

It answers ``POST /v1/chat/completions`` (Chat Completions) and ``POST /v1/messages``
(Anthropic Messages). Each request is recorded (method, path, headers, parsed JSON body)
and answered with the next scripted :class:`Reply`, or with a default success reply for
its path when the script is empty. The server listens on loopback only, on an ephemeral
port; its serving loop is bounded by a lifetime, and :func:`serve` stops it on exit.

It is also the one module of shared helpers for the provider tests: a :class:`Flavour`
describes one SDK provider (how to build it against the server, what its replies look
like), so the contract suite runs the same tests against both, and the conversation and
tool used throughout (:data:`CONVERSATION`, :data:`WEATHER`, :data:`HISTORY`).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import http.server
import importlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from neuron_context import Image as ImageBlock
from neuron_context import Message, Role, Text, Thinking, ToolDefinition, ToolUse
from neuron_context.providers import AnthropicProvider, OpenAIProvider

__all__ = [
    "ANTHROPIC",
    "ANTHROPIC_PATH",
    "CONVERSATION",
    "FLAVOURS",
    "HISTORY",
    "MAX_DELAY",
    "OPENAI",
    "OPENAI_PATH",
    "PNG",
    "SUMMARY",
    "WEATHER",
    "FakeLLMServer",
    "Flavour",
    "RecordedRequest",
    "Reply",
    "anthropic_message",
    "api_key_of",
    "body_of",
    "conversation",
    "history",
    "isolate_environment",
    "openai_completion",
    "serve",
]

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"
MAX_DELAY = 10.0
"""The longest a slow reply may wait, in seconds (a stopping server wakes it at once)."""
_MAX_BODY = 16 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: object
    """The parsed JSON body, or the raw text when it was not JSON."""


@dataclasses.dataclass(frozen=True)
class Reply:
    """What the server answers to one request.

    A reply without a body (``Reply()``, or ``Reply.slow(seconds)``) stands for the
    default success reply of the request's path.
    """

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    """Seconds to wait before answering (at most :data:`MAX_DELAY`)."""
    announced: int | None = None
    """The ``content-length`` sent, when it is not the body's (a reply cut off: the
    connection closes after the body)."""

    @classmethod
    def json(
        cls, body: object, *, status: int = 200, headers: Mapping[str, str] | None = None
    ) -> Reply:
        """A JSON reply."""
        extra = tuple((headers or {}).items())
        return cls(
            status=status,
            body=json.dumps(body).encode("utf-8"),
            headers=(("content-type", "application/json"), *extra),
        )

    @classmethod
    def error(
        cls,
        status: int,
        kind: str,
        message: str,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> Reply:
        """An error reply whose body both SDKs understand (``{"error": {...}}``)."""
        body = {"type": "error", "error": {"type": kind, "message": message}}
        return cls.json(body, status=status, headers=headers)

    @classmethod
    def rate_limited(cls, retry_after: str = "1") -> Reply:
        """429 with a ``retry-after`` header."""
        return cls.error(429, "rate_limit_error", "slow down", headers={"retry-after": retry_after})

    @classmethod
    def server_error(cls, status: int = 500) -> Reply:
        """A 5xx error (500 by default; Anthropic's ``overloaded`` is 529)."""
        kind = "overloaded_error" if status == 529 else "api_error"
        return cls.error(status, kind, "the server broke")

    @classmethod
    def bad_request(cls, message: str = "invalid request") -> Reply:
        """400, which must not be retried."""
        return cls.error(400, "invalid_request_error", message)

    @classmethod
    def malformed(cls) -> Reply:
        """200 with a ``application/json`` body that is not valid JSON."""
        return cls(
            status=200,
            body=b'{"id": "broken", "choices": [',
            headers=(("content-type", "application/json"),),
        )

    @classmethod
    def cut_off(cls) -> Reply:
        """200 whose body stops short of its ``content-length``: the connection drops."""
        return cls(
            status=200,
            body=b'{"id": "cut", "choices": [',
            headers=(("content-type", "application/json"),),
            announced=1000,
        )

    @classmethod
    def slow(cls, seconds: float, then: Reply | None = None) -> Reply:
        """``then`` (default: the path's default reply) after ``seconds``."""
        base = then if then is not None else cls()
        return dataclasses.replace(base, delay=min(seconds, MAX_DELAY))


def openai_completion(
    content: str | None = "ok",
    *,
    tool_calls: list[dict[str, object]] | None = None,
    finish_reason: str = "stop",
    usage: Mapping[str, object] | None = None,
    model: str = "gpt-test",
) -> dict[str, object]:
    """A Chat Completions response body with one choice."""
    message: dict[str, object] = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
        ],
        "usage": dict(usage)
        if usage is not None
        else {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
    }


def anthropic_message(
    content: list[dict[str, object]] | None = None,
    *,
    stop_reason: str = "end_turn",
    usage: Mapping[str, object] | None = None,
    model: str = "claude-test",
) -> dict[str, object]:
    """A Messages API response body (default: one text block ``"ok"``)."""
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content if content is not None else [{"type": "text", "text": "ok"}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": dict(usage) if usage is not None else {"input_tokens": 11, "output_tokens": 3},
    }


_ENVIRONMENT = (
    "ALL_PROXY",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "all_proxy",
    "https_proxy",
    "http_proxy",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "OPENAI_ADMIN_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
)


def isolate_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove proxies and SDK settings from the environment for one test.

    The SDKs' HTTP clients read proxies from the environment and the SDKs read API keys
    and base URLs from it; without them, a test only ever talks to 127.0.0.1 with the
    keys it passes explicitly.
    """
    for name in _ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


_DEFAULTS = {
    OPENAI_PATH: Reply.json(openai_completion()),
    ANTHROPIC_PATH: Reply.json(anthropic_message()),
}


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _HTTPServer

    def do_POST(self) -> None:
        """Record the request, then send the next scripted reply."""
        owner = self.server.owner
        length = min(int(self.headers.get("content-length") or 0), _MAX_BODY)
        raw = self.rfile.read(length).decode("utf-8", errors="replace")
        try:
            body: object = json.loads(raw)
        except ValueError:
            body = raw
        headers = {name.lower(): value for name, value in self.headers.items()}
        owner.record(RecordedRequest("POST", self.path, headers, body))
        default = _DEFAULTS.get(self.path)
        if default is None:
            self._send(Reply.error(404, "not_found_error", f"no route {self.path}"))
            return
        reply = owner.next_reply()
        if reply is None:
            reply = default
        elif not reply.body:
            reply = dataclasses.replace(default, delay=reply.delay)
        if reply.delay > 0 and owner.stopping.wait(min(reply.delay, MAX_DELAY)):
            return
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        try:
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            length = len(reply.body) if reply.announced is None else reply.announced
            self.send_header("content-length", str(length))
            self.end_headers()
            self.wfile.write(reply.body)
            if length != len(reply.body):
                self.close_connection = True
        except ConnectionError:
            pass  # the client gave up (a timeout test); nothing to answer

    def log_message(self, format: str, *args: object) -> None:
        """Stay quiet."""


class _HTTPServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    owner: FakeLLMServer

    def handle_error(self, request: object, client_address: object) -> None:
        """Ignore clients that went away; nothing else can fail in the handler."""


class FakeLLMServer:
    """The server; use :func:`serve` to run one."""

    def __init__(self, *, lifetime: float = 300.0) -> None:
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self._httpd.timeout = 0.01
        self._lock = threading.Lock()
        self._script: collections.deque[Reply] = collections.deque()
        self._requests: list[RecordedRequest] = []
        self._deadline = time.monotonic() + lifetime
        self._thread = threading.Thread(target=self._serve, name="fake-llm-server", daemon=True)
        self.stopping = threading.Event()

    @property
    def port(self) -> int:
        """The ephemeral port it listens on."""
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``, the Anthropic SDK's ``base_url``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``, the OpenAI SDK's ``base_url``."""
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    def enqueue(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies``, in order."""
        with self._lock:
            self._script.extend(replies)

    def record(self, request: RecordedRequest) -> None:
        """Keep ``request`` (called by the handler)."""
        with self._lock:
            self._requests.append(request)

    def next_reply(self) -> Reply | None:
        """The next scripted reply, or ``None`` when the script is empty."""
        with self._lock:
            return self._script.popleft() if self._script else None

    def start(self) -> None:
        """Serve in a background thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop serving, wake slow replies and close the socket."""
        self.stopping.set()
        self._thread.join(timeout=MAX_DELAY)
        self._httpd.server_close()

    def _serve(self) -> None:
        # Bounded: stops when asked or when the lifetime is over.
        while not self.stopping.is_set() and time.monotonic() < self._deadline:
            self._httpd.handle_request()


@contextlib.contextmanager
def serve(*, lifetime: float = 300.0) -> Iterator[FakeLLMServer]:
    """Run a :class:`FakeLLMServer` for the duration of the ``with`` block."""
    server = FakeLLMServer(lifetime=lifetime)
    server.start()
    try:
        yield server
    finally:
        server.stop()


# -- shared helpers of the provider tests ---------------------------------------------

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
SUMMARY = "## Goal and constraints\nWeather in Paris and Rome.\n## Next steps\nOslo."
_LONG_LOG = "\n".join(
    f"line {n}: INFO fetched https://example.test/weather/{n}" for n in range(200)
)


def conversation(prefix: str) -> list[Message]:
    """A full conversation (image, signed thinking, parallel calls, an error result) whose
    tool-use ids start with ``prefix`` (``"call_"`` for OpenAI, ``"toolu_"`` for Anthropic)."""
    return [
        Message.system("You are terse."),
        Message(
            role=Role.USER,
            content=(
                Text(text="What is in this picture? And the weather in Paris and Rome?"),
                ImageBlock(media_type="image/png", data=PNG),
            ),
        ),
        Message(
            role=Role.ASSISTANT,
            content=(
                Thinking(thinking="Two cities: call the tool twice.", signature="sig-1"),
                Text(text="A cat. Checking both cities."),
                ToolUse(id=f"{prefix}1", name="get_weather", input={"city": "Paris"}),
                ToolUse(id=f"{prefix}2", name="get_weather", input={"city": "Rome", "units": "°C"}),
            ),
        ),
        Message.tool_result(f"{prefix}1", "18°C, sunny"),
        Message.tool_result(f"{prefix}2", "upstream timeout", is_error=True),
        Message.assistant("Paris is sunny; the Rome lookup failed."),
        Message.user("Try Rome again."),
    ]


def history(prefix: str) -> list[Message]:
    """:func:`conversation` with a long tool result and two more turns, to summarize."""
    base = conversation(prefix)
    return [
        *base[:3],
        Message.tool_result(f"{prefix}1", _LONG_LOG),
        *base[4:],
        Message.assistant("Rome: 21°C."),
        Message.user("Thanks. Now Oslo?"),
    ]


CONVERSATION = conversation("call_")
HISTORY = history("call_")


def body_of(server: FakeLLMServer, index: int = 0) -> dict[str, Any]:
    """The JSON body of the ``index``-th request the server received."""
    body = server.requests[index].body
    assert isinstance(body, dict)
    return body


def api_key_of(headers: Mapping[str, str]) -> str | None:
    """The API key a request carried (``x-api-key``, or a bearer token)."""
    if "x-api-key" in headers:
        return headers["x-api-key"]
    authorization = headers.get("authorization", "")
    return authorization.removeprefix("Bearer ") if authorization.startswith("Bearer ") else None


@dataclasses.dataclass(frozen=True)
class Flavour:
    """One SDK provider, as the contract suite needs to know it."""

    name: str
    """``"openai"`` or ``"anthropic"`` (the SDK's import name)."""
    provider: type[OpenAIProvider] | type[AnthropicProvider]
    path: str
    """The endpoint's path on the server."""
    base_url: Callable[[FakeLLMServer], str]
    """The SDK's ``base_url`` for the server."""
    reply: Callable[..., dict[str, object]]
    """A success body: ``reply(text, stop)``, ``stop`` one of ``"end_turn"``,
    ``"max_tokens"`` and ``"declined"`` (a refused or filtered reply)."""
    prefix: str
    """How the API's tool-use ids begin."""
    model: str
    """The model the providers of the tests are built with."""

    @property
    def sdk(self) -> Any:
        """The SDK module, for its exception classes and client (imported on first use:
        a run with one SDK installed tests that one alone)."""
        return importlib.import_module(self.name)

    def make(self, server: FakeLLMServer, **kwargs: Any) -> OpenAIProvider | AnthropicProvider:
        """A provider whose client talks to ``server`` and never retries."""
        options: dict[str, Any] = {
            "base_url": self.base_url(server),
            "api_key": "test-key",
            "max_retries": 0,
            "timeout": 10.0,
            # Plain HTTP to loopback: no proxies from the environment, no TLS set-up.
            "http_client": self.sdk.DefaultAsyncHttpxClient(trust_env=False, verify=False),
        }
        options.update(kwargs)
        return self.provider(self.model, **options)

    def client(self, server: FakeLLMServer, api_key: str) -> Any:
        """An SDK client for ``server`` built by the test, not by a provider."""
        factory = self.sdk.AsyncOpenAI if self.name == "openai" else self.sdk.AsyncAnthropic
        return factory(base_url=self.base_url(server), api_key=api_key, max_retries=0)


def _openai_reply(text: str | None = "ok", stop: str = "end_turn") -> dict[str, object]:
    reasons = {"end_turn": "stop", "max_tokens": "length", "declined": "content_filter"}
    return openai_completion(text, finish_reason=reasons[stop])


def _anthropic_reply(text: str | None = "ok", stop: str = "end_turn") -> dict[str, object]:
    reasons = {"end_turn": "end_turn", "max_tokens": "max_tokens", "declined": "refusal"}
    content: list[dict[str, object]] = [] if text is None else [{"type": "text", "text": text}]
    return anthropic_message(content, stop_reason=reasons[stop])


OPENAI = Flavour(
    name="openai",
    provider=OpenAIProvider,
    path=OPENAI_PATH,
    base_url=lambda server: server.openai_base_url,
    reply=_openai_reply,
    prefix="call_",
    model="gpt-test",
)
ANTHROPIC = Flavour(
    name="anthropic",
    provider=AnthropicProvider,
    path=ANTHROPIC_PATH,
    base_url=lambda server: server.url,
    reply=_anthropic_reply,
    prefix="toolu_",
    model="claude-test",
)
FLAVOURS = (OPENAI, ANTHROPIC)
