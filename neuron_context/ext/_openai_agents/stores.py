"""The recall tool as an Agents SDK function tool."""

from __future__ import annotations

import functools

from agents import FunctionTool, function_tool

from ..._stores.recall import RECALL_DESCRIPTION, RECALL_TOOL_NAME, text_reader
from ..._stores.store import Store
from .identity import in_conversation

__all__ = ["recall_tool"]


def recall_tool(store: Store) -> FunctionTool:
    """The recall tool as an Agents SDK function tool (``recall``), for an ``Agent``'s
    ``tools=[...]``.

    It reads ``store`` by key (a page at a time) or searches it by query, in a worker
    thread (the SDK runs a sync tool there), in the run's conversation as the filter
    finds it: the name entered with ``neuron_context.stores.conversation(name)``, or the
    ``session_id`` of the run's ``CompactingSession``; an unscoped store is that
    conversation's view, so it reads only what that conversation offloaded. A
    function call's output has no error flag, so an unknown key, a bad range or a failing
    store returns the error's text (``recall: no content under key ...``), never an
    exception.

    Examples:
        >>> from neuron_context import MemoryStore
        >>> recall_tool(MemoryStore()).name
        'recall'
    """

    plain = text_reader(store)

    @functools.wraps(plain)
    def read(
        key: str | None = None,
        start_line: int | None = None,
        end_line: int | None = None,
        query: str | None = None,
        regex: bool = False,
    ) -> str:
        with in_conversation():
            return plain(key, start_line, end_line, query, regex)

    return function_tool(
        read,
        name_override=RECALL_TOOL_NAME,
        description_override=RECALL_DESCRIPTION,
        strict_mode=False,
    )
