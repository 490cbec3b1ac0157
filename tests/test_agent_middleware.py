"""The built-in middlewares, each in a real run on FunctionProvider."""

from __future__ import annotations

import json
import random

import anyio
import pytest
from agent_support import answer, calls, first_turn_role, scripted

from neuron_context import (
    AgentOptions,
    CompletionRequest,
    CompletionResponse,
    ConfigurationError,
    ContextEditingMiddleware,
    ContextSection,
    ExtractiveSummarizer,
    HumanInTheLoopMiddleware,
    InjectionTrigger,
    Message,
    ModelCallLimitMiddleware,
    ModelFallbackMiddleware,
    NeuronContextError,
    PersistentContext,
    SummarizationMiddleware,
    SystemInjector,
    TodoListMiddleware,
    Tool,
    ToolCallLimitMiddleware,
    ToolRetryMiddleware,
    ToolUse,
    create_agent,
    validate,
)
from neuron_context.errors import (
    ModelCallLimitExceededError,
    ProviderError,
    ToolCallLimitExceededError,
)
from neuron_context.events import (
    AgentEvent,
    CompactionCompleted,
    CompactionFailed,
    FallbackUsed,
    LimitReached,
    ModelCalled,
    RequestEdited,
    ToolRetried,
)
from neuron_context.middleware import (
    Approval,
    SystemInjectionMiddleware,
)
from neuron_context.testing import FunctionProvider

pytestmark = pytest.mark.anyio


def echo(x: str) -> str:
    """Echo x."""
    return x


def endless(n: int = 20) -> list[CompletionResponse]:
    """Replies that keep calling echo."""
    return [calls(("echo", {"x": str(i)})) for i in range(n)]


class TestModelCallLimitMiddleware:
    """ModelCallLimitMiddleware."""

    async def test_stops_before_the_call_over_the_limit(self) -> None:
        """The third call is not made; a clear error names the limit."""
        provider = scripted(endless())
        events: list[AgentEvent] = []
        agent = create_agent(
            provider,
            [echo],
            AgentOptions(middleware=[ModelCallLimitMiddleware(2)], on_event=events.append),
        )
        with pytest.raises(ModelCallLimitExceededError, match="limit of 2 model calls") as caught:
            await agent.run("go")
        assert isinstance(caught.value, NeuronContextError)
        assert len(provider.requests) == 2
        assert (caught.value.limit, caught.value.count) == (2, 3)
        assert next(e for e in events if isinstance(e, LimitReached)).limit == "model_calls"
        validate(agent.state.messages)

    async def test_counts_per_run(self) -> None:
        """Each run has its own budget."""
        agent = create_agent(
            scripted([answer("a"), answer("b")]),
            options=AgentOptions(middleware=[ModelCallLimitMiddleware(1)]),
        )
        await agent.run("one")
        await agent.run("two")
        assert agent.state.model_calls == 2

    def test_bad_limit(self) -> None:
        """A limit below 1 is a ConfigurationError."""
        with pytest.raises(ConfigurationError, match=r"ModelCallLimitMiddleware\.n"):
            ModelCallLimitMiddleware(0)


class TestToolCallLimitMiddleware:
    """ToolCallLimitMiddleware."""

    async def test_run_limit(self) -> None:
        """The (n+1)-th call is not made; the history stays well formed."""
        ran: list[str] = []

        async def work(x: str) -> str:
            ran.append(x)
            return x

        reply = calls(("work", {"x": "1"}), ("work", {"x": "2"}), ("work", {"x": "3"}))
        agent = create_agent(
            scripted([reply]), [work], AgentOptions(middleware=[ToolCallLimitMiddleware(2)])
        )
        with pytest.raises(ToolCallLimitExceededError, match="limit of 2 tool calls") as caught:
            await agent.run("go")
        assert caught.value.tool_name is None
        assert "3" not in ran
        validate(agent.state.messages)
        assert len(agent.state.messages[-1].tool_results) == 3

    async def test_per_tool_limit(self) -> None:
        """A per-tool limit stops the run on that tool's next call."""

        def other() -> str:
            return "ok"

        replies = [calls(("echo", {"x": "a"}), ("other", {})), calls(("echo", {"x": "b"}))]
        agent = create_agent(
            scripted(replies),
            [echo, other],
            AgentOptions(middleware=[ToolCallLimitMiddleware(per_tool={"echo": 1})]),
        )
        with pytest.raises(ToolCallLimitExceededError, match="1 calls of echo") as caught:
            await agent.run("go")
        assert caught.value.tool_name == "echo"
        validate(agent.state.messages)
        assert agent.state.messages[-1].tool_results[0].is_error

    def test_bad_limits(self) -> None:
        """Limits must be positive ints."""
        with pytest.raises(ConfigurationError, match=r"ToolCallLimitMiddleware\.n"):
            ToolCallLimitMiddleware(0)
        with pytest.raises(ConfigurationError, match="per_tool"):
            ToolCallLimitMiddleware(per_tool={"echo": 0})


class Flaky:
    """A tool failing its first ``failures`` calls."""

    def __init__(self, failures: int, error: type[Exception] = TimeoutError) -> None:
        self.failures = failures
        self.error = error
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            msg = f"attempt {self.calls} failed"
            raise self.error(msg)
        return "finally"


class TestToolRetryMiddleware:
    """ToolRetryMiddleware."""

    async def test_retries_until_success(self) -> None:
        """Two failures, two retries: the model sees the success."""
        flaky = Flaky(2)
        events: list[AgentEvent] = []
        agent = create_agent(
            scripted([calls(("flaky", {})), answer("done")]),
            [Tool.from_function(flaky, name="flaky")],
            AgentOptions(
                middleware=[ToolRetryMiddleware(2, initial_delay=0.001)], on_event=events.append
            ),
        )
        result = await agent.run("go")
        assert result.messages[2].tool_results[0].text == "finally"
        retried = [e for e in events if isinstance(e, ToolRetried)]
        assert [e.attempt for e in retried] == [1, 2]
        assert flaky.calls == 3

    async def test_gives_up_after_max_retries(self) -> None:
        """After max_retries the last failure is the model's error result."""
        flaky = Flaky(5)
        agent = create_agent(
            scripted([calls(("flaky", {})), answer("done")]),
            [Tool.from_function(flaky, name="flaky")],
            AgentOptions(middleware=[ToolRetryMiddleware(1, initial_delay=0)]),
        )
        result = await agent.run("go")
        error = result.messages[2].tool_results[0]
        assert error.is_error
        assert error.text == "TimeoutError: attempt 2 failed"
        assert flaky.calls == 2

    async def test_predicate_and_names(self) -> None:
        """retry_on and tool_names decide what is retried."""
        flaky = Flaky(1, ValueError)
        agent = create_agent(
            scripted([calls(("flaky", {})), answer("done")]),
            [Tool.from_function(flaky, name="flaky")],
            AgentOptions(
                middleware=[
                    ToolRetryMiddleware(
                        3, initial_delay=0, retry_on=lambda e: isinstance(e, TimeoutError)
                    )
                ]
            ),
        )
        await agent.run("go")
        assert flaky.calls == 1
        other = Flaky(1)
        agent = create_agent(
            scripted([calls(("flaky", {})), answer("done")]),
            [Tool.from_function(other, name="flaky")],
            AgentOptions(middleware=[ToolRetryMiddleware(3, tool_names=["echo"])]),
        )
        await agent.run("go")
        assert other.calls == 1

    def test_backoff_with_jitter(self) -> None:
        """Delays grow by backoff, are capped, and spread by jitter."""
        retry = ToolRetryMiddleware(
            5, initial_delay=1.0, backoff=2.0, max_delay=5.0, jitter=0.1, rng=random.Random(1)
        )
        delays = [retry.delay(attempt) for attempt in (1, 2, 3, 4)]
        assert 0.9 <= delays[0] <= 1.1
        assert 1.8 <= delays[1] <= 2.2
        assert 3.6 <= delays[2] <= 4.4
        assert delays[3] <= 5.0
        exact = ToolRetryMiddleware(3, initial_delay=0.5, jitter=0)
        assert [exact.delay(a) for a in (1, 2, 3)] == [0.5, 1.0, 2.0]

    def test_bad_options(self) -> None:
        """Options are validated."""
        with pytest.raises(ConfigurationError, match="max_retries"):
            ToolRetryMiddleware(-1)
        with pytest.raises(ConfigurationError, match="jitter"):
            ToolRetryMiddleware(1, jitter=2)

    @pytest.mark.parametrize("names", ["echo", [1], 3])
    def test_bad_tool_names(self, names: object) -> None:
        """tool_names is a collection of str: a lone str, a non-str or a non-collection
        is a ConfigurationError naming the field."""
        with pytest.raises(ConfigurationError, match=r"ToolRetryMiddleware\.tool_names"):
            ToolRetryMiddleware(1, tool_names=names)  # type: ignore[arg-type]


class TestModelFallbackMiddleware:
    """ModelFallbackMiddleware."""

    async def test_uses_the_next_provider(self) -> None:
        """A failing primary hands over to the fallback; the switch is reported."""

        def broken(request: CompletionRequest) -> str:
            msg = "overloaded"
            raise ProviderError(msg, retryable=True)

        backup = FunctionProvider(lambda request: "from backup")
        events: list[AgentEvent] = []
        agent = create_agent(
            FunctionProvider(broken),
            options=AgentOptions(
                middleware=[ModelFallbackMiddleware([backup])], on_event=events.append
            ),
        )
        result = await agent.run("go")
        assert result.text == "from backup"
        used = [e for e in events if isinstance(e, FallbackUsed)]
        assert used[0].error == "ProviderError: overloaded"
        assert [e.provider for e in events if isinstance(e, ModelCalled)] == ["FunctionProvider"]

    async def test_all_fail(self) -> None:
        """When every provider fails, the last error propagates."""

        def fails(request: CompletionRequest) -> str:
            msg = f"down: {request.model}"
            raise ProviderError(msg)

        agent = create_agent(
            FunctionProvider(fails),
            options=AgentOptions(
                model="main",
                middleware=[
                    ModelFallbackMiddleware(
                        [FunctionProvider(fails), FunctionProvider(fails)], models=["b", "c"]
                    )
                ],
            ),
        )
        with pytest.raises(ProviderError, match="down: c"):
            await agent.run("go")
        assert [m.text for m in agent.state.messages] == ["go"]

    async def test_predicate(self) -> None:
        """A failure retry_on refuses propagates at once."""
        backup = FunctionProvider(lambda request: "backup")

        def fails(request: CompletionRequest) -> str:
            msg = "bad request"
            raise ProviderError(msg, retryable=False)

        agent = create_agent(
            FunctionProvider(fails),
            options=AgentOptions(
                middleware=[
                    ModelFallbackMiddleware(
                        [backup], retry_on=lambda e: isinstance(e, ProviderError) and e.retryable
                    )
                ]
            ),
        )
        with pytest.raises(ProviderError):
            await agent.run("go")
        assert backup.requests == []

    def test_bad_options(self) -> None:
        """Providers must be providers, one model each."""
        with pytest.raises(ConfigurationError, match="Provider"):
            ModelFallbackMiddleware(["gpt"])  # type: ignore[list-item]
        with pytest.raises(ConfigurationError, match="empty"):
            ModelFallbackMiddleware([])
        with pytest.raises(ConfigurationError, match="models"):
            ModelFallbackMiddleware([FunctionProvider(str)], models=["a", "b"])


class TestSummarizationMiddleware:
    """SummarizationMiddleware persists its summary into the history."""

    async def test_summary_is_persisted_and_not_recomputed(self) -> None:
        """The summarizer runs when the budget is crossed, not on every call."""
        summarizer = FunctionProvider(lambda request: "Processed the queue so far.")
        replies = [calls(("echo", {"x": f"{i} " + "v" * 300})) for i in range(60)]
        provider = scripted([*replies, answer("done")])
        events: list[AgentEvent] = []
        middleware = SummarizationMiddleware(summarizer, 2_000, preserve_recent=4)
        agent = create_agent(
            provider,
            [echo],
            AgentOptions(middleware=[middleware], max_turns=70, on_event=events.append),
        )
        result = await agent.run("Process the queue.")
        assert 1 < len(summarizer.requests) < len(provider.requests) // 5
        assert len(provider.requests) == 61
        assert sum(m.is_compaction for m in result.messages) == 1
        validate(result.messages)
        for request in provider.requests:
            validate(request.messages)
            assert first_turn_role(request.messages) == "user"
        completed = [e for e in events if isinstance(e, CompactionCompleted)]
        assert completed
        assert completed[0].trigger == "SummarizationMiddleware"
        assert completed[0].messages_removed > 0

    async def test_failure_keeps_the_history(self) -> None:
        """A failing summarizer leaves history and request as they were."""

        def down(request: CompletionRequest) -> str:
            msg = "summarizer down"
            raise ProviderError(msg)

        events: list[AgentEvent] = []
        agent = create_agent(
            scripted([calls(("echo", {"x": "a" * 400})), answer("done")]),
            [echo],
            AgentOptions(
                middleware=[SummarizationMiddleware(FunctionProvider(down), 10, preserve_recent=1)],
                on_event=events.append,
            ),
        )
        result = await agent.run("go")
        assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]
        assert any(isinstance(e, CompactionFailed) for e in events)

    async def test_strip_then_summarize(self) -> None:
        """The seed's chain: requests without tool calls, summary persisted, tools kept."""
        replies = [
            calls(("echo", {"x": f"{i} " + "q" * 300}), text=f"step {i}: " + "s" * 200)
            for i in range(20)
        ]
        provider = scripted([*replies, answer("done")])
        agent = create_agent(
            provider,
            [echo],
            AgentOptions(
                middleware=[
                    ContextEditingMiddleware.strip_tool_calls(),
                    SummarizationMiddleware(ExtractiveSummarizer(), 400, preserve_recent=2),
                ]
            ),
        )
        result = await agent.run("Process the queue.")
        for request in provider.requests:
            assert not any(m.is_tool for m in request.messages)
            validate(request.messages)
        assert any(m.is_compaction for m in result.messages)
        assert any(m.is_tool for m in result.messages)
        validate(result.messages)


class TestTodoListMiddleware:
    """TodoListMiddleware."""

    async def test_write_and_show(self) -> None:
        """write_todos stores the list in the state; every later call shows it."""
        todos = [
            {"content": "read the spec", "status": "completed"},
            {"content": "write the code", "status": "in_progress"},
        ]
        provider = scripted([calls(("write_todos", {"todos": todos})), answer("done")])
        agent = create_agent(provider, options=AgentOptions(middleware=[TodoListMiddleware()]))
        result = await agent.run("go")
        assert TodoListMiddleware.todos(agent.state) == todos
        assert "1 in progress" in result.messages[2].tool_results[0].text
        first, second = provider.requests
        assert "write_todos" in (first.system or "")
        assert "Current todo list" not in (first.system or "")
        assert "- [in_progress] write the code" in (second.system or "")
        assert [t.name for t in first.tools] == ["write_todos"]
        data = json.loads(json.dumps(agent.state.to_dict()))
        assert data["values"]["todos"] == todos

    async def test_invalid_list_is_an_error_result(self) -> None:
        """A malformed list is an error result; the stored list is unchanged."""
        bad = {"todos": [{"content": "x", "status": "someday"}]}
        agent = create_agent(
            scripted([calls(("write_todos", bad)), answer("done")]),
            options=AgentOptions(middleware=[TodoListMiddleware()]),
        )
        result = await agent.run("go")
        assert result.messages[2].tool_results[0].is_error
        assert TodoListMiddleware.todos(agent.state) == []


class TestHumanInTheLoopMiddleware:
    """HumanInTheLoopMiddleware."""

    async def test_approve_reject_edit(self) -> None:
        """Approved calls run, rejected ones carry the reason, edits are recorded."""
        ran: list[str] = []

        def act(x: str) -> str:
            ran.append(x)
            return f"did {x}"

        def decide(call: ToolUse) -> Approval | bool:
            x = call.input["x"]
            if x == "ok":
                return True
            if x == "no":
                return Approval.reject("too risky")
            return Approval.edit({"x": "safer"})

        reply = calls(("act", {"x": "ok"}), ("act", {"x": "no"}), ("act", {"x": "edit me"}))
        agent = create_agent(
            scripted([reply, answer("done")]),
            [act],
            AgentOptions(middleware=[HumanInTheLoopMiddleware(decide)]),
        )
        result = await agent.run("go")
        assert sorted(ran) == ["ok", "safer"]
        recorded = result.messages[1].tool_uses
        assert [u.input["x"] for u in recorded] == ["ok", "no", "safer"]
        results = result.messages[2].tool_results
        assert results[0].text == "did ok"
        assert results[1].is_error
        assert results[1].text == "The user rejected this tool call: too risky"
        assert results[2].text == "did safer"

    async def test_async_callback_and_names(self) -> None:
        """An async callback works; calls of other tools are not asked about."""
        asked: list[str] = []

        async def decide(call: ToolUse) -> bool:
            await anyio.sleep(0)
            asked.append(call.name)
            return False

        agent = create_agent(
            scripted([calls(("echo", {"x": "a"}), ("other", {})), answer("done")]),
            [echo],
            AgentOptions(middleware=[HumanInTheLoopMiddleware(decide, tool_names=["echo"])]),
        )
        result = await agent.run("go")
        assert asked == ["echo"]
        assert result.messages[2].tool_results[0].text == "The user rejected this tool call."

    async def test_bad_decision(self) -> None:
        """A callback returning something else is a ConfigurationError."""

        def says_yes(call: ToolUse) -> str:
            return "yes"

        bad = HumanInTheLoopMiddleware(says_yes)  # type: ignore[arg-type]
        agent = create_agent(
            scripted([calls(("echo", {"x": "a"}))]),
            [echo],
            AgentOptions(middleware=[bad]),
        )
        with pytest.raises(ConfigurationError, match="Approval or a bool"):
            await agent.run("go")
        validate(agent.state.messages)

    @pytest.mark.parametrize("names", ["echo", [1], 3])
    def test_bad_tool_names(self, names: object) -> None:
        """tool_names is a collection of str: a lone str, a non-str or a non-collection
        is a ConfigurationError naming the field."""
        with pytest.raises(ConfigurationError, match=r"HumanInTheLoopMiddleware\.tool_names"):
            HumanInTheLoopMiddleware(bool, tool_names=names)  # type: ignore[arg-type]


class TestContextEditingMiddleware:
    """ContextEditingMiddleware edits the request only."""

    async def test_last_n(self) -> None:
        """The request holds the last n messages; the history keeps everything."""
        provider = scripted(endless(5))
        events: list[AgentEvent] = []
        agent = create_agent(
            provider,
            [echo],
            AgentOptions(middleware=[ContextEditingMiddleware.last_n(3)], on_event=events.append),
        )
        result = await agent.run("the task")
        assert len(result.messages) == 12
        last = provider.requests[-1]
        assert first_turn_role(last.messages) == "user"
        assert len(last.messages) <= 4
        assert any(isinstance(e, RequestEdited) for e in events)

    async def test_strip_tool_calls(self) -> None:
        """No tool message is sent; the history keeps them."""
        provider = scripted(endless(3))
        agent = create_agent(
            provider,
            [echo],
            AgentOptions(middleware=[ContextEditingMiddleware.strip_tool_calls()]),
        )
        result = await agent.run("go")
        assert all(not m.is_tool for r in provider.requests for m in r.messages)
        assert sum(m.is_tool for m in result.messages) == 3

    async def test_strip_and_truncate(self) -> None:
        """Strip first, then keep the last n."""
        provider = scripted([calls(("echo", {"x": "a"}), text=f"step {i}") for i in range(6)])
        agent = create_agent(
            provider,
            [echo],
            AgentOptions(middleware=[ContextEditingMiddleware.strip_and_truncate(2)]),
        )
        await agent.run("go")
        last = provider.requests[-1]
        assert not any(m.is_tool or m.tool_uses for m in last.messages)
        assert last.messages[0].role == "user"

    def test_bad_strategy(self) -> None:
        """The strategy must be a ContextStrategy."""
        with pytest.raises(ConfigurationError, match="ContextStrategy"):
            ContextEditingMiddleware("window")  # type: ignore[arg-type]


class TestSystemInjectionMiddleware:
    """SystemInjectionMiddleware."""

    async def test_persistent_context_and_rules(self) -> None:
        """Every call gets the persistent context; rules fire on real turns and tokens."""
        persistent = PersistentContext()
        persistent.add_section(ContextSection("Rules", "Never delete files.", 0))
        injector = SystemInjector()
        injector.add_rule(InjectionTrigger.every_n_turns(2), "Re-read the plan.")
        injector.add_rule(InjectionTrigger.on_token_threshold(10**6), "Never fires.")
        provider = scripted(endless(4))
        agent = create_agent(
            provider,
            [echo],
            AgentOptions(
                system_prompt="Base.",
                middleware=[SystemInjectionMiddleware(injector=injector, persistent=persistent)],
            ),
        )
        await agent.run("go")
        systems = [r.system or "" for r in provider.requests]
        assert all(s.startswith("Base.\n\n## Rules\nNever delete files.") for s in systems)
        assert ["Re-read the plan." in s for s in systems] == [False, True, False, True, False]
        assert not any("Never fires." in s for s in systems)
        assert agent.state.values["system_injection"] == injector.state()

    async def test_shared_injector_keeps_state_per_agent(self) -> None:
        """One injector serves two agents; each keeps its own memory of what fired."""
        injector = SystemInjector()
        injector.add_rule(InjectionTrigger.every_n_turns(1), "Once.", once=True)
        middleware = SystemInjectionMiddleware(injector=injector)
        first = create_agent(scripted([]), options=AgentOptions(middleware=[middleware]))
        second = create_agent(scripted([]), options=AgentOptions(middleware=[middleware]))
        await first.run("go")
        await second.run("go")
        first_provider = first.provider
        second_provider = second.provider
        assert isinstance(first_provider, FunctionProvider)
        assert isinstance(second_provider, FunctionProvider)
        assert first_provider.requests[0].system == "Once."
        assert second_provider.requests[0].system == "Once."
        await first.run("again")
        assert first_provider.requests[1].system is None


def test_messages_are_messages() -> None:
    """The helpers build real messages."""
    assert isinstance(answer("x").message, Message)
