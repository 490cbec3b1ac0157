"""The Agents SDK filter's conversations by the SDK's identity (issues 33 and 35): a
conversation named by ``conversation(name)`` or by its ``CompactingSession``, a fleet of
workers sharing one session store and one offload store that send the requests one
worker sends, and a shared offload store scoped by conversation."""

from __future__ import annotations

import itertools
import json
import logging
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import (
    Agent,
    ModelResponse,
    RunConfig,
    Runner,
    SQLiteSession,
    Usage,
)
from agents.models.interface import Model
from agents.run_config import CallModelData, ModelInputData
from agents_sdk_support import read_file, reply
from openai.types.responses import ResponseFunctionToolCall

from neuron_context import (
    ContextStrategy,
    MemoryStore,
    SQLiteStore,
    Store,
    TokenCounter,
    default_stack,
)
from neuron_context.ext.openai_agents import CallModelInputFilter, CompactingSession, recall_tool
from neuron_context.stores import conversation

INSTRUCTIONS = "You read files."
BUDGET = 3_000


class Scripted(Model):
    """A Model whose reply is ``respond(turn, input)``; it records each input as JSON."""

    def __init__(self, respond: Callable[[int, list[Any]], ModelResponse]) -> None:
        self.respond = respond
        self.requests: list[list[Any]] = []

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.requests.append([_plain(item) for item in items])
        return self.respond(len(self.requests), items)

    def stream_response(self, *args: Any, **kwargs: Any) -> Iterator[Any]:  # type: ignore[override]
        raise NotImplementedError


def _plain(item: Any) -> Any:
    """An input item as the provider receives it (JSON)."""
    dump = getattr(item, "model_dump", None)
    return json.loads(json.dumps(dump(mode="json", exclude_unset=True) if dump else item))


def _reads(calls: int) -> Callable[[int, list[Any]], ModelResponse]:
    """``calls`` read_file calls a run, then the answer. A call's id names the run's
    question and the call's place in the run (unique in the conversation, and the same
    whichever worker makes the call)."""
    state = {"question": 0, "turn": 0}

    def respond(turn: int, items: list[Any]) -> ModelResponse:
        last = items[-1]
        if isinstance(last, dict) and last.get("role") == "user":
            state["question"], state["turn"] = zlib.crc32(str(last["content"]).encode()), 0
        state["turn"] = int(state["turn"]) + 1
        if int(state["turn"]) > calls:
            return reply(1, 0)
        name = f"{state['question']}_{state['turn']}"
        call = ResponseFunctionToolCall(
            type="function_call",
            call_id=f"call_{name}",
            name="read_file",
            arguments=f'{{"path": "f{name}.py"}}',
            id=f"fc_{name}",
            status="completed",
        )
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    return respond


class Worker:
    """One process of a fleet: its own filter, agent, model and session objects, on the
    session database and the offload store the fleet shares."""

    def __init__(self, store: Store, database: Path, *, wrap: bool) -> None:
        self.model = Scripted(_reads(4))
        self.agent = Agent(
            name="reader", instructions=INSTRUCTIONS, model=self.model, tools=[read_file]
        )
        self.config = RunConfig(
            call_model_input_filter=CallModelInputFilter(default_stack(BUDGET, store=store)),
            tracing_disabled=True,
        )
        self.database = database
        self.wrap = wrap

    async def run(self, conversation_id: str, question: str) -> None:
        sqlite = SQLiteSession(conversation_id, self.database)
        try:
            if self.wrap:  # named by its CompactingSession (a strategy that never fires)
                session: Any = CompactingSession(sqlite, default_stack(10**9))
                await Runner.run(self.agent, question, session=session, run_config=self.config)
            else:  # named by the caller
                with conversation(conversation_id):
                    await Runner.run(self.agent, question, session=sqlite, run_config=self.config)
        finally:
            sqlite.close()


def _stores(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Store:
    if kind == "memory":
        return MemoryStore()
    if kind == "sqlite":
        return SQLiteStore(tmp_path / "offloads.db")
    from neuron_context import RedisStore

    url = request.getfixturevalue("redis_url")
    return RedisStore(url=url, prefix=f"fleet-{tmp_path.name}:")


@pytest.fixture
def anyio_backend() -> str:
    """The Agents SDK runs on asyncio only."""
    return "asyncio"


QUESTIONS = [f"Check part {n} of the repository." for n in range(8)]


class TestFleet:
    @pytest.mark.anyio
    @pytest.mark.parametrize("kind", ["memory", "sqlite", "redis"])
    @pytest.mark.parametrize("wrap", [False, True], ids=["conversation", "compacting-session"])
    async def test_two_workers_alternating_send_what_one_sends(
        self, kind: str, wrap: bool, tmp_path: Path, request: pytest.FixtureRequest
    ) -> None:
        """Two workers sharing one session database and one offload store, alternating
        the runs of one conversation, send the same requests as one worker does: the same
        compactions, the same prefixes."""
        sent: list[list[list[Any]]] = []
        for fleet in (1, 2):
            (tmp_path / str(fleet)).mkdir()
            store = _stores(kind, tmp_path / str(fleet), request)
            workers = [
                Worker(store, tmp_path / f"sessions{fleet}.db", wrap=wrap) for _ in range(fleet)
            ]
            for number, question in enumerate(QUESTIONS):
                await workers[number % fleet].run("user-7", question)
            sent.append(_in_order(workers))
        one, two = sent
        assert len(one) == len(two)
        assert one == two
        compactions = sum(1 for a, b in itertools.pairwise(one) if b[: len(a)] != a)
        assert compactions >= 2  # the conversation was compacted, more than once


def _in_order(workers: list[Worker]) -> list[list[Any]]:
    """The requests of the workers' runs, in the order the runs were made (runs
    alternate; each run makes five model calls)."""
    per_run = 5
    out: list[list[Any]] = []
    runs = [
        [
            worker.model.requests[i : i + per_run]
            for i in range(0, len(worker.model.requests), per_run)
        ]
        for worker in workers
    ]
    for number in range(len(QUESTIONS)):
        out.extend(runs[number % len(workers)][number // len(workers)])
    return out


def _recalling(key: str) -> Callable[[int, list[Any]], ModelResponse]:
    """A model that recalls ``key`` once, then answers."""

    def respond(turn: int, items: list[Any]) -> ModelResponse:
        last = items[-1]
        if isinstance(last, dict) and last.get("type") == "function_call_output":
            return reply(1, 0)
        call = ResponseFunctionToolCall(
            type="function_call",
            call_id=f"call_recall_{turn}",
            name="recall",
            arguments=json.dumps({"key": key}),
            id=f"fc_recall_{turn}",
            status="completed",
        )
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    return respond


class TestScoping:
    @pytest.mark.anyio
    @pytest.mark.parametrize("wrap", [False, True], ids=["conversation", "compacting-session"])
    async def test_a_conversations_recall_never_reads_anothers(
        self, wrap: bool, tmp_path: Path
    ) -> None:
        """One store given to one filter serving two conversations: each offloads in its
        own namespace, and conversation A's recall cannot read what B offloaded (it can
        read its own)."""
        store = MemoryStore()
        worker = Worker(store, tmp_path / "sessions.db", wrap=wrap)
        for number in range(3):
            for name in ("a", "b"):
                await worker.run(name, f"{name}: check part {number}.")
        offloaded = {name: set(store.scoped(name)) for name in ("a", "b")}
        # A key is its content's: what both offloaded alike (an answer "done") is in
        # each namespace as its own copy; everything else is in one only.
        for key in offloaded["a"] & offloaded["b"]:
            assert store.scoped("a").get(key) == store.scoped("b").get(key)
        only = {"a": offloaded["a"] - offloaded["b"], "b": offloaded["b"] - offloaded["a"]}
        assert only["a"]
        assert only["b"]
        assert not set(store)  # nothing outside a conversation's namespace
        seen: dict[str, str] = {}
        for key, expected in ((min(only["b"]), "b"), (min(only["a"]), "a")):
            model = Scripted(_recalling(key))
            agent = Agent(
                name="r", instructions=INSTRUCTIONS, model=model, tools=[recall_tool(store)]
            )
            config = RunConfig(
                call_model_input_filter=CallModelInputFilter(default_stack(BUDGET, store=store)),
                tracing_disabled=True,
            )
            sqlite = SQLiteSession("a", tmp_path / "sessions.db")
            try:
                if wrap:
                    session: Any = CompactingSession(sqlite, default_stack(10**9))
                    await Runner.run(agent, "recall it", session=session, run_config=config)
                else:
                    with conversation("a"):
                        await Runner.run(agent, "recall it", run_config=config)
            finally:
                sqlite.close()
            seen[expected] = model.requests[-1][-1]["output"]
        assert "no content under key" in seen["b"]
        assert "no content under key" not in seen["a"]
        assert "x" * 100 in seen["a"]  # a read_file output A offloaded

    @pytest.mark.anyio
    async def test_no_identity_warns_once(
        self, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A run the SDK names no conversation for, with a strategy that offloads to an
        unscoped store: a one-time warning that the store is not scoped; a run named
        before it in the same task does not name it (the run is another)."""
        store = MemoryStore()
        worker = Worker(store, tmp_path / "sessions.db", wrap=True)
        await worker.run("a", "first")  # named by its CompactingSession
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            await worker.run("a", "again")
            assert not [r for r in caplog.records if "not scoped" in r.getMessage()]
            for question in ("one", "two"):
                await Runner.run(worker.agent, question, run_config=worker.config)
        warned = [r for r in caplog.records if "not scoped by conversation" in r.getMessage()]
        assert len(warned) == 1


def _history(turns: int, first: str = "go") -> list[Any]:
    """A conversation's input items: a question, then ``turns`` read_file calls and their
    outputs (about 1,000 tokens each)."""
    items: list[Any] = [{"role": "user", "content": first}]
    for turn in range(turns):
        items.append(
            {
                "type": "function_call",
                "call_id": f"c{turn}",
                "name": "read_file",
                "arguments": f'{{"path": "f{turn}.py"}}',
            }
        )
        items.append(
            {
                "type": "function_call_output",
                "call_id": f"c{turn}",
                "output": f"{turn} " + "y" * 4_000,
            }
        )
    return items


async def _call(input_filter: CallModelInputFilter, items: list[Any]) -> list[Any]:
    agent = Agent(name="r", instructions=INSTRUCTIONS, tools=[read_file])
    data = CallModelData(
        model_data=ModelInputData(input=list(items), instructions=INSTRUCTIONS),
        agent=agent,
        context=None,
    )
    with conversation("c"):
        return [_plain(item) for item in (await input_filter(data)).input]


class TestKeptView:
    @pytest.mark.anyio
    async def test_an_edited_history_is_compacted_anew(self) -> None:
        """A worker continues another's view only while the input begins with the items it
        stands for: an edited history is compacted anew, as one process would."""
        store = MemoryStore()
        first, second, third = (
            CallModelInputFilter(default_stack(BUDGET, store=store)) for _ in range(3)
        )
        alone = CallModelInputFilter(default_stack(BUDGET, store=MemoryStore()))
        compacted = await _call(first, _history(8))
        assert len(compacted) < len(_history(8))  # the first worker compacted, and kept it
        continued = await _call(second, _history(9))
        assert continued == [*compacted, *_history(9)[-2:]]  # the kept view, continued
        edited = _history(9, first="go on")
        assert await _call(third, edited) == await _call(alone, edited)


class Refusing(Scripted):
    """:class:`Scripted`, refusing its ``at``-th call once as too long for a window of
    half the request (Anthropic's words), as a provider whose window is below the
    strategy's budget does; every request is also recorded in ``log``."""

    def __init__(self, log: list[list[Any]], at: int) -> None:
        super().__init__(_reads(4))
        self.log, self.at, self.calls = log, at, 0

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        from overflow_support import anthropic_overflow

        self.calls += 1
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.log.append([_plain(item) for item in items])
        if self.calls == self.at:
            raise anthropic_overflow(4_000, 2_000)
        return await super().get_response(system_instructions, input, *args, **kwargs)


class TestRecoveredView:
    @pytest.mark.anyio
    @pytest.mark.parametrize("wrap", [False, True], ids=["conversation", "compacting-session"])
    async def test_a_worker_continues_anothers_recovery(self, wrap: bool, tmp_path: Path) -> None:
        """The first worker's last call of a run is refused as too long and recompacted
        (the overflow recovery); the second worker continues that recompacted view and
        the budget the refusal showed: the same requests as one worker sends."""
        sent: list[list[list[Any]]] = []
        for fleet in (1, 2):
            log: list[list[Any]] = []
            store = MemoryStore()
            workers = [
                Worker(store, tmp_path / f"sessions{fleet}.db", wrap=wrap) for _ in range(fleet)
            ]
            for number, worker in enumerate(workers):
                worker.model = Refusing(log, at=5 if number == 0 else 0)
                worker.agent = worker.agent.clone(
                    model=worker.config.call_model_input_filter.wrap(worker.model)  # type: ignore[union-attr]
                )
            for number, question in enumerate(QUESTIONS[:4]):
                await workers[number % fleet].run("user-7", question)
            sent.append(log)
        one, two = sent
        assert len(one) == 4 * 5 + 1  # one call refused, and sent again smaller
        assert len(one[5]) < len(one[4])
        assert one == two


@pytest.fixture
def quiet_tracing() -> Iterator[None]:
    """Tracing enabled as by default, with no processor exporting anything."""
    from agents.tracing import get_trace_provider, set_trace_processors

    multi = get_trace_provider()._multi_processor  # type: ignore[attr-defined]
    saved = list(multi._processors)
    set_trace_processors([])
    try:
        yield
    finally:
        set_trace_processors(saved)


class Probing(ContextStrategy):
    """A strategy that never compacts; each time the filter asks it, it puts ``"<first
    message's text> #<n>"`` in its store, inside the conversation the filter found
    (so the namespace it lands in names that conversation)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.asked = 0

    def should_compact(self, messages: Any, token_count: int) -> bool:
        self.asked += 1
        self.store.put(f"{messages[0].text} #{self.asked}")
        return False

    async def compact(self, messages: Any) -> list[Any]:
        return list(messages)

    def token_estimate(self, messages: Any) -> int:
        return TokenCounter().estimate_messages(messages)


def probed(store: Store, name: str | None) -> list[str]:
    """The probes in conversation ``name``'s namespace (``None``: outside any), in order."""
    where = store if name is None else store.scoped(name)
    texts = [str(where.get(key)) for key in where]
    return sorted(texts, key=lambda text: int(text.rsplit("#", 1)[1]))


class Naming(Model):
    """A model that answers; with ``helper``, its first call asks the ``helper`` tool (an
    agent run as a tool)."""

    def __init__(self, *, helper: bool) -> None:
        self.helper, self.calls = helper, 0

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        self.calls += 1
        if self.helper and self.calls == 1:
            call = ResponseFunctionToolCall(
                type="function_call",
                call_id="call_helper",
                name="helper",
                arguments='{"input": "look"}',
                id="fc_helper",
                status="completed",
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        return reply(1, 0)

    def stream_response(self, *args: Any, **kwargs: Any) -> Iterator[Any]:  # type: ignore[override]
        raise NotImplementedError


class TestRunIdentity:
    @pytest.mark.anyio
    @pytest.mark.usefixtures("quiet_tracing")
    @pytest.mark.parametrize("tracing", ["enabled", "disabled", "callers-trace"])
    async def test_a_compacting_session_names_its_runs_calls_alone(
        self, tracing: str, tmp_path: Path
    ) -> None:
        """A run's ``CompactingSession`` names the run's calls whatever the tracing (the
        SDK's default, enabled, reads the session before the run's trace starts); a run
        nested in it (an agent as a tool) and a later run in the same task are not it."""
        from agents import trace

        store = MemoryStore()
        config = RunConfig(
            call_model_input_filter=CallModelInputFilter(Probing(store)),
            tracing_disabled=tracing == "disabled",
        )
        inner = Agent(name="inner", model=Naming(helper=False))
        outer = Agent(
            name="outer",
            model=Naming(helper=True),
            tools=[inner.as_tool(tool_name="helper", tool_description="h", run_config=config)],
        )
        sqlite = SQLiteSession("user-1", tmp_path / "sessions.db")
        session = CompactingSession(sqlite, default_stack(10**9))
        try:
            if tracing == "callers-trace":
                with trace("the caller's"):
                    await Runner.run(outer, "hi", session=session, run_config=config)
                    await Runner.run(inner, "later", run_config=config)
            else:
                await Runner.run(outer, "hi", session=session, run_config=config)
                await Runner.run(inner, "later", run_config=config)
        finally:
            sqlite.close()
        assert probed(store, "user-1") == ["hi #1", "hi #3"]
        assert probed(store, None) == ["look #2", "later #4"]
