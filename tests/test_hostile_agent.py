"""Hostile cases against our Agent loop: an exception from a user's hook, tool, provider,
strategy or clock at every point, cancellation anywhere, refusals that claim any window,
and concurrent runs; the caller's history stays well formed and complete."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agent_support import answer, calls
from hypothesis import given
from hypothesis import strategies as st
from strategies import refusal_numbers

from neuron_context import (
    AgentMiddleware,
    AgentOptions,
    CompletionRequest,
    CompletionResponse,
    ContextStrategy,
    Message,
    ModelRequest,
    NeuronContextError,
    Role,
    ToolCallRequest,
    ToolResult,
    ToolUse,
    create_agent,
    default_stack,
    validate,
)
from neuron_context.errors import AgentError, ContextOverflowError
from neuron_context.events import CompactionFailed
from neuron_context.overflow import context_overflow
from neuron_context.stores import MemoryStore
from neuron_context.strategies import CacheSchedule
from neuron_context.testing import FunctionProvider

PRIOR = [Message.user("the task"), Message.assistant("on it")]


class Boom(Exception):  # noqa: N818 - a user's name
    """A user's own exception."""


class Unprintable(Exception):  # noqa: N818 - a user's name
    """An exception whose text cannot be made."""

    def __str__(self) -> str:
        msg = "no text for you"
        raise RuntimeError(msg)


POINTS = (
    "before_agent",
    "after_agent",
    "before_model",
    "after_model",
    "wrap_model_call:before",
    "wrap_model_call:after",
    "wrap_tool_call:before",
    "wrap_tool_call:after",
    "tool",
    "tool:unprintable",
    "provider",
    "provider:unprintable",
    "on_event",
)


def _hooks(point: str, armed: dict[str, bool]) -> AgentMiddleware:
    """A middleware raising at ``point`` while ``armed["on"]``."""

    def at(here: str) -> None:
        if point == here and armed["on"]:
            raise Boom(here)

    class Raising(AgentMiddleware):
        async def before_agent(self, messages: list[Message]) -> None:
            at("before_agent")

        async def after_agent(self, messages: list[Message]) -> None:
            at("after_agent")

        async def before_model(self, request: ModelRequest) -> None:
            at("before_model")

        async def after_model(self, request: ModelRequest, response: Any) -> None:
            at("after_model")

        async def wrap_model_call(self, request: ModelRequest, next: Any) -> Any:
            at("wrap_model_call:before")
            reply = await next(request)
            at("wrap_model_call:after")
            return reply

        async def wrap_tool_call(self, request: ToolCallRequest, next: Any) -> ToolResult:
            at("wrap_tool_call:before")
            result: ToolResult = await next(request)
            at("wrap_tool_call:after")
            return result

    return Raising()


def _check_history(messages: list[Message], given_input: str) -> None:
    """Well formed, the prior history first and untouched, the run's input after it."""
    validate(messages)
    assert messages[: len(PRIOR)] == PRIOR
    assert messages[len(PRIOR)] == Message.user(given_input)


class TestExceptionsEverywhere:
    """An exception from any user code at any point keeps the history well formed and
    complete, and the agent can run again."""

    @pytest.mark.parametrize("point", POINTS)
    def test_raise_at(self, point: str) -> None:
        """Raised at ``point``: the run either finishes or raises, and the history is
        the prior one, the input and whatever was answered, well formed."""
        replies = iter([calls(("work", {"path": "a"}), ("work", {"path": "b"})), answer("fin")])

        def reply(request: CompletionRequest) -> CompletionResponse:
            response = next(replies, answer("again"))
            if response.message.text == "fin" and point.startswith("provider"):
                raise (Unprintable() if point.endswith("unprintable") else Boom("provider"))
            return response

        def work(path: str) -> str:
            """Work on a path."""
            if point == "tool":
                raise Boom(path)
            if point == "tool:unprintable":
                raise Unprintable
            return f"done {path}"

        armed = {"on": True}

        def on_event(event: object) -> None:
            if point == "on_event" and armed["on"]:
                raise Boom(point)

        options = AgentOptions(
            middleware=[_hooks(point, armed)],
            on_event=on_event,
            context=default_stack(2_000, store=MemoryStore()),
        )
        agent = create_agent(FunctionProvider(reply), [work], options)
        agent.state.messages = list(PRIOR)
        try:
            agent.run_sync("go")
        except NeuronContextError:
            pass
        except Boom:
            pass
        _check_history(agent.state.messages, "go")
        for message in agent.state.messages:
            for result in message.tool_results:
                assert isinstance(result.text if hasattr(result, "text") else "", str)
        # not left "running": another run goes through (a fresh provider)
        armed["on"] = False
        agent.provider = FunctionProvider(lambda request: "second")
        assert agent.run_sync("again").text == "second"
        validate(agent.state.messages)

    def test_an_unprintable_provider_error_is_chained(self) -> None:
        """A provider's exception whose __str__ raises reaches the caller as our
        ProviderError chained to it, not the RuntimeError of its __str__."""

        def reply(request: CompletionRequest) -> CompletionResponse:
            raise Unprintable

        agent = create_agent(FunctionProvider(reply))
        with pytest.raises(NeuronContextError) as caught:
            agent.run_sync("hi")
        assert isinstance(caught.value.__cause__, Unprintable)


class _Slow(ContextStrategy):
    """A strategy whose first compaction never ends (a summarizer that hangs)."""

    def __init__(self) -> None:
        self.hung = False

    def should_compact(self, messages: Any, token_count: int) -> bool:
        return True

    async def compact(self, messages: Any) -> list[Message]:
        if not self.hung:
            self.hung = True
            await anyio.sleep(60)
        return list(messages)

    def token_estimate(self, messages: Any) -> int:
        return 1


class TestCancellation:
    """A run cancelled mid-tool, mid-model-call or mid-compaction."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("where", ["tool", "model", "compaction"])
    async def test_cancelled(self, where: str) -> None:
        """The history is the prior one, the input, and every call closed."""
        turn = {"n": 0}

        async def reply(request: CompletionRequest) -> CompletionResponse:
            turn["n"] += 1
            if turn["n"] == 1:
                return calls(("work", {"path": "a"}), ("work", {"path": "b"}))
            if where == "model":
                await anyio.sleep(60)
            return answer("fin")

        async def work(path: str) -> str:
            """Work on a path."""
            if where == "tool":
                await anyio.sleep(60)
            return "ok"

        options = AgentOptions(context=_Slow() if where == "compaction" else None)
        agent = create_agent(FunctionProvider(reply), [work], options)
        agent.state.messages = list(PRIOR)
        with anyio.move_on_after(0.2):
            await agent.run("go")
        _check_history(agent.state.messages, "go")
        assert agent.state.messages[-1].role is not Role.USER or where == "compaction"
        agent.provider = FunctionProvider(lambda request: "back")
        assert (await agent.run("again")).text == "back"


class _BrokenTrigger(ContextStrategy):
    """A user's strategy whose trigger raises."""

    def should_compact(self, messages: Any, token_count: int) -> bool:
        raise Boom(type(self).__name__)

    async def compact(self, messages: Any) -> list[Message]:
        return list(messages)

    def token_estimate(self, messages: Any) -> int:
        return 1


def _raising_clock() -> float:
    raise Boom(_raising_clock.__name__)


class TestTriggerFailures:
    """A trigger that raises is a failed compaction: under context_errors="continue"
    the run goes on with the history kept, and a CompactionFailed event says why."""

    @pytest.mark.parametrize(
        "strategy",
        [
            _BrokenTrigger(),
            default_stack(500, schedule=CacheSchedule(clock=_raising_clock)),
            default_stack(500, schedule=CacheSchedule(clock=lambda: "noon")),  # type: ignore[arg-type,return-value]
        ],
        ids=["user-trigger", "raising-clock", "str-clock"],
    )
    def test_continue(self, strategy: ContextStrategy) -> None:
        """The model is called and answers; the failure is an event."""
        agent = create_agent(
            FunctionProvider(lambda request: "answered"), options=AgentOptions(context=strategy)
        )
        agent.state.messages = [Message.user("t" * 4_000), Message.assistant("a" * 4_000)]
        result = agent.run_sync("go")
        assert result.text == "answered"
        assert any(isinstance(e, CompactionFailed) for e in result.events)

    def test_raise(self) -> None:
        """With context_errors="raise" the failure is a NeuronContextError."""
        agent = create_agent(
            FunctionProvider(lambda request: "answered"),
            options=AgentOptions(context=_BrokenTrigger(), context_errors="raise"),
        )
        with pytest.raises(NeuronContextError):
            agent.run_sync("go")
        assert agent.state.messages == [Message.user("go")]


def _refusing(tokens: str, limit: str, at: int = 1) -> tuple[FunctionProvider, list[list[Message]]]:
    """A provider whose ``at``-th call refuses with Anthropic's text and these numbers,
    and that answers every other call; and the requests it got."""
    seen: list[list[Message]] = []

    def reply(request: CompletionRequest) -> CompletionResponse:
        seen.append(list(request.messages))
        if len(seen) == at:
            msg = f"prompt is too long: {tokens} tokens > {limit} maximum"
            raise Boom(msg)
        if len(seen) == 1:
            return calls(("work", {"path": "a"}))
        return answer("done")

    return FunctionProvider(reply), seen


def _long_history() -> list[Message]:
    history = [Message.user("the task: fix the bug")]
    for i in range(12):
        history.append(Message.assistant(f"step {i}: " + "thinking " * 200))
        history.append(Message.user(f"continue {i}"))
    return history


def _work(path: str) -> str:
    """Read a path."""
    return f"contents of {path}\n" * 300


class TestRefusals:
    """A refusal is evidence about the window, not an order."""

    @given(limit=st.integers(0, 40), at=st.sampled_from([1, 2]))
    def test_a_tiny_window_leaves_the_history(self, limit: int, at: int) -> None:
        """A refusal claiming a window nothing fits: ContextOverflowError, the history
        the prior one plus the input (and the answered step), nothing replaced."""
        provider, seen = _refusing("100000", str(limit), at)
        agent = create_agent(provider, [_work], AgentOptions(system_prompt="be brief"))
        history = _long_history()
        agent.state.messages = list(history)
        with pytest.raises(ContextOverflowError):
            agent.run_sync("the new request")
        assert agent.state.messages[: len(history) + 1] == [
            *history,
            Message.user("the new request"),
        ]
        validate(agent.state.messages)
        assert len(seen) == at

    @given(tokens=refusal_numbers(), limit=refusal_numbers())
    def test_any_numbers(self, tokens: str, limit: str) -> None:
        """Any numbers (thousands of digits, zeros, separators): either the retry is
        answered and every request sent holds the newest request, or a
        ContextOverflowError leaves the history as it was."""
        provider, seen = _refusing(tokens, limit)
        agent = create_agent(provider, [_work])
        history = _long_history()
        agent.state.messages = list(history)
        try:
            agent.run_sync("the new request")
        except ContextOverflowError:
            assert agent.state.messages == [*history, Message.user("the new request")]
        for request in seen:
            assert Message.user("the new request") in request
        validate(agent.state.messages)

    def test_the_newest_request_alone_does_not_fit(self) -> None:
        """Refused at 3838 > 200 with a newest request bigger than 200: nothing is sent
        again, ContextOverflowError."""
        provider, seen = _refusing("3838", "200")
        agent = create_agent(provider, [_work])
        big = "explain this log:\n" + "error line\n" * 400
        agent.state.messages = list(PRIOR)
        with pytest.raises(ContextOverflowError):
            agent.run_sync(big)
        assert agent.state.messages == [*PRIOR, Message.user(big)]
        assert len(seen) == 1

    def test_a_megabyte_refusal_is_read(self) -> None:
        """A refusal of 200 kB text full of near-matches is read without a number it does
        not state (its time, four times the text against the text, is in
        benches/test_bench_linear.py: no regex blow-up)."""
        texts = [
            "prompt is too long: " + "1," * 100_000,
            "maximum context length is " + "(1 in messages " * 14_000,
            "input token count (" + "9" * 200_000,
            "exceeds the maximum number of tokens allowed " + "(" * 200_000,
            "requested " * 20_000 + "context_length_exceeded",
        ]
        for text in texts:
            overflow = context_overflow(Boom(text))
            assert overflow is None or (overflow.tokens, overflow.limit) == (None, None)


class TestConcurrentRuns:
    """Concurrent runs: one agent refuses a second run; agents sharing one strategy and
    store compact their own conversations."""

    @pytest.mark.anyio
    async def test_one_agent_twice(self) -> None:
        """A second concurrent run of one agent is an AgentError; the first finishes."""

        async def reply(request: CompletionRequest) -> str:
            await anyio.sleep(0.05)
            return "ok"

        agent = create_agent(FunctionProvider(reply))
        errors: list[BaseException] = []

        async def run(text: str) -> None:
            try:
                await agent.run(text)
            except AgentError as exc:
                errors.append(exc)

        async with anyio.create_task_group() as group:
            group.start_soon(run, "first")
            await anyio.sleep(0.01)
            group.start_soon(run, "second")
        assert len(errors) == 1
        validate(agent.state.messages)
        assert agent.state.messages[0] == Message.user("first")

    @pytest.mark.anyio
    async def test_agents_sharing_a_stack_and_store(self) -> None:
        """Six agents, one default_stack and one store, compacting at once: each history
        well formed and its own; each recall reads its own conversation's entries."""
        store = MemoryStore()
        stack = default_stack(1_200, store=store)

        def reply(request: CompletionRequest) -> CompletionResponse:
            if len(request.messages) < 8:
                return calls(("work", {"path": request.messages[0].text}))
            return answer("done")

        agents = [
            create_agent(FunctionProvider(reply), [_work], AgentOptions(context=stack))
            for _ in range(6)
        ]

        async def run(i: int) -> None:
            await agents[i].run(f"agent-{i}")

        async with anyio.create_task_group() as group:
            for i in range(6):
                group.start_soon(run, i)
        for i, agent in enumerate(agents):
            validate(agent.state.messages)
            assert agent.state.messages[0].text == f"agent-{i}"
            texts = [m.text for m in agent.state.messages]
            assert all(f"agent-{j}" not in t for j in range(6) if j != i for t in texts)


_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


class TestProviderCredentials:
    """Both SDK providers check credentials the same way, at construction: a
    ConfigurationError naming the environment variable."""

    @pytest.mark.parametrize(
        ("name", "variable"),
        [("OpenAIProvider", "OPENAI_API_KEY"), ("AnthropicProvider", "ANTHROPIC_API_KEY")],
    )
    @pytest.mark.parametrize("given_key", [None, "", "env-empty"])
    def test_no_key(
        self, name: str, variable: str, given_key: str | None, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """No key, an empty key, an empty environment variable: refused at once."""
        providers = pytest.importorskip("neuron_context.providers")
        pytest.importorskip("openai")
        pytest.importorskip("anthropic")
        for key in _KEYS:
            monkeypatch.delenv(key, raising=False)
        kwargs: dict[str, str] = {}
        if given_key == "env-empty":
            monkeypatch.setenv(variable, "")
        elif given_key is not None:
            kwargs["api_key"] = given_key
        with pytest.raises(NeuronContextError, match=variable):
            getattr(providers, name)("some-model", **kwargs)


def _reply(*uses: ToolUse, stop: str = "tool_use") -> CompletionResponse:
    return CompletionResponse(Message.assistant("", tool_uses=list(uses)), stop_reason=stop)


def _echo(x: str) -> str:
    """Echo x."""
    return x


class TestOddReplies:
    """Whatever a provider replies, the history stays well formed and complete."""

    @pytest.mark.parametrize(
        "replies",
        [
            [
                _reply(
                    ToolUse(id="a", name="_echo", input={"x": "1"}),
                    ToolUse(id="a", name="_echo", input={"x": "2"}),
                )
            ],
            [_reply(ToolUse(id="a", name="missing", input={}))],
            [_reply(ToolUse(id="a", name="_echo", input={"y": 1}))],
            [_reply(ToolUse(id="\udcff", name="_echo", input={"x": "\udcff"}))],
            [_reply(*[ToolUse(id=f"c{i}", name="_echo", input={"x": str(i)}) for i in range(300)])],
            [
                _reply(ToolUse(id="a", name="_echo", input={"x": "1"})),
                _reply(ToolUse(id="a", name="_echo", input={"x": "2"})),
            ],
            [CompletionResponse(Message.assistant("hm"), stop_reason="tool_use")],
            [_reply(ToolUse(id="a", name="_echo", input={"x": "1"}), stop="max_tokens")],
        ],
        ids=[
            "duplicate-ids",
            "unknown-tool",
            "bad-arguments",
            "surrogates",
            "300-calls",
            "reused-id",
            "no-calls",
            "cut-off",
        ],
    )
    def test_reply(self, replies: list[CompletionResponse]) -> None:
        """Duplicate or reused ids, unknown tools, bad arguments, hundreds of calls: the
        run finishes, every call answered."""
        queue = iter(replies)
        agent = create_agent(FunctionProvider(lambda request: next(queue, answer("end"))), [_echo])
        agent.state.messages = list(PRIOR)
        agent.run_sync("go")
        _check_history(agent.state.messages, "go")

    @pytest.mark.parametrize("value", [None, 5, [], {"role": "assistant"}])
    def test_not_a_reply(self, value: object) -> None:
        """A provider returning something that is not a reply: a library error, the
        history the prior one and the input."""
        agent = create_agent(FunctionProvider(lambda request: value))  # type: ignore[arg-type,return-value]
        agent.state.messages = list(PRIOR)
        with pytest.raises(NeuronContextError):
            agent.run_sync("go")
        assert agent.state.messages == [*PRIOR, Message.user("go")]
