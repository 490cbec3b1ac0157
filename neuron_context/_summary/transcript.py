"""The transcript a summary request carries: rendering, and reading it back.

:class:`~neuron_context.SummarizationStrategy` sends the messages it summarizes as one
user message holding a readable transcript, so the request needs no tool definitions
and every provider accepts it. The format is line based, so that
:class:`~neuron_context.ExtractiveSummarizer` can read it back exactly::

    Update the previous summary with the new messages below. ...

    Previous summary:
    <previous_summary>
    ...the previous summary, verbatim...
    </previous_summary>

    New messages:
    <transcript>
    user:
      Fix the failing test in tests/test_io.py
    assistant:
      Let me look at it.
    tool call read_file [call_1]: {"path": "tests/test_io.py"}
    tool result read_file [call_1]:
      def test_read(): ...
    tool error bash [call_2]:
      exit status 1
    </transcript>

Every entry starts with a header line at column 0; its text follows on lines indented by
two spaces (so text can never be mistaken for a header), except a tool call, whose
arguments are one line of JSON on the header. Thinking is left out; images and documents
are short placeholders such as ``[image: image/png]``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Literal, TypeAlias, assert_never

import attrs

from .._messages.content import (
    Compaction,
    ContentBlock,
    Document,
    Image,
    RedactedThinking,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
)
from .._messages.conversation import Structure
from .._messages.message import Message, Role
from .format import SUMMARIZE, UPDATE

__all__ = ["Entry", "Kind", "entries_of", "parse_request", "render_request"]

Kind: TypeAlias = Literal["user", "assistant", "call", "result", "error"]

INDENT = "  "
TRANSCRIPT_OPEN = "<transcript>"
TRANSCRIPT_CLOSE = "</transcript>"
PREVIOUS_OPEN = "<previous_summary>"
PREVIOUS_CLOSE = "</previous_summary>"

_TOOL_HEADER = re.compile(r"^tool (call|result|error)(?: (\S+))? \[(.*)\]:(?: (.*))?$")


@attrs.frozen
class Entry:
    """One line-based item of a transcript."""

    kind: Kind
    """``user`` or ``assistant`` text, a tool ``call``, a tool ``result`` or ``error``."""
    text: str
    """The text; for a call, the arguments as one line of JSON."""
    name: str = ""
    """The tool's name (calls and results; ``""`` when unknown)."""
    id: str = ""
    """The tool-use id (calls and results)."""


# -- from messages ----------------------------------------------------------------------


def _placeholder(block: Image | Document) -> str:
    if isinstance(block, Image):
        if block.media_type:
            return f"[image: {block.media_type}]"
        return f"[image: {block.url}]" if block.url else "[image]"
    if block.url:
        return f"[document: {block.media_type}, {block.url}]"
    return f"[document: {block.media_type}]"


def _text_of(blocks: Iterable[ContentBlock | Text | Image]) -> str:
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, Text):
            if block.text:
                parts.append(block.text)
        elif isinstance(block, Image | Document):
            parts.append(_placeholder(block))
    return "\n".join(parts)


def _flush(entries: list[Entry], speaker: Kind, pending: list[ContentBlock]) -> None:
    text = _text_of(pending)
    if text:
        entries.append(Entry(speaker, text))
    pending.clear()


def entries_of(messages: Sequence[Message], structure: Structure | None = None) -> list[Entry]:
    """The transcript entries of ``messages`` (system messages and summaries excluded).

    Args:
        messages: the messages to render.
        structure: the structure of a conversation that ``messages`` is the start of, to
            name the tool each result answers (computed when not given).
    """
    structure = structure if structure is not None else Structure.of(messages)
    entries: list[Entry] = []
    for index, message in enumerate(messages):
        role = message.role
        if role is Role.SYSTEM:
            continue
        if role is Role.TOOL:
            for block in message.content:
                if not isinstance(block, ToolResult):  # pragma: no cover - Message forbids it
                    continue
                use = structure.tool_use_for(index, block)
                kind: Kind = "error" if block.is_error else "result"
                text = _text_of(block.content) or "(empty)"
                entries.append(Entry(kind, text, use.name if use else "", block.tool_use_id))
            continue
        speaker: Kind = "user" if role is Role.USER else "assistant"
        pending: list[ContentBlock] = []
        for block in message.content:
            if isinstance(block, ToolUse):
                _flush(entries, speaker, pending)
                arguments = json.dumps(block.input, ensure_ascii=False)
                entries.append(Entry("call", arguments, block.name, block.id))
            elif isinstance(block, Text | Image | Document):
                pending.append(block)
            elif isinstance(block, Thinking | RedactedThinking | Compaction | ToolResult):
                continue
            else:  # pragma: no cover
                assert_never(block)
        _flush(entries, speaker, pending)
    return entries


# -- rendering --------------------------------------------------------------------------


def _indented(text: str) -> list[str]:
    return [INDENT + line if line.strip() else "" for line in text.split("\n")]


def render_entries(entries: Iterable[Entry]) -> str:
    """The transcript lines of ``entries``."""
    lines: list[str] = []
    for entry in entries:
        kind = entry.kind
        if kind in ("user", "assistant"):
            lines.append(f"{kind}:")
            lines.extend(_indented(entry.text))
            continue
        name = f" {entry.name}" if entry.name else ""
        if kind == "call":
            lines.append(f"tool call{name} [{entry.id}]: {entry.text}")
        else:
            lines.append(f"tool {kind}{name} [{entry.id}]:")
            lines.extend(_indented(entry.text))
    return "\n".join(lines)


def render_request(previous: str | None, entries: Iterable[Entry]) -> str:
    """The user message of a summary request: the previous summary, then the transcript."""
    parts: list[str] = []
    if previous:
        parts += [UPDATE, "", "Previous summary:", PREVIOUS_OPEN, previous, PREVIOUS_CLOSE, ""]
        parts.append("New messages:")
    else:
        parts += [SUMMARIZE, ""]
    parts += [TRANSCRIPT_OPEN, render_entries(entries), TRANSCRIPT_CLOSE]
    return "\n".join(parts)


# -- reading back -----------------------------------------------------------------------


def _unindent(lines: list[str]) -> str:
    return "\n".join(line.removeprefix(INDENT) for line in lines).strip("\n")


def parse_entries(lines: Sequence[str]) -> list[Entry]:
    """Read transcript lines back into entries (lenient: stray lines join the last text)."""
    entries: list[Entry] = []
    head: tuple[Kind, str, str] | None = None
    body: list[str] = []

    def close() -> None:
        if head is not None:
            kind, name, use_id = head
            entries.append(Entry(kind, _unindent(body), name, use_id))

    for line in lines:
        if line.startswith(INDENT) or not line.strip():
            body.append(line)
            continue
        if line in ("user:", "assistant:"):
            close()
            head, body = ("user" if line == "user:" else "assistant", "", ""), []
            continue
        match = _TOOL_HEADER.match(line)
        if match is None:
            body.append(line)
            continue
        close()
        word, name, use_id, rest = match.groups()
        if word == "call":
            entries.append(Entry("call", rest or "{}", name or "", use_id))
            head, body = None, []
        else:
            head, body = ("error" if word == "error" else "result", name or "", use_id), []
    close()
    return entries


def _last_index(lines: Sequence[str], value: str, end: int) -> int:
    """The index of the last line equal to ``value`` before ``end``, or -1."""
    for index in range(min(end, len(lines)) - 1, -1, -1):
        if lines[index] == value:
            return index
    return -1


def parse_request(text: str) -> tuple[str | None, list[Entry]] | None:
    """Read a rendered request back: ``(previous summary, entries)``, or ``None`` when
    ``text`` is not a rendered request."""
    lines = text.split("\n")
    stop = _last_index(lines, TRANSCRIPT_CLOSE, len(lines))
    opening = _last_index(lines, TRANSCRIPT_OPEN, stop)
    if stop < 0 or opening < 0:
        return None
    previous: str | None = None
    head = lines[:opening]
    if PREVIOUS_OPEN in head and PREVIOUS_CLOSE in head:
        first = head.index(PREVIOUS_OPEN)
        last = _last_index(head, PREVIOUS_CLOSE, len(head))
        if first < last:
            previous = "\n".join(head[first + 1 : last])
    return previous, parse_entries(lines[opening + 1 : stop])
