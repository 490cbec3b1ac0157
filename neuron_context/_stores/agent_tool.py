"""The recall tool for our own :class:`~neuron_context.Agent`."""

from __future__ import annotations

from .._counting.counter import BaseCounter
from .._messages.content import ToolResult
from .._run.tools import Tool
from .recall import MAX_TOKENS, RECALL_DESCRIPTION, RECALL_TOOL_NAME, answer, text_reader
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
    text_reader(store, max_tokens=max_tokens, counter=counter)  # checks the options

    def read(
        key: str | None = None,
        start_line: int | None = None,
        end_line: int | None = None,
        query: str | None = None,
        regex: bool = False,
    ) -> ToolResult:
        """Read back content moved out of the conversation, by key or by a query.

        Args:
            key: the key after 'recall:' in a reference.
            start_line: first line to read (1-based), for part of a long text.
            end_line: last line to read (inclusive).
            query: text to search for in everything moved out (instead of a key).
            regex: whether the query is a Python regular expression.
        """
        found = answer(
            store,
            key,
            start_line=start_line,
            end_line=end_line,
            query=query,
            regex=regex,
            max_tokens=max_tokens,
            counter=counter,
        )
        return ToolResult(tool_use_id="recall", content=found.text, is_error=found.is_error)

    return Tool.from_function(read, name=RECALL_TOOL_NAME, description=RECALL_DESCRIPTION)
