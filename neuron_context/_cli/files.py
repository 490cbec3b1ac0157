"""Transcript files: reading, detecting and writing the three formats, as JSON or JSONL.

A user points the tool at whatever their agent saved, so the reader accepts every shape
in which a conversation is commonly stored and works out which one it is:

- OpenAI Chat Completions: ``{"messages": [...]}`` or a bare list of messages;
- Anthropic Messages: ``{"system": ..., "messages": [...]}`` (or a bare list);
- our own JSON (:func:`neuron_context.formats.to_dict`);
- the shared transcripts' records, which say what they are
  (``{"format": "openai-chat" | "anthropic-messages", "messages": [...], ...}``);
- JSONL: either one message per line (one conversation) or one record per line (several).

Detection looks at what only one format has (``tool_calls``, a ``tool`` or ``system``
role and ``tool_call_id`` are OpenAI's; ``tool_use``/``tool_result``/``thinking`` blocks
and a top-level ``system`` are Anthropic's); a conversation of plain text messages reads
the same either way. ``--format`` overrides it.

What the tool writes back keeps the input's layout (object or list, JSON or JSONL) and
the record's other top-level fields, so a compacted transcript can replace the original.

A malformed file is a :class:`~neuron_context.ConfigurationError` whose message is one
line naming the file and the path of what is wrong, e.g. ``t.json: messages[3].content[1]
.tool_use_id must be a string, got int`` — never a traceback.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import attrs

from .._errors import ConfigurationError, InvalidConversationError
from .._messages.message import Message, history_repr
from .._messages.wellformed import repair, validate
from ..formats import from_anthropic, from_dict, from_openai, to_anthropic, to_dict, to_openai
from .storage import json_text, loads, printable, read_bytes

__all__ = [
    "Format",
    "Layout",
    "Transcript",
    "dumps",
    "expand",
    "parse_document",
    "read_file",
]

_MAX_ERROR = 240
"""Characters of an error message shown on the one error line."""


class Format(enum.StrEnum):
    """A wire format of a transcript."""

    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    NEURON = "neuron-context"


_RECORD_FORMATS = {
    "openai-chat": Format.OPENAI,
    "openai": Format.OPENAI,
    "anthropic-messages": Format.ANTHROPIC,
    "anthropic": Format.ANTHROPIC,
    "neuron-context": Format.NEURON,
}
_OPENAI_ROLES = frozenset({"system", "developer", "tool"})
_ANTHROPIC_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})


@attrs.frozen
class Layout:
    """How a transcript was stored, so it can be written back the same way."""

    format: Format
    """Its wire format."""
    container: Literal["object", "list", "lines"]
    """``{"messages": [...]}``, a bare list, or JSONL with one message per line."""
    extra: Mapping[str, object] = attrs.field(factory=dict)
    """The record's other top-level fields (``source``, ``license``, ...), kept as they were."""


@attrs.frozen
class Transcript:
    """One conversation read from a file."""

    name: str
    """Where it came from: the file, ``file:line`` for a record of a JSONL file, or
    ``demo:<name>`` for a bundled transcript."""
    messages: tuple[Message, ...] = attrs.field(repr=history_repr)
    """The conversation, well formed."""
    layout: Layout
    """How it was stored."""


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MAX_ERROR else line[: _MAX_ERROR - 1] + "…"


def _error(name: str, problem: str) -> ConfigurationError:
    return ConfigurationError(_one_line(f"{name}: {problem}"))


def _detect_messages(messages: Sequence[object]) -> Format:
    for raw in messages:
        if not isinstance(raw, Mapping):
            continue
        role = raw.get("role")
        if (
            (isinstance(role, str) and role in _OPENAI_ROLES)
            or "tool_calls" in raw
            or ("tool_call_id" in raw)
        ):
            return Format.OPENAI
        content = raw.get("content")
        if isinstance(content, list):
            for block in content:
                kind = block.get("type") if isinstance(block, Mapping) else None
                if isinstance(block, Mapping) and (
                    (isinstance(kind, str) and kind in _ANTHROPIC_BLOCKS) or "source" in block
                ):
                    return Format.ANTHROPIC
    return Format.OPENAI


def _detect(document: object, name: str) -> tuple[Format, Sequence[object]]:
    """The format of ``document`` and its list of messages."""
    if isinstance(document, list):
        return _detect_messages(document), document
    if not isinstance(document, Mapping):
        kind = "null" if document is None else type(document).__name__
        raise _error(name, f"must be a list of messages or an object with 'messages', got {kind}")
    messages = document.get("messages")
    if not isinstance(messages, list):
        raise _error(name, "messages must be a list of messages")
    declared = document.get("format")
    if isinstance(declared, str) and declared in _RECORD_FORMATS:
        return _RECORD_FORMATS[declared], messages
    if "system" in document:
        return Format.ANTHROPIC, messages
    return _detect_messages(messages), messages


def _read(fmt: Format, document: object, messages: Sequence[object]) -> list[Message]:
    if fmt is Format.OPENAI:
        return from_openai(messages)  # type: ignore[arg-type]  # checked by the reader
    if fmt is Format.ANTHROPIC:
        system = document.get("system") if isinstance(document, Mapping) else None
        return from_anthropic(messages, system=system)  # type: ignore[arg-type]
    if isinstance(document, Mapping) and "format" in document:
        return from_dict(document)
    return from_dict({"format": "neuron-context", "version": 1, "messages": messages})


def parse_document(
    document: object,
    name: str,
    *,
    fmt: Format | None = None,
    fix: bool = False,
    container: Literal["object", "list", "lines"] | None = None,
) -> Transcript:
    """Read one conversation from a parsed JSON ``document``.

    Args:
        document: a record, an object with ``messages`` or a list of messages.
        name: what to call it in errors and reports.
        fmt: the format, or ``None`` to detect it.
        fix: repair a conversation that is not well formed instead of rejecting it.
        container: the layout to record (default: from the document's type).

    Raises:
        ConfigurationError: the document is not a conversation in the format, or is not
            well formed (unless ``fix``); one line naming ``name`` and the path.
    """
    detected, raw_messages = _detect(document, name)
    fmt = fmt or detected
    try:
        messages = _read(fmt, document, raw_messages)
    except ConfigurationError as exc:
        raise _error(name, str(exc)) from exc
    if fix:
        messages = repair(messages)
    else:
        try:
            validate(messages)
        except InvalidConversationError as exc:
            raise _error(name, f"{exc} (pass --repair to fix it)") from exc
    extra: dict[str, object] = {}
    if isinstance(document, Mapping):
        extra = {k: v for k, v in document.items() if k not in ("messages", "system")}
        if fmt is Format.ANTHROPIC and "system" in document:
            extra["system"] = None  # remembers that the record had the key
    shape = container or ("list" if isinstance(document, list) else "object")
    return Transcript(name=name, messages=tuple(messages), layout=Layout(fmt, shape, extra))


def _load_text(path: Path) -> str:
    data = read_bytes(path)
    if b"\x00" in data[:8192]:
        raise _error(str(path), "is a binary file, not JSON or JSONL")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        problem = f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        raise _error(str(path), problem) from exc


def _json_problem(exc: json.JSONDecodeError, text: str) -> str:
    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
        return f"is truncated: the JSON ends early (line {exc.lineno}, column {exc.colno})"
    return f"is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"


def read_file(path: Path, *, fmt: Format | None = None, fix: bool = False) -> list[Transcript]:
    """The conversations in the file at ``path`` (one, or one per record of a JSONL file).

    Raises:
        ConfigurationError: the file is missing, binary, not JSON/JSONL or not a
            conversation; the message is one line naming the file and what is wrong.
    """
    name = printable(str(path))
    text = _load_text(path)
    if not text.strip():
        raise _error(name, "is empty")
    try:
        document = loads(text, name)
    except json.JSONDecodeError as whole:
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        if len(lines) < 2 or path.suffix == ".json":
            raise _error(name, _json_problem(whole, text)) from whole
        return _read_lines(name, lines, fmt=fmt, fix=fix)
    return [parse_document(document, name, fmt=fmt, fix=fix)]


def _read_lines(
    name: str, lines: list[tuple[int, str]], *, fmt: Format | None, fix: bool
) -> list[Transcript]:
    documents: list[tuple[int, object]] = []
    for number, line in lines:
        try:
            documents.append((number, loads(line, f"{name}: line {number}")))
        except json.JSONDecodeError as exc:
            problem = f"line {number} is not valid JSON: {exc.msg} at column {exc.colno}"
            raise _error(name, problem) from exc
    if all(isinstance(d, Mapping) and "role" in d for _, d in documents):
        messages = [d for _, d in documents]
        return [parse_document(messages, name, fmt=fmt, fix=fix, container="lines")]
    return [parse_document(d, f"{name}:{n}", fmt=fmt, fix=fix) for n, d in documents]


def expand(paths: Sequence[Path]) -> list[Path]:
    """The files named by ``paths``: a folder stands for its ``*.json`` and ``*.jsonl``."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl"))
            if not found:
                raise _error(str(path), "holds no .json or .jsonl file")
            out.extend(found)
        else:
            out.append(path)
    return out


def dumps(messages: Sequence[Message], layout: Layout) -> str:
    """``messages`` as text in ``layout`` (the format and shape they were read in)."""
    extra = dict(layout.extra)
    system: str | None = None
    rendered: list[object]
    if layout.format is Format.OPENAI:
        rendered = list(to_openai(messages))
    elif layout.format is Format.ANTHROPIC:
        system, anthropic = to_anthropic(messages)
        rendered = list(anthropic)
    else:
        body = to_dict(messages)
        rendered = list(body["messages"])  # type: ignore[arg-type]  # to_dict writes a list
        extra = {**extra, "format": body["format"], "version": body["version"]}
    if layout.container == "lines" and system is None:
        return "".join(json_text(m, indent=None) + "\n" for m in rendered)
    if layout.container == "list" and system is None and layout.format is not Format.NEURON:
        return json_text(rendered) + "\n"
    document: dict[str, object] = {}
    for key, value in extra.items():
        if key != "system":
            document[key] = value
    if layout.format is Format.ANTHROPIC and (system is not None or "system" in extra):
        document["system"] = system
    document["messages"] = rendered
    return json_text(document) + "\n"
