"""What a fleet can trust of offloading: a failing store fails once per compaction, a cap
never breaks a reference the compacted request shows, every text a Message accepts is
offloaded, and one conversation never recalls what another offloaded."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from offload_support import block_texts, keys_in
from strategies import surrogate_texts

from neuron_context import (
    Agent,
    AgentOptions,
    CompletionRequest,
    CompletionResponse,
    MemoryStore,
    Message,
    SlidingWindowStrategy,
    SQLiteStore,
    Store,
    ToolResultClearingStrategy,
    ToolUse,
    create_agent,
    default_stack,
)
from neuron_context.events import OffloadFailed
from neuron_context.stores import conversation, recall, recall_tool
from neuron_context.testing import FunctionProvider


def results(n: int, size: int = 400, text: str = "") -> list[Message]:
    """A task, ``n`` tool calls each answered by a large result, and a new request."""
    messages = [Message.user("Read every file.")]
    for i in range(n):
        use = ToolUse(id=f"c{i}", name="read_file", input={"path": f"f{i}.py"})
        messages.append(Message.assistant("", tool_uses=[use]))
        messages.append(Message.tool_result(f"c{i}", f"file {i}{text}\n" + "x = 1\n" * size))
    messages.append(Message.user("Now fix them."))
    return messages


def shown(messages: list[Message]) -> list[str]:
    """The keys the references in ``messages`` show, in order."""
    return keys_in(block_texts(messages))


class CountingFailingStore(Store):
    """A store whose every call raises, counting the calls (a Redis that went away)."""

    def __init__(self) -> None:
        self.calls = 0

    def _fail(self) -> None:
        self.calls += 1
        msg = "connection refused"
        raise ConnectionError(msg)

    def _write(self, key: str, text: str) -> None:
        self._fail()

    def _read(self, key: str) -> str | None:
        self._fail()
        return None

    def _keys(self) -> Iterator[str]:
        self._fail()
        return iter(())


class TestFailingOnce:
    """After a store's first failure, the rest of that compaction's puts are skipped."""

    def test_one_put_per_compaction(self, caplog: pytest.LogCaptureFixture) -> None:
        """Six cleared results cost one failed put; the compaction completes with plain
        placeholders, and the next compaction tries the store again."""
        store = CountingFailingStore()
        strategy = ToolResultClearingStrategy(0, store=store)
        output = strategy.apply(results(6))
        assert store.calls == 1
        assert [m.tool_results[0].text for m in output if m.is_tool] == [
            "[tool result cleared]"
        ] * 6
        assert caplog.text.count("offload to CountingFailingStore failed") == 1
        anyio.run(strategy.compact, results(6))
        assert store.calls == 2

    def test_default_stack(self) -> None:
        """default_stack's attempts with a failing store cost one call too."""
        store = CountingFailingStore()
        output = anyio.run(default_stack(600, store=store).compact, results(6))
        assert store.calls == 1
        assert not shown(output)

    def test_one_event_in_the_loop(self) -> None:
        """The agent loop reports one OffloadFailed per compaction, not one per result."""
        history = results(6)[:-1]
        agent = create_agent(
            FunctionProvider(lambda request: "Done."),
            options=AgentOptions(
                context=ToolResultClearingStrategy(0, 10, store=CountingFailingStore())
            ),
        )
        agent.state.messages = history
        result = agent.run_sync("Now fix them.")
        assert len([e for e in result.events if isinstance(e, OffloadFailed)]) == 1

    def test_a_hung_redis(self, hung_server: int) -> None:
        """A server that accepts and never answers costs one client timeout per
        compaction, not one per cleared result."""
        redis = pytest.importorskip("redis")
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        from neuron_context import RedisStore

        client = redis.Redis(
            host="127.0.0.1",
            port=hung_server,
            socket_timeout=0.3,
            socket_connect_timeout=0.3,
            retry=Retry(NoBackoff(), 0),
        )
        store = RedisStore(client=client)
        started = time.monotonic()
        with pytest.raises(redis.RedisError):
            store.put("one")
        one = time.monotonic() - started
        started = time.monotonic()
        output = ToolResultClearingStrategy(0, store=store).apply(results(6))
        six = time.monotonic() - started
        assert not shown(output)
        assert six < 2 * one + 0.2, (one, six)

    def test_a_hung_redis_from_a_url(self, hung_server: int) -> None:
        """A store built from a URL gives up after one 5-second timeout, without the
        client's retries: six cleared results against a hung server cost one."""
        pytest.importorskip("redis")
        from neuron_context import RedisStore

        store = RedisStore(url=f"redis://127.0.0.1:{hung_server}/0")
        started = time.monotonic()
        output = ToolResultClearingStrategy(0, store=store).apply(results(6))
        took = time.monotonic() - started
        assert not shown(output)
        assert took < 8, took


@pytest.fixture
def hung_server() -> Iterator[int]:
    """The port of a server on 127.0.0.1 that accepts connections and never answers."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        held: list[socket.socket] = []

        def accept() -> None:
            while True:
                try:
                    held.append(server.accept()[0])
                except OSError:
                    return

        threading.Thread(target=accept, daemon=True).start()
        yield server.getsockname()[1]
        for conn in held:
            conn.close()


class TestCaps:
    """A capped store evicts only what the compaction neither put nor shows."""

    @settings(max_examples=20, deadline=None)
    @given(cap=st.integers(1, 6), n=st.integers(1, 10), kind=st.sampled_from(["memory", "sqlite"]))
    def test_every_reference_of_a_compaction_is_readable(self, cap: int, n: int, kind: str) -> None:
        """Every key a clearing returns can be read back, whatever the cap; the next put
        outside a compaction trims the store to its cap."""
        store: Store = (
            MemoryStore(max_items=cap)
            if kind == "memory"
            else SQLiteStore(":memory:", max_items=cap)
        )
        output = ToolResultClearingStrategy(0, store=store).apply(results(n))
        keys = shown(output)
        assert len(keys) == n
        assert all(store.get(key) is not None for key in keys)
        store.put("after the compaction")
        assert len(list(store)) == min(cap, n + 1)

    def test_references_the_request_shows(self) -> None:
        """A window whose kept messages show earlier keys keeps them readable when its
        own put would evict them."""
        store = MemoryStore(max_items=3)
        cleared = ToolResultClearingStrategy(0, store=store).apply(results(3))
        earlier = shown(cleared)
        assert len(earlier) == 3
        history = [Message.user("old " * 200), Message.assistant("ok"), *cleared]
        output = SlidingWindowStrategy(len(cleared) - 1, store=store).apply(history)
        for key in shown(output):
            assert store.get(key) is not None, key
        assert set(earlier) & set(shown(output))

    def test_default_stack_keeps_what_it_shows(self) -> None:
        """default_stack's put spares the keys its output shows."""
        store = MemoryStore(max_items=2)
        cleared = ToolResultClearingStrategy(0, store=store).apply(results(2, size=30))
        history = [
            Message.user("the task"),
            *[Message.user(f"old turn {i} " + "words " * 300) for i in range(3)],
            Message.assistant("old answer " * 300),
            *cleared[1:],
        ]
        output = anyio.run(default_stack(900, store=store).compact, history)
        keys = shown(output)
        assert len(keys) >= 2
        assert all(store.get(key) is not None for key in keys)


class TestSurrogatesOffloaded:
    """A tool result decoded with surrogateescape is offloaded and recalled."""

    @settings(max_examples=15, deadline=None)
    @given(text=surrogate_texts())
    def test_clearing(self, text: str) -> None:
        """Clearing puts it and leaves the reference; recall gives it back."""
        store = MemoryStore()
        output = ToolResultClearingStrategy(0, store=store).apply(results(2, text=text))
        keys = shown(output)
        assert len(keys) == 2
        assert text in str(store.get(keys[0]))
        assert text in recall(store, keys[0], max_tokens=100_000).text

    def test_default_stack(self) -> None:
        """default_stack keeps its reference to what it removed."""
        store = SQLiteStore(":memory:")
        output = anyio.run(default_stack(600, store=store).compact, results(6, text="\udcff"))
        keys = shown(output)
        assert keys
        assert any("\udcff" in recall(store, key, max_tokens=100_000).text for key in keys)


class TestConversations:
    """Two agents sharing one store never read each other's offloads."""

    def test_agents(self) -> None:
        """Each agent recalls its own key; the other's key is unknown to it, and a saved
        state carries its conversation to another process."""
        store = MemoryStore()

        def agent() -> Agent:
            return create_agent(
                FunctionProvider(lambda request: "Done."),
                [recall_tool(store)],
                AgentOptions(context=ToolResultClearingStrategy(0, 10, store=store)),
            )

        first, second = agent(), agent()
        keys: dict[str, str] = {}
        for name, one in (("first", first), ("second", second)):
            one.state.messages = results(1, text=f" of {name}")[:-1]
            one.run_sync("go")
            keys[name] = shown(one.state.messages)[0]
        assert keys["first"] != keys["second"]
        assert list(store) == []  # nothing in the unscoped namespace
        mine = store.scoped(first.state.conversation)
        assert mine.get(keys["first"]) is not None
        assert mine.get(keys["second"]) is None
        with conversation(first.state.conversation):
            assert "of first" in recall(store, keys["first"]).text
            assert recall(store, keys["second"]).is_error
        again = agent()
        again.load_state(first.state.to_dict())
        assert again.state.conversation == first.state.conversation

    def test_recall_in_the_loop(self) -> None:
        """The recall tool inside an agent's run reads that agent's conversation."""
        store = MemoryStore()
        key = store.scoped("other").put("not yours")
        seen: list[str] = []

        def reply(request: CompletionRequest) -> CompletionResponse | str:
            results = [b.text for m in request.messages for b in m.tool_results]
            if not results:
                use = ToolUse(id="r1", name="recall", input={"key": key})
                return CompletionResponse(
                    Message.assistant("", tool_uses=[use]), stop_reason="tool_use"
                )
            seen.extend(results)
            return "Done."

        create_agent(FunctionProvider(reply), [recall_tool(store)]).run_sync("go")
        assert len(seen) == 1
        assert "no content under key" in seen[0]

    def test_a_scoped_store_stays(self) -> None:
        """A store the user scoped is not scoped again by the agent."""
        store = MemoryStore()
        mine = store.scoped("mine")
        agent = create_agent(
            FunctionProvider(lambda request: "Done."),
            options=AgentOptions(context=ToolResultClearingStrategy(0, 10, store=mine)),
        )
        agent.state.messages = results(1)[:-1]
        agent.run_sync("go")
        assert shown(agent.state.messages)[0] in set(mine)
