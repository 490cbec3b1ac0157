"""Where values cross into the agent loop: each is checked there, the history untouched."""

from __future__ import annotations

import json
import logging

import anyio
import pytest
from agent_support import answer, calls, scripted
from hypothesis import given
from hypothesis import strategies as st
from strategies import HOOKS, hostile_hook_values, hostile_replies

from neuron_context import (
    AgentMiddleware,
    AgentOptions,
    AgentState,
    CompletionRequest,
    CompletionResponse,
    ConfigurationError,
    HumanInTheLoopMiddleware,
    Message,
    ModelFallbackMiddleware,
    ModelRequest,
    Provider,
    ToolResult,
    ToolRetryMiddleware,
    ToolUse,
    create_agent,
    validate,
)
from neuron_context.errors import AgentError, MiddlewareError, ProviderError
from neuron_context.events import AgentEvent
from neuron_context.middleware import ModelResponse, ToolCallRequest
from neuron_context.testing import FunctionProvider

pytestmark = pytest.mark.anyio


def echo(x: str) -> str:
    """Echo x."""
    return x


class Returns(Provider):
    """A provider of the user's whose ``complete`` returns ``value`` as it is."""

    def __init__(self, value: object) -> None:
        self.value = value

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        return self.value  # type: ignore[return-value]


def hostile(hook: str, value: object) -> AgentMiddleware:
    """A middleware whose ``hook`` returns ``value`` (the wrappers without calling next)."""

    class Hostile(AgentMiddleware):
        pass

    async def returns(self: AgentMiddleware, *args: object) -> object:
        return value

    setattr(Hostile, hook, returns)
    return Hostile()


def expected_history(hook: str) -> list[str]:
    """The roles the history holds when ``hook`` is refused on the first run."""
    if hook == "wrap_tool_call":
        return ["user", "assistant", "tool"]  # the call closed as interrupted
    if hook == "after_agent":
        return ["user", "assistant", "tool", "assistant"]  # the run's, as it was
    return ["user"]  # the input, kept


def serializable(state: AgentState) -> None:
    """The state writes as JSON."""
    json.dumps(state.to_dict())


class TestProviderReplies:
    """What a provider's complete returns."""

    @pytest.mark.parametrize("value", [None, "text", 5, Message.assistant("a bare message")])
    async def test_not_a_completion_response(self, value: object) -> None:
        """Anything but a CompletionResponse is a ProviderError naming the provider; the
        history keeps the input and nothing else."""
        agent = create_agent(Returns(value))
        with pytest.raises(
            ProviderError, match=r"^Returns\.complete must return a CompletionResponse"
        ):
            await agent.run("hi")
        assert [m.text for m in agent.state.messages] == ["hi"]

    async def test_a_fallback_answers_instead(self) -> None:
        """The refusal is a provider failure, so a fallback provider answers."""
        fallback = ModelFallbackMiddleware([FunctionProvider(lambda request: "backup")])
        agent = create_agent(Returns(None), options=AgentOptions(middleware=[fallback]))
        assert (await agent.run("hi")).text == "backup"

    async def test_duplicate_ids_are_renamed(self, caplog: pytest.LogCaptureFixture) -> None:
        """A reply calling two tools with one id gets distinct ids: both calls run, the
        history stays well formed, and the next run works."""
        same = [
            ToolUse(id="call_1", name="echo", input={"x": "a"}),
            ToolUse(id="call_1", name="echo", input={"x": "b"}),
            ToolUse(id="call_1_2", name="echo", input={"x": "c"}),
        ]
        reply = CompletionResponse(Message.assistant(tool_uses=same), stop_reason="tool_use")
        agent = create_agent(scripted([reply, answer("done"), answer("again")]), [echo])
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            result = await agent.run("go")
        assert [u.id for u in result.messages[1].tool_uses] == ["call_1", "call_1_3", "call_1_2"]
        assert [(r.tool_use_id, r.text) for r in result.messages[2].tool_results] == [
            ("call_1", "a"),
            ("call_1_3", "b"),
            ("call_1_2", "c"),
        ]
        assert "same id" in caplog.text
        validate(result.messages)
        assert (await agent.run("more")).text == "again"

    @given(value=hostile_replies())
    def test_any_hostile_reply(self, value: object) -> None:
        """Property: whatever a provider returns instead of a response, the run raises a
        ProviderError and the history holds the input alone, serializable."""
        agent = create_agent(Returns(value))
        with pytest.raises(ProviderError):
            agent.run_sync("hi")
        assert [m.text for m in agent.state.messages] == ["hi"]
        serializable(agent.state)


class TestHookReturns:
    """What each middleware hook returns."""

    @pytest.mark.parametrize(
        ("hook", "value"),
        [
            ("before_model", "a str"),
            ("before_model", [Message.user("a list")]),
            ("wrap_model_call", None),
            ("wrap_model_call", "a str"),
            ("after_model", Message.assistant("a bare message")),
            ("wrap_tool_call", None),
            ("wrap_tool_call", "a str"),
            ("wrap_tool_call", 5),
            ("before_agent", "a str"),
            ("before_agent", [Message.user("ok"), 5]),
            ("after_agent", [5]),
        ],
    )
    async def test_refused_naming_the_hook(self, hook: str, value: object) -> None:
        """A value the loop cannot use is a MiddlewareError naming the middleware and
        the hook; nothing of it reaches the history."""
        agent = create_agent(
            scripted([calls(("echo", {"x": "a"})), answer("done")]),
            [echo],
            AgentOptions(middleware=[hostile(hook, value)]),
        )
        with pytest.raises(MiddlewareError, match=rf"^Hostile\.{hook}") as caught:
            await agent.run("go")
        assert (caught.value.middleware, caught.value.hook) == ("Hostile", hook)
        assert isinstance(caught.value, AgentError)
        assert isinstance(caught.value, ConfigurationError)
        assert [m.role for m in agent.state.messages] == expected_history(hook)
        validate(agent.state.messages)

    async def test_a_response_with_a_str_message(self) -> None:
        """after_model building ModelResponse("not a message") fails where it is built,
        naming the field; the history keeps the input."""

        class Builds(AgentMiddleware):
            async def after_model(
                self, request: ModelRequest, response: ModelResponse
            ) -> ModelResponse:
                return ModelResponse("not a message")  # type: ignore[arg-type]

        agent = create_agent(
            scripted([answer("done")]), options=AgentOptions(middleware=[Builds()])
        )
        with pytest.raises(
            ConfigurationError, match=r"^ModelResponse\.message must be an assistant"
        ):
            await agent.run("go")
        assert [m.text for m in agent.state.messages] == ["go"]

    async def test_a_response_with_an_orphan_result(self) -> None:
        """A tool result passed off as the reply is refused: no orphan is recorded."""

        class Orphan(AgentMiddleware):
            async def after_model(
                self, request: ModelRequest, response: ModelResponse
            ) -> ModelResponse:
                response.message = Message.tool_result("nobody", "orphan")
                return response

        agent = create_agent(
            scripted([answer("done")]), options=AgentOptions(middleware=[Orphan()])
        )
        with pytest.raises(ConfigurationError, match="got a tool message"):
            await agent.run("go")
        assert [m.role for m in agent.state.messages] == ["user"]

    async def test_a_wrapper_calling_next_with_junk(self) -> None:
        """A wrapper that calls next with something other than a request is named."""

        class Junk(AgentMiddleware):
            async def wrap_tool_call(self, request: ToolCallRequest, next: object) -> ToolResult:
                return await next("not a request")  # type: ignore[operator, no-any-return]

        agent = create_agent(
            scripted([calls(("echo", {"x": "a"})), answer("done")]),
            [echo],
            AgentOptions(middleware=[Junk()]),
        )
        with pytest.raises(MiddlewareError, match=r"Junk\.wrap_tool_call called next with a str"):
            await agent.run("go")
        validate(agent.state.messages)

    async def test_a_hook_that_is_not_async(self) -> None:
        """A hook written without async is named, not a raw TypeError from await."""

        class Sync(AgentMiddleware):
            def before_model(self, request: ModelRequest) -> None:  # type: ignore[override]
                return None

        agent = create_agent(scripted([answer("done")]), options=AgentOptions(middleware=[Sync()]))
        with pytest.raises(MiddlewareError, match=r"Sync\.before_model must be an async method"):
            await agent.run("go")

    @pytest.mark.parametrize("hook", ["before_agent", "before_model", "after_agent"])
    async def test_junk_left_in_place(self, hook: str) -> None:
        """A hook that puts something other than a message into the list it was given
        (and returns None) is refused too."""

        class InPlace(AgentMiddleware):
            pass

        async def edits(self: AgentMiddleware, value: object) -> None:
            target = value.messages if isinstance(value, ModelRequest) else value
            target.append("junk")  # type: ignore[attr-defined]

        setattr(InPlace, hook, edits)
        agent = create_agent(
            scripted([calls(("echo", {"x": "a"})), answer("done")]),
            [echo],
            AgentOptions(middleware=[InPlace()]),
        )
        with pytest.raises(MiddlewareError, match=r"messages\[\d+\] must be a Message, got str"):
            await agent.run("go")
        assert all(isinstance(m, Message) for m in agent.state.messages)
        validate(agent.state.messages)

    async def test_request_fields_are_checked_when_set(self) -> None:
        """ModelRequest's fields refuse a wrong value when a hook sets it."""
        request = ModelRequest([Message.user("hi")])
        with pytest.raises(ConfigurationError, match=r"ModelRequest\.system_prompt"):
            request.system_prompt = 5  # type: ignore[assignment]
        with pytest.raises(ConfigurationError, match=r"ModelRequest\.messages\[0\]"):
            request.messages = ["hi"]  # type: ignore[list-item]
        with pytest.raises(ConfigurationError, match=r"ModelRequest\.tools"):
            request.tools = "echo"  # type: ignore[assignment]
        with pytest.raises(ConfigurationError, match=r"ModelResponse\.stop_reason"):
            ModelResponse(Message.assistant("x"), stop_reason="bored")

    @given(hook=st.sampled_from(HOOKS), data=st.data())
    def test_any_hostile_value(self, hook: str, data: st.DataObject) -> None:
        """Property: whatever a hook returns that the loop cannot use, the run raises a
        MiddlewareError naming it, and the history is what it was at that point: well
        formed, serializable, holding nothing the hook returned."""
        value = data.draw(hostile_hook_values(hook), label="value")
        agent = create_agent(
            scripted([calls(("echo", {"x": "a"})), answer("done")]),
            [echo],
            AgentOptions(middleware=[hostile(hook, value)]),
        )
        with pytest.raises(MiddlewareError) as caught:
            agent.run_sync("go")
        assert caught.value.hook == hook
        assert [m.role for m in agent.state.messages] == expected_history(hook)
        validate(agent.state.messages)
        serializable(agent.state)


class TestConstruction:
    """Constructors check what they store; create_agent checks its arguments."""

    def test_options(self) -> None:
        """on_event must be callable and temperature a number >= 0."""
        with pytest.raises(ConfigurationError, match=r"AgentOptions\.on_event must be callable"):
            AgentOptions(on_event=5)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match=r"AgentOptions\.temperature must be a number"):
            AgentOptions(temperature="hot")  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match=r"AgentOptions\.temperature must be >= 0"):
            AgentOptions(temperature=-1.0)

    def test_fallback_retry_on(self) -> None:
        """ModelFallbackMiddleware.retry_on must be callable."""
        provider = FunctionProvider(lambda request: "x")
        with pytest.raises(ConfigurationError, match=r"ModelFallbackMiddleware\.retry_on"):
            ModelFallbackMiddleware([provider], retry_on=5)  # type: ignore[arg-type]

    @pytest.mark.parametrize("backoff", [10, 10.0])
    def test_retry_delay_saturates(self, backoff: float) -> None:
        """A delay grows to max_delay and stays there, however late the attempt."""
        retry = ToolRetryMiddleware(5000, initial_delay=1, backoff=backoff, jitter=0)
        assert retry.delay(1500) == 60.0
        assert retry.delay(10**9) == 60.0
        assert ToolRetryMiddleware(3, initial_delay=0, backoff=10.0).delay(5000) == 0.0
        with pytest.raises(ConfigurationError, match="attempt"):
            retry.delay(0)

    def test_tools(self) -> None:
        """create_agent's tools are a collection of tools or functions, named by index."""
        provider = FunctionProvider(lambda request: "x")
        with pytest.raises(ConfigurationError, match="create_agent: tools must be a collection"):
            create_agent(provider, 5)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match=r"create_agent: tools\[1\] must be a Tool"):
            create_agent(provider, [echo, 5])  # type: ignore[list-item]

        class Brings(AgentMiddleware):
            tools = 5  # type: ignore[assignment]

        with pytest.raises(ConfigurationError, match=r"Brings\.tools must be a collection"):
            create_agent(provider, options=AgentOptions(middleware=[Brings()]))


class TestState:
    """AgentState holds JSON only."""

    @staticmethod
    def saved(values: object) -> dict[str, object]:
        data = AgentState().to_dict()
        data["values"] = values  # type: ignore[assignment]
        return data  # type: ignore[return-value]

    def test_deep_values(self) -> None:
        """Values nested 500 deep are a ConfigurationError, not a RecursionError."""
        deep: list[object] = []
        for _ in range(500):
            deep = [deep]
        with pytest.raises(ConfigurationError, match="nested deeper than 100 levels"):
            AgentState.from_dict(self.saved({"k": deep}))  # type: ignore[arg-type]

    def test_a_set_is_refused(self) -> None:
        """A set is refused when read back and when written: the state always serializes."""
        with pytest.raises(ConfigurationError, match=r"values\['k'\] is a set"):
            AgentState.from_dict(self.saved({"k": {1, 2}}))  # type: ignore[arg-type]
        state = AgentState()
        state.values["k"] = {1, 2}  # type: ignore[assignment]
        with pytest.raises(ConfigurationError, match=r"AgentState\.values\['k'\] is a set"):
            state.to_dict()

    def test_round_trip(self) -> None:
        """JSON values come back equal, as copies."""
        state = AgentState(values={"todos": [{"task": "x", "done": False}]})
        again = AgentState.from_dict(state.to_dict())
        assert again.values == state.values
        assert again.values["todos"] is not state.values["todos"]


class TestFailedRuns:
    """A run that fails keeps its input; an observer cannot break it."""

    async def test_before_agent_raising_keeps_the_input(self) -> None:
        """A before_agent hook that raises leaves the input in the history, as every
        other failure point does; run([]) continues from it."""

        class Raises(AgentMiddleware):
            calls = 0

            async def before_agent(self, messages: list[Message]) -> None:
                self.calls += 1
                if self.calls == 1:
                    msg = "not yet"
                    raise RuntimeError(msg)

        agent = create_agent(
            scripted([answer("done")]), options=AgentOptions(middleware=[Raises()])
        )
        with pytest.raises(RuntimeError, match="not yet"):
            await agent.run("the task")
        assert [m.text for m in agent.state.messages] == ["the task"]
        result = await agent.run([])
        assert [m.text for m in result.messages] == ["the task", "done"]

    async def test_before_agent_cancelled_keeps_the_input(self) -> None:
        """Cancelled in before_agent, the run leaves the input in the history."""

        class Waits(AgentMiddleware):
            async def before_agent(self, messages: list[Message]) -> None:
                await anyio.sleep_forever()

        agent = create_agent(scripted([answer("done")]), options=AgentOptions(middleware=[Waits()]))
        with anyio.move_on_after(0.05):
            await agent.run("the task")
        assert [m.text for m in agent.state.messages] == ["the task"]

    async def test_a_raising_on_event_is_logged(self, caplog: pytest.LogCaptureFixture) -> None:
        """on_event is an observer: what it raises is logged, the run goes on, and the
        reply that triggered it is recorded."""

        def broken(event: AgentEvent) -> None:
            msg = "observer bug"
            raise RuntimeError(msg)

        agent = create_agent(
            scripted([calls(("echo", {"x": "a"})), answer("done")]),
            [echo],
            AgentOptions(on_event=broken),
        )
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            result = await agent.run("go")
        assert result.text == "done"
        assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]
        assert "on_event raised" in caplog.text
        assert "observer bug" in caplog.text
        assert result.events  # still recorded


class TestPendingCalls:
    """Calls awaiting their results in a history the loop is given."""

    @staticmethod
    def pending() -> list[Message]:
        uses = [
            ToolUse(id="p1", name="echo", input={"x": "a"}),
            ToolUse(id="p2", name="echo", input={"x": "b"}),
        ]
        return [
            Message.user("go"),
            Message.assistant(tool_uses=uses),
            Message.tool_result("p1", "a"),
        ]

    async def test_answered_by_the_input(self) -> None:
        """A run whose input answers the pending call resumes from it."""
        agent = create_agent(scripted([answer("done")]))
        agent.state.messages = self.pending()
        result = await agent.run([Message.tool_result("p2", "b")])
        assert [r.text for m in result.messages if m.is_tool for r in m.tool_results] == ["a", "b"]
        validate(result.messages)

    async def test_closed_when_the_input_moves_on(self, caplog: pytest.LogCaptureFixture) -> None:
        """A new request after a pending call closes it as interrupted instead of refusing
        the run: the agent is never blocked by a call that will not be answered."""
        provider = scripted([answer("done")])
        agent = create_agent(provider)
        agent.state.messages = self.pending()
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            result = await agent.run("next request")
        closing = result.messages[3].tool_results
        assert [(r.tool_use_id, r.is_error) for r in closing] == [("p2", True)]
        assert result.text == "done"
        assert "closed as interrupted" in caplog.text
        validate(provider.requests[0].messages)

    async def test_never_sent_unanswered(self) -> None:
        """A run that would start on a pending call closes it first: no request holds a
        call without its result."""
        provider = scripted([answer("done")])
        agent = create_agent(provider)
        result = await agent.run(self.pending())
        sent = provider.requests[0].messages
        assert sent[-1].is_tool
        assert {r.tool_use_id for m in sent if m.is_tool for r in m.tool_results} == {"p1", "p2"}
        validate(result.messages)

    async def test_an_approval_that_never_comes(self) -> None:
        """HumanInTheLoopMiddleware(timeout=...) rejects a call still undecided after the
        limit: the model reads why, and the run goes on instead of hanging."""

        async def never(use: ToolUse) -> bool:
            await anyio.sleep_forever()
            return True  # pragma: no cover

        approval = HumanInTheLoopMiddleware(never, timeout=0.05)
        agent = create_agent(
            scripted([calls(("echo", {"x": "a"})), answer("done")]),
            [echo],
            AgentOptions(middleware=[approval]),
        )
        with anyio.fail_after(5):
            result = await agent.run("go")
        (rejected,) = result.messages[2].tool_results
        assert rejected.is_error
        assert rejected.text == "The user rejected this tool call: no decision within 0.05 seconds"
        assert result.text == "done"

    def test_the_timeout_is_checked(self) -> None:
        """The timeout is a number > 0 or None."""
        with pytest.raises(ConfigurationError, match=r"HumanInTheLoopMiddleware\.timeout"):
            HumanInTheLoopMiddleware(lambda use: True, timeout=0)
