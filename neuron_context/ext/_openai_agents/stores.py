"""The recall tool as an Agents SDK function tool."""

from __future__ import annotations

from agents import FunctionTool, function_tool

from ..._stores.recall import RECALL_DESCRIPTION, RECALL_TOOL_NAME, text_reader
from ..._stores.store import Store

__all__ = ["recall_tool"]


def recall_tool(store: Store) -> FunctionTool:
    """The recall tool as an Agents SDK function tool (``recall``), for an ``Agent``'s
    ``tools=[...]``.

    It reads ``store`` by key (a page at a time) or searches it by query, in a worker
    thread (the SDK runs a sync tool there). The SDK hands neither the filter nor a tool
    the run's session: run the agent inside
    ``neuron_context.stores.conversation(session.session_id)`` so that the compactions'
    offloads and this tool's reads are that conversation's view of an unscoped store. A
    function call's output has no error flag, so an unknown key, a bad range or a failing
    store returns the error's text (``recall: no content under key ...``), never an
    exception.

    Examples:
        >>> from neuron_context import MemoryStore
        >>> recall_tool(MemoryStore()).name
        'recall'
    """

    read = text_reader(store)
    return function_tool(
        read,
        name_override=RECALL_TOOL_NAME,
        description_override=RECALL_DESCRIPTION,
        strict_mode=False,
    )
