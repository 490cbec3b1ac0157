"""Offloading for LangChain: the recall tool as a LangChain tool, and a LangGraph
``BaseStore`` as our :class:`~neuron_context.Store`.

LangGraph users already run a ``BaseStore`` (in memory, on Postgres, on Redis) for their
agents' long-term memory; :class:`LangGraphStore` puts offloaded content there, under a
namespace of its own, so a fleet that shares the LangGraph store shares what compaction
removed with no new service. Each entry is one item ``{"text": <encoded content>}``
(``{"utf8": <base64>}`` for a text with lone surrogates, which JSON backends refuse),
without a search index (the content is read by key, never searched). A scoped view
(``store.scoped(name)``) is the namespace with ``name`` appended (percent-encoded, so
no label holds a period).

The middleware and the recall tool run inside the LangGraph thread's conversation
(:func:`thread_conversation`: its ``thread_id``), so an unscoped store is that thread's
view and one thread never recalls what another offloaded.
"""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import anyio.to_thread
import attrs

from ..._stores.recall import RECALL_DESCRIPTION, RECALL_TOOL_NAME, Recalled, reader
from ..._stores.scope import conversation
from ..._stores.serialized import from_bytes, to_bytes
from ..._stores.store import Store
from ..._validators import fail, instance_of
from .._core import missing_extra

try:
    from langchain_core.tools import BaseTool, StructuredTool, ToolException
    from langgraph.store.base import BaseStore

    from .fleet import thread_id
except ModuleNotFoundError as exc:  # pragma: no cover - exercised by a test in a subprocess
    _ADAPTER = "neuron_context.ext.langchain"
    raise missing_extra(_ADAPTER) from exc

__all__ = ["LangGraphStore", "recall_tool", "thread_conversation"]

_PAGE = 500
"""Items read per ``search`` call when listing the keys."""


def _namespace(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, tuple) and value and all(isinstance(part, str) for part in value):
        return value
    where, problem = "LangGraphStore.namespace", "must be a str or a non-empty tuple of str"
    raise fail(where, problem)


@attrs.define
class LangGraphStore(Store):
    """Our :class:`~neuron_context.Store` over a LangGraph ``BaseStore``.

    Examples:
        >>> from langgraph.store.memory import InMemoryStore
        >>> store = LangGraphStore(InMemoryStore())
        >>> store.get(store.put("a long build log"))
        'a long build log'
    """

    store: BaseStore = attrs.field(validator=instance_of(BaseStore, "a LangGraph BaseStore"))
    """The LangGraph store that holds the entries."""
    namespace: tuple[str, ...] = attrs.field(
        default=("neuron_context", "offloaded"), kw_only=True, converter=_namespace
    )
    """The namespace of every entry."""
    _scope: tuple[str, ...] = attrs.field(factory=tuple, init=False, repr=False, eq=False)

    @property
    def scope(self) -> tuple[str, ...]:
        """The namespace this store sees (``()``: the unscoped one)."""
        return self._scope

    def _view(self, scope: tuple[str, ...]) -> Store:
        root = self.namespace[: len(self.namespace) - len(self._scope)]
        labels = tuple(quote(to_bytes(part), safe="").replace(".", "%2E") for part in scope)
        view = LangGraphStore(self.store, namespace=(*root, *labels))
        view._scope = scope
        return view

    def _identity(self) -> object:
        return self.store

    def _write(self, key: str, text: str) -> None:
        try:
            text.encode("utf-8")
            value = {"text": text}
        except UnicodeEncodeError:
            value = {"utf8": base64.b64encode(to_bytes(text)).decode("ascii")}
        self.store.put(self.namespace, key, value, index=False)

    def _read(self, key: str) -> str | None:
        item = self.store.get(self.namespace, key)
        if item is None:
            return None
        text = item.value.get("text")
        if isinstance(text, str):
            return text
        data = item.value.get("utf8")
        return from_bytes(base64.b64decode(data)) if isinstance(data, str) else None

    def _keys(self) -> Iterator[str]:
        offset = 0
        while True:
            items = self.store.search(self.namespace, limit=_PAGE, offset=offset)
            for item in items:
                if item.namespace == self.namespace:
                    yield item.key
            if len(items) < _PAGE:
                return
            offset += _PAGE


def thread_conversation() -> contextlib.AbstractContextManager[None]:
    """The conversation of the LangGraph thread this code runs in (its ``thread_id``), or
    none outside a thread (see :func:`~neuron_context.stores.conversation`)."""
    return conversation(thread_id())


def recall_tool(store: Store) -> BaseTool:
    """The recall tool as a LangChain tool (``recall``), for ``create_agent``'s tools.

    It reads ``store`` by key (a page at a time) or searches it by query, in the
    LangGraph thread's conversation (an unscoped store is the view of its
    ``thread_id``; in a worker thread when the agent runs async); an unknown key, a bad
    range or a failing store is a ``ToolMessage`` with ``status="error"``.

    Examples:
        >>> from neuron_context import MemoryStore
        >>> recall_tool(MemoryStore()).name
        'recall'
    """

    read = reader(store, _text_or_raise, str, scope=thread_conversation)

    async def aread(**arguments: Any) -> str:
        return await anyio.to_thread.run_sync(lambda: read(**arguments))

    return StructuredTool.from_function(
        func=read,
        coroutine=aread,
        name=RECALL_TOOL_NAME,
        description=RECALL_DESCRIPTION,
        handle_tool_error=True,
    )


def _text_or_raise(found: Recalled) -> str:
    """The recall's text; an error as LangChain's ``ToolException`` (a ``ToolMessage``
    with ``status="error"``, the tool built with ``handle_tool_error``)."""
    if found.is_error:
        raise ToolException(found.text)
    return found.text
