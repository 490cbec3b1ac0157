"""Transcript files: JSON or JSONL, read in whatever format they are, written back losslessly.

A user points the tool at whatever their agent saved, so a file may be:

- one JSON document: an object whose ``messages`` is the conversation (its other fields
  are the record's, kept as they were), or a bare list;
- JSONL holding one conversation (one message, row or item per line);
- JSONL of records, one conversation per line (each an object with ``messages``).

Its format is detected (:mod:`._transcripts <neuron_context.formats._transcripts>`), unless
the caller names it. What is written back is the same file with the compacted
conversation in it (:func:`dumps`): an unchanged conversation is the original text, byte
for byte, and a compacted one keeps the record's fields, the container and every field of
the messages that the compaction did not change. Reading checks the format, not whether
the conversation is well formed: that is the caller's to check or repair.

A malformed file is a :class:`~neuron_context.ConfigurationError` whose message is one
line naming the file and the path of what is wrong, e.g. ``t.json: messages[3].content[1]
.tool_use_id must be a string, got int`` — never a traceback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from ..._errors import ConfigurationError
from ..._messages.message import Message, ToolDefinition, history_repr
from . import CODECS, Codec, Container, Parsed, by_name, detect, rewrite
from .storage import json_text, loads, printable, read_bytes

__all__ = [
    "FORMATS",
    "Source",
    "Transcript",
    "dumps",
    "expand",
    "file_error",
    "parse_document",
    "read_file",
]

FORMATS: tuple[str, ...] = tuple(codec.name for codec in CODECS)
"""The names of the formats (the command line's ``--format`` values)."""

_MAX_ERROR = 240
"""Characters of an error message shown on the one error line."""
_PATH = re.compile(r"^messages\[(\d+)\]")


@attrs.frozen
class Source:
    """Where a transcript was read from, all that writing it back needs."""

    codec: Codec
    """Its format."""
    container: Container
    """Where its units were: an object's ``messages``, a list, JSONL lines."""
    units: tuple[object, ...] = attrs.field(repr=False)
    """The units as read."""
    parsed: Parsed = attrs.field(repr=False)
    """What they read as, and where each message came from."""
    header: Mapping[str, object] = attrs.field(factory=dict, repr=False)
    """The object's fields (``messages`` included); empty for a list or lines."""
    texts: tuple[str, ...] = attrs.field(default=(), repr=False)
    """The original text: of the document, or of each line (to write unchanged units
    back byte for byte)."""


@attrs.frozen
class Transcript:
    """One conversation read from a file, with what writing it back needs.

    :func:`~neuron_context.formats.load_transcripts` makes them;
    :func:`~neuron_context.formats.dumps` and :func:`~neuron_context.formats.dump` write
    one back with other messages in it.
    """

    name: str
    """Where it came from: the file, ``file:line`` for a record of a JSONL file, or
    ``demo:<name>`` for a bundled transcript."""
    messages: tuple[Message, ...] = attrs.field(repr=history_repr)
    """The conversation, as read (not checked well formed:
    :func:`~neuron_context.validate` or :func:`~neuron_context.repair` it)."""
    source: Source = attrs.field(repr=False)
    """Its format and what it was read from (internal: what the writer needs)."""

    @property
    def format(self) -> str:
        """The name of its format (one of ``TRANSCRIPT_FORMATS``, e.g. ``"claude-code"``)."""
        return self.source.codec.name

    @property
    def tools(self) -> tuple[ToolDefinition, ...]:
        """The tool definitions the file's request holds (sent with every model call)."""
        return self.source.parsed.tools


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MAX_ERROR else line[: _MAX_ERROR - 1] + "…"


def file_error(name: str, problem: str) -> ConfigurationError:
    """The one-line error about the transcript ``name``: ``"<name>: <problem>"``, cut to
    a readable length."""
    return ConfigurationError(_one_line(f"{name}: {problem}"))


_error = file_error


def _where(problem: str, container: Container, lines: Sequence[int]) -> str:
    """A reader's error with ``messages[i]`` named as the line of a JSONL file."""
    if container != "lines":
        return problem
    match = _PATH.match(problem)
    if match is None or int(match.group(1)) >= len(lines):
        return problem
    rest = problem[match.end() :].lstrip(".")
    return f"line {lines[int(match.group(1))]}" + (f": {rest}" if rest else "")


def _read_units(  # noqa: PLR0917  # the document's parts, passed on as they are
    name: str,
    container: Container,
    units: Sequence[object],
    header: Mapping[str, object],
    fmt: str | None,
    lines: Sequence[int] = (),
    option: str = "format=",
) -> tuple[Codec, Parsed]:
    codecs = [by_name(fmt)] if fmt else detect(container, units, header)
    if not codecs:
        tried = ", ".join(codec.title for codec in CODECS if container in codec.containers)
        raise _error(name, f"is not a transcript in a known format (tried: {tried})")
    problems: list[str] = []
    for codec in codecs:
        try:
            return codec, codec.read(units, header)
        except ConfigurationError as exc:
            problems.append(_where(str(exc), container, lines))
    first = problems[0]
    if fmt:
        raise _error(name, f"{first} (read as {codecs[0].title}, as {option} says)")
    titles = [codec.title for codec in codecs[1:]]
    also = f"; also tried {_and(titles)}" if titles else ""
    raise _error(name, f"{first} (read as {codecs[0].title}{also}; {option} chooses another)")


def _and(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}"


def _transcript(
    name: str,
    container: Container,
    units: Sequence[object],
    header: Mapping[str, object],
    *,
    fmt: str | None,
    option: str,
    texts: tuple[str, ...],
    lines: Sequence[int] = (),
) -> Transcript:
    codec, parsed = _read_units(name, container, units, header, fmt, lines, option)
    source = Source(codec, container, tuple(units), parsed, header, texts)
    return Transcript(name=name, messages=parsed.messages, source=source)


def parse_document(
    document: object,
    name: str,
    *,
    fmt: str | None = None,
    option: str = "format=",
    text: str = "",
) -> Transcript:
    """Read one conversation from a parsed JSON ``document`` (an object with ``messages``
    or a list); ``text`` is the document's text, if it came from a file; ``option`` is
    what errors say chooses another format.

    Raises:
        ConfigurationError: the document is not a conversation in a known format (or in
            ``fmt``); one line naming ``name``.
    """
    texts = (text,) if text else ()
    if isinstance(document, list):
        return _transcript(name, "list", document, {}, fmt=fmt, option=option, texts=texts)
    if not isinstance(document, Mapping):
        kind = "null" if document is None else type(document).__name__
        raise _error(name, f"must be a list of messages or an object with 'messages', got {kind}")
    units = document.get("messages")
    if not isinstance(units, list):
        problem = "messages is missing" if units is None else "messages must be a list"
        raise _error(name, f"{problem}: not a transcript in a known format ({', '.join(FORMATS)})")
    return _transcript(name, "object", units, document, fmt=fmt, option=option, texts=texts)


def _load_text(path: Path) -> str:
    data = read_bytes(path)
    if b"\x00" in data[:8192]:
        raise _error(printable(str(path)), "is a binary file, not JSON or JSONL")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        problem = f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        raise _error(printable(str(path)), problem) from exc


def _json_problem(exc: json.JSONDecodeError, text: str) -> str:
    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
        return f"is truncated: the JSON ends early (line {exc.lineno}, column {exc.colno})"
    return f"is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"


def read_file(path: Path, *, fmt: str | None = None, option: str = "format=") -> list[Transcript]:
    """The conversations in the file at ``path`` (one, or one per record of a JSONL file).

    Raises:
        ConfigurationError: the file is missing, not a regular file, binary, not
            JSON/JSONL or not a conversation; one line naming the file and what is wrong.
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
        return _read_lines(name, lines, fmt=fmt, option=option)
    if isinstance(document, Mapping) and not isinstance(document.get("messages"), list):
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        if len(lines) == 1 and path.suffix == ".jsonl":  # a JSONL file of one row
            return _read_lines(name, lines, fmt=fmt, option=option)
    return [parse_document(document, name, fmt=fmt, option=option, text=text)]


def _read_lines(
    name: str, lines: list[tuple[int, str]], *, fmt: str | None, option: str
) -> list[Transcript]:
    rows: list[object] = []
    for number, line in lines:
        try:
            rows.append(loads(line, f"{name}: line {number}"))
        except json.JSONDecodeError as exc:
            problem = f"line {number} is not valid JSON: {exc.msg} at column {exc.colno}"
            raise _error(name, problem) from exc
    if all(isinstance(row, Mapping) and isinstance(row.get("messages"), list) for row in rows):
        return [
            parse_document(row, f"{name}:{number}", fmt=fmt, option=option, text=line)
            for (number, line), row in zip(lines, rows, strict=True)
        ]
    texts = tuple(line for _, line in lines)
    numbers = [number for number, _ in lines]
    return [
        _transcript(name, "lines", rows, {}, fmt=fmt, option=option, texts=texts, lines=numbers)
    ]


def expand(paths: Sequence[Path]) -> list[Path]:
    """The files named by ``paths``: a folder stands for its ``*.json`` and ``*.jsonl``."""
    out: list[Path] = []
    for path in paths:
        try:
            folder = path.is_dir()
            found = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl"))
        except (OSError, ValueError):
            folder, found = False, []
        if folder:
            if not found:
                raise _error(printable(str(path)), "holds no .json or .jsonl file")
            out.extend(found)
        else:
            out.append(path)
    return out


def dumps(transcript: Transcript, messages: Sequence[Message], *, ascii_only: bool = False) -> str:
    """The text of ``transcript``'s file holding ``messages`` instead (see the module
    docstring): the original text where nothing changed.

    Raises:
        ConfigurationError: a message cannot be written in the file's format.
    """
    source = transcript.source
    units = rewrite(source.codec, source.parsed, source.units, messages)
    header = source.codec.header(source.header, source.parsed.messages, messages)
    same = len(units) == len(source.units) and all(
        a is b for a, b in zip(units, source.units, strict=True)
    )

    def dump(value: object, *, indent: int | None = 1) -> str:
        if ascii_only:
            return json.dumps(value, ensure_ascii=True, indent=indent)
        return json_text(value, indent=indent)

    if source.container == "lines":
        original = {} if ascii_only else dict(zip(map(id, source.units), source.texts, strict=True))
        return "".join((original.get(id(u)) or dump(u, indent=None)) + "\n" for u in units)
    if same and header is source.header and source.texts and not ascii_only:
        return source.texts[0]
    if source.container == "list":
        return dump(units) + "\n"
    document = {key: (units if key == "messages" else value) for key, value in header.items()}
    return dump(document) + "\n"
