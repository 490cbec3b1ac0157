"""The agent loop end to end on FunctionProvider: history, limits, cancellation, state."""

from __future__ import annotations

import json
from collections.abc import Sequence

import anyio
import attrs
import pytest
from agent_support import answer, calls, first_turn_role, scripted

from neuron_context import (
    Agent,
    AgentMiddleware,
    AgentOptions,
    AgentResult,
    AgentState,
    CalibratedCounter,
    CompactionError,
    CompletionRequest,
    CompletionResponse,
    ConfigurationError,
    ContextStrategy,
    InvalidConversationError,
    Message,
    ModelRequest,
    NeuronContextError,
    Role,
    SlidingWindowStrategy,
    TokenCounter,
    create_agent,
    validate,
)
from neuron_context.errors import (
    AgentError,
    MaxTurnsExceededError,
    ProviderError,
)
from neuron_context.events import (
    AgentEvent,
    CompactionCompleted,
    CompactionFailed,
    ModelCalled,
    RunFinished,
    ToolCalled,
    TurnStarted,
)
from neuron_context.testing import FunctionProvider

pytestmark = pytest.mark.anyio


def echo(x: str) -> str:
    """Echo x."""
    return x


class TestRun:
    """Agent.run and AgentResult."""

    async def test_whole_history(self) -> None:
        """The result holds the input, the replies and the tool results, well formed."""
        provider = scripted([calls(("echo", {"x": "a"}), ("echo", {"x": "b"})), answer("done")])
        agent = create_agent(provider, [echo], AgentOptions(system_prompt="Be brief."))
        result = await agent.run("go")
        assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]
        assert [r.text for r in result.messages[2].tool_results] == ["a", "b"]
        assert result.text == "done"
        assert result.turns == 2
        assert result.usage is not None
        assert result.usage.input_tokens == 200
        assert provider.requests[0].system == "Be brief."
        assert [t.name for t in provider.requests[0].tools] == ["echo"]
        validate(result.messages)

    async def test_a_provider_exception_is_a_provider_error(self) -> None:
        """A provider raising its own exception surfaces as a ProviderError, cause chained,
        and the history stays well formed."""

        def broken(request: CompletionRequest) -> str:
            return str(1 / 0)

        agent = create_agent(FunctionProvider(broken))
        with pytest.raises(ProviderError, match="ZeroDivisionError") as info:
            await agent.run("go")
        assert isinstance(info.value.__cause__, ZeroDivisionError)
        validate(agent.state.messages)

    async def test_runs_continue_the_history(self) -> None:
        """A second run appends to the history the first one left."""
        agent = create_agent(scripted([answer("one"), answer("two")]))
        await agent.run([Message.user("first")])
        result = await agent.run("second")
        assert [m.text for m in result.messages] == ["first", "one", "second", "two"]
        assert agent.state.runs == 2

    async def test_malformed_input_is_rejected(self) -> None:
        """A history that is not well formed raises before anything is sent."""
        provider = scripted([])
        agent = create_agent(provider)
        orphan = Message.tool_result("nobody", "result")
        with pytest.raises(InvalidConversationError, match="nobody"):
            await agent.run([Message.user("hi"), orphan])
        assert agent.state.messages == []
        assert provider.requests == []

    async def test_a_broken_request_is_sent_repaired(self) -> None:
        """A middleware that breaks the request cannot make the loop send it broken."""

        class Breaks(AgentMiddleware):
            async def before_model(self, request: ModelRequest) -> None:
                request.messages.append(Message.tool_result("nobody", "orphan"))

        provider = scripted([answer("done")])
        agent = create_agent(provider, options=AgentOptions(middleware=[Breaks()]))
        result = await agent.run("go")
        assert [m.text for m in provider.requests[0].messages] == ["go"]
        assert [m.text for m in result.messages] == ["go", "done"]

    def test_run_sync(self) -> None:
        """run_sync runs a run in a new event loop."""
        agent = create_agent(FunctionProvider(lambda request: "hello"))
        assert agent.run_sync("hi").text == "hello"

    async def test_bad_input(self) -> None:
        """Anything but a str or messages is a ConfigurationError."""
        agent = create_agent(scripted([]))
        with pytest.raises(ConfigurationError):
            await agent.run(3)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError):
            await agent.run(["text"])  # type: ignore[list-item]

    async def test_one_run_at_a_time(self) -> None:
        """A second concurrent run of the same agent is an AgentError."""
        started = anyio.Event()

        async def slow(request: CompletionRequest) -> str:
            started.set()
            await anyio.sleep(0.05)
            return "done"

        agent = create_agent(FunctionProvider(slow))
        async with anyio.create_task_group() as group:
            group.start_soon(agent.run, "one")
            await started.wait()
            with pytest.raises(AgentError, match="already running"):
                await agent.run("two")

    async def test_max_turns(self) -> None:
        """One turn over max_turns raises MaxTurnsExceededError; the history stays whole."""
        endless = [calls(("echo", {"x": str(i)})) for i in range(10)]
        agent = create_agent(scripted(endless), [echo], AgentOptions(max_turns=3))
        with pytest.raises(MaxTurnsExceededError, match="max_turns=3") as caught:
            await agent.run("go")
        assert isinstance(caught.value, NeuronContextError)
        assert (caught.value.limit, caught.value.count) == (3, 4)
        validate(agent.state.messages)
        assert len(agent.state.messages) == 7

    def test_bad_options(self) -> None:
        """Options are validated, naming the field."""
        with pytest.raises(ConfigurationError, match=r"AgentOptions\.max_turns"):
            AgentOptions(max_turns=0)
        with pytest.raises(ConfigurationError, match=r"AgentOptions\.context"):
            AgentOptions(context="window")  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="Provider"):
            create_agent("gpt")  # type: ignore[arg-type]

    def test_result_without_reply(self) -> None:
        """AgentResult.message needs an assistant message."""
        with pytest.raises(AgentError):
            _ = AgentResult([Message.user("hi")]).text


class TestCancellation:
    """Cancellation at any point leaves a well-formed, complete history."""

    async def test_mid_tool(self) -> None:
        """Finished calls keep their results; the running one is closed as interrupted."""
        started = anyio.Event()

        async def hangs() -> str:
            started.set()
            await anyio.sleep_forever()
            return "never"

        events: list[AgentEvent] = []
        agent = create_agent(
            scripted([calls(("echo", {"x": "fast"}), ("hangs", {}))]),
            [echo, hangs],
            AgentOptions(on_event=events.append),
        )
        async with anyio.create_task_group() as group:
            group.start_soon(agent.run, "go")
            await started.wait()
            await anyio.sleep(0.05)
            group.cancel_scope.cancel()
        history = agent.state.messages
        validate(history)
        results = history[-1].tool_results
        assert [r.text for r in results] == ["fast", "[no result: the call was interrupted]"]
        assert results[1].is_error
        assert any(isinstance(e, ToolCalled) and e.outcome == "cancelled" for e in events)

    async def test_mid_model_call(self) -> None:
        """A cancelled model call leaves the history as it was before the call."""
        started = anyio.Event()

        async def hangs(request: CompletionRequest) -> str:
            started.set()
            await anyio.sleep_forever()
            return "never"

        agent = create_agent(FunctionProvider(hangs))
        async with anyio.create_task_group() as group:
            group.start_soon(agent.run, "go")
            await started.wait()
            group.cancel_scope.cancel()
        assert [m.text for m in agent.state.messages] == ["go"]
        assert not agent._running

    async def test_mid_compaction(self) -> None:
        """A cancelled compaction keeps the uncompacted history and is reported."""
        started = anyio.Event()

        class Hangs(SlidingWindowStrategy):
            async def compact(self, messages: Sequence[Message]) -> list[Message]:
                if sum(m.role is not Role.SYSTEM for m in messages) > 1:  # not the first
                    started.set()
                    await anyio.sleep_forever()
                return list(messages)

        events: list[AgentEvent] = []
        agent = create_agent(
            scripted([calls(("echo", {"x": "a"})), answer("done")]),
            [echo],
            AgentOptions(context=Hangs(1, 0), on_event=events.append),
        )
        async with anyio.create_task_group() as group:
            group.start_soon(agent.run, "go")
            await started.wait()
            group.cancel_scope.cancel()
        history = agent.state.messages
        validate(history)
        assert [m.role for m in history] == ["user", "assistant", "tool"]
        failed = [e for e in events if isinstance(e, CompactionFailed)]
        assert len(failed) == 1
        assert failed[0].cancelled


class FailingStrategy(SlidingWindowStrategy):
    """A window whose compaction always fails."""

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        msg = "the summarizer is down"
        raise CompactionError(msg)


class TestContext:
    """AgentOptions(context=...): the loop's own compaction."""

    async def test_counts_system_prompt_and_tools(self) -> None:
        """should_compact receives what the provider would receive, not the messages alone."""
        seen: list[tuple[int, int]] = []
        counter = TokenCounter()

        class Spy(SlidingWindowStrategy):
            def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
                seen.append((counter.estimate_messages(messages), token_count))
                return False

        agent = create_agent(
            scripted([answer("done")]),
            [echo],
            AgentOptions(system_prompt="S" * 400, context=Spy(4, 10, counter=counter)),
        )
        await agent.run("go")
        messages_only, total = seen[0]
        assert total == agent.count_request([Message.user("go")])
        assert total >= messages_only + 100 + counter.estimate_tools(agent.definitions)

    async def test_compaction_replaces_the_history(self) -> None:
        """The compacted history is kept; the event reports tokens and messages removed."""
        events: list[AgentEvent] = []
        replies = [calls(("echo", {"x": "y" * 200})) for _ in range(6)] + [answer("done")]
        agent = create_agent(
            scripted(replies),
            [echo],
            AgentOptions(context=SlidingWindowStrategy(3, 150), on_event=events.append),
        )
        result = await agent.run("go")
        completed = [e for e in events if isinstance(e, CompactionCompleted)]
        assert completed
        for event in completed:
            assert event.tokens_after < event.tokens_before
            assert event.messages_removed == event.messages_before - event.messages_after
            assert event.trigger == "context"
        assert len(result.messages) < 14
        assert first_turn_role(result.messages) == "user"
        json.dumps([e.to_dict() for e in events])

    async def test_compaction_events_carry_the_cache_facts(self) -> None:
        """A compaction says how much of the request before the first changed message
        it kept (what the prompt cache still serves) and how much it rewrote."""
        events: list[AgentEvent] = []
        replies = [calls(("echo", {"x": "y" * 200})) for _ in range(6)] + [answer("done")]
        agent = create_agent(
            scripted(replies),
            [echo],
            AgentOptions(
                system_prompt="Be brief.",
                context=SlidingWindowStrategy(3, 150),
                on_event=events.append,
            ),
        )
        await agent.run("go")
        completed = [e for e in events if isinstance(e, CompactionCompleted)]
        assert completed
        fixed = agent.count_request([])  # the system prompt and the tools, never rewritten
        for event in completed:
            assert fixed <= event.prefix_kept <= event.tokens_after
            assert event.tokens_rewritten == event.tokens_after - event.prefix_kept
            assert event.to_dict()["prefix_kept"] == event.prefix_kept

    async def test_failed_compaction_keeps_the_history(self) -> None:
        """A failing strategy never loses history; the run goes on and says so."""
        events: list[AgentEvent] = []
        agent = create_agent(
            scripted([calls(("echo", {"x": "a"})), answer("done")]),
            [echo],
            AgentOptions(context=FailingStrategy(1, 0), on_event=events.append),
        )
        result = await agent.run("go")
        assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant"]
        failed = [e for e in events if isinstance(e, CompactionFailed)]
        assert len(failed) == 2
        assert "the summarizer is down" in failed[0].error
        assert not failed[0].cancelled

    async def test_failed_compaction_can_raise(self) -> None:
        """context_errors="raise" raises the strategy's error, history intact."""
        agent = create_agent(
            scripted([answer("done")]),
            options=AgentOptions(context=FailingStrategy(1, 0), context_errors="raise"),
        )
        with pytest.raises(CompactionError):
            await agent.run("go")
        assert [m.text for m in agent.state.messages] == ["go"]

    async def test_a_strategys_own_exception_keeps_the_history(self) -> None:
        """A strategy raising something of its own is a failed compaction: the history is
        kept and the run goes on (with context_errors="raise", a CompactionError)."""

        class Crashes(SlidingWindowStrategy):
            async def compact(self, messages: Sequence[Message]) -> list[Message]:
                msg = "a bug in the user's strategy"
                raise RuntimeError(msg)

        events: list[AgentEvent] = []
        agent = create_agent(
            scripted([answer("done")]),
            options=AgentOptions(context=Crashes(1, 0), on_event=events.append),
        )
        result = await agent.run("go")
        assert [m.text for m in result.messages] == ["go", "done"]
        (failed,) = [e for e in events if isinstance(e, CompactionFailed)]
        assert "RuntimeError" in failed.error
        strict = create_agent(
            scripted([answer("done")]),
            options=AgentOptions(context=Crashes(1, 0), context_errors="raise"),
        )
        with pytest.raises(CompactionError) as info:
            await strict.run("go")
        assert isinstance(info.value.__cause__, RuntimeError)
        assert [m.text for m in strict.state.messages] == ["go"]

    async def test_malformed_compaction_is_a_failure(self) -> None:
        """A strategy returning a malformed conversation is not trusted."""

        class Breaks(SlidingWindowStrategy):
            async def compact(self, messages: Sequence[Message]) -> list[Message]:
                return [m for m in messages if m.role != "assistant"]

        events: list[AgentEvent] = []
        agent = create_agent(
            scripted([calls(("echo", {"x": "a"})), answer("done")]),
            [echo],
            AgentOptions(context=Breaks(1, 0), on_event=events.append),
        )
        result = await agent.run("go")
        validate(result.messages)
        assert any(isinstance(e, CompactionFailed) for e in events)

    async def test_always_starts_on_a_user_message(self) -> None:
        """A window that begins on an assistant message still sends a user message first."""
        provider = scripted([calls(("echo", {"x": str(i)})) for i in range(8)])
        agent = create_agent(provider, [echo], AgentOptions(context=SlidingWindowStrategy(2, 0)))
        await agent.run("the task")
        for request in provider.requests:
            assert first_turn_role(request.messages) == "user"
            assert request.messages[0].text == "the task"
            validate(request.messages)

    async def test_calibrated_counter_learns_from_usage(self) -> None:
        """Reported usage feeds CalibratedCounter.observe."""
        counter = CalibratedCounter(TokenCounter())
        agent = create_agent(
            scripted([calls(("echo", {"x": "a"})), answer("done")]),
            [echo],
            AgentOptions(counter=counter, system_prompt="S"),
        )
        await agent.run("go")
        assert counter.observations == 2
        assert counter.factor != 1.0


class TestEvents:
    """The events of a run."""

    async def test_sequence_and_serialization(self) -> None:
        """Turns, model calls, tool calls and the end arrive in order, as plain dicts."""
        events: list[AgentEvent] = []
        agent = create_agent(
            scripted([calls(("echo", {"x": "a"})), answer("done")]),
            [echo],
            AgentOptions(on_event=events.append),
        )
        result = await agent.run("go")
        assert list(result.events) == events
        kinds = [type(e) for e in events]
        assert kinds == [
            TurnStarted,
            ModelCalled,
            ToolCalled,
            TurnStarted,
            ModelCalled,
            RunFinished,
        ]
        model = events[1]
        assert isinstance(model, ModelCalled)
        assert (model.input_tokens, model.output_tokens, model.tool_calls) == (100, 10, 1)
        assert model.estimated_tokens == agent.count_request([Message.user("go")])
        data = json.loads(json.dumps([e.to_dict() for e in events]))
        assert data[2]["type"] == "tool_called"
        assert data[2]["outcome"] == "success"


class TestState:
    """Durable state: history, counters and middleware data to a dict and back."""

    async def test_round_trip_resumes_on_another_agent(self) -> None:
        """A state saved after one run continues on a freshly built agent."""
        first = create_agent(scripted([calls(("echo", {"x": "a"})), answer("one")]), [echo])
        await first.run("go")
        first.state.values["note"] = {"kept": [1, 2]}
        data = json.loads(json.dumps(first.state.to_dict()))
        second = create_agent(scripted([answer("two")]), [echo])
        second.load_state(data)
        assert second.state.messages == first.state.messages
        assert second.state.tool_calls == {"echo": 1}
        result = await second.run("more")
        assert [m.text for m in result.messages][-2:] == ["more", "two"]
        assert second.state.values["note"] == {"kept": [1, 2]}
        assert second.state.runs == 2

    @pytest.mark.parametrize(
        "data",
        [
            {},
            {"format": "neuron-context-agent", "version": 2},
            {"format": "neuron-context-agent", "version": 1, "history": 3},
            {
                "format": "neuron-context-agent",
                "version": 1,
                "history": {"format": "neuron-context", "version": 1, "messages": []},
                "runs": -1,
            },
        ],
    )
    def test_bad_state(self, data: dict[str, object]) -> None:
        """A dict that is not a saved state is a ConfigurationError."""
        with pytest.raises(ConfigurationError, match="AgentState"):
            AgentState.from_dict(data)  # type: ignore[arg-type]


class TestManyAgents:
    """Agents sharing strategies and a counter concurrently."""

    async def test_hundred_agents_no_cross_talk(self) -> None:
        """100 concurrent agents sharing one strategy stack and counter see only their own."""
        counter = TokenCounter()
        strategy = SlidingWindowStrategy(6, 300, counter=counter)

        turns: dict[str, int] = {}

        async def reply(request: CompletionRequest) -> CompletionResponse:
            await anyio.sleep(0)
            owner = request.messages[0].text
            texts = {m.text.split(":")[0] for m in request.messages if m.role == "user"}
            assert texts == {owner.split(":")[0]}, "cross-talk"
            for message in request.messages:
                for result in message.tool_results:
                    assert result.text.startswith(owner), "cross-talk"
            turns[owner] = turns.get(owner, 0) + 1
            if turns[owner] > 6:
                return answer(f"{owner} done")
            return calls(("echo", {"x": f"{owner}-{turns[owner]}" + "z" * 100}))

        provider = FunctionProvider(reply)
        agents = [
            create_agent(provider, [echo], AgentOptions(context=strategy, counter=counter))
            for _ in range(100)
        ]
        results: dict[int, AgentResult] = {}

        async def run(index: int) -> None:
            results[index] = await agents[index].run(f"agent{index}: start")

        async with anyio.create_task_group() as group:
            for index in range(100):
                group.start_soon(run, index)
        for index, result in results.items():
            validate(result.messages)
            assert result.text.startswith(f"agent{index}: start")
            for message in result.messages:
                for tool_result in message.tool_results:
                    assert tool_result.text.startswith(f"agent{index}: start-")


class TestLongRun:
    """A 500-turn run with the loop's own context."""

    async def test_every_call_within_budget_and_events_add_up(self) -> None:
        """Every request fits the budget (system prompt and tools counted); events add up."""
        counter = TokenCounter()
        system = "You are a careful agent. " * 10
        budget = 1_500
        probe = create_agent(scripted([]), [echo], AgentOptions(system_prompt=system))
        overhead = probe.count_request([])
        strategy = SlidingWindowStrategy(8, budget - overhead, counter=counter)
        events: list[AgentEvent] = []
        replies = [calls(("echo", {"x": f"{turn} " + "w" * 150})) for turn in range(499)]
        provider = scripted([*replies, answer("finished")])
        agent = create_agent(
            provider,
            [echo],
            AgentOptions(
                system_prompt=system, context=strategy, max_turns=500, on_event=events.append
            ),
        )
        result = await agent.run("Work through the queue.")
        assert result.turns == 500
        for request in provider.requests:
            sent = (
                counter.estimate_messages(request.messages)
                + counter.estimate_tools(request.tools)
                + counter.estimate_message(Message.system(request.system or ""))
            )
            assert sent <= budget
            assert first_turn_role(request.messages) == "user"
        validate(result.messages)
        model_calls = [e for e in events if isinstance(e, ModelCalled)]
        tool_calls = [e for e in events if isinstance(e, ToolCalled)]
        compactions = [e for e in events if isinstance(e, CompactionCompleted)]
        assert len(model_calls) == 500
        assert len(tool_calls) == 499
        assert compactions
        appended = 1 + len(model_calls) + len({e.turn for e in tool_calls})
        removed = sum(e.messages_removed for e in compactions)
        assert appended - removed == len(result.messages)
        turns = [e for e in events if isinstance(e, TurnStarted)]
        for event in compactions:
            assert event.tokens_after <= budget
        assert [e.turn for e in turns] == list(range(1, 501))


class TestTurnCount:
    """The loop's per-turn count (a running count of its history) equals a full recount."""

    @pytest.mark.parametrize("calibrated", [False, True])
    async def test_equals_a_full_recount_over_a_long_run(self, calibrated: bool) -> None:
        """Over 300 turns with tool calls, compactions and histories a middleware replaced
        (a new list, an edited first message), every count is the full recount."""
        counter = CalibratedCounter(TokenCounter()) if calibrated else TokenCounter()
        system = "You are a careful agent. " * 4
        strategy = SlidingWindowStrategy(6, 1_200, counter=counter)
        recounts: list[tuple[int, int]] = []
        agents: list[Agent] = []

        class Edits(AgentMiddleware):
            async def before_model(self, request: ModelRequest) -> None:
                state, turn = request.context.state, request.context.turn
                if turn % 7 == 0:
                    first = state.messages[0]
                    edited = Message.user(f"edited at {turn}: {first.text}"[:200])
                    state.messages = [edited, *state.messages[1:]]
                elif turn % 5 == 0:
                    state.messages = list(state.messages)

        def on_event(event: AgentEvent) -> None:
            if isinstance(event, TurnStarted):
                agent = agents[0]
                recounts.append((event.tokens, agent.count_request(agent.state.messages)))

        replies = [
            calls(*[("echo", {"x": f"{turn}-{i} " + "w" * (turn % 90)}) for i in range(turn % 3)])
            if turn % 3
            else calls(("echo", {"x": str(turn)}), text="thinking " * (turn % 20))
            for turn in range(299)
        ]
        provider = scripted([*replies, answer("finished")])
        agent = create_agent(
            provider,
            [echo],
            AgentOptions(
                system_prompt=system,
                context=strategy,
                counter=counter,
                max_turns=300,
                on_event=on_event,
                middleware=[Edits()],
            ),
        )
        agents.append(agent)
        result = await agent.run("Work through the queue.")
        assert result.turns == 300
        assert len(recounts) == 300
        assert all(ours == full for ours, full in recounts)
        assert any(isinstance(e, CompactionCompleted) for e in result.events)
        if calibrated:
            return  # the factor moved after each call: the recount of the requests differs
        estimated = [e.estimated_tokens for e in result.events if isinstance(e, ModelCalled)]
        sent = [
            counter.estimate_messages(request.messages)
            + counter.estimate_tools(request.tools)
            + counter.estimate_message(Message.system(request.system or ""))
            for request in provider.requests
        ]
        assert estimated == sent


def test_strategy_is_a_context_strategy() -> None:
    """The built-in strategies are accepted as AgentOptions.context."""
    assert isinstance(SlidingWindowStrategy(2, 0), ContextStrategy)


class TestReplyCap:
    """AgentOptions.max_output_tokens caps each reply; max_tokens is its deprecated alias."""

    @pytest.mark.anyio
    async def test_every_model_call_gets_the_cap(self) -> None:
        """The provider is asked for at most max_output_tokens."""
        asked: list[int | None] = []

        def reply(request: CompletionRequest) -> str:
            asked.append(request.max_tokens)
            return "ok"

        options = AgentOptions(max_output_tokens=64)
        await create_agent(FunctionProvider(reply), options=options).run("hi")
        assert asked == [64]

    def test_max_tokens_still_works_with_a_warning(self) -> None:
        """The old name sets the cap, and says it is deprecated (reading it too)."""
        with pytest.warns(DeprecationWarning, match="max_output_tokens"):
            options = AgentOptions(max_tokens=64)
        assert options.max_output_tokens == 64
        with pytest.warns(DeprecationWarning, match="max_output_tokens"):
            assert options.max_tokens == 64

    def test_the_two_names_cannot_disagree(self) -> None:
        """Both given, different: a ConfigurationError (the same value is accepted)."""
        with (
            pytest.warns(DeprecationWarning, match="max_output_tokens"),
            pytest.raises(ConfigurationError, match="max_output_tokens"),
        ):
            AgentOptions(max_tokens=64, max_output_tokens=32)
        with pytest.warns(DeprecationWarning, match="max_output_tokens"):
            assert AgentOptions(max_tokens=64, max_output_tokens=64).max_output_tokens == 64

    def test_the_options_are_still_an_attrs_value(self) -> None:
        """evolve, equality and the repr work on the new field, without a warning."""
        options = AgentOptions(max_output_tokens=64)
        assert attrs.evolve(options, max_output_tokens=32).max_output_tokens == 32
        assert options == AgentOptions(max_output_tokens=64)
        assert "max_output_tokens=64" in repr(options)
