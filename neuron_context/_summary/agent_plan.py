"""The plan an agent keeps for itself: the latest call of its todo or plan tool, as state.

Agents that lose their plan to a compaction re-open finished work. A plan is not prose to
be summarized but state: its newest version is what counts, word for word, and every
older version is superseded. So a summary carries it verbatim in its own section, and
says from the items' statuses what is done, what is in progress and what comes next::

    ## Plan
    <plan>
    Latest write_todos:
    Done:
    - [completed] Read the parser
    In progress:
    - [in_progress] Port the tokenizer
    Next:
    - [pending] Write the tests
    </plan>

The ``<plan>`` lines let an update of the summary carry the block as it is (as the
``<user_request>`` quotes are carried). A plan tool is recognized by its name (``todo``,
``plan``, ``task list``, ``tracker``: ``write_todos``, ``TodoWrite``, ``update_plan``,
``task_tracker``, ``ExitPlanMode``) and by its input: a list of items (each with its
text and, where given, a status) or the plan as text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from .._messages.content import JSON, ToolUse
from .._messages.message import Message, Role

__all__ = [
    "PLAN_CLOSE",
    "PLAN_OPEN",
    "carried_plan",
    "is_plan_tool",
    "latest_plan",
    "plan_block",
    "plan_of",
]

PLAN_OPEN = "<plan>"
PLAN_CLOSE = "</plan>"

_TOOL = re.compile(r"todo|plan|task.?list|tasks?.?tracker|checklist", re.IGNORECASE)
_TEXT_KEYS = ("content", "title", "step", "task", "description", "text", "name", "item")
_STATUS_KEYS = ("status", "state")
_DONE_KEYS = ("done", "completed", "checked")
_DONE = frozenset(("completed", "complete", "done", "finished", "closed", "resolved"))
_ACTIVE = frozenset(("in_progress", "in-progress", "in progress", "active", "doing", "started"))
_NEXT = frozenset(("pending", "todo", "to_do", "not_started", "open", "planned", "", "none"))
_MIN_TEXT = 20
"""The shortest plan given as text (a shorter string argument is not a plan)."""


def _items(value: JSON) -> list[tuple[str, str]] | None:
    """``(text, status)`` of a list of plan items, or ``None`` when ``value`` is not one."""
    if not isinstance(value, list) or not value:
        return None
    items: list[tuple[str, str]] = []
    for item in value:
        if isinstance(item, str):
            items.append((item, ""))
            continue
        if not isinstance(item, Mapping):
            return None
        text = next((item[k] for k in _TEXT_KEYS if isinstance(item.get(k), str)), None)
        if not isinstance(text, str):
            return None
        status = next((item[k] for k in _STATUS_KEYS if isinstance(item.get(k), str)), None)
        if not isinstance(status, str):
            flag = next((item[k] for k in _DONE_KEYS if isinstance(item.get(k), bool)), None)
            status = "" if flag is None else "completed" if flag else "pending"
        items.append((text, status))
    return items


def is_plan_tool(name: str) -> bool:
    """Whether a tool's name says it keeps a plan or a todo list."""
    return _TOOL.search(name) is not None


def plan_of(name: str, arguments: Mapping[str, JSON]) -> str | None:
    """The plan a call of tool ``name`` with ``arguments`` writes, rendered (see the
    module docstring), or ``None`` when it is not a call of a plan or todo tool."""
    if not is_plan_tool(name):
        return None
    for value in arguments.values():
        items = _items(value)
        if items is not None:
            return _render_items(name, items)
    texts = [v for v in arguments.values() if isinstance(v, str) and len(v.strip()) >= _MIN_TEXT]
    if texts:
        return f"Latest {name}:\n" + max(texts, key=len).strip()
    return None


def _render_items(tool: str, items: Sequence[tuple[str, str]]) -> str:
    groups: dict[str, list[str]] = {"Done": [], "In progress": [], "Next": [], "Other": []}
    for text, status in items:
        key = status.strip().casefold()
        group = (
            "Done"
            if key in _DONE
            else "In progress"
            if key in _ACTIVE
            else "Next"
            if key in _NEXT
            else "Other"
        )
        shown = f"[{status}] {text}" if status else text
        groups[group].append(f"- {' '.join(shown.split())}")
    lines = [f"Latest {tool}:"]
    for title, entries in groups.items():
        if entries:
            lines.append(f"{title}:")
            lines.extend(entries)
    return "\n".join(lines)


def plan_block(plan: str) -> str:
    """The plan as a summary holds it: between ``<plan>`` lines."""
    return f"{PLAN_OPEN}\n{plan}\n{PLAN_CLOSE}"


def latest_plan(messages: Sequence[Message], stop: int) -> str | None:
    """The plan written by the newest plan or todo call in ``messages[:stop]``, or the
    newest plan block a summary there carries; ``None`` when neither exists. Reads from
    the end and stops at the first one found."""
    assistant, user = Role.ASSISTANT, Role.USER
    for index in range(min(stop, len(messages)) - 1, -1, -1):
        message = messages[index]
        role = message.role
        if role is assistant:
            for block in reversed(message.content):
                if isinstance(block, ToolUse):
                    plan = plan_of(block.name, block.input)
                    if plan is not None:
                        return plan
        elif role is user and message.is_compaction:
            plan = carried_plan(message.text)
            if plan is not None:
                return plan
    return None


def carried_plan(summary: str) -> str | None:
    """The newest plan block of a summary's text, without its ``<plan>`` lines."""
    close = summary.rfind("\n" + PLAN_CLOSE)
    if close < 0:
        return None
    opening = summary.rfind(PLAN_OPEN + "\n", 0, close)
    if opening < 0 or (opening > 0 and summary[opening - 1] != "\n"):
        return None
    return summary[opening + len(PLAN_OPEN) + 1 : close]
