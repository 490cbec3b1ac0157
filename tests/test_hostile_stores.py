"""Hostile cases against the stores: any string key, any text, any scope name, a closed
store, a failing store, a cap, and two conversations sharing one store (memory, SQLite
and Redis alike)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from offload_support import block_texts, keys_in
from strategies import surrogate_texts

from neuron_context import (
    MemoryStore,
    Message,
    NeuronContextError,
    SQLiteStore,
    Store,
    ToolResultClearingStrategy,
    ToolUse,
    default_stack,
)
from neuron_context.stores import RedisStore, conversation, recall, search

StoreFactory = Callable[[], Store]

_factory_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
"""The store fixture is a factory: each example makes its own store."""


def compacted(strategy: object, messages: list[Message]) -> list[Message]:
    """``strategy.compact(messages)``, from sync code."""
    compact = strategy.compact  # type: ignore[attr-defined]
    result: list[Message] = anyio.run(compact, messages)
    return result


def _results(n: int, text: str = "", size: int = 300) -> list[Message]:
    """A task, ``n`` large tool results, and a new request."""
    messages = [Message.user("Read every file.")]
    for i in range(n):
        use = ToolUse(id=f"c{i}", name="read_file", input={"path": f"f{i}.py"})
        messages.append(Message.assistant("", tool_uses=[use]))
        messages.append(Message.tool_result(f"c{i}", f"file {i}{text}\n" + "x = 1\n" * size))
    messages.append(Message.user("Now fix them."))
    return messages


@pytest.fixture(params=["memory", "sqlite", "redis", "langgraph"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """A factory of fresh stores of each kind (Redis: a fresh prefix on one server)."""
    made: list[Store] = []
    if request.param == "memory":
        yield MemoryStore
    elif request.param == "sqlite":
        counter = iter(range(1_000_000))

        def sqlite() -> Store:
            store = SQLiteStore(":memory:" if next(counter) else tmp_path / "s.db")
            made.append(store)
            return store

        yield sqlite
        for store in made:
            assert isinstance(store, SQLiteStore)
            store.close()
    elif request.param == "langgraph":
        pytest.importorskip("langgraph")
        from langgraph.store.memory import InMemoryStore

        from neuron_context.ext.langchain import LangGraphStore

        yield lambda: LangGraphStore(InMemoryStore(), namespace=("team",))
    else:
        url = request.getfixturevalue("redis_url")
        counter = iter(range(1_000_000))
        run = time.monotonic_ns()
        yield lambda: RedisStore(url=url, prefix=f"hostile{run}x{next(counter)}")


# Any string key: None or the content, never an exception.
_ODD_KEYS = [
    "",
    " ",
    "0" * 15,
    "0" * 17,
    "A" * 16,
    "g" * 16,
    "\ud800" * 16,
    "*",
    "?" * 16,
    "[a-z]*",
    "../" * 10,
    "a/" + "0" * 16,
    ":" + "0" * 16,
    "0" * 16 + "\n",
    "x" * 1_000_000,
]


class TestAnyKey:
    """``get`` of any value is ``None`` or the content; ``in`` never raises."""

    @pytest.mark.parametrize("key", _ODD_KEYS, ids=range(len(_ODD_KEYS)))
    def test_odd_string_keys(self, make_store: StoreFactory, key: str) -> None:
        """Odd strings, glob characters, paths, a 1 MB key: ``None``."""
        store = make_store()
        store.put("something")
        assert store.get(key) is None
        assert key not in store

    @pytest.mark.parametrize("key", [None, 1, 1.5, b"0" * 16, ("a",), object()])
    def test_non_str_keys(self, make_store: StoreFactory, key: object) -> None:
        """A key that is not a str (bytes of a key's shape included): ``None``."""
        store = make_store()
        store.put("something")
        assert store.get(key) is None  # type: ignore[arg-type]
        assert key not in store

    def test_recall_of_a_huge_key_is_bounded(self) -> None:
        """The recall tool's error for a 1 MB key shows it cut to about 80 characters."""
        found = recall(MemoryStore(), "k" * 1_000_000)
        assert found.is_error
        assert len(found.text) < 400


class TestEveryText:
    """Every text a Message accepts is stored and recalled, identically in every store."""

    @_factory_ok
    @given(text=surrogate_texts())
    def test_round_trip_with_surrogates(self, make_store: StoreFactory, text: str) -> None:
        """A text with lone surrogates: the same key in every store, read back equal."""
        store = make_store()
        key = store.put(text)
        assert key == MemoryStore().put(text)
        assert store.get(key) == text
        assert key in set(store)

    @_factory_ok
    @given(text=surrogate_texts())
    def test_messages_with_surrogates(self, make_store: StoreFactory, text: str) -> None:
        """Messages holding them (a tool result, a tool input) round-trip too."""
        store = make_store()
        use = ToolUse(id="c\udcff", name="run", input={"cmd": text})
        content = [Message.assistant(text, tool_uses=[use]), Message.tool_result(use.id, text)]
        assert store.get(store.put(content)) == content

    def test_nul_and_controls(self, make_store: StoreFactory) -> None:
        """NUL bytes, control characters and a BOM survive every store."""
        text = "a\x00b\x01\x7f\ufeff\r\n\u2028end"
        store = make_store()
        assert store.get(store.put(text)) == text

    def test_clearing_offloads_surrogates(self, make_store: StoreFactory) -> None:
        """ToolResultClearingStrategy(store=) clears a binary-ish result and it is
        recallable."""
        store = make_store()
        messages = _results(4, text=" binary \udcff\udcfe")
        strategy = ToolResultClearingStrategy(1, 100, store=store)
        out = strategy.apply(messages)
        keys = keys_in(block_texts(out))
        assert len(keys) == 3
        for key in keys:
            value = store.get(key)
            assert value is not None
            assert "\udcff" in str(value)


_SCOPE_NAMES = st.one_of(
    st.text(min_size=1, max_size=30),
    surrogate_texts(max_size=20),
    st.sampled_from(
        ["a", "a/b", "a%2Fb", "a:", ":", "/", "%", "*", "?", "[", "\\", "..", "a" * 500]
    ),
)


class TestScopes:
    """A scope's keys, get, put and iteration stay inside it; no name reaches another."""

    @_factory_ok
    @given(first=_SCOPE_NAMES, second=_SCOPE_NAMES)
    def test_two_scopes_never_meet(self, make_store: StoreFactory, first: str, second: str) -> None:
        """Two different names (any text, separators, surrogates): disjoint views."""
        if first == second:
            return
        store = make_store()
        a, b = store.scoped(first), store.scoped(second)
        key = a.put("secret of a")
        assert a.get(key) == "secret of a"
        assert b.get(key) is None
        assert store.get(key) is None
        assert list(b) == []
        assert list(store) == []
        assert key not in b

    def test_nested_scope_is_not_a_flat_one(self, make_store: StoreFactory) -> None:
        """``scoped("a").scoped("b")`` is not ``scoped("a/b")`` nor ``scoped("a")``."""
        store = make_store()
        nested = store.scoped("a").scoped("b")
        key = nested.put("deep")
        for other in (store.scoped("a/b"), store.scoped("a"), store.scoped("b"), store):
            assert other.get(key) is None
            assert list(other) == []
        assert nested.get(key) == "deep"

    @pytest.mark.parametrize("name", ["", None, 1, b"a"])
    def test_bad_scope_names(self, name: object) -> None:
        """An empty or non-str name is a ConfigurationError naming it."""
        with pytest.raises(NeuronContextError, match="scoped"):
            MemoryStore().scoped(name)  # type: ignore[arg-type]

    def test_conversation_view(self, make_store: StoreFactory) -> None:
        """An unscoped store inside ``conversation(name)`` is that conversation's view;
        a scoped store stays in its own scope there."""
        store = make_store()
        with conversation("alice"):
            key = store.put("alice's log")
            assert store.get(key) == "alice's log"
        with conversation("bob"):
            assert store.get(key) is None
            assert recall(store, key).is_error
            assert "log" not in search(store, "alice's").text
        assert store.get(key) is None
        assert store.scoped("alice").get(key) == "alice's log"
        mine = store.scoped("carol")
        with conversation("alice"):
            other = mine.put("carol's")
        assert mine.get(other) == "carol's"
        assert store.scoped("alice").get(other) is None

    def test_recall_by_a_key_of_another_conversation(self, make_store: StoreFactory) -> None:
        """What conversation B offloaded through default_stack is unknown to A's recall,
        whatever A is given (B's key, the key with a prefix, the raw entry name)."""
        store = make_store()
        stack = default_stack(1_500, store=store)
        with conversation("b"):
            out = compacted(stack, _results(8))
        keys = keys_in(block_texts(out))
        assert keys
        with conversation("a"):
            for key in keys:
                for guess in (key, f"b/{key}", f"2{key}", f"b:{key}", f"../b/{key}"):
                    assert recall(store, guess).is_error
            found = search(store, "file")
            assert not any(key in found.text for key in keys)


class TestRedisPrefixes:
    """A Redis prefix cannot be escaped, even one that another starts with."""

    def test_prefix_that_starts_another(self, redis_url: str) -> None:
        """``nc:user1`` and ``nc:user12`` (and ``nc:user1:2``) never see each other."""
        run = time.monotonic_ns()
        one = RedisStore(url=redis_url, prefix=f"nc{run}:user1")
        twelve = RedisStore(url=redis_url, prefix=f"nc{run}:user12")
        deeper = RedisStore(url=redis_url, prefix=f"nc{run}:user1:2")
        key = twelve.put("twelve's")
        deep = deeper.put("deeper's")
        for guess in (key, "2" + key, "2:" + key, ":" + key, deep, "2:" + deep):
            assert one.get(guess) is None
        assert list(one) == []
        assert twelve.get(deep) is None

    @pytest.mark.parametrize("prefix", ["*", "a[", "?", "\\", "a*b", ""])
    def test_glob_prefixes(self, redis_url: str, prefix: str) -> None:
        """A prefix with glob characters lists only its own entries."""
        run = time.monotonic_ns()
        store = RedisStore(url=redis_url, prefix=f"g{run}{prefix}")
        neighbour = RedisStore(url=redis_url, prefix=f"g{run}{prefix}x")
        key = store.put("mine")
        neighbour.put("not mine")
        assert list(store) == [key]


class TestRedisClients:
    """A ready Redis client that decodes responses reads every text too."""

    def test_decode_responses(self, redis_url: str) -> None:
        """``redis.Redis(decode_responses=True)``: lone surrogates and non-ASCII read
        back; the keys list."""
        import redis

        client = redis.Redis.from_url(redis_url, decode_responses=True)
        store = RedisStore(client=client, prefix=f"decoding{time.monotonic_ns()}")
        texts = ["plain", "émoji 🙂", "binary \udcff\udcfe output", "\ud800"]
        keys = [store.put(text) for text in texts]
        assert [store.get(key) for key in keys] == texts
        assert set(store) == set(keys)
        client.close()


class TestClosed:
    """A closed SQLite store: its errors are the library's own, and a compaction that
    offloads to it still completes."""

    def test_use_after_close(self, tmp_path: Path) -> None:
        """get/put/iterate after close raise a NeuronContextError, not sqlite3's."""
        store = SQLiteStore(tmp_path / "s.db")
        key = store.put("x")
        store.close()
        for call in (lambda: store.get(key), lambda: store.put("y"), lambda: list(store)):
            with pytest.raises(NeuronContextError, match="closed"):
                call()

    def test_close_twice(self, tmp_path: Path) -> None:
        """Closing twice is harmless (a with-block after a close)."""
        store = SQLiteStore(tmp_path / "s.db")
        store.close()
        store.close()

    def test_compaction_offloading_to_a_closed_store(self, tmp_path: Path) -> None:
        """default_stack(store=closed) compacts, without references."""
        store = SQLiteStore(tmp_path / "s.db")
        store.close()
        stack = default_stack(1_500, store=store)
        out = compacted(stack, _results(8))
        assert stack.token_estimate(out) <= 1_500
        assert keys_in(block_texts(out)) == []

    def test_recall_of_a_closed_store(self, tmp_path: Path) -> None:
        """The recall tool's core answers an error result, never an exception."""
        store = SQLiteStore(tmp_path / "s.db")
        key = store.put("x")
        store.close()
        assert recall(store, key).is_error
        assert search(store, "x").is_error


_TIMED_OUT = "timed out"


class TestFailsOnce:
    """A store that hangs costs one timeout per compaction, however many puts."""

    def test_slow_store_is_skipped_after_its_first_failure(self) -> None:
        """Each call sleeps then times out: one compaction of 10 results costs one."""
        calls: list[str] = []

        class Slow(Store):
            def _write(self, key: str, text: str) -> None:
                calls.append(key)
                time.sleep(0.05)
                raise TimeoutError(_TIMED_OUT)

            def _read(self, key: str) -> str | None:
                calls.append(key)
                time.sleep(0.05)
                raise TimeoutError(_TIMED_OUT)

            def _keys(self) -> Iterator[str]:
                raise TimeoutError(_TIMED_OUT)

        stack = default_stack(1_500, store=Slow())
        out = compacted(stack, _results(10))
        assert len(calls) == 1
        assert keys_in(block_texts(out)) == []
        assert stack.token_estimate(out) <= 1_500
        calls.clear()
        compacted(stack, _results(10, text=" again"))
        assert len(calls) == 1  # the next compaction tries again, once


class TestCaps:
    """A cap never evicts a key the compaction just returned."""

    @pytest.mark.parametrize("kind", ["memory", "sqlite"])
    @given(cap=st.integers(1, 6), n=st.integers(2, 12))
    def test_every_reference_is_readable(self, kind: str, cap: int, n: int) -> None:
        """MemoryStore/SQLiteStore(max_items=cap) under default_stack: every key the
        compacted request shows is readable right after."""
        capped: Store = (
            MemoryStore(max_items=cap)
            if kind == "memory"
            else SQLiteStore(":memory:", max_items=cap)
        )
        out = compacted(default_stack(1_500, store=capped), _results(n))
        for key in keys_in(block_texts(out)):
            assert capped.get(key) is not None


class TestConcurrency:
    """Concurrent compactions of one conversation through one store."""

    @pytest.mark.anyio
    async def test_concurrent_compactions(self, make_store: StoreFactory) -> None:
        """Eight tasks compact the same history through one store at once (in worker
        threads): the same result each time, every reference readable."""
        store = make_store()
        stack = default_stack(1_500, store=store)
        history = _results(10)
        outs: list[list[Message]] = []

        async def one() -> None:
            with conversation("shared"):
                outs.append(await anyio.to_thread.run_sync(compacted, stack, history))

        async with anyio.create_task_group() as group:
            for _ in range(8):
                group.start_soon(one)
        assert all(out == outs[0] for out in outs)
        with conversation("shared"):
            for key in keys_in(block_texts(outs[0])):
                assert store.get(key) is not None

    @pytest.mark.anyio
    async def test_concurrent_async_compactions(self) -> None:
        """The async compact of one stack, from many tasks in one thread: equal results."""
        store = MemoryStore(max_items=3)
        stack = default_stack(1_500, store=store)
        history = _results(10)
        outs: list[list[Message]] = []

        async def one() -> None:
            outs.append(await stack.compact(history))

        async with anyio.create_task_group() as group:
            for _ in range(6):
                group.start_soon(one)
        assert all(out == outs[0] for out in outs)
        for key in keys_in(block_texts(outs[0])):
            assert store.get(key) is not None

    def test_threads_put_and_get(self, make_store: StoreFactory) -> None:
        """Eight threads putting and reading one store: every put is read back."""
        store = make_store()
        errors: list[BaseException] = []

        def work(i: int) -> None:
            try:
                for j in range(10):
                    text = f"{i}-{j}\udcff"
                    assert store.get(store.put(text)) == text
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
