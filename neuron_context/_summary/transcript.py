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

import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
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

__all__ = [
    "Entry",
    "Kind",
    "Request",
    "entries_of",
    "message_entries",
    "newest_entries",
    "read_request",
    "render_request",
]

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


def message_entries(message: Message, tool_name: Callable[[ToolResult], str]) -> list[Entry]:
    """The transcript entries of one message (none for a system message; summaries and
    thinking are left out).

    Args:
        message: the message.
        tool_name: for a result of a tool message, the name of the tool it answers
            (``""`` when unknown).
    """
    role = message.role
    if role is Role.SYSTEM:
        return []
    entries: list[Entry] = []
    if role is Role.TOOL:
        for block in message.content:
            if not isinstance(block, ToolResult):  # pragma: no cover - Message forbids it
                continue
            kind: Kind = "error" if block.is_error else "result"
            text = _text_of(block.content) or "(empty)"
            entries.append(Entry(kind, text, tool_name(block), block.tool_use_id))
        return entries
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
        entries.extend(message_entries(message, functools.partial(_answered, structure, index)))
    return entries


def _answered(structure: Structure, index: int, result: ToolResult) -> str:
    use = structure.tool_use_for(index, result)
    return use.name if use is not None else ""


def newest_entries(messages: Sequence[Message], stop: int) -> Iterator[Entry]:
    """The entries of ``messages[:stop]``, newest first, read lazily from the end.

    A result is named after the tool use it answers in the nearest assistant message
    before its run of tool messages (the exchange it belongs to, as :class:`Structure`
    defines it), found by looking back over that run alone: no pass over the whole
    conversation, so a reader that stops early pays only for what it read.
    """
    in_run = False  # whether the callers of the current run of tool messages are known
    names: dict[str, str] = {}
    for index in range(min(stop, len(messages)) - 1, -1, -1):
        message = messages[index]
        role = message.role
        if role is Role.TOOL:
            if not in_run:
                names, in_run = _callers(messages, index), True
            entries = message_entries(message, functools.partial(_named, names))
        else:
            in_run = in_run and role is Role.SYSTEM
            entries = message_entries(message, functools.partial(_named, {}))
        yield from reversed(entries)


def _named(names: dict[str, str], result: ToolResult) -> str:
    return names.get(result.tool_use_id, "")


def _callers(messages: Sequence[Message], index: int) -> dict[str, str]:
    """The names of the tool uses that the tool message at ``index`` may answer, by id:
    those of the assistant message before its run of tool messages (the first use of an
    id wins); none when a user message comes first."""
    before = index - 1
    while before >= 0 and messages[before].role in (Role.TOOL, Role.SYSTEM):
        before -= 1
    names: dict[str, str] = {}
    if before >= 0 and messages[before].role is Role.ASSISTANT:
        for block in messages[before].content:
            if isinstance(block, ToolUse):
                names.setdefault(block.id, block.name)
    return names


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


def _unindent(lines: Sequence[str]) -> str:
    return "\n".join(line.removeprefix(INDENT) for line in lines).strip("\n")


_Header: TypeAlias = tuple[Kind, str, str, str | None]


def _header(line: str) -> _Header | None:
    """``(kind, tool name, id, call arguments)`` of a header line; ``None`` for a line
    of text (indented, blank, or a stray line that joins the text before it)."""
    if line.startswith(INDENT) or not line.strip():
        return None
    if line == "user:":
        return "user", "", "", None
    if line == "assistant:":
        return "assistant", "", "", None
    match = _TOOL_HEADER.match(line)
    if match is None:
        return None
    word, name, use_id, rest = match.groups()
    kind: Kind = "call" if word == "call" else "error" if word == "error" else "result"
    return kind, name or "", use_id, rest


def _entry(head: _Header, body: Sequence[str]) -> Entry:
    kind, name, use_id, rest = head
    if kind == "call":  # its arguments are on the header; lines after it belong to none
        return Entry("call", rest or "{}", name, use_id)
    return Entry(kind, _unindent(body), name, use_id)


def _last_line(text: str, value: str, end: int) -> int:
    """The offset of the last line of ``text`` equal to ``value`` that starts before
    ``end``, or -1 (found with ``str.rfind``: no pass in Python over the lines)."""
    while end > 0:
        found = text.rfind(value, 0, end + len(value) - 1)
        if found < 0:
            return -1
        stop = found + len(value)
        if (found == 0 or text[found - 1] == "\n") and (stop == len(text) or text[stop] == "\n"):
            return found
        end = found
    return -1


@attrs.frozen
class Request:
    """A rendered summary request, read back on demand: its transcript is read by
    character offsets (``str.find`` and ``str.rfind``), so a reader pays in Python only
    for the lines it reads, not for the whole rendering."""

    previous: str | None
    """The previous summary, verbatim (``None``: none)."""
    text: str
    """The request's text."""
    start: int
    """The offset of the transcript's first line."""
    stop: int
    """The offset of the newline that ends its last line (``stop < start``: no line)."""

    def newest(self) -> Iterator[Entry]:
        """The transcript's entries, newest first (an entry is its header line and the
        lines up to the next header; stray lines join the text before them)."""
        text = self.text
        body_end = self.stop
        end = self.stop
        while end >= self.start:
            newline = text.rfind("\n", self.start, end)
            begin = newline + 1 if newline >= 0 else self.start
            head = _header(text[begin:end])
            if head is not None:
                body = text[end + 1 : body_end].split("\n") if end < body_end else []
                yield _entry(head, body)
                body_end = begin - 1
            if newline < 0:
                return
            end = newline

    def users(self) -> list[int]:
        """The offsets of the ``user:`` header lines, oldest first."""
        if self.stop < self.start:
            return []
        found: list[int] = []
        at = self.start - 1  # the newline before the first line
        while (at := self.text.find("\nuser:\n", at, self.stop + 1)) >= 0:
            found.append(at + 1)
            at += len("\nuser:")
        return found

    def body(self, header: int) -> str:
        """The text of the entry whose header line starts at offset ``header``."""
        text, stop = self.text, self.stop
        first = text.find("\n", header, stop)  # the end of the header line
        if first < 0:
            return ""
        end = first
        while end < stop:
            newline = text.find("\n", end + 1, stop)
            line_end = newline if newline >= 0 else stop
            if _header(text[end + 1 : line_end]) is not None:
                break
            end = line_end
        return _unindent(text[first + 1 : end].split("\n")) if end > first else ""


def read_request(text: str) -> Request | None:
    """Read a rendered request back, or ``None`` when ``text`` is not a rendered request
    (the transcript is the last ``<transcript>`` ... ``</transcript>`` pair of lines)."""
    close = _last_line(text, TRANSCRIPT_CLOSE, len(text))
    opening = _last_line(text, TRANSCRIPT_OPEN, close) if close >= 0 else -1
    if opening < 0:
        return None
    previous: str | None = None
    head = text[:opening].split("\n")
    if PREVIOUS_OPEN in head and PREVIOUS_CLOSE in head:
        first = head.index(PREVIOUS_OPEN)
        last = len(head) - 1 - head[::-1].index(PREVIOUS_CLOSE)
        if first < last:
            previous = "\n".join(head[first + 1 : last])
    return Request(previous, text, opening + len(TRANSCRIPT_OPEN) + 1, close - 1)
