"""Shared helpers of the wire formats: reading untrusted JSON with error paths.

Every reader takes the *path* of the value it reads (``messages[3].content[1]``) so a
:class:`ConfigurationError` names exactly where the input is wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from .._errors import ConfigurationError, show
from .._messages.content import Compaction, Text, ToolUse
from .._messages.jsonvalue import MAX_JSON_DEPTH
from .._messages.message import Message
from .._summary.format import SUMMARY_HEADING

__all__ = [
    "MAX_DEPTH",
    "SUMMARY_HEADING",
    "build",
    "check_depth",
    "fail",
    "get_bool",
    "get_count",
    "get_list",
    "get_mapping",
    "get_messages",
    "get_str",
    "get_text",
    "make_tool_use",
    "parse_data_url",
    "parse_json",
    "read_at",
    "render_compaction",
    "require_messages",
    "require_system",
    "text_or_compaction",
]


MAX_DEPTH = MAX_JSON_DEPTH
"""How deeply a free-form JSON value read from the wire (a tool's input or arguments, a
tool's schema) may nest: ``{}`` is one level, ``{"a": [1]}`` two. The same limit as the
values themselves (:class:`~neuron_context.ToolUse` checks it at construction): real tool
arguments and schemas nest a dozen levels at most, and a reply nested hundreds of levels
deep would otherwise reach Python's recursion limit in ``json`` or ``copy``, so the
readers refuse it with a :class:`ConfigurationError` naming its path."""

_SUMMARY_PREFIX = SUMMARY_HEADING + "\n"
_DATA_URL = re.compile(r"data:([^;,]*)((?:;[^;,]*)*);base64,(.*)", re.DOTALL)
_MISSING = object()

T = TypeVar("T")


def fail(path: str, problem: str, *, at: str = "") -> ConfigurationError:
    """A :class:`ConfigurationError` saying that the value at ``path.at`` has ``problem``."""
    where = f"{path}.{at}" if at and path else (at or path)
    msg = f"{where} {problem}"
    return ConfigurationError(msg)


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def get_mapping(value: object, path: str) -> Mapping[str, object]:
    """``value`` as a mapping, or an error naming ``path``."""
    if not isinstance(value, Mapping):
        raise fail(path, f"must be an object, got {_kind(value)}")
    return value


def get_list(value: object, path: str) -> Sequence[object]:
    """``value`` as a list (a ``list`` or ``tuple``), or an error naming ``path``."""
    if not isinstance(value, list | tuple):
        raise fail(path, f"must be a list, got {_kind(value)}")
    return value


def get_messages(value: object, name: str = "messages") -> Iterable[object]:
    """The list argument ``name`` of a reader: any iterable but a string or a mapping."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        msg = f"{name} must be a list of {name}, got {_kind(value)}"
        raise ConfigurationError(msg)
    return value


def require_messages(value: object) -> list[Message]:
    """The messages argument of a writer as a list of :class:`Message`, or an error.

    A plain dict (an OpenAI or Anthropic message) is named as such: read those with the
    ``from_*`` functions first.
    """
    if isinstance(value, str | bytes | Mapping | Message) or not isinstance(value, Iterable):
        msg = f"messages must be a list of Message, got {_kind(value)}"
        raise ConfigurationError(msg)
    messages = list(value)
    for index, message in enumerate(messages):
        if not isinstance(message, Message):
            hint = (
                " (read wire dicts with formats.from_openai or formats.from_anthropic)"
                if isinstance(message, Mapping)
                else ""
            )
            where, problem = f"messages[{index}]", f"must be a Message, got {_kind(message)}"
            raise fail(where, problem + hint)
    return messages


def require_system(value: object) -> str | None:
    """The ``system`` argument of a writer: a ``str`` or ``None``."""
    if value is not None and not isinstance(value, str):
        msg = f"system must be a str or None, got {_kind(value)}"
        raise ConfigurationError(msg)
    return value


def check_depth(value: object, path: str, *, limit: int = MAX_DEPTH) -> None:
    """Raise unless ``value`` nests at most ``limit`` levels (see :data:`MAX_DEPTH`).

    Iterative, so it cannot itself hit the recursion limit; a cyclic value is reported
    as too deep.
    """
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[object]
        if isinstance(item, Mapping):
            children = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            raise fail(path, f"is nested deeper than {limit} levels")
        stack.extend((child, depth + 1) for child in children)


def parse_json(text: str | bytes, path: str) -> object:
    """``json.loads(text)``, with a :class:`ConfigurationError` naming ``path`` for text
    that is not JSON or nests too deeply to parse.

    Raises:
        ConfigurationError: the text is not valid JSON, or is nested so deeply that the
            parser would exceed the recursion limit.
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise fail(path, f"is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        raise fail(path, f"is not valid JSON: {exc}") from exc


def get_str(obj: Mapping[str, object], key: str, path: str) -> str:
    """The string at ``obj[key]``, or an error naming ``path.key``."""
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        raise fail(path, "is missing", at=key)
    if not isinstance(value, str):
        raise fail(path, f"must be a string, got {_kind(value)}", at=key)
    return value


def get_text(obj: Mapping[str, object], key: str, path: str) -> str | None:
    """The string at ``obj[key]``, or ``None`` when the key is missing or null."""
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise fail(path, f"must be a string or null, got {_kind(value)}", at=key)
    return value


def get_count(obj: Mapping[str, object], key: str, path: str) -> int | None:
    """The non-negative int at ``obj[key]``, or ``None`` when missing or null."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise fail(path, f"must be a non-negative integer or null, got {show(value)}", at=key)
    return value


def get_bool(obj: Mapping[str, object], key: str, path: str) -> bool:
    """The bool at ``obj[key]``; a missing key or null is ``False``."""
    value = obj.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise fail(path, f"must be a boolean, got {_kind(value)}", at=key)
    return value


def build(path: str, factory: Callable[[], T]) -> T:
    """Call ``factory``; a :class:`ConfigurationError` it raises is re-raised naming ``path``."""
    try:
        return factory()
    except ConfigurationError as exc:
        msg = f"{path}: {exc}"
        raise ConfigurationError(msg) from exc


def render_compaction(block: Compaction) -> str:
    """The text a provider sees for a summary: the heading line, then the summary."""
    return _SUMMARY_PREFIX + block.content


def text_or_compaction(text: str) -> Text | Compaction:
    """A :class:`Compaction` for text that starts with the heading line, else a :class:`Text`."""
    if text.startswith(_SUMMARY_PREFIX):
        return Compaction(content=text[len(_SUMMARY_PREFIX) :])
    return Text._of(text)


def parse_data_url(url: str) -> tuple[str | None, str] | None:
    """``(media_type, base64 data)`` of a ``data:...;base64,...`` URL, else ``None``."""
    match = _DATA_URL.fullmatch(url)
    if match is None:
        return None
    return (match.group(1) or None), match.group(3)


def make_tool_use(path: str, use_id: str, name: str, tool_input: Mapping[str, object]) -> ToolUse:
    """A :class:`ToolUse` read at ``path``; a :class:`ConfigurationError` names ``path``."""
    try:
        return ToolUse(id=use_id, name=name, input=tool_input)
    except ConfigurationError as exc:
        msg = f"{path}: {exc}"
        raise ConfigurationError(msg) from exc


def read_at(path: str, read: Callable[[], T]) -> T:
    """``read()``, the conversion of the framework message at ``path``; an error it raises
    names ``path`` (a :class:`ConfigurationError` of our values, ``ToolUse.id must not be
    empty``, gets it in front; one that names it already is raised as it is), and so does
    any other exception the framework's own code raises while we read its message (a
    serializer that cannot serialize, a translator that fails): the reader's one boundary.
    """
    try:
        return read()
    except ConfigurationError as exc:
        if str(exc).startswith(path):
            raise
        msg = f"{path}: {exc}"
        raise ConfigurationError(msg) from exc
    except (RecursionError, MemoryError):
        msg = f"{path} is nested too deeply to read"
        raise ConfigurationError(msg) from None
    except Exception as exc:
        msg = f"{path} cannot be read: {type(exc).__name__}: {show(str(exc), 200)}"
        raise ConfigurationError(msg) from exc
