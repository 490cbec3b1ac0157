"""Our own JSON format: :func:`to_dict` / :func:`from_dict`, :func:`to_json` /
:func:`from_json` (described in :mod:`neuron_context.formats`).

It keeps every field of every block; the reader checks everything (unknown keys
included), naming the path of what is wrong, e.g. ``messages[3].content[1].tool_use_id``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import TypeAlias, assert_never

from .._errors import ConfigurationError, show
from .._messages.content import (
    JSON,
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
from .._messages.message import Message, Role
from .._validators import require_int
from ._common import (
    build,
    check_depth,
    fail,
    get_bool,
    get_count,
    get_list,
    get_mapping,
    get_str,
    get_text,
    parse_json,
    require_messages,
)

__all__ = ["FORMAT", "VERSION", "from_dict", "from_json", "to_dict", "to_json"]

FORMAT = "neuron-context"
"""The ``format`` of our JSON."""
VERSION = 1
"""The ``version`` of our JSON that this library writes and reads."""

_Object: TypeAlias = dict[str, JSON]

_ROLES = frozenset(role.value for role in Role)
_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text"}),
    "image": frozenset({"type", "media_type", "data", "url", "width", "height"}),
    "document": frozenset({"type", "media_type", "data", "url", "text", "pages"}),
    "tool_use": frozenset({"type", "id", "name", "input"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error"}),
    "thinking": frozenset({"type", "thinking", "signature"}),
    "redacted_thinking": frozenset({"type", "data"}),
    "compaction": frozenset({"type", "content"}),
}


# -- writing --------------------------------------------------------------------------


def to_dict(messages: Iterable[Message]) -> dict[str, JSON]:
    """``messages`` as a JSON-ready dict that :func:`from_dict` reads back equal.

    Examples:
        >>> to_dict([Message.user("hi")])["messages"]
        [{'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}]}]

    Raises:
        ConfigurationError: ``messages`` is not a list of :class:`Message`.
    """
    rendered: list[JSON] = [
        {"role": message.role.value, "content": [_block(block) for block in message.content]}
        for message in require_messages(messages)
    ]
    return {"format": FORMAT, "version": VERSION, "messages": rendered}


def to_json(messages: Iterable[Message], *, indent: int | None = None) -> str:
    """``messages`` as a JSON string (:func:`to_dict`, non-ASCII kept as is).

    Raises:
        ConfigurationError: ``messages`` is not a list of :class:`Message`, or ``indent``
            is not an int >= 0 or None.
    """
    if indent is not None:
        require_int(indent, "indent", maximum=64)
    return json.dumps(to_dict(messages), ensure_ascii=False, indent=indent)


def _set(obj: _Object, key: str, value: JSON) -> None:
    if value is not None:
        obj[key] = value


def _item(item: Text | Image) -> _Object:
    if isinstance(item, Text):
        return {"type": "text", "text": item.text}
    obj: _Object = {"type": "image"}
    _set(obj, "media_type", item.media_type)
    _set(obj, "data", item.data)
    _set(obj, "url", item.url)
    _set(obj, "width", item.width)
    _set(obj, "height", item.height)
    return obj


def _block(block: ContentBlock) -> _Object:
    if isinstance(block, Text | Image):
        return _item(block)
    if isinstance(block, Document):
        obj: _Object = {"type": "document", "media_type": block.media_type}
        _set(obj, "data", block.data)
        _set(obj, "url", block.url)
        _set(obj, "text", block.text)
        _set(obj, "pages", block.pages)
        return obj
    if isinstance(block, ToolUse):
        tool_input: dict[str, JSON] = copy.deepcopy(dict(block.input))
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": tool_input}
    if isinstance(block, ToolResult):
        items: list[JSON] = [_item(item) for item in block.content]
        return {
            "type": "tool_result",
            "tool_use_id": block.tool_use_id,
            "content": items,
            "is_error": block.is_error,
        }
    if isinstance(block, Thinking):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinking):
        return {"type": "redacted_thinking", "data": block.data}
    if isinstance(block, Compaction):
        return {"type": "compaction", "content": block.content}
    assert_never(block)


# -- reading --------------------------------------------------------------------------


def from_dict(data: Mapping[str, object]) -> list[Message]:
    """Read what :func:`to_dict` wrote.

    Raises:
        ConfigurationError: ``data`` is not our format, has another version, or holds a
            missing, unknown or invalid field; the message names its path, e.g.
            ``messages[3].content[1].tool_use_id``.
    """
    data = get_mapping(data, "data")
    if data.get("format") != FORMAT:
        msg = f"format must be {show(FORMAT)}, got {show(data.get('format'))}"
        raise ConfigurationError(msg)
    version = data.get("version")
    if isinstance(version, bool) or version != VERSION:
        msg = f"version must be {VERSION}, got {show(version)}"
        raise ConfigurationError(msg)
    _check_keys(data, frozenset({"format", "version", "messages"}), "")
    raw_messages = get_list(data.get("messages"), "messages")
    return [_message(raw, f"messages[{index}]") for index, raw in enumerate(raw_messages)]


def from_json(text: str | bytes) -> list[Message]:
    """Read what :func:`to_json` wrote (see :func:`from_dict`).

    Raises:
        ConfigurationError: ``text`` is not a ``str`` or ``bytes``, not valid JSON,
            nested too deeply to parse, or not our format (see :func:`from_dict`).
    """
    if not isinstance(text, str | bytes | bytearray):
        msg = f"text must be a str or bytes, got {type(text).__name__}"
        raise ConfigurationError(msg)
    return from_dict(get_mapping(parse_json(text, "text"), "data"))


def _check_keys(obj: Mapping[str, object], allowed: frozenset[str], path: str) -> None:
    for key in obj:
        if key not in allowed:
            raise fail(path, "is not a known field", at=str(key))


def _message(raw: object, path: str) -> Message:
    obj = get_mapping(raw, path)
    _check_keys(obj, frozenset({"role", "content"}), path)
    role = get_str(obj, "role", path)
    if role not in _ROLES:
        raise fail(path, f"must be one of {[r.value for r in Role]}, got {show(role)}", at="role")
    raw_blocks = get_list(obj.get("content"), f"{path}.content")
    blocks = [_read_block(b, f"{path}.content[{k}]") for k, b in enumerate(raw_blocks)]
    return build(path, lambda: Message(role=Role(role), content=blocks))


def _read_block(raw: object, path: str) -> ContentBlock:
    obj = get_mapping(raw, path)
    kind = get_str(obj, "type", path)
    keys = _KEYS.get(kind)
    if keys is None:
        raise fail(path, f"is not a known block type: {show(kind)}", at="type")
    _check_keys(obj, keys, path)
    if kind in ("text", "image"):
        return _read_item(obj, path)
    if kind == "document":
        media_type = get_str(obj, "media_type", path)
        data, url = get_text(obj, "data", path), get_text(obj, "url", path)
        text, pages = get_text(obj, "text", path), get_count(obj, "pages", path)
        return build(
            path,
            lambda: Document(media_type=media_type, data=data, url=url, text=text, pages=pages),
        )
    if kind == "tool_use":
        use_id, name = get_str(obj, "id", path), get_str(obj, "name", path)
        tool_input = get_mapping(obj.get("input"), f"{path}.input")
        check_depth(tool_input, f"{path}.input")
        return build(path, lambda: ToolUse(id=use_id, name=name, input=tool_input))
    if kind == "tool_result":
        use_id, is_error = get_str(obj, "tool_use_id", path), get_bool(obj, "is_error", path)
        raw_items = get_list(obj.get("content"), f"{path}.content")
        items = [_read_item(i, f"{path}.content[{k}]") for k, i in enumerate(raw_items)]
        return build(path, lambda: ToolResult(tool_use_id=use_id, content=items, is_error=is_error))
    if kind == "thinking":
        thinking = get_str(obj, "thinking", path)
        return Thinking(thinking=thinking, signature=get_text(obj, "signature", path) or "")
    if kind == "redacted_thinking":
        return RedactedThinking(data=get_str(obj, "data", path))
    if kind == "compaction":
        return Compaction(content=get_str(obj, "content", path))
    # Every key of _KEYS is handled above; a new block type must be added to both.
    raise fail(path, f"is not a known block type: {show(kind)}", at="type")


def _read_item(raw: object, path: str) -> Text | Image:
    obj = get_mapping(raw, path)
    kind = get_str(obj, "type", path)
    if kind == "text":
        _check_keys(obj, _KEYS["text"], path)
        return Text(text=get_str(obj, "text", path))
    if kind != "image":
        raise fail(path, f"must be 'text' or 'image', got {show(kind)}", at="type")
    _check_keys(obj, _KEYS["image"], path)
    media_type, data = get_text(obj, "media_type", path), get_text(obj, "data", path)
    url = get_text(obj, "url", path)
    width, height = get_count(obj, "width", path), get_count(obj, "height", path)
    return build(
        path,
        lambda: Image(media_type=media_type, data=data, url=url, width=width, height=height),
    )
