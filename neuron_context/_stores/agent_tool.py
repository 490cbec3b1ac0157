"""The recall tool for our own :class:`~neuron_context.Agent`."""

from __future__ import annotations

from .._messages.content import ToolResult
from .._run.tools import Tool
from .recall import RECALL_DESCRIPTION, RECALL_TOOL_NAME, recall
from .store import Store

__all__ = ["recall_tool"]


def recall_tool(store: Store) -> Tool:
    """A :class:`~neuron_context.Tool` named ``recall`` that reads ``store`` (in a worker
    thread, as the loop runs every sync tool); an unknown key is an error result.

    Examples:
        >>> from neuron_context.stores import MemoryStore
        >>> recall_tool(MemoryStore()).name
        'recall'
    """

    def read(key: str, start_line: int | None = None, end_line: int | None = None) -> ToolResult:
        """Read back content moved out of the conversation.

        Args:
            key: the key after 'recall:' in a reference.
            start_line: first line to read (1-based), for part of a long text.
            end_line: last line to read (inclusive).
        """
        found = recall(store, key, start_line, end_line)
        return ToolResult(tool_use_id="recall", content=found.text, is_error=found.is_error)

    return Tool.from_function(read, name=RECALL_TOOL_NAME, description=RECALL_DESCRIPTION)
