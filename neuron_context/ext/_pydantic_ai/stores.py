"""Offloading for pydantic-ai: the recall tool as a pydantic-ai ``Tool``, and the
conversation a run's store is scoped to (its ``conversation_id``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai import RunContext, Tool
from pydantic_ai.messages import ModelMessage

from ..._stores.recall import RECALL_DESCRIPTION, RECALL_TOOL_NAME, text_reader
from ..._stores.scope import conversation
from ..._stores.store import Store

__all__ = ["conversation_of", "recall_tool"]


def recall_tool(store: Store) -> Tool[Any]:
    """The recall tool as a pydantic-ai :class:`~pydantic_ai.Tool` (``recall``), for an
    agent's ``tools=[...]``.

    It reads ``store`` by key (a page at a time) or searches it by query, in a worker
    thread (pydantic-ai runs a sync tool there), as the view of the run's
    ``conversation_id`` when the store is unscoped (the history processor offloads to
    the same view). A tool return has no error flag in pydantic-ai, so an unknown key, a
    bad range or a failing store returns the error's text (``recall: no content under
    key ...``): never an exception, and no retry counted against the run.

    Examples:
        >>> from neuron_context import MemoryStore
        >>> recall_tool(MemoryStore()).name
        'recall'
    """
    read = text_reader(store)

    def recall(  # noqa: PLR0917 - the parameters are the tool's arguments
        ctx: RunContext[Any],
        key: str | None = None,
        start_line: int | None = None,
        end_line: int | None = None,
        query: str | None = None,
        regex: bool = False,
    ) -> str:
        """Read back content moved out of the conversation, by key or by a query.

        Args:
            ctx: the run.
            key: the key after 'recall:' in a reference.
            start_line: first line to read (1-based), for part of a long text.
            end_line: last line to read (inclusive).
            query: text to search for in everything moved out (instead of a key).
            regex: whether the query is a Python regular expression.
        """
        with conversation(ctx.conversation_id or None):
            return read(key, start_line, end_line, query, regex)

    return Tool(recall, name=RECALL_TOOL_NAME, description=RECALL_DESCRIPTION, takes_ctx=True)


def conversation_of(messages: Sequence[ModelMessage]) -> str | None:
    """The ``conversation_id`` of the newest message that has one (pydantic-ai stamps
    each message of a run with its conversation's), or ``None``."""
    for message in reversed(messages):
        name = getattr(message, "conversation_id", None)
        if isinstance(name, str) and name:
            return name
    return None
