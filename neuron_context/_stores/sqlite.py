"""The durable store of one deployment: a SQLite file (the standard library's sqlite3).

One table, ``key TEXT PRIMARY KEY, text TEXT, stamp REAL`` (``stamp``: wall-clock
seconds of the entry's last put; a text holding lone surrogates is stored as its
``surrogatepass`` UTF-8 bytes, which SQLite keeps as a blob in the same column; a scope's
entries are named ``<scope>/<key>``). The database is opened in WAL mode so that several
processes on one machine share the file (readers never wait for a writer); within a
process one connection is shared by all threads behind a lock (SQLite's own
serialization, made explicit), and each put commits before it returns, so what a put
acknowledged survives a crash of the process.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import Self

import attrs

from .._errors import ConfigurationError
from .._validators import fail, number, optional, positive_int
from .batch import spared
from .growth import max_age_field
from .serialized import from_bytes, to_bytes
from .store import Store

__all__ = ["SQLiteStore"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS neuron_context_store "
    "(key TEXT PRIMARY KEY, text TEXT NOT NULL, stamp REAL NOT NULL)"
)
_STAMPS = "CREATE INDEX IF NOT EXISTS neuron_context_store_stamp ON neuron_context_store (stamp)"
"""The age limit and the size cap delete by stamp: an index, not a scan per put."""


def _path(value: object) -> str:
    if isinstance(value, str | os.PathLike):
        return os.fspath(value)
    where, problem = "SQLiteStore.path", f"must be a str or a path, got {type(value).__name__}"
    raise fail(where, problem)


@attrs.define
class SQLiteStore(Store):
    """Holds offloaded content in a SQLite file: durable across restarts, one file per
    deployment (``":memory:"`` for a private in-memory database).

    Examples:
        >>> store = SQLiteStore(":memory:", max_age=7 * 24 * 3600)
        >>> store.get(store.put("a long build log"))
        'a long build log'
    """

    path: str = attrs.field(converter=_path)
    """The database file (created with its table when missing)."""
    max_items: int | None = attrs.field(
        default=None, kw_only=True, validator=optional(positive_int())
    )
    """Keep at most this many entries: a put beyond it deletes the oldest that the current
    compaction neither put nor shows (``None``: no cap)."""
    max_age: float | None = max_age_field()
    """Forget an entry this many seconds after its last put (``None``: never)."""
    timeout: float = attrs.field(default=5.0, kw_only=True, validator=number(minimum=0))
    """Seconds a write waits for another process's lock before it fails."""
    _connection: sqlite3.Connection = attrs.field(init=False, repr=False, eq=False)
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False, repr=False, eq=False)
    _closed: bool = attrs.field(default=False, init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        try:
            connection = sqlite3.connect(
                self.path, timeout=self.timeout, check_same_thread=False, isolation_level=None
            )
            if self.path != ":memory:":
                connection.execute("PRAGMA journal_mode=WAL")
            connection.execute(_SCHEMA)
            connection.execute(_STAMPS)
        except sqlite3.Error as exc:
            msg = f"SQLiteStore: cannot open {self.path!r} as a store: {exc}"
            raise ConfigurationError(msg) from exc
        self._connection = connection

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _db(self) -> sqlite3.Connection:
        """The connection (called under the lock).

        Raises:
            ConfigurationError: the store was closed.
        """
        if self._closed:
            msg = f"SQLiteStore({self.path!r}) is closed: it cannot be used after close()"
            raise ConfigurationError(msg)
        return self._connection

    def _oldest_kept(self) -> float:
        return -1.0 if self.max_age is None else time.time() - self.max_age

    def _write(self, key: str, text: str) -> None:
        now = time.time()
        value = _storable(text)
        kept = json.dumps(sorted(spared(self))) if self.max_items is not None else "[]"
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "INSERT INTO neuron_context_store (key, text, stamp) VALUES (?, ?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET stamp = excluded.stamp",
                    (key, value, now),
                )
                if self.max_age is not None:
                    db.execute(
                        "DELETE FROM neuron_context_store WHERE stamp < ?", (self._oldest_kept(),)
                    )
                if self.max_items is not None:
                    (held,) = db.execute("SELECT count(*) FROM neuron_context_store").fetchone()
                    if held > self.max_items:
                        db.execute(
                            "DELETE FROM neuron_context_store WHERE key IN (SELECT key FROM "
                            "neuron_context_store WHERE key NOT IN (SELECT value FROM "
                            "json_each(?)) ORDER BY stamp ASC, rowid ASC LIMIT ?)",
                            (kept, held - self.max_items),
                        )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def _read(self, key: str) -> str | None:
        query = "SELECT text FROM neuron_context_store WHERE key = ? AND stamp >= ?"
        with self._lock:
            row = self._db().execute(query, (key, self._oldest_kept())).fetchone()
        if row is None:
            return None
        value = row[0]
        return from_bytes(value) if isinstance(value, bytes) else str(value)

    def _keys(self) -> Iterator[str]:
        return self._names("")

    def _names(self, prefix: str) -> Iterator[str]:
        query = "SELECT key FROM neuron_context_store WHERE stamp >= ? AND substr(key, 1, ?) = ?"
        with self._lock:
            rows = self._db().execute(query, (self._oldest_kept(), len(prefix), prefix)).fetchall()
        return iter([str(row[0]) for row in rows])

    def close(self) -> None:
        """Close the database connection (the store cannot be used afterwards; a
        ``with SQLiteStore(...) as store:`` block closes it at its end; using it then
        raises a :class:`~neuron_context.ConfigurationError`; closing it again does
        nothing)."""
        with self._lock:
            self._closed = True
            self._connection.close()


def _storable(text: str) -> str | bytes:
    """``text`` as SQLite can bind it: itself, or its ``surrogatepass`` bytes when it
    holds lone surrogates (which sqlite3 cannot encode)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return to_bytes(text)
    return text
