"""Offloading for pydantic-ai: the recall tool as a pydantic-ai ``Tool``."""

from __future__ import annotations

from typing import Any

from pydantic_ai import Tool

from ..._stores.recall import RECALL_DESCRIPTION, RECALL_TOOL_NAME, text_reader
from ..._stores.store import Store

__all__ = ["recall_tool"]


def recall_tool(store: Store) -> Tool[Any]:
    """The recall tool as a pydantic-ai :class:`~pydantic_ai.Tool` (``recall``), for an
    agent's ``tools=[...]``.

    It reads ``store`` in a worker thread (pydantic-ai runs a sync tool there). A tool
    return has no error flag in pydantic-ai, so an unknown key, a bad range or a failing
    store returns the error's text (``recall: no content under key ...``): never an
    exception, and no retry counted against the run.

    Examples:
        >>> from neuron_context import MemoryStore
        >>> recall_tool(MemoryStore()).name
        'recall'
    """

    read = text_reader(store)
    return Tool(read, name=RECALL_TOOL_NAME, description=RECALL_DESCRIPTION, takes_ctx=False)
