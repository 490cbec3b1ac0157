"""A conversation's compacted view kept in the offload store, so any worker continues it.

Behind a load balancer a conversation's runs land on different workers, each with its
own ``CallModelInputFilter``; a view kept only in the memory of the worker that built it
would make every other worker compact the whole history anew: another request, and the
provider's prompt cache lost. The SDK gives a filter no place of its own in the session,
so the filter keeps each new compaction of a **named** conversation (see
:mod:`.identity`) in the store its strategy offloads to (a ``RedisStore`` or
``SQLiteStore`` the workers share), in the conversation's namespace, under two reserved
names that are not keys (``get``, ``recall`` and iteration never see them):

- the head: how many of the call's input items the view stands for, a digest of those
  items, and the budget a provider's overflow refusal taught the worker that kept it
  (``null`` until one did; read on each call: a few dozen bytes);
- the body: the same, and the view's messages as sent, encoded as the store encodes
  what it holds (read only when the head is not the one this worker knows).

A view is kept after each compaction, and after a refused call's recompaction (the
overflow recovery, :meth:`~.filter.CallModelInputFilter.wrap`), whose budget the other
workers then learn as the worker that was refused did.

A worker that meets the conversation for the first time, or again after another worker
compacted it, reads the body once and continues the view from there when the input
still begins with the items it stands for: the same requests, the same prefix, no
compaction of its own. A store that fails here costs only that: the view is the
worker's own (a warning in the ``neuron_context`` log), never the model call; and the
filter leaves the views in that store alone for :data:`RETRY_AFTER` seconds, so a store
that hangs costs one client timeout then, not one every call. A head or body that no
version of :func:`keep` wrote (corrupted, or another writer's) is ignored.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

import attrs

from ..._log import logger
from ..._messages.message import Message
from ..._stores.serialized import decode, encode, to_bytes
from ..._stores.store import Store
from ..._strategies.strategy import ContextStrategy
from ...formats._responses_items import Item
from .._core import Converted, Session
from .identity import stores_of

__all__ = ["RETRY_AFTER", "Place", "as_ours", "keep", "place", "restore"]

_HEAD = "neuron-context-view-head:"
_BODY = "neuron-context-view:"


RETRY_AFTER = 30.0
"""How long, in seconds, a filter leaves the views in a store alone after reading or
writing one there failed."""


@attrs.define
class Place:
    """Where a filter keeps its conversations' views: ``store``, and until when (on
    :func:`time.monotonic`'s clock) it leaves them alone after a failure."""

    store: Store
    quiet_until: float = 0.0

    def usable(self) -> bool:
        """Whether the views may be read and written now."""
        return self.quiet_until <= time.monotonic()

    def failed(self, what: str, exc: Exception) -> None:
        """Note that ``what`` failed with ``exc``: a warning, and the store left alone
        for :data:`RETRY_AFTER` seconds."""
        self.quiet_until = time.monotonic() + RETRY_AFTER
        logger.warning(
            "CallModelInputFilter %s %r (%s); this worker keeps its own view, and leaves "
            "the views in that store alone for %g s",
            what,
            self.store,
            type(exc).__name__,
            RETRY_AFTER,
        )


def place(strategy: ContextStrategy) -> Place | None:
    """Where the views of ``strategy``'s conversations are kept: the store it offloads
    to (the first one it holds), or ``None``."""
    store = next(stores_of(strategy), None)
    return None if store is None else Place(store)


def _names(store: Store, key: str) -> tuple[Store, str, str]:
    """The store that holds the conversation ``key``'s view and its two names there (an
    unscoped store is the conversation's view; the key in the names keeps conversations
    apart in a store the user scoped for several)."""
    target = store._active()
    prefix = target._prefix() + quote(to_bytes(key), safe="")
    return target._base(), _HEAD + prefix, _BODY + prefix


def digest(items: Sequence[Item]) -> str:
    """What tells the input a view stands for from any other: a digest of each item as
    JSON (an SDK model as its dump)."""
    hashed = hashlib.blake2b(digest_size=16)
    for item in items:
        hashed.update(_json(item).encode("utf-8", "surrogatepass"))
        hashed.update(b"\x00")
    return hashed.hexdigest()


def _json(item: object) -> str:
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        item = dump(mode="json", exclude_unset=True)
    return json.dumps(item, sort_keys=True, ensure_ascii=False, default=repr)


def keep(
    session: Session[Item, list[int]],
    where: Place,
    key: str,
    items: Sequence[Item],
    view: Sequence[Message],
    *,
    budget: int | None = None,
) -> None:
    """Keep in ``where`` that the view of conversation ``key``'s input ``items`` is the
    messages ``view``, compacted with the learned ``budget`` (``None``: none learned);
    the session knows it as its own."""
    if not where.usable():
        return
    store = where.store
    try:
        through, last = len(items), digest(items)
        base, head, body = _names(store, key)
        base._write(
            body,
            json.dumps(
                {"through": through, "last": last, "budget": budget, "view": encode(list(view))}
            ),
        )
        base._write(head, json.dumps([through, last, budget]))
    except Exception as exc:
        where.failed("cannot keep the view in", exc)
        return
    session.kept = (through, last, budget)


def restore(
    session: Session[Item, list[int]],
    converted: Converted[Item, list[int]],
    where: Place,
    key: str,
    learn: Callable[[int], None] | None = None,
) -> bool:
    """Continue the view ``where`` keeps for conversation ``key`` when the session does
    not know it (a worker new to the conversation, or one another worker's compaction
    overtook) and the input still begins with the items it stands for. Whether it did;
    ``learn`` is given the budget the view was compacted with when one was learned.

    A message of the kept view equal to one the input reads as is that very message of
    ours, so the request rebuilt from it holds the SDK's own item, as the worker that
    compacted sent it.
    """
    if not where.usable():
        return False
    try:
        base, head, body = _names(where.store, key)
        shown = base._read(head)
        if shown is None or _parsed(shown) == session.kept:
            return False
        text = base._read(body)
    except Exception as exc:
        where.failed("cannot read the view from", exc)
        return False
    record = None if text is None else _parsed(text)
    if not isinstance(record, dict):
        return False
    through, last, encoded = record.get("through"), record.get("last"), record.get("view")
    budget = record.get("budget")
    if budget is not None and (type(budget) is not int or budget < 1):
        return False
    items, sources = converted.items, converted.sources
    if type(through) is not int or not 0 < through <= len(items) or not isinstance(encoded, str):
        return False
    stands = 0
    while stands < len(sources) and sources[stands][-1] < through:
        stands += 1
    if not stands or sources[stands - 1][-1] != through - 1 or digest(items[:through]) != last:
        return False
    try:
        view = decode(encoded)
    except Exception:
        return False
    if not isinstance(view, list):
        return False
    own = converted.messages
    if budget is not None and learn is not None:
        learn(budget)
    session.view.restore(own[:stands], as_ours(own[:stands], view))
    session.kept = (through, last, budget)
    return True


def as_ours(own: Sequence[Message], view: Sequence[Message]) -> list[Message]:
    """``view`` with each message equal to one of ``own`` replaced by that very message
    (a rebuild then gives the SDK's own item for it)."""
    by_value = {repr(message): message for message in own}
    return [by_value.get(repr(message), message) for message in view]


def _parsed(text: object) -> Any:
    """A head or a body as written (a list as a tuple), or ``None`` for what no version
    of :func:`keep` wrote (another writer's value, a corrupted one): ignored."""
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except Exception:  # not JSON, or a number beyond int()'s digits
        return None
    return tuple(value) if isinstance(value, list) else value
