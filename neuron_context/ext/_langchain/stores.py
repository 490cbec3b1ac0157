"""Offloading for LangChain: the recall tool as a LangChain tool, and a LangGraph
``BaseStore`` as our :class:`~neuron_context.Store`.

LangGraph users already run a ``BaseStore`` (in memory, on Postgres, on Redis) for their
agents' long-term memory; :class:`LangGraphStore` puts offloaded content there, under a
namespace of its own, so a fleet that shares the LangGraph store shares what compaction
removed with no new service. Each entry is one item ``{"text": <encoded content>}``,
without a search index (the content is read by key, never searched).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio.to_thread
import attrs

from ..._stores.recall import RECALL_DESCRIPTION, RECALL_TOOL_NAME, recall
from ..._stores.store import Store
from ..._validators import fail, instance_of
from .._core import missing_extra

try:
    from langchain_core.tools import BaseTool, StructuredTool, ToolException
    from langgraph.store.base import BaseStore
except ModuleNotFoundError as exc:  # pragma: no cover - exercised by a test in a subprocess
    _ADAPTER = "neuron_context.ext.langchain"
    raise missing_extra(_ADAPTER) from exc

__all__ = ["LangGraphStore", "recall_tool"]

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

    def _write(self, key: str, text: str) -> None:
        self.store.put(self.namespace, key, {"text": text}, index=False)

    def _read(self, key: str) -> str | None:
        item = self.store.get(self.namespace, key)
        if item is None:
            return None
        text = item.value.get("text")
        return text if isinstance(text, str) else None

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


def recall_tool(store: Store) -> BaseTool:
    """The recall tool as a LangChain tool (``recall``), for ``create_agent``'s tools.

    It reads ``store`` (in a worker thread when the agent runs async); an unknown key,
    a bad range or a failing store is a ``ToolMessage`` with ``status="error"``.

    Examples:
        >>> from neuron_context import MemoryStore
        >>> recall_tool(MemoryStore()).name
        'recall'
    """

    def read(key: str, start_line: int | None = None, end_line: int | None = None) -> str:
        found = recall(store, key, start_line, end_line)
        if found.is_error:
            raise ToolException(found.text)
        return found.text

    async def aread(key: str, start_line: int | None = None, end_line: int | None = None) -> Any:
        return await anyio.to_thread.run_sync(read, key, start_line, end_line)

    return StructuredTool.from_function(
        func=read,
        coroutine=aread,
        name=RECALL_TOOL_NAME,
        description=RECALL_DESCRIPTION,
        handle_tool_error=True,
    )
