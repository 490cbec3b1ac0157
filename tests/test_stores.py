"""The store contract, one suite run against every store: exact round trip, one key per
content, keys listed, concurrency from threads and tasks, bounded growth."""

from __future__ import annotations

import concurrent.futures
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import conversations, surrogate_texts, texts

from neuron_context import ConfigurationError, MemoryStore, Message, RedisStore, SQLiteStore
from neuron_context.stores import Store, content_key, conversation

KINDS = ["memory", "sqlite", "redis"]


def make_store(kind: str, tmp: Path, redis_url: str | None = None, **limits: float) -> Store:
    if kind == "memory":
        return MemoryStore(**limits)  # type: ignore[arg-type]
    if kind == "sqlite":
        return SQLiteStore(tmp / f"{uuid.uuid4().hex}.db", **limits)  # type: ignore[arg-type]
    assert redis_url is not None
    return RedisStore(
        url=redis_url, prefix=f"test:{uuid.uuid4().hex}:", max_age=limits.get("max_age")
    )


@pytest.fixture(params=KINDS)
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Store]:
    """Each store in turn (Redis against the session's real server)."""
    kind = str(request.param)
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    made = make_store(kind, tmp_path_factory.mktemp(kind), url)
    yield made
    if isinstance(made, SQLiteStore):
        made.close()


_settings = settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=25)


class TestContract:
    """What every store promises."""

    @_settings
    @given(text=texts(max_size=2_000))
    def test_text_round_trip(self, store: Store, text: str) -> None:
        """A text comes back exactly, under the key any store gives it."""
        key = store.put(text)
        assert key == content_key(text)
        assert store.get(key) == text

    @_settings
    @given(messages=conversations(max_turns=4))
    def test_messages_round_trip(self, store: Store, messages: list[Message]) -> None:
        """Messages come back equal, every block and field."""
        key = store.put(messages)
        assert store.get(key) == messages

    def test_same_content_same_key(self, store: Store) -> None:
        """The same content put twice has one key and one entry; other content another."""
        first = store.put([Message.user("a"), Message.assistant("b")])
        second = store.put([Message.user("a"), Message.assistant("b")])
        other = store.put("a")
        assert first == second != other
        assert sorted(store) == sorted({first, other})

    def test_unknown_key(self, store: Store) -> None:
        """An unknown key (or no string at all) is None, not an error."""
        assert store.get("0123456789abcdef") is None
        assert store.get(42) is None  # type: ignore[arg-type]
        assert "0123456789abcdef" not in store

    def test_bad_content(self, store: Store) -> None:
        """Content that is neither text nor messages is refused where it crosses in."""
        with pytest.raises(ConfigurationError, match=r"put: content must be"):
            store.put([Message.user("a"), "b"])  # type: ignore[list-item]

    def test_threads(self, store: Store) -> None:
        """Eight threads putting and reading at once lose nothing."""

        def work(worker: int) -> list[tuple[str, str]]:
            done = []
            for item in range(40):
                text = f"worker {worker} item {item}"
                key = store.put(text)
                assert store.get(key) == text
                done.append((key, text))
            return done

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            results = [pair for done in pool.map(work, range(8)) for pair in done]
        assert {key for key, _ in results} == set(store)
        assert all(store.get(key) == text for key, text in results)

    @pytest.mark.anyio
    async def test_tasks(self, store: Store) -> None:
        """Tasks that reach the store through worker threads (as the recall tools do)
        lose nothing."""
        texts_put = [f"task {n}" for n in range(60)]
        keys: list[str] = []

        async def put(text: str) -> None:
            keys.append(await anyio.to_thread.run_sync(store.put, text))

        async with anyio.create_task_group() as group:
            for text in texts_put:
                group.start_soon(put, text)
        assert sorted(store.get(key) for key in keys) == sorted(texts_put)  # type: ignore[type-var]


class TestLimits:
    """Bounded growth: the optional size cap and age."""

    @pytest.mark.parametrize("kind", ["memory", "sqlite"])
    def test_max_items(self, kind: str, tmp_path: Path) -> None:
        """Past the cap, the oldest entries go."""
        store = make_store(kind, tmp_path, max_items=3)
        keys = [store.put(f"entry {n}") for n in range(5)]
        assert sorted(store) == sorted(keys[2:])
        assert store.get(keys[0]) is None

    @pytest.mark.parametrize("kind", ["memory", "sqlite"])
    def test_max_age(self, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """An entry older than max_age is gone (the clock is moved, not waited for)."""
        store = make_store(kind, tmp_path, max_age=60)
        key = store.put("old")
        later_wall, later_mono = time.time() + 61, time.monotonic() + 61
        monkeypatch.setattr(time, "time", lambda: later_wall)
        monkeypatch.setattr(time, "monotonic", lambda: later_mono)
        assert store.get(key) is None
        assert list(store) == []

    def test_redis_expiry(self, redis_url: str) -> None:
        """RedisStore hands max_age to Redis (the key carries a time to live)."""
        import redis

        client = redis.Redis.from_url(redis_url)
        store = RedisStore(client=client, prefix="ttl:", max_age=60)
        key = store.put("old")
        assert 0 < client.pttl(f"ttl:{key}") <= 60_000

    @pytest.mark.parametrize(
        "make",
        [
            lambda: MemoryStore(max_items=0),
            lambda: MemoryStore(max_age=-1),
            lambda: SQLiteStore(42),
            lambda: SQLiteStore(":memory:", max_age=float("nan")),
        ],
    )
    def test_bad_limits(self, make: object) -> None:
        """Limits are checked at construction."""
        with pytest.raises(ConfigurationError):
            make()  # type: ignore[operator]


class TestSQLite:
    """The SQLite store's durability."""

    def test_survives_reopen(self, tmp_path: Path) -> None:
        """What one store put, another opened on the same file reads (a restart)."""
        path = tmp_path / "offload.db"
        first = SQLiteStore(path)
        key = first.put([Message.user("the task"), Message.assistant("done")])
        first.close()
        second = SQLiteStore(str(path))
        assert second.get(key) == [Message.user("the task"), Message.assistant("done")]
        assert list(second) == [key]
        second.close()

    def test_two_connections(self, tmp_path: Path) -> None:
        """Two stores on one file (as two processes would be) write at once and each
        reads what the other wrote."""
        path = tmp_path / "shared.db"
        first, second = SQLiteStore(path), SQLiteStore(path)

        def work(store: SQLiteStore, name: str) -> list[str]:
            return [store.put(f"{name} {n}") for n in range(50)]

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            keys = [
                *pool.submit(work, first, "a").result(),
                *pool.submit(work, second, "b").result(),
            ]
        assert set(first) == set(second) == set(keys)
        assert second.get(keys[0]) == "a 0"
        first.close()
        second.close()


class TestKeys:
    """Keys are a function of the content alone."""

    @given(text=st.text(max_size=200))
    def test_stores_agree(self, text: str) -> None:
        """Memory and SQLite stores give one content one key."""
        assert MemoryStore().put(text) == SQLiteStore(":memory:").put(text) == content_key(text)

    def test_text_is_not_messages(self) -> None:
        """A text and messages holding it have different keys."""
        assert content_key("hi") != content_key([Message.user("hi")])


class TestSQLiteBoundaries:
    """What crosses into a SQLite store is a library error; the store closes itself."""

    def test_a_folder_that_does_not_exist(self, tmp_path: Path) -> None:
        """A path it cannot open is a ConfigurationError naming it."""
        with pytest.raises(ConfigurationError, match="cannot open"):
            SQLiteStore(tmp_path / "missing" / "store.db")

    def test_a_with_block_closes_it(self, tmp_path: Path) -> None:
        """The store is a context manager; its content survives for the next one."""
        with SQLiteStore(tmp_path / "s.db") as store:
            key = store.put("kept")
        with SQLiteStore(tmp_path / "s.db") as again:
            assert again.get(key) == "kept"


def make_any(kind: str, tmp: Path, redis_url: str | None, **limits: float) -> Store:
    """Every store, the LangGraph one over LangGraph's InMemoryStore included."""
    if kind == "langgraph":
        pytest.importorskip("langgraph")
        from langgraph.store.memory import InMemoryStore

        from neuron_context.ext.langchain import LangGraphStore

        return LangGraphStore(InMemoryStore())
    return make_store(kind, tmp, redis_url, **limits)


@pytest.fixture(params=[*KINDS, "langgraph"])
def any_store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Store]:
    """Each store in turn, the LangGraph store included."""
    kind = str(request.param)
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    made = make_any(kind, tmp_path_factory.mktemp(kind), url)
    yield made
    if isinstance(made, SQLiteStore):
        made.close()


scope_names = st.text(min_size=1, max_size=12) | st.sampled_from(["a", "a/b", "a%2Fb", "a.b", "%"])


class TestScoping:
    """store.scoped(name): a namespace of the same store, in every store."""

    def test_views_are_isolated(self, any_store: Store) -> None:
        """A scope's put, get and iteration stay inside it; the store sees only its own."""
        a, b = any_store.scoped("user1"), any_store.scoped("user12")
        key_a, key_b, key_root = a.put("for a"), b.put("for b"), any_store.put("for all")
        assert (a.get(key_a), b.get(key_b), any_store.get(key_root)) == (
            "for a",
            "for b",
            "for all",
        )
        assert a.get(key_b) is None
        assert b.get(key_a) is None
        assert any_store.get(key_a) is None
        assert a.get(key_root) is None
        assert (list(a), list(b), list(any_store)) == ([key_a], [key_b], [key_root])
        assert a.scope == ("user1",)
        assert any_store.scope == ()

    def test_the_same_content_in_two_scopes(self, any_store: Store) -> None:
        """One content put in two scopes is two entries with the same key."""
        a, b = any_store.scoped("a"), any_store.scoped("b")
        assert a.put("same") == b.put("same") == content_key("same")
        b_key = content_key("same")
        assert a.get(b_key) == b.get(b_key) == "same"
        assert list(any_store) == []

    def test_nested_scopes(self, any_store: Store) -> None:
        """A scope of a scope is a namespace of its own, unseen by its parent."""
        parent = any_store.scoped("tenant")
        child = parent.scoped("thread")
        key = child.put("deep")
        assert child.scope == ("tenant", "thread")
        assert (child.get(key), parent.get(key), list(parent)) == ("deep", None, [])

    @settings(
        suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=15, deadline=None
    )
    @given(first=scope_names, second=scope_names)
    def test_names_never_meet(self, any_store: Store, first: str, second: str) -> None:
        """Two different names (slashes, percent signs, periods, surrogates) never share
        an entry."""
        if first == second:
            return
        key = any_store.scoped(first).put(f"only in {first!r}")
        assert any_store.scoped(second).get(key) is None
        assert key not in set(any_store.scoped(second))

    def test_conversation(self, any_store: Store) -> None:
        """Inside conversation(name) an unscoped store is that view; a scoped one stays."""
        elsewhere = any_store.scoped("elsewhere")
        with conversation("c1"):
            key = any_store.put("in c1")
            other = elsewhere.put("stays elsewhere")
            assert any_store.get(key) == "in c1"
        assert any_store.get(key) is None
        assert any_store.scoped("c1").get(key) == "in c1"
        assert elsewhere.get(other) == "stays elsewhere"
        with conversation("c2"):
            assert any_store.get(key) is None

    @pytest.mark.parametrize("name", ["", None, 3])
    def test_bad_names(self, name: object) -> None:
        """A scope's name is a non-empty string, checked where it crosses in."""
        with pytest.raises(ConfigurationError, match="name must be"):
            MemoryStore().scoped(name)  # type: ignore[arg-type]
        if name is not None:
            with pytest.raises(ConfigurationError, match="name must be"), conversation(name):  # type: ignore[arg-type]
                pass

    def test_redis_prefixes_cannot_be_escaped(self, redis_url: str) -> None:
        """A prefix that starts another tenant's never reaches it: not by get, not by
        iteration."""
        one = RedisStore(url=redis_url, prefix="nc:user1")
        twelve = RedisStore(url=redis_url, prefix="nc:user12")
        key = twelve.put("secret of user12")
        scoped_key = twelve.scoped("x").put("secret of user12's x")
        assert one.get("2" + key) is None
        assert one.get("2" + key[:-1]) is None
        assert list(one) == []
        assert twelve.get(key) == "secret of user12"
        for name in ("2x", "2", ":x", "2:x"):  # a conversation name chosen to reach it
            assert one.scoped(name).get(scoped_key) is None
            assert list(one.scoped(name)) == []
        assert twelve.scoped("x").get(scoped_key) == "secret of user12's x"

    @_settings
    @given(key=st.text(max_size=40) | surrogate_texts())
    def test_any_string_key(self, any_store: Store, key: str) -> None:
        """get of any string is None or the content, never an exception."""
        assert any_store.get(key) is None
        assert key not in any_store


class TestSurrogates:
    """Every text a Message accepts is stored and read back, under the same key."""

    @_settings
    @given(text=surrogate_texts())
    def test_text(self, any_store: Store, text: str) -> None:
        """A text with lone surrogates round-trips in every store, under content_key."""
        key = any_store.put(text)
        assert key == content_key(text)
        assert any_store.get(key) == text
        assert any_store.scoped("s").get(any_store.scoped("s").put(text)) == text

    @_settings
    @given(text=surrogate_texts())
    def test_messages(self, any_store: Store, text: str) -> None:
        """Messages holding them round-trip too."""
        messages = [Message.user(text), Message.tool_result("c1", text)]
        assert any_store.get(any_store.put(messages)) == messages

    def test_a_pair_stays_two_code_points(self, any_store: Store) -> None:
        """A high and a low surrogate side by side come back as two code points."""
        text = "\ud83d\ude00"
        assert any_store.get(any_store.put(text)) == text
        assert len(text) == 2
