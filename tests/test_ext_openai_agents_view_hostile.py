"""The Agents SDK filter's kept view under hostile conditions (issues 33 and 35): a store
that fails while the view is read or written costs only the view (a warning, never the
model call); a view corrupted, or written by another writer, is ignored and the input
compacted anew; any conversation name a ``Message`` text may hold names a view; two
conversations sharing one name never send each other's items; concurrent runs of one
conversation in one process all complete."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, ModelResponse, ModelSettings, RunConfig, Runner, SQLiteSession, Usage
from agents.models.interface import Model, ModelTracing
from agents_sdk_support import read_file, reply
from hypothesis import given, settings
from strategies import surrogate_texts
from test_ext_openai_agents_fleet import (
    BUDGET,
    INSTRUCTIONS,
    QUESTIONS,
    Scripted,
    _call,
    _history,
    _plain,
    _reads,
)

from neuron_context import MemoryStore, Store, default_stack
from neuron_context.ext.openai_agents import CallModelInputFilter
from neuron_context.stores import conversation


@pytest.fixture
def anyio_backend() -> str:
    """The Agents SDK runs on asyncio only."""
    return "asyncio"


class Failing(MemoryStore):
    """A memory store whose view names fail (``"read"``, ``"write"`` or both in
    ``mode``), as a store that went away while keeping what was offloaded fails."""

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode

        self.tried = 0

    def _read(self, key: str) -> str | None:
        self.tried += "view" in key
        if "view" in key and "read" in self.mode:
            msg = "the store went away"
            raise ConnectionError(msg)
        return super()._read(key)

    def _write(self, key: str, text: str) -> None:
        self.tried += "view" in key
        if "view" in key and "write" in self.mode:
            msg = "the store went away"
            raise ConnectionError(msg)
        super()._write(key, text)


def _filter(store: Store) -> CallModelInputFilter:
    return CallModelInputFilter(default_stack(BUDGET, store=store))


def _views(store: MemoryStore) -> list[str]:
    """The reserved names a store holds the views under."""
    return [name for name in store._base()._keys() if name.startswith("neuron-context-view")]


class TestFailingStore:
    @pytest.mark.anyio
    @pytest.mark.parametrize("mode", ["read", "write", "read+write"])
    async def test_costs_only_the_view_with_a_warning(
        self, mode: str, caplog: pytest.LogCaptureFixture
    ) -> None:
        """The call goes out compacted as by a worker of its own, and the next continues
        this worker's view (the same prefix); a warning names the store."""
        alone = _filter(MemoryStore())
        failing = _filter(Failing(mode))
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            first = await _call(failing, _history(8))
            assert first == await _call(alone, _history(8))
            second = await _call(failing, _history(9))
        assert second == await _call(alone, _history(9))
        assert second[: len(first)] == first
        warned = [r.getMessage() for r in caplog.records if "the view" in r.getMessage()]
        assert warned
        assert all("Failing(" in text and "ConnectionError" in text for text in warned)

    @pytest.mark.anyio
    async def test_a_failing_store_is_left_alone_for_a_while(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """After a failure the views in that store are left alone (a store that hangs
        costs one client timeout, not one every call), with one warning; tried again
        once the while is over."""
        store = Failing("read+write")
        failing = _filter(store)
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            for turns in range(8, 12):
                await _call(failing, _history(turns))
        assert store.tried == 1
        assert len([r for r in caplog.records if "the view" in r.getMessage()]) == 1
        assert failing._place is not None
        failing._place.quiet_until = 0.0  # the while is over
        await _call(failing, _history(12))
        assert store.tried == 2


CORRUPTED = [
    pytest.param("not json", "not json", id="not-json"),
    pytest.param("[1, 2", "{", id="cut"),
    pytest.param("9" * 5_000, "9" * 5_000, id="digits-beyond-int"),
    pytest.param("[1e999]", '{"through": 1e999, "last": "x", "view": "[]"}', id="infinite"),
    pytest.param('{"a": 1}', "[1, 2, 3]", id="other-shapes"),
    pytest.param("[3, true]", '{"through": true, "last": "x", "view": "[]"}', id="bool-through"),
    pytest.param(
        "[3, null]", '{"through": 1, "last": "x", "budget": -5, "view": "[]"}', id="bad-budget"
    ),
    pytest.param("[3, null]", '{"through": 1, "last": "x", "view": "{\\"x\\": 1}"}', id="bad-view"),
]


class TestCorruptedView:
    @pytest.mark.anyio
    @pytest.mark.parametrize(("head", "body"), CORRUPTED)
    async def test_is_ignored_and_compacted_anew(self, head: str, body: str) -> None:
        """A view that no version of the filter wrote (corrupted, cut, or another
        writer's) is ignored: the worker compacts the input as a worker of its own."""
        store = MemoryStore()
        await _call(_filter(store), _history(8))
        names = _views(store)
        assert len(names) == 2
        for name in names:
            store._base()._write(name, head if "head" in name else body)
        assert await _call(_filter(store), _history(9)) == await _call(
            _filter(MemoryStore()), _history(9)
        )


class TestNames:
    @pytest.mark.anyio
    @settings(max_examples=15, deadline=None)
    @given(name=surrogate_texts())
    async def test_any_name_keeps_and_continues_a_view(self, name: str) -> None:
        """A conversation name with lone surrogates, separators or NULs names its view:
        another worker continues it, and nothing is kept outside its namespace."""
        store = MemoryStore()
        first, second = _filter(store), _filter(store)
        with conversation(name):
            compacted = [_plain(item) for item in await _direct(first, _history(8))]
            continued = [_plain(item) for item in await _direct(second, _history(9))]
        assert len(compacted) < len(_history(8))
        assert continued == [*compacted, *(_plain(item) for item in _history(9)[-2:])]
        assert not set(store)

    @pytest.mark.anyio
    async def test_odd_names_in_redis(self, redis_url: str, tmp_path: Path) -> None:
        from neuron_context import RedisStore

        for name in ("a\ud800b", "x/y:z %2F\x00*?[", "é" * 300):
            store = RedisStore(url=redis_url, prefix=f"odd-{tmp_path.name}:")
            first, second = _filter(store), _filter(store)
            with conversation(name):
                compacted = [_plain(item) for item in await _direct(first, _history(8))]
                continued = [_plain(item) for item in await _direct(second, _history(9))]
            assert continued == [*compacted, *(_plain(item) for item in _history(9)[-2:])]


async def _direct(input_filter: CallModelInputFilter, items: list[Any]) -> list[Any]:
    """The filter's input for ``items``, in the conversation the caller entered."""
    from agents.run_config import CallModelData, ModelInputData

    agent = Agent(name="r", instructions=INSTRUCTIONS, tools=[read_file])
    data = CallModelData(
        model_data=ModelInputData(input=list(items), instructions=INSTRUCTIONS),
        agent=agent,
        context=None,
    )
    return list((await input_filter(data)).input)


class TestOneNameTwoConversations:
    @pytest.mark.anyio
    @pytest.mark.parametrize("fleet", [1, 2], ids=["one-filter", "two-workers"])
    async def test_never_sends_the_others_items(self, fleet: int, tmp_path: Path) -> None:
        """Two users whose sessions (two databases) have one ``session_id``: one
        conversation name to the filter, so one namespace (the docs say a name must be
        unique); each request still holds only its own user's items."""
        store = MemoryStore()
        filters = [_filter(store) for _ in range(fleet)]
        models = {user: Scripted(_reads(4)) for user in ("alice", "bob")}
        for number, question in enumerate(QUESTIONS[:4]):
            for turn, user in enumerate(("alice", "bob")):
                agent = Agent(
                    name="r", instructions=INSTRUCTIONS, model=models[user], tools=[read_file]
                )
                config = RunConfig(
                    call_model_input_filter=filters[(number + turn) % fleet],
                    tracing_disabled=True,
                )
                sqlite = SQLiteSession("shared-id", tmp_path / f"{user}.db")
                try:
                    with conversation("shared-id"):
                        await Runner.run(
                            agent, f"{user}: {question}", session=sqlite, run_config=config
                        )
                finally:
                    sqlite.close()
        for user, other in (("alice", "bob"), ("bob", "alice")):
            sent = str(models[user].requests)
            assert f"{user}: " in sent
            assert f"{other}: " not in sent


class TestConcurrentRuns:
    @pytest.mark.anyio
    async def test_one_conversation_in_one_process(self, tmp_path: Path) -> None:
        """Runs of one named conversation at once in one process (one filter, one
        store, asyncio): each completes and sends well-formed requests of its items."""
        store = MemoryStore()
        compacting = _filter(store)
        model = Scripted(_reads(4))
        agent = Agent(name="r", instructions=INSTRUCTIONS, model=model, tools=[read_file])
        config = RunConfig(call_model_input_filter=compacting, tracing_disabled=True)

        async def run(question: str) -> Any:
            items = [*_history(6), {"role": "user", "content": question}]
            with conversation("together"):
                return await Runner.run(agent, items, run_config=config)

        results = await asyncio.gather(*(run(q) for q in QUESTIONS))
        assert [result.final_output for result in results] == ["done"] * len(QUESTIONS)
        for request in model.requests:
            calls = {i["call_id"] for i in request if i.get("type") == "function_call"}
            outputs = {i["call_id"] for i in request if i.get("type") == "function_call_output"}
            assert outputs <= calls


class _Once(Model):
    """Refuses its first call as too long for half its input (Anthropic's words); then
    answers, reporting ``reported`` input tokens (0: none)."""

    def __init__(self, reported: int = 0) -> None:
        self.calls, self.reported = 0, reported

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        from overflow_support import anthropic_overflow

        self.calls += 1
        if self.calls == 1 and not self.reported:
            raise anthropic_overflow(4_000, 2_000)
        return ModelResponse(
            output=reply(1, 0).output, usage=Usage(input_tokens=self.reported), response_id=None
        )

    def stream_response(self, *args: Any, **kwargs: Any) -> Iterator[Any]:  # type: ignore[override]
        raise NotImplementedError


async def _send(model: Model, items: list[Any]) -> None:
    await model.get_response(
        INSTRUCTIONS,
        items,
        ModelSettings(),
        [],
        None,
        [],
        ModelTracing.DISABLED,
        previous_response_id=None,
        conversation_id=None,
        prompt=None,
    )


class TestAfterARecovery:
    @pytest.mark.anyio
    @pytest.mark.parametrize("named", [True, False], ids=["named", "by-items"])
    async def test_the_next_call_holds_the_sdks_own_items(self, named: bool) -> None:
        """A refused call's recompaction leaves the conversation's reading as it was
        (no session of the compacted request joins the pool): the next call's request
        holds the SDK's own item objects for every message it keeps (not copies
        converted anew from a reading of the compacted request)."""
        compacting = _filter(MemoryStore())
        model = compacting.wrap(_Once())
        name = "c" if named else None
        items = _history(8)
        with conversation(name):
            sent = await _direct(compacting, items)
            await _send(model, sent)  # refused, recompacted, sent again
            given = [*items, *_history(9)[-2:]]  # the SDK's objects, and two new
            after = await _direct(compacting, given)
        assert len(compacting._sessions) == 1
        by_value = {repr(_plain(item)): item for item in given}
        kept = [by_value[repr(_plain(item))] for item in after if repr(_plain(item)) in by_value]
        assert items[0] in kept  # the task, kept by the recompaction before the new items
        assert all(any(item is original for item in after) for original in kept)

    @pytest.mark.anyio
    async def test_calibrating_keeps_the_conversations_reading(self) -> None:
        """A calibrated counter learning from each answered call's usage reads the
        compacted request it was sent on its own: the conversation's reading is left
        as it was and no session is added."""
        from neuron_context import CalibratedCounter, TokenCounter

        compacting = CallModelInputFilter(
            default_stack(BUDGET, counter=CalibratedCounter(TokenCounter()))
        )
        model = compacting.wrap(_Once(reported=2_000))
        items = _history(8)
        sent = await _direct(compacting, items)
        assert len(sent) < len(items)
        await _send(model, sent)
        given = [*items, *_history(9)[-2:]]
        after = await _direct(compacting, given)
        assert len(compacting._sessions) == 1
        assert after[0] is items[0]  # the SDK's own item: the conversation's reading kept


class _Kept:
    """A minimal SDK session holding its items in memory, with any ``session_id``."""

    def __init__(self, session_id: Any) -> None:
        self.session_id = session_id
        self.session_settings = None
        self.items: list[Any] = []

    async def get_items(self, limit: int | None = None) -> list[Any]:
        return list(self.items)

    async def add_items(self, items: list[Any]) -> None:
        self.items.extend(items)

    async def pop_item(self) -> Any:
        return self.items.pop() if self.items else None

    async def clear_session(self) -> None:
        self.items.clear()


class TestSessionIds:
    @pytest.mark.anyio
    @pytest.mark.parametrize(
        ("session_id", "name"),
        [(12345, "12345"), ("user-1", "user-1"), ("", None), (None, None), (True, None)],
    )
    async def test_any_session_id_leaves_the_run_whole(
        self, session_id: Any, name: str | None
    ) -> None:
        """A ``CompactingSession`` over a session whose id is an int (``SQLiteSession(
        user.id)``) names the conversation by its decimal text; an id that names nothing
        leaves the run unnamed: never an error that costs the run."""
        from test_ext_openai_agents_fleet import Naming, Probing, probed

        from neuron_context.ext.openai_agents import CompactingSession

        store = MemoryStore()
        agent = Agent(name="r", model=Naming(helper=False))
        config = RunConfig(
            call_model_input_filter=CallModelInputFilter(Probing(store)), tracing_disabled=True
        )
        kept: Any = _Kept(session_id)
        session = CompactingSession(kept, default_stack(10**9, store=MemoryStore()))
        for question in ("one", "two"):
            result = await Runner.run(agent, question, session=session, run_config=config)
            assert result.final_output == "done"
        assert probed(store, name) == ["one #1", "one #2"]


class TestCappedStore:
    @pytest.mark.anyio
    @pytest.mark.parametrize("cap", [2, 3, 5])
    @pytest.mark.parametrize("kind", ["memory", "sqlite"])
    async def test_keeping_the_view_never_evicts_a_key_the_request_shows(
        self, cap: int, kind: str, tmp_path: Path
    ) -> None:
        """Writing a conversation's view into a store capped at ``max_items`` evicts no
        key the request holds: every reference the model is sent can be recalled."""
        import json
        import re

        from neuron_context import SQLiteStore

        store: Store = (
            MemoryStore(max_items=cap)
            if kind == "memory"
            else SQLiteStore(tmp_path / "capped.db", max_items=cap)
        )
        compacting = _filter(store)
        shown = 0
        for turns in range(6, 12):
            with conversation("c"):
                sent = await _direct(compacting, _history(turns))
            text = json.dumps([_plain(item) for item in sent])
            keys = set(re.findall(r"\b[0-9a-f]{16}\b", text))
            shown += len(keys)
            assert [key for key in keys if store.scoped("c").get(key) is None] == []
        assert shown
