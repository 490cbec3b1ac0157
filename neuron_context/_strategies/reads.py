"""Stale file reads: file contents the agent read before it changed the file, or long ago.

A coding agent reads a file, edits it, reads it again: the first read now shows a file
that no longer exists, and keeping it invites the model to reason from old code. This
is the LangChain-middleware README's "remove file-read results after a certain age",
with the staleness made precise. A read result is cleared when

- a later call that succeeded **wrote** the same path (a write, an edit, a create), or
- a later call that succeeded **read** the same path with the same arguments (the same
  range of the same file: the newer copy is the one to keep), or
- it is older than ``max_age`` turns (assistant messages after it), when set.

Reads and writes are recognised by tool name and the path argument (defaults cover
common agents: Claude Code's ``Read``/``Write``/``Edit``, OpenHands' and Anthropic's
``str_replace_editor`` with its ``command`` argument, plain ``read_file``/``write_file``).
Cleared results become a placeholder, as in tool-result clearing: the calls stay, so the
model sees what it read and can read it again.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Literal

import attrs

from .._counting.counter import compact_json
from .._log import log_compaction
from .._messages.conversation import ResultRef, Structure, ToolCall, replace_blocks, tool_calls
from .._messages.message import Message, Role
from .._stores.store import Store, optional_store
from .._validators import non_negative_int, optional, require_names, string
from .strategy import PureStrategy
from .supersede import clear_results

__all__ = ["StaleFileReadsStrategy"]

READ_TOOLS = frozenset({"Read", "read_file", "view_file", "cat", "open", "read"})
WRITE_TOOLS = frozenset(
    {
        "Write",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "write_file",
        "edit_file",
        "create_file",
        "create_python_script",
        "create",
        "apply_patch",
    }
)
EDITOR_TOOLS = frozenset({"str_replace_editor", "str_replace_based_edit_tool"})
PATH_ARGUMENTS = ("file_path", "path", "filename", "file_name", "notebook_path", "file")

_Kind = Literal["read", "write"]


def _read_tools(value: object) -> frozenset[str]:
    return require_names(value, "StaleFileReadsStrategy.read_tools")


def _write_tools(value: object) -> frozenset[str]:
    return require_names(value, "StaleFileReadsStrategy.write_tools")


def _editor_tools(value: object) -> frozenset[str]:
    return require_names(value, "StaleFileReadsStrategy.editor_tools")


def _path_arguments(value: object) -> tuple[str, ...]:
    names = require_names(value, "StaleFileReadsStrategy.path_arguments", what="argument names")
    order = tuple(value) if isinstance(value, list | tuple) else tuple(sorted(names))
    return tuple(dict.fromkeys(str(v) for v in order))


@attrs.define
class StaleFileReadsStrategy(PureStrategy):
    """Clears file-read results made stale by a later write or read of the same path, or
    older than ``max_age`` turns.

    Examples:
        >>> strategy = StaleFileReadsStrategy(max_age=20)
    """

    max_tokens: int = attrs.field(default=0, kw_only=True, validator=non_negative_int())
    """The trigger: compact when the history costs more than this (0: always)."""
    max_age: int | None = attrs.field(
        default=None, kw_only=True, validator=optional(non_negative_int())
    )
    """Clear a read followed by more than this many assistant messages (``None``: only
    stale reads are cleared)."""
    read_tools: frozenset[str] = attrs.field(
        default=READ_TOOLS,
        kw_only=True,
        converter=_read_tools,
    )
    """Tools that read a file."""
    write_tools: frozenset[str] = attrs.field(
        default=WRITE_TOOLS,
        kw_only=True,
        converter=_write_tools,
    )
    """Tools that write or edit a file."""
    editor_tools: frozenset[str] = attrs.field(
        default=EDITOR_TOOLS,
        kw_only=True,
        converter=_editor_tools,
    )
    """Tools with a ``command`` argument: ``"view"`` reads, any other command writes."""
    path_arguments: tuple[str, ...] = attrs.field(
        default=PATH_ARGUMENTS, kw_only=True, converter=_path_arguments
    )
    """The arguments that name the file, tried in order."""
    placeholder: str = attrs.field(
        default="[stale file read cleared; read the file again if needed]",
        kw_only=True,
        validator=string(),
    )
    """What a cleared read says instead."""
    store: Store | None = attrs.field(default=None, kw_only=True, validator=optional_store())
    """Where cleared results go: each placeholder then names the call, its size and the
    key to recall it by."""

    def _classify(self, call: ToolCall) -> tuple[_Kind, str] | None:
        name, arguments = call.use.name, call.use.input
        if name in self.editor_tools:
            kind: _Kind = "read" if arguments.get("command") == "view" else "write"
        elif name in self.read_tools:
            kind = "read"
        elif name in self.write_tools:
            kind = "write"
        else:
            return None
        for argument in self.path_arguments:
            path = arguments.get(argument)
            if isinstance(path, str) and path:
                return kind, posixpath.normpath(path)
        return None

    def _apply(self, messages: Sequence[Message]) -> list[Message]:
        structure = Structure.of(messages)
        calls = tool_calls(structure)
        if not calls:
            return list(messages)
        # assistant_after[i]: assistant messages after index i (the age of a call there).
        assistant_after = [0] * (len(messages) + 1)
        for index in range(len(messages) - 1, -1, -1):
            later = messages[index + 1].role is Role.ASSISTANT if index + 1 < len(messages) else 0
            assistant_after[index] = assistant_after[index + 1] + int(later)
        written: set[str] = set()
        read: set[tuple[str, str]] = set()
        stale: list[ResultRef] = []
        reasons = {"written": 0, "read_again": 0, "old": 0}
        for call in reversed(calls):
            found = self._classify(call)
            if found is None:
                continue
            kind, path = found
            if kind == "write":
                if call.succeeded:
                    written.add(path)
                continue
            again = (call.use.name, compact_json(call.use.input))
            if path in written:
                reasons["written"] += 1
            elif again in read:
                reasons["read_again"] += 1
            elif self.max_age is not None and assistant_after[call.message] > self.max_age:
                reasons["old"] += 1
            else:
                if call.succeeded:
                    read.add(again)
                continue
            stale.extend(call.results)
            if call.succeeded:
                read.add(again)
        cleared = clear_results(
            stale,
            self.placeholder,
            self.counter,
            store=self.store,
            calls=calls,
            strategy="StaleFileReadsStrategy",
        )
        if not cleared:
            return list(messages)
        output = replace_blocks(messages, cleared)
        log_compaction(
            "StaleFileReadsStrategy",
            self.counter,
            messages,
            output,
            {"cleared": len(cleared), **reasons},
        )
        return output
