"""Offloading: stores for what compaction removes, and the recall tool that reads it back.

Give a strategy (or ``default_stack``) ``store=`` and whatever it removes or cuts is put
in the store; the marker it leaves ends in ``recall: <key>``. :func:`recall_tool` is the
tool our :class:`~neuron_context.Agent` reads a key back with (the adapters in
:mod:`neuron_context.ext` have their own); :data:`RECALL_INSTRUCTIONS` is the sentence
that tells a model to use it. See the offloading page of the docs.

- :class:`Store`: the protocol (``put``, ``get``, iterate the keys);
- :class:`MemoryStore` (in process), :class:`SQLiteStore` (a durable file),
  :class:`RedisStore` (shared by a fleet; the ``redis`` extra);
- :meth:`Store.scoped`: a namespace of a store; :func:`conversation`: the block inside
  which an unscoped store is one conversation's view (our agent and the adapters enter
  it for each conversation);
- :func:`content_key`: the key any store gives a content;
- :func:`recall` (a page of an entry) and :func:`search` (the matching lines of every
  entry): the recall tool's core, for a framework of your own.
"""

from ._exports import publish as _publish
from ._stores.agent_tool import recall_tool
from ._stores.memory import MemoryStore
from ._stores.recall import (
    RECALL_DESCRIPTION,
    RECALL_INSTRUCTIONS,
    RECALL_TOOL_NAME,
    Recalled,
    recall,
    search,
)
from ._stores.redis import RedisStore
from ._stores.scope import conversation
from ._stores.serialized import Content, content_key
from ._stores.sqlite import SQLiteStore
from ._stores.store import Store

__all__ = [
    "RECALL_DESCRIPTION",
    "RECALL_INSTRUCTIONS",
    "RECALL_TOOL_NAME",
    "Content",
    "MemoryStore",
    "Recalled",
    "RedisStore",
    "SQLiteStore",
    "Store",
    "content_key",
    "conversation",
    "recall",
    "recall_tool",
    "search",
]

_publish(__name__, globals(), __all__)
