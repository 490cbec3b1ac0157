"""The :class:`Store` protocol: put content, get it back by its key, iterate the keys,
and see a namespace of it (:meth:`Store.scoped`).

A store is a map from keys to encoded content
(:mod:`~neuron_context._stores.serialized`): the key is computed from the content, so
:meth:`Store.put` is idempotent and a store only ever writes, reads and lists text under
a name. An implementation supplies those three (``_write``, ``_read``, ``_keys``); the
encoding, the key, the checks and the namespaces are written once here.

**Namespaces.** ``store.scoped("a")`` is a view of the same store whose entries are
named ``a/<key>`` (each part of a scope percent-encoded, so no name of one scope is a
name of another): its ``put``, ``get`` and iteration see only that namespace, and the
store itself sees only the unscoped entries. ``get`` reads only a key's shape (16 hex
digits, :func:`~neuron_context._stores.serialized.is_key`), so no string reaches past a
scope or a Redis prefix. An unscoped store used inside
:func:`~neuron_context._stores.scope.conversation` (the agent loop and the adapters
enter it for each conversation) is that conversation's view; a scoped store stays in
its own scope.

Stores are synchronous, like the counters: a strategy compacts in
:meth:`~neuron_context.strategies.ContextStrategy.compact` and in the synchronous
``apply``, and puts what it removes as it goes (an in-process or local store answers in
microseconds). Asynchronous code that reads a store (the recall tool) calls it in a
worker thread (``anyio.to_thread.run_sync``), so a network store never blocks an event
loop there. Every built-in store is safe to share between threads.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator
from urllib.parse import quote

from .._errors import ConfigurationError, show
from .._validators import Validator, instance_of, optional
from .batch import current
from .scope import conversation_name
from .serialized import Content, decode, encode, is_key, key_of_encoded, to_bytes

__all__ = ["Store", "optional_store", "scope_prefix"]


def scope_prefix(scope: Iterable[str]) -> str:
    """What the names of a scope's entries start with: each part percent-encoded
    (lone surrogates included), then ``/``."""
    return "".join(quote(to_bytes(part), safe="") + "/" for part in scope)


class Store(abc.ABC):
    """Where a strategy puts what it removes, under a key it can be read back by.

    ``put(content)`` returns the key (the same content always gets the same key, in any
    store); ``get(key)`` returns exactly what was put (``None`` for a key it does not
    hold: never put, expired or evicted); iterating a store yields its keys.

    ``store.scoped(name)`` is a view of the same store in the namespace ``name`` (see
    the module).

    An implementation subclasses :class:`Store` and implements ``_write(name, text)``,
    ``_read(name) -> str | None`` and ``_keys() -> Iterator[str]`` over text (a name is
    a key, or a scope's prefix and a key; a text may hold lone surrogates).
    """

    @property
    def scope(self) -> tuple[str, ...]:
        """The namespace this store sees (``()``: the unscoped one)."""
        return ()

    def scoped(self, name: str) -> Store:
        """A view of this store in the namespace ``name`` (inside this store's own):
        its keys, ``get``, ``put`` and iteration stay there.

        Raises:
            ConfigurationError: ``name`` is not a non-empty string.
        """
        if not isinstance(name, str) or not name:
            msg = f"{type(self).__name__}.scoped: name must be a non-empty str, got {show(name)}"
            raise ConfigurationError(msg)
        return self._view((*self.scope, name))

    def put(self, content: Content) -> str:
        """Store ``content`` (a list of :class:`~neuron_context.Message` or a ``str``) and
        return its key.

        Raises:
            ConfigurationError: ``content`` is neither.
        """
        text = encode(content, f"{type(self).__name__}.put")
        key = key_of_encoded(text)
        target = self._active()
        name = target._prefix() + key
        session = current()
        if session is not None:  # the cap spares what this compaction puts
            session.spare(target._identity(), (name,))
        target._base()._write(name, text)
        return key

    def get(self, key: str) -> Content | None:
        """What was put under ``key``, equal to it, or ``None`` (for any string that is
        not a key this store's namespace holds)."""
        if not is_key(key):
            return None
        target = self._active()
        text = target._base()._read(target._prefix() + key)
        return None if text is None else decode(text)

    def __iter__(self) -> Iterator[str]:
        """The keys the store holds in its namespace (in no particular order; the
        namespace is the one where the iteration starts)."""
        target = self._active()
        return _keys_under(target._base()._names(target._prefix()), target._prefix())

    def __contains__(self, key: object) -> bool:
        return self.get(key) is not None  # type: ignore[arg-type]

    def _names_of(self, keys: Iterable[str]) -> tuple[object, list[str]]:
        """The identity of what holds this store's data and the names of ``keys`` in it
        (what a compaction spares from eviction)."""
        target = self._active()
        prefix = target._prefix()
        return target._identity(), [prefix + key for key in keys if is_key(key)]

    def _active(self) -> Store:
        """This store as a call sees it: inside a conversation, an unscoped store is that
        conversation's view."""
        if self.scope:
            return self
        name = conversation_name()
        return self if name is None else self.scoped(name)

    def _view(self, scope: tuple[str, ...]) -> Store:
        """The view of the namespace ``scope`` (a store may give a native one)."""
        return ScopedStore(self._base(), scope)

    def _base(self) -> Store:
        """The store whose ``_write``, ``_read`` and ``_names`` hold the entries."""
        return self

    def _prefix(self) -> str:
        """What the names of this namespace's entries start with."""
        return ""

    def _identity(self) -> object:
        """What holds the data (a failing store fails once for all its views)."""
        return self

    def _names(self, prefix: str) -> Iterator[str]:
        """The names held that start with ``prefix`` (a store may ask its backend)."""
        return (name for name in self._keys() if name.startswith(prefix))

    @abc.abstractmethod
    def _write(self, key: str, text: str) -> None:
        """Hold ``text`` under the name ``key`` (writing it again refreshes its age)."""

    @abc.abstractmethod
    def _read(self, key: str) -> str | None:
        """The text under the name ``key``, or ``None``."""

    @abc.abstractmethod
    def _keys(self) -> Iterator[str]:
        """The names held."""


def _keys_under(names: Iterable[str], prefix: str) -> Iterator[str]:
    """The keys of the ``names`` that are ``prefix`` and a key (no deeper scope's)."""
    for name in names:
        if name.startswith(prefix) and is_key(key := name[len(prefix) :]):
            yield key


class ScopedStore(Store):
    """A namespace of another store: ``store.scoped(name)`` (see the module)."""

    __slots__ = ("_parent", "_scope")

    def __init__(self, base: Store, scope: tuple[str, ...]) -> None:
        self._parent = base
        self._scope = scope

    def __repr__(self) -> str:
        return f"{self._parent!r}.scoped({'/'.join(self._scope)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ScopedStore):
            return NotImplemented
        return self._parent is other._parent and self._scope == other._scope

    def __hash__(self) -> int:
        return hash((id(self._parent), self._scope))

    @property
    def scope(self) -> tuple[str, ...]:
        return self._scope

    def _base(self) -> Store:
        return self._parent

    def _prefix(self) -> str:
        return scope_prefix(self._scope)

    def _identity(self) -> object:
        return self._parent._identity()

    def _write(self, key: str, text: str) -> None:
        self._parent._write(key, text)

    def _read(self, key: str) -> str | None:
        return self._parent._read(key)

    def _keys(self) -> Iterator[str]:
        return self._parent._keys()


def optional_store() -> Validator:
    """The validator of a strategy's ``store=`` field: a :class:`Store` or ``None``."""
    return optional(instance_of(Store, "a Store"))
