"""The :class:`Store` protocol: put content, get it back by its key, iterate the keys.

A store is a map from keys to encoded content
(:mod:`~neuron_context._stores.content`): the key is computed from the content, so
:meth:`Store.put` is idempotent and a store only ever writes, reads and lists text under
a key. An implementation supplies those three (``_write``, ``_read``, ``_keys``); the
encoding, the key and the checks are written once here.

Stores are synchronous, like the counters: a strategy compacts in
:meth:`~neuron_context.strategies.ContextStrategy.compact` and in the synchronous
``apply``, and puts what it removes as it goes (an in-process or local store answers in
microseconds). Asynchronous code that reads a store (the recall tool) calls it in a
worker thread (``anyio.to_thread.run_sync``), so a network store never blocks an event
loop there. Every built-in store is safe to share between threads.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator

from .._validators import Validator, instance_of, optional
from .serialized import Content, decode, encode, key_of_encoded

__all__ = ["Store", "optional_store"]


class Store(abc.ABC):
    """Where a strategy puts what it removes, under a key it can be read back by.

    ``put(content)`` returns the key (the same content always gets the same key, in any
    store); ``get(key)`` returns exactly what was put (``None`` for a key it does not
    hold: never put, expired or evicted); iterating a store yields its keys.

    An implementation subclasses :class:`Store` and implements ``_write(key, text)``,
    ``_read(key) -> str | None`` and ``_keys() -> Iterator[str]`` over text.
    """

    def put(self, content: Content) -> str:
        """Store ``content`` (a list of :class:`~neuron_context.Message` or a ``str``) and
        return its key.

        Raises:
            ConfigurationError: ``content`` is neither.
        """
        text = encode(content, f"{type(self).__name__}.put")
        key = key_of_encoded(text)
        self._write(key, text)
        return key

    def get(self, key: str) -> Content | None:
        """What was put under ``key``, equal to it, or ``None``."""
        if not isinstance(key, str):
            return None
        text = self._read(key)
        return None if text is None else decode(text)

    def __iter__(self) -> Iterator[str]:
        """The keys the store holds (in no particular order)."""
        return self._keys()

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._read(key) is not None

    @abc.abstractmethod
    def _write(self, key: str, text: str) -> None:
        """Hold ``text`` under ``key`` (writing it again refreshes its age)."""

    @abc.abstractmethod
    def _read(self, key: str) -> str | None:
        """The text under ``key``, or ``None``."""

    @abc.abstractmethod
    def _keys(self) -> Iterator[str]:
        """The keys held."""


def optional_store() -> Validator:
    """The validator of a strategy's ``store=`` field: a :class:`Store` or ``None``."""
    return optional(instance_of(Store, "a Store"))
