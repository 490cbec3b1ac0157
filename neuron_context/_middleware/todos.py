"""A todo list the agent keeps for itself: a ``write_todos`` tool and a reminder.

Long tasks drift: after a hundred tool calls (and a compaction or two) the model no
longer sees its own plan. :class:`TodoListMiddleware` gives it a ``write_todos`` tool
that replaces the list, stores the list in the agent's state (so it survives
compactions and moves between workers with the state), and renders the current list
into the system prompt of every model call (not persisted, so it is never stale and
never summarized away).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from .._messages.content import JSON
from .._run.run import RunContext
from .._run.state import AgentState
from .._run.tools import Tool
from .._validators import string
from .types import AgentMiddleware, ModelRequest

__all__ = ["TodoListMiddleware"]

STATUSES = ("pending", "in_progress", "completed")
KEY = "todos"

INSTRUCTIONS = """\
## Todo list
For a task with several steps, plan with the write_todos tool: it replaces your whole \
list. Keep exactly one item in_progress while you work, mark items completed as soon as \
they are done, and add what you discover."""

_SCHEMA: dict[str, JSON] = {
    "type": "object",
    "properties": {
        "todos": {
            "type": "array",
            "description": "The whole list, in order; it replaces the previous one.",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "description": "What to do."},
                    "status": {"type": "string", "enum": list(STATUSES)},
                },
                "required": ["content", "status"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["todos"],
    "additionalProperties": False,
}


def todos_of(state: AgentState) -> list[dict[str, str]]:
    """The todo list kept in ``state`` (``[]`` when there is none)."""
    value = state.values.get(KEY)
    if not isinstance(value, list):
        return []
    return [
        {"content": str(item.get("content", "")), "status": str(item.get("status", ""))}
        for item in value
        if isinstance(item, Mapping)
    ]


async def _write_todos(todos: list[dict[str, str]], context: RunContext) -> str:
    context.state.values[KEY] = [
        {"content": item["content"], "status": item["status"]} for item in todos
    ]
    counts = {status: sum(item["status"] == status for item in todos) for status in STATUSES}
    return (
        f"Todo list updated: {len(todos)} items ({counts['pending']} pending, "
        f"{counts['in_progress']} in progress, {counts['completed']} completed)."
    )


def render(todos: list[dict[str, str]]) -> str:
    """The list as the model sees it, one ``- [status] content`` line per item."""
    return "\n".join(f"- [{item['status']}] {item['content']}" for item in todos)


@attrs.define
class TodoListMiddleware(AgentMiddleware):
    """Adds a ``write_todos`` tool and shows the current list before each model call.

    Examples:
        >>> todos = TodoListMiddleware()
        >>> [tool.name for tool in todos.tools]
        ['write_todos']
    """

    instructions: str = attrs.field(default=INSTRUCTIONS, kw_only=True, validator=string())
    """Added to the system prompt of every call, before the current list."""

    @property
    def tools(self) -> tuple[Tool, ...]:  # type: ignore[override]
        """The ``write_todos`` tool."""
        return (
            Tool(
                "write_todos",
                "Replace your todo list (the whole list, in order).",
                _SCHEMA,
                _write_todos,
                context_parameter="context",
            ),
        )

    @staticmethod
    def todos(state: AgentState) -> list[dict[str, str]]:
        """The todo list an agent keeps in its ``state``."""
        return todos_of(state)

    async def before_model(self, request: ModelRequest) -> None:
        """Append the instructions and the current list to the system prompt."""
        current = todos_of(request.context.state)
        parts = [request.system_prompt or "", self.instructions]
        if current:
            parts.append("Current todo list:\n" + render(current))
        request.system_prompt = "\n\n".join(part for part in parts if part)
