"""The recall tool for our own :class:`~neuron_context.Agent`."""

from __future__ import annotations

from .._counting.counter import BaseCounter
from .._messages.content import ToolResult
from .._run.tools import Tool
from .recall import MAX_TOKENS, RECALL_DESCRIPTION, RECALL_TOOL_NAME, Recalled, reader
from .store import Store

__all__ = ["recall_tool"]


def recall_tool(
    store: Store, *, max_tokens: int = MAX_TOKENS, counter: BaseCounter | None = None
) -> Tool:
    """A :class:`~neuron_context.Tool` named ``recall`` that reads ``store`` by key (a
    page of at most about ``max_tokens``, counted with ``counter``) or searches it by
    query, in a worker thread (as the loop runs every sync tool); an unknown key is an
    error result. Inside an agent's run the store is that conversation's view (see
    :meth:`~neuron_context.Store.scoped`).

    Examples:
        >>> from neuron_context.stores import MemoryStore
        >>> recall_tool(MemoryStore()).name
        'recall'
    """
    read = reader(store, _result, ToolResult, max_tokens=max_tokens, counter=counter)
    return Tool.from_function(read, name=RECALL_TOOL_NAME, description=RECALL_DESCRIPTION)


def _result(found: Recalled) -> ToolResult:
    """The answer as a tool result, its error flagged (the loop sets its call's id)."""
    return ToolResult(tool_use_id="recall", content=found.text, is_error=found.is_error)
