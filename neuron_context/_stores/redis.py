"""The shared store of a fleet: Redis, through the ``redis`` client (the ``redis`` extra).

Workers that serve one session in turn (any of them may compact it, any may answer its
recall) need one store they all reach; the rest of what a turn needs travels with the
request. Each entry is a Redis string ``<prefix><key>``, a scope's
``<prefix><scope>/<key>`` (a ``:`` is added to a prefix that does not end in one, and no
name of an entry holds a ``:``, so one prefix never reaches another's entries, even one
it starts: ``nc:user1`` and ``nc:user12``), written with ``SET`` (and ``EX`` for
``max_age``: Redis expires it itself), read with ``GET``, listed with ``SCAN``. Texts
travel as UTF-8 with ``surrogatepass``, so lone surrogates round-trip. A size cap is
Redis's own: set ``maxmemory`` with an eviction policy (``allkeys-lru``) on the server.
A ready client may decode responses (``decode_responses=True``): entries are read as
bytes whatever it does.
The client is imported when the first store is built, so the package imports without
the extra.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import attrs

from .._errors import ConfigurationError
from .._extras import install_hint
from .._validators import string
from .growth import max_age_field
from .serialized import from_bytes, to_bytes
from .store import Store

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["RedisStore"]

_TIMEOUT = 5.0
"""Seconds a client built from a URL waits to connect, or for a reply, before failing."""


def _connect(url: str) -> Any:
    try:
        import redis
    except ImportError as exc:
        msg = f"RedisStore needs the redis client: {install_hint('redis')}"
        raise ConfigurationError(msg) from exc
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    # A server that hangs must cost only the offload (a failed put), not the loop: one
    # timeout, not the client's default retries (three, with backoff, in redis-py 6+).
    return redis.Redis.from_url(
        url,
        socket_timeout=_TIMEOUT,
        socket_connect_timeout=_TIMEOUT,
        retry=Retry(NoBackoff(), 0),
    )


@attrs.define
class RedisStore(Store):
    """Holds offloaded content in Redis, shared by every process that reaches it.

    Pass a ``url`` (``redis://host:6379/0``; the client built from it gives up after 5
    seconds to connect or to reply, without retrying) or a ready ``client`` (a
    ``redis.Redis``, for pools, TLS or a cluster, with its own timeouts and retries).
    Like every store it is synchronous; the recall tools call it in a worker thread.
    ``store.scoped(name)`` is a namespace of it: ``<prefix><name>/<key>``.

    Examples:
        >>> store = RedisStore(url="redis://127.0.0.1:6379/0", max_age=86_400)  # doctest: +SKIP
    """

    url: str = attrs.field(default="redis://127.0.0.1:6379/0", kw_only=True, validator=string())
    """Where the server is (ignored when ``client`` is given)."""
    client: Redis | None = attrs.field(default=None, kw_only=True, repr=False)
    """A ``redis.Redis`` to use instead of one built from ``url``."""
    prefix: str = attrs.field(default="neuron_context:", kw_only=True, validator=string())
    """What every Redis key this store writes starts with (then ``:``, unless it ends in
    one)."""
    max_age: float | None = max_age_field()
    """Seconds after its last put that Redis expires an entry (``None``: never)."""

    _redis: Redis = attrs.field(init=False, repr=False, eq=False)
    _head: str = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        self._redis = self.client if self.client is not None else _connect(self.url)
        prefix = self.prefix
        self._head = prefix if prefix == "" or prefix.endswith(":") else prefix + ":"

    def _write(self, key: str, text: str) -> None:
        ttl = None if self.max_age is None else max(1, round(self.max_age * 1000))
        self._redis.set(self._head + key, to_bytes(text), px=ttl)

    def _read(self, key: str) -> str | None:
        # Read as bytes even from a client built with decode_responses=True (whose strict
        # UTF-8 decoding refuses a text with lone surrogates).
        data = self._redis.execute_command(  # type: ignore[no-untyped-call]
            "GET", self._head + key, NEVER_DECODE=[]
        )
        if data is None:
            return None
        return from_bytes(data) if isinstance(data, bytes) else str(data)

    def _keys(self) -> Iterator[str]:
        return self._names("")

    def _names(self, prefix: str) -> Iterator[str]:
        start = len(self._head)
        match = _glob_escape(self._head + prefix) + "*"
        for name in self._redis.scan_iter(match=match, count=500):
            text = from_bytes(name) if isinstance(name, bytes) else str(name)
            yield text[start:]


def _glob_escape(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
