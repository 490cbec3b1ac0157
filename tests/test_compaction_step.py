"""The one compaction step: every caller meets a hostile strategy the same way.

The agent loop, its two compacting middlewares, the three adapters (each of their
entry points) and the command line all compact through one step. Given a strategy that
fails (a library error), raises (an exception of its own), breaks the conversation it
returns, or never finishes until cancelled, each caller must do the same thing: the
request goes out as it was (the whole, well-formed history), the history a caller keeps
is complete, the failure is reported, and a cancellation propagates with nothing lost.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, cast

import anyio
import attrs
import pytest
from agent_support import answer, scripted
from agents import Agent as SdkAgent
from agents import ModelResponse as SdkResponse
from agents import RunConfig, Runner, SQLiteSession, Usage, function_tool
from agents.models.interface import Model
from agents.run_config import CallModelData, ModelInputData
from cli_run import run
from ext_support import compaction, one_result_per_message
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain.agents import create_agent as create_langchain_agent
from langchain.agents.middleware import ModelRequest as LangChainRequest
from langchain.agents.middleware import ModelResponse as LangChainResponse
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits
from strategies import strategy_stacks, well_formed_conversations

from neuron_context import (
    AgentOptions,
    CompactionError,
    CompletionRequest,
    CompletionResponse,
    ContextEditingMiddleware,
    ContextStrategy,
    Message,
    SlidingWindowStrategy,
    SummarizationMiddleware,
    TokenCounter,
    Tool,
    ToolUse,
    create_agent,
    default_stack,
    validate,
)
from neuron_context.events import CompactionFailed
from neuron_context.ext.langchain import (
    ContextMiddleware,
    acompact_messages,
    from_langchain,
    to_langchain,
)
from neuron_context.ext.openai_agents import (
    CallModelInputFilter,
    CompactingSession,
    from_responses_items,
    to_responses_items,
)
from neuron_context.ext.pydantic_ai import HistoryProcessor, from_pydantic_ai, to_pydantic_ai
from neuron_context.formats import to_openai
from neuron_context.testing import FunctionProvider, RecordingStrategy

HISTORY = [
    Message.user("Read a.py and b.py, then fix the bug."),
    Message.assistant("Reading.", tool_uses=[ToolUse(id="c1", name="read", input={"p": "a.py"})]),
    Message.tool_result("c1", "x = 1\n" * 40),
    Message.assistant("And b.", tool_uses=[ToolUse(id="c2", name="read", input={"p": "b.py"})]),
    Message.tool_result("c2", "y = 2\n" * 40),
    Message.assistant("Both read."),
    Message.user("Now fix it."),
]
"""A well-formed history ending on the user's newest request (what the model is sent)."""


class Hostile(ContextStrategy):
    """Always asks to compact, then misbehaves in one of four ways."""

    def __init__(self, how: str) -> None:
        self.how = how

    def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
        return True

    def token_estimate(self, messages: Sequence[Message]) -> int:
        return 0

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        if self.how == "failing":
            msg = "the strategy failed"
            raise CompactionError(msg)
        if self.how == "raising":
            msg = "a bug of the strategy's own"
            raise RuntimeError(msg)
        if self.how == "malformed":  # the first call goes, its result stays: an orphan
            return [m for m in messages if not any(u.id == "c1" for u in m.tool_uses)]
        await anyio.sleep_forever()
        raise AssertionError  # pragma: no cover


@attrs.frozen
class Outcome:
    """What a caller did: what the model was sent, and the history it keeps."""

    sent: list[Message]
    kept: list[Message]


Caller = Callable[[ContextStrategy], Awaitable[Outcome]]


def _reply(request: CompletionRequest) -> str:
    return "Fixed."


async def _loop(strategy: ContextStrategy) -> Outcome:
    sent: list[list[Message]] = []

    def reply(request: CompletionRequest) -> str:
        sent.append(list(request.messages))
        return "Fixed."

    agent = create_agent(FunctionProvider(reply), options=AgentOptions(context=strategy))
    agent.state.messages = HISTORY[:-1]
    try:
        await agent.run([HISTORY[-1]])
    finally:
        kept = list(agent.state.messages)
    return Outcome(sent[-1], kept[: len(HISTORY)])


def _middleware_caller(make: Callable[[ContextStrategy], Any]) -> Caller:
    async def call(strategy: ContextStrategy) -> Outcome:
        sent: list[list[Message]] = []

        def reply(request: CompletionRequest) -> str:
            sent.append(list(request.messages))
            return "Fixed."

        options = AgentOptions(middleware=[make(strategy)])
        agent = create_agent(FunctionProvider(reply), options=options)
        agent.state.messages = HISTORY[:-1]
        try:
            await agent.run([HISTORY[-1]])
        finally:
            kept = list(agent.state.messages)
        return Outcome(sent[-1], kept[: len(HISTORY)])

    return call


def _summarization(strategy: ContextStrategy) -> SummarizationMiddleware:
    middleware = SummarizationMiddleware(FunctionProvider(_reply), 0)
    # The middleware summarizes with a strategy of its own making: put the hostile one in
    # its place, so its failure reaches the step the way a failing summary does.
    middleware.strategy = strategy  # type: ignore[assignment]
    return middleware


class _Scripted(GenericFakeChatModel):
    """LangChain's fake chat model, taking tools and recording what it is sent."""

    sent: list[list[BaseMessage]] = []  # noqa: RUF012 - one per instance, set in __init__

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sent = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> _Scripted:
        return self

    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.sent.append(list(messages))
        return await super()._agenerate(messages, *args, **kwargs)


def _langchain(*, persist: bool) -> Caller:
    async def call(strategy: ContextStrategy) -> Outcome:
        model = _Scripted(messages=iter([AIMessage("Fixed.")]))
        agent = create_langchain_agent(
            model, [], middleware=[ContextMiddleware(strategy, persist=persist)]
        )
        state = await agent.ainvoke({"messages": to_langchain(HISTORY)})  # type: ignore[call-overload]
        kept = from_langchain(state["messages"])
        return Outcome(from_langchain(model.sent[-1]), kept[: len(HISTORY)])

    return call


async def _compact_messages(strategy: ContextStrategy) -> Outcome:
    compacted = from_langchain(await acompact_messages(to_langchain(HISTORY), strategy))
    return Outcome(compacted, compacted)


async def _pydantic_ai(strategy: ContextStrategy) -> Outcome:
    processed = from_pydantic_ai(await HistoryProcessor(strategy)(to_pydantic_ai(HISTORY)))
    return Outcome(processed, processed)


async def _input_filter(strategy: ContextStrategy) -> Outcome:
    items: list[Any] = to_responses_items(HISTORY)
    data = CallModelData(
        model_data=ModelInputData(input=items, instructions="Be careful."),
        agent=SdkAgent(name="coder"),
        context=None,
    )
    sent = from_responses_items((await CallModelInputFilter(strategy)(data)).input)
    return Outcome(sent, from_responses_items(items))


async def _session(strategy: ContextStrategy) -> Outcome:
    inner = SQLiteSession("step")
    items: list[Any] = to_responses_items(HISTORY)
    await inner.add_items(items)
    got = from_responses_items(await CompactingSession(inner, strategy).get_items())
    return Outcome(got, from_responses_items(await inner.get_items()))


CALLERS: dict[str, Caller] = {
    "loop": _loop,
    "ContextEditingMiddleware": _middleware_caller(ContextEditingMiddleware),
    "SummarizationMiddleware": _middleware_caller(_summarization),
    "langchain ContextMiddleware": _langchain(persist=False),
    "langchain ContextMiddleware persist": _langchain(persist=True),
    "langchain acompact_messages": _compact_messages,
    "pydantic-ai HistoryProcessor": _pydantic_ai,
    "agents CallModelInputFilter": _input_filter,
    "agents CompactingSession": _session,
}


@pytest.fixture(params=list(CALLERS))
def caller(request: pytest.FixtureRequest) -> Caller:
    """Each caller of the compaction step."""
    return CALLERS[str(request.param)]


@pytest.fixture
def anyio_backend() -> str:
    """asyncio only: LangChain and the Agents SDK run on asyncio."""
    return "asyncio"


class TestEveryCaller:
    """Each caller, against each way a strategy can fail, does the same thing."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("how", ["failing", "raising", "malformed"])
    async def test_a_failed_compaction_sends_and_keeps_the_whole_history(
        self, caller: Caller, how: str, caplog: pytest.LogCaptureFixture
    ) -> None:
        """The model gets the history as it was, the caller keeps all of it, and the
        failure is logged (the input was kept)."""
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            outcome = await caller(Hostile(how))
        assert outcome.sent == HISTORY
        assert outcome.kept == HISTORY
        validate(outcome.sent)
        assert "compaction by Hostile failed, input kept" in caplog.text

    @pytest.mark.anyio
    async def test_a_cancelled_compaction_propagates_and_loses_nothing(
        self, caller: Caller
    ) -> None:
        """Cancelled mid-compaction, the caller is cancelled too (it returns nothing),
        and the history it was given is intact."""
        before = list(HISTORY)
        finished = False
        with anyio.move_on_after(0.2) as scope:
            await caller(Hostile("cancelled"))
            finished = True
        assert scope.cancelled_caught
        assert not finished
        assert before == HISTORY


class TestTheCommandLine:
    """``neuron-context simulate`` replays through the same step: a failed compaction
    keeps the history, so every call is sent whole, and the failures are counted."""

    @pytest.mark.parametrize("how", ["failing", "raising", "malformed"])
    def test_a_failed_compaction_keeps_the_history(
        self,
        how: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Every call of the replay gets the whole history; each failure is counted."""
        hostile = Hostile(how)
        # The command builds its stacks from specs: the window misbehaves as Hostile does.
        monkeypatch.setattr(SlidingWindowStrategy, "should_compact", hostile.should_compact)
        monkeypatch.setattr(SlidingWindowStrategy, "compact", lambda _, m: hostile.compact(m))
        source = tmp_path / "history.json"
        source.write_text(json.dumps({"messages": to_openai(HISTORY)}), encoding="utf-8")
        result = run(
            capsys, monkeypatch, "simulate", source, "--max-tokens", "10",
            "--tokenizer", "heuristic", "--strategy", "window:2", "--json",
        )  # fmt: skip
        data = result.json()
        runs = data["runs"]
        assert isinstance(runs, list)
        calls = runs[0]["calls"]
        counter = TokenCounter()
        uncompacted = [counter.estimate_messages(HISTORY[:end]) for end in (1, 3, 5)]
        assert [c["tokens"] for c in calls] == uncompacted
        # The first call's history holds no call for the malformed strategy to break.
        assert runs[0]["totals"]["failed"] == (2 if how == "malformed" else 3)


class TestTheLoopReports:
    """The loop maps the step's result to its events."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("how", ["failing", "raising", "malformed"])
    async def test_a_failure_is_one_event(self, how: str) -> None:
        """One CompactionFailed per failed compaction, naming the error."""
        agent = create_agent(FunctionProvider(_reply), options=AgentOptions(context=Hostile(how)))
        result = await agent.run(HISTORY)
        failed = [e for e in result.events if isinstance(e, CompactionFailed)]
        assert len(failed) == 1
        assert not failed[0].cancelled
        assert failed[0].strategy == "Hostile"
        expected = {
            "failing": "CompactionError",
            "raising": "RuntimeError",
            "malformed": "InvalidConversationError",
        }[how]
        assert failed[0].error.startswith(expected)


# -- as rarely as the loop --------------------------------------------------------------

TURNS = 50
"""Tool calls in the scripted run (then the final answer)."""
INSTRUCTIONS = "Be terse."
BUDGET = 8_000
FILE = "x" * 4_000
"""What read_file returns: about 1,000 tokens, so the budget is crossed every few turns."""


def _read_file(path: str) -> str:
    """Read a file."""
    return f"# {path}\n{FILE}"


def _compactions(recording: RecordingStrategy) -> int:
    """How many compactions changed what was sent."""
    return sum(1 for call in recording.calls if call.result != call.messages)


async def _our_loop(recording: RecordingStrategy) -> None:
    turn = 0

    def reply(request: CompletionRequest) -> CompletionResponse | str:
        nonlocal turn
        turn += 1
        if turn > TURNS:
            return "done"
        call = ToolUse(id=f"call_{turn}", name="_read_file", input={"path": f"f{turn}.py"})
        message = Message.assistant(f"reading f{turn}.py", tool_uses=[call])
        return CompletionResponse(message, stop_reason="tool_use")

    options = AgentOptions(system_prompt=INSTRUCTIONS, context=recording, max_turns=TURNS + 1)
    await create_agent(FunctionProvider(reply), [_read_file], options).run("go")


async def _langchain_run(recording: RecordingStrategy) -> None:
    calls = [
        AIMessage(
            f"reading f{turn}.py",
            tool_calls=[
                {"name": "_read_file", "args": {"path": f"f{turn}.py"}, "id": f"call_{turn}"}
            ],
        )
        for turn in range(1, TURNS + 1)
    ]
    model = _Scripted(messages=iter([*calls, AIMessage("done")]))
    agent = create_langchain_agent(
        model, [_read_file], system_prompt=INSTRUCTIONS, middleware=[ContextMiddleware(recording)]
    )
    await agent.ainvoke(
        {"messages": [{"role": "user", "content": "go"}]}, {"recursion_limit": 4 * TURNS}
    )


async def _pydantic_ai_run(recording: RecordingStrategy) -> None:
    turns = 0

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal turns
        turns = turn = turns + 1
        if turn > TURNS:
            return ModelResponse(parts=[TextPart("done")])
        call = ToolCallPart("_read_file", {"path": f"f{turn}.py"}, tool_call_id=f"call_{turn}")
        return ModelResponse(parts=[TextPart(f"reading f{turn}.py"), call])

    agent = Agent(
        FunctionModel(reply),
        instructions=INSTRUCTIONS,
        tools=[_read_file],
        capabilities=[ProcessHistory(HistoryProcessor(recording))],
    )
    await agent.run("go", usage_limits=UsageLimits(request_limit=TURNS + 5))


class _SdkModel(Model):
    """The Agents SDK's side of the script: a call per turn, then the answer."""

    def __init__(self) -> None:
        self.turn = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> SdkResponse:
        self.turn += 1
        output: list[Any]
        if self.turn <= TURNS:
            output = [
                ResponseFunctionToolCall(
                    type="function_call",
                    call_id=f"call_{self.turn}",
                    name="_read_file",
                    arguments=f'{{"path": "f{self.turn}.py"}}',
                    id=f"fc_{self.turn}",
                    status="completed",
                )
            ]
        else:
            text = ResponseOutputText(type="output_text", text="done", annotations=[])
            output = [
                ResponseOutputMessage(
                    id="msg", type="message", role="assistant", status="completed", content=[text]
                )
            ]
        return SdkResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        """Streaming is not scripted."""
        raise NotImplementedError


async def _openai_agents_run(recording: RecordingStrategy) -> None:
    agent = SdkAgent(
        name="reader",
        instructions=INSTRUCTIONS,
        model=_SdkModel(),
        tools=[function_tool(_read_file)],
    )
    config = RunConfig(
        call_model_input_filter=CallModelInputFilter(recording), tracing_disabled=True
    )
    await Runner.run(agent, "go", run_config=config, max_turns=TURNS + 5)


class TestAsRarelyAsTheLoop:
    """A 50-turn scripted run through each adapter in its default mode compacts no more
    often than the agent loop does on the same script (the view is recompacted only
    when it crosses the trigger, as a persisted history would be)."""

    @pytest.mark.anyio
    async def test_each_adapter_compacts_no_more_than_the_loop(self) -> None:
        """Each adapter's count of compactions is at most the loop's (and not zero)."""
        counts: dict[str, int] = {}
        for name, run_script in {
            "loop": _our_loop,
            "langchain": _langchain_run,
            "pydantic-ai": _pydantic_ai_run,
            "openai-agents": _openai_agents_run,
        }.items():
            recording = RecordingStrategy(default_stack(BUDGET))
            await run_script(recording)
            counts[name] = _compactions(recording)
        loop = counts.pop("loop")
        assert loop > 0
        assert all(0 < count <= loop for count in counts.values()), (loop, counts)


# -- the view is what a persisting loop sends -----------------------------------------------


def _persisting_loop(
    strategy: ContextStrategy, history: list[Message], cuts: list[int]
) -> list[list[Message]]:
    """What a loop that keeps every compaction sends at each of ``cuts`` (the reference:
    compact when the kept history crosses the trigger, keep the result, grow it)."""
    counter = TokenCounter()
    kept: list[Message] = []
    compacted = False
    sent: list[list[Message]] = []
    previous = 0
    for cut in cuts:
        current = [*kept, *history[previous:cut]] if compacted else history[:cut]
        previous = cut
        if strategy.should_compact(current, counter.estimate_messages(current)):
            result = compaction(strategy, current)
            if result != current:
                kept, compacted = result, True
                current = result
        if compacted:
            kept = current
        sent.append(current)
    return sent


class TestTheViewIsAPersistedHistory:
    """The adapters' view, kept incrementally, sends what a loop that persists its
    compactions would send: the same compactions, at the same calls."""

    @given(
        messages=well_formed_conversations(min_turns=3, max_turns=12, running=False),
        data=st.data(),
    )
    @settings(max_examples=60)
    def test_langchain_sends_what_the_loop_sends(
        self, messages: list[Message], data: st.DataObject
    ) -> None:
        """At every call of a growing history, the middleware's request reads as the
        persisting loop's (about a third of the examples compact at least once)."""
        history = one_result_per_message(messages)
        counter = TokenCounter()
        strategy = data.draw(strategy_stacks(counter))
        budget = data.draw(st.integers(0, max(1, counter.estimate_messages(history))))
        strategy = attrs.evolve(strategy, max_tokens=budget)  # type: ignore[misc]
        cuts = sorted(data.draw(st.sets(st.integers(1, len(history)), min_size=1, max_size=6)))
        expected = _persisting_loop(strategy, history, cuts)

        middleware = ContextMiddleware(strategy)
        items = to_langchain(history)
        sent: list[list[Message]] = []

        async def handler(request: LangChainRequest[Any]) -> LangChainResponse[Any]:
            sent.append(from_langchain(request.messages))
            return LangChainResponse(result=[AIMessage("ok")])

        model = _Scripted(messages=iter([]))
        for cut in cuts:
            request = LangChainRequest(model=model, messages=cast("list[AnyMessage]", items[:cut]))
            anyio.run(middleware.awrap_model_call, request, handler)
        assert sent == expected


def _long_run(turns: int) -> list[Message]:
    """A task, then ``turns`` exchanges of a question, a call, a long result, an answer."""
    messages = [Message.user("Audit the records and report every inconsistency.")]
    for turn in range(turns):
        messages += [
            Message.user(f"Check record {turn}."),
            Message.assistant(tool_uses=[ToolUse(id=f"c{turn}", name="read", input={"n": turn})]),
            Message.tool_result(f"c{turn}", f"record {turn}: " + "field=value; " * 60),
            Message.assistant(f"Record {turn} is consistent."),
        ]
    return messages


class TestTheWholeRequestFits:
    """The tool definitions are part of the request a strategy must fit: the step hands
    the strategy a stand-in for them beside the system prompt, and takes both out."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("tool_count", [1, 8, 40])
    @pytest.mark.parametrize("room", [300, 1_500])
    async def test_every_request_fits_with_its_tools(self, tool_count: int, room: int) -> None:
        """In the loop, every request's messages + system prompt + tools are within the
        budget, with the task and the newest request, and no stand-in in the history."""
        tools = [
            Tool(
                name=f"tool_{n}",
                description="Reads a record by its id and returns every field of it. " * 3,
                input_schema={"type": "object", "properties": {"id": {"type": "string"}}},
                function=lambda id: id,
            )
            for n in range(tool_count)
        ]
        system = "You are a careful agent. " * 10
        options = AgentOptions(system_prompt=system)
        budget = create_agent(scripted([]), tools, options).count_request([]) + room
        provider = scripted([answer("Record 30 is consistent.")])
        context = default_stack(budget, counter=TokenCounter())
        agent = create_agent(provider, tools, attrs.evolve(options, context=context))
        agent.state.messages = _long_run(30)
        await agent.run("Check record 30.")
        (request,) = provider.requests
        assert agent.count_request(request.messages) <= budget
        assert request.messages[0] == agent.state.messages[0]  # the task
        assert request.messages[-1].text == "Check record 30."
        assert all(m.role.value != "system" for m in agent.state.messages)
