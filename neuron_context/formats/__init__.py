"""Serialization and wire formats: our own JSON, OpenAI Chat Completions, Anthropic Messages.

Our format (:func:`to_dict` / :func:`from_dict`, :func:`to_json` / :func:`from_json`)
keeps every field of every block::

    {"format": "neuron-context", "version": 1, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}]}

Block ``type`` s are ``text``, ``image``, ``document``, ``tool_use``, ``tool_result``,
``thinking``, ``redacted_thinking`` and ``compaction``; their keys are the field names of
the classes. Fields that are ``None`` are left out, every other field is written, and
:func:`from_dict` checks everything (unknown keys included), naming the path of what is
wrong, e.g. ``messages[3].content[1].tool_use_id``.

**OpenAI Chat Completions** (:func:`to_openai` / :func:`from_openai`):

- Content that is one text block is sent as a plain string, no blocks as ``""``, else as
  a list of parts. Images are ``image_url`` parts (a URL, or a ``data:`` URL for data);
  a document given as data is a ``file`` part (``file_data`` as a ``data:`` URL,
  ``filename`` ``"document"`` plus the media type's extension), a text-only document is a
  text part (read back as :class:`~neuron_context.Text`), and one given only by URL cannot
  be sent (:class:`~neuron_context.ConfigurationError`).
- An assistant message's text goes to ``content`` (``null`` when it has only tool
  calls) and its tool uses to ``tool_calls``, after the text: text and calls that were
  interleaved come back text first. The arguments are the input's compact JSON
  (``json.dumps(input, ensure_ascii=False, separators=(",", ":"))``, as models write
  them and as the counting rules price them). :class:`~neuron_context.Thinking` and
  :class:`~neuron_context.RedactedThinking` are not sent: Chat Completions has no
  field for them.
- Each :class:`~neuron_context.ToolResult` is its own ``tool`` message; several text
  items become a list of text parts, none ``""`` (read back as one empty text). Chat
  Completions has no error flag, so an error result is sent as it is and reads back
  with ``is_error=False``. Tool messages cannot hold images, so the images of the
  results of an exchange follow its tool messages in one ``user`` message: for each
  result a text part ``[Images returned by tool call <id>]``, then its images;
  :func:`from_openai` puts such images back into their results.
- A :class:`~neuron_context.Compaction` is a text part ``"[Summary of earlier
  conversation]\\n"`` plus the summary; any text that starts with that line reads back
  as a ``Compaction``.
- :func:`from_openai` makes one message per OpenAI message: ``developer`` is read as
  ``system``, each ``tool`` message is one ``TOOL`` message with one result (as
  :meth:`Message.tool_result <neuron_context.Message.tool_result>` builds them; the
  strategies count results, not messages, and :func:`to_anthropic` groups them again).
  Keys it does not know (``name``, ``refusal``, ``detail``, ...) are ignored; a
  ``refusal`` part reads as text. Arguments that are not a JSON object are kept as
  ``{"_raw": "<the string>"}`` and sent back verbatim; blank arguments read as ``{}``.
- So ``to_openai(from_openai(x)) == x`` except that arguments are re-serialized (JSON
  spacing and escapes may change, ``""`` becomes ``"{}"``), ``developer`` becomes
  ``system``, ignored keys are gone and a file part's name is ``document.pdf``. Chat
  Completions cannot keep ``Image.width``/``height``, a URL image's ``media_type``, a
  document's ``pages`` (or its ``text`` when it has data), reasoning or ``is_error``.

**Anthropic Messages** (:func:`to_anthropic` / :func:`from_anthropic`):

- The system messages before the first other message are joined with ``"\\n\\n"`` into
  the top-level ``system``. A later system message stays where it is, sent as user text
  ``<system-reminder>\\n...\\n</system-reminder>``, so the cached prompt prefix does not
  change when one is added; it reads back as user text.
- ``TOOL`` messages are sent as ``user`` turns of ``tool_result`` blocks (``is_error``
  only when true; empty text is dropped, an empty result is ``""``). Consecutive
  messages of one API role are merged into one turn, with the tool results first.
  Empty text blocks are not sent (the API rejects them), nor are turns left empty.
- Documents are ``base64``, ``url`` or ``text`` (``text/plain``) sources; a URL document
  reads back as ``application/pdf``. Thinking keeps its ``signature``.
- :func:`from_anthropic` makes one message per API message, except that a user message
  with ``tool_result`` blocks becomes one ``TOOL`` message holding all of them, followed
  by a ``USER`` message with the rest of its blocks, if any. Unknown keys (``caller``,
  ``cache_control``, ``citations``) are ignored.
- So ``to_anthropic(from_anthropic(x))`` is ``x`` except that string content becomes a
  list of text blocks (an empty tool result stays ``""``), ``"is_error": false`` and
  ignored keys are gone, empty text blocks are dropped, turns of one role are merged,
  and a list ``system`` becomes one string. The Messages API cannot keep
  ``Image.width``/``height``, a URL image's ``media_type`` or a document's ``pages``.

**Tool definitions** (:func:`tools_to_openai` / :func:`tools_from_openai`,
:func:`tools_to_anthropic` / :func:`tools_from_anthropic`): a
:class:`~neuron_context.ToolDefinition` as a Chat Completions function tool or as a
Messages API client tool; the providers send them this way.

**Bad input.** Every reader and writer checks its arguments and raises
:class:`~neuron_context.ConfigurationError` naming what is wrong: a writer given
something other than a list of :class:`~neuron_context.Message` (a wire dict is pointed
to the reader), a ``system`` that is not a ``str``; a reader given something other than
a list of objects, or a field of the wrong type, named by its path. A free-form JSON value
read from the wire (a tool's input or arguments, a tool's schema) may nest at most
:data:`MAX_DEPTH` (100) levels: deeper input is refused with a ``ConfigurationError``
naming its path, never a ``RecursionError``.
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
from ._anthropic_messages import SYSTEM_REMINDER, from_anthropic, to_anthropic
from ._common import (
    MAX_DEPTH,
    SUMMARY_HEADING,
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
from ._openai_chat import (
    RAW_ARGUMENTS,
    TOOL_IMAGES_HEADING,
    arguments_from_openai,
    arguments_to_openai,
    from_openai,
    to_openai,
)
from ._tools import tools_from_anthropic, tools_from_openai, tools_to_anthropic, tools_to_openai

__all__ = [
    "FORMAT",
    "MAX_DEPTH",
    "RAW_ARGUMENTS",
    "SUMMARY_HEADING",
    "SYSTEM_REMINDER",
    "TOOL_IMAGES_HEADING",
    "VERSION",
    "arguments_from_openai",
    "arguments_to_openai",
    "from_anthropic",
    "from_dict",
    "from_json",
    "from_openai",
    "to_anthropic",
    "to_dict",
    "to_json",
    "to_openai",
    "tools_from_anthropic",
    "tools_from_openai",
    "tools_to_anthropic",
    "tools_to_openai",
]

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
