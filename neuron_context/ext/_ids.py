"""Tool-call ids and names a framework accepts empty, held in our non-empty fields.

LangChain accepts a tool call whose id is the empty string (a batched call; a patched
invalid call), and pairs its ``ToolMessage`` by that same empty id. A
:class:`~neuron_context.ToolUse` needs a non-empty id (and name), so an adapter reads a
framework's value through :func:`ours` and writes ours back through :func:`theirs`:

- ``""`` reads as :data:`EMPTY` (``"∅"``);
- a value that starts with :data:`EMPTY` reads with one more in front (``"∅x"`` as
  ``"∅∅x"``), so no framework value reads as another's;
- every other value reads as it is (``"call_1"`` is ``"call_1"``).

:func:`theirs` undoes it: ``theirs(ours(value)) == value`` for every string, so a
conversation is written back with the ids it came with.
"""

from __future__ import annotations

__all__ = ["EMPTY", "ours", "theirs"]

EMPTY = "\u2205"
"""What an empty id or name of a framework reads as."""


def ours(value: str) -> str:
    """The non-empty value of ours for a framework's ``value`` (see the module)."""
    if not value:
        return EMPTY
    return EMPTY + value if value.startswith(EMPTY) else value


def theirs(value: str) -> str:
    """The framework's value for ``value`` of ours: the inverse of :func:`ours`."""
    if value == EMPTY:
        return ""
    return value[len(EMPTY) :] if value.startswith(EMPTY + EMPTY) else value
