"""Anthropic Messages API: :func:`to_anthropic` and :func:`from_anthropic`.

The rules, and what the format cannot hold, are listed in :mod:`neuron_context.formats`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import TypeAlias, assert_never

from .._errors import show
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
from ._common import (
    build,
    check_depth,
    fail,
    get_bool,
    get_list,
    get_mapping,
    get_messages,
    get_str,
    get_text,
    render_compaction,
    require_messages,
    require_system,
    text_or_compaction,
)

__all__ = ["SYSTEM_REMINDER", "from_anthropic", "read_anthropic", "read_block", "to_anthropic"]

SYSTEM_REMINDER = "<system-reminder>\n{text}\n</system-reminder>"
"""How :func:`to_anthropic` renders a system message that comes after the conversation
has started: as this text in a user turn, where it was (the top-level ``system`` holds
only the leading system messages)."""

_Block: TypeAlias = dict[str, JSON]


# -- rendering ------------------------------------------------------------------------


def to_anthropic(
    messages: Iterable[Message], *, system: str | None = None
) -> tuple[str | None, list[dict[str, JSON]]]:
    """Render ``messages`` for the Messages API.

    Args:
        messages: the conversation.
        system: a system prompt to put before the leading system messages.

    Returns:
        ``(system, messages)``: the top-level system prompt (``None`` when there is
        none) and new plain dicts, ready for ``client.messages.create(system=...,
        messages=...)``; roles alternate.

    Raises:
        ConfigurationError: ``messages`` is not a list of :class:`Message`, ``system``
            is not a ``str`` or ``None``, or a block cannot be expressed (an image given
            as data without a media type, an image or document in a system message); the
            message names its path, e.g. ``messages[2].content[0]``.
    """
    checked = require_messages(messages)
    system = require_system(system)
    prompt: list[str] = [] if system is None else [system]
    turns: list[tuple[str, list[_Block]]] = []
    leading = True
    for index, message in enumerate(checked):
        path = f"messages[{index}]"
        if message.role is Role.SYSTEM:
            text = _system_text(message, path)
            if leading:
                prompt.append(text)
                continue
            role, blocks = "user", [_text_block(SYSTEM_REMINDER.format(text=text))]
        else:
            leading = False
            role = "assistant" if message.role is Role.ASSISTANT else "user"
            blocks = []
            for b_index, block in enumerate(message.content):
                rendered = _block(block, f"{path}.content[{b_index}]")
                if rendered is not None:
                    blocks.append(rendered)
        if not blocks:
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    out: list[dict[str, JSON]] = []
    for role, blocks in turns:
        content: list[JSON] = [*blocks]
        if role == "user":
            # The API wants a turn's tool results before anything else in it.
            results = [block for block in blocks if block["type"] == "tool_result"]
            content = [*results, *(block for block in blocks if block["type"] != "tool_result")]
        out.append({"role": role, "content": content})
    return ("\n\n".join(prompt) if prompt else None), out


def _text_block(text: str) -> _Block:
    return {"type": "text", "text": text}


def _system_text(message: Message, path: str) -> str:
    texts: list[str] = []
    for b_index, block in enumerate(message.content):
        if isinstance(block, Text):
            texts.append(block.text)
        elif isinstance(block, Compaction):
            texts.append(render_compaction(block))
        else:
            problem = f"cannot be sent in a system prompt: {type(block).__name__}"
            raise fail(path, problem, at=f"content[{b_index}]")
    return "\n".join(texts)


def _block(block: ContentBlock, path: str) -> _Block | None:
    if isinstance(block, Text):
        # The API rejects empty text blocks.
        return _text_block(block.text) if block.text else None
    if isinstance(block, Compaction):
        return _text_block(render_compaction(block))
    if isinstance(block, Image):
        return _image_block(block, path)
    if isinstance(block, Document):
        return _document_block(block)
    if isinstance(block, ToolUse):
        tool_input: dict[str, JSON] = copy.deepcopy(dict(block.input))
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": tool_input}
    if isinstance(block, ToolResult):
        return _tool_result_block(block, path)
    if isinstance(block, Thinking):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinking):
        return {"type": "redacted_thinking", "data": block.data}
    assert_never(block)


def _image_block(image: Image, path: str) -> _Block:
    if image.url is not None:
        return {"type": "image", "source": {"type": "url", "url": image.url}}
    if image.media_type is None:
        raise fail(path, "is required to send an image given as data", at="media_type")
    source: _Block = {"type": "base64", "media_type": image.media_type, "data": image.data}
    return {"type": "image", "source": source}


def _document_block(document: Document) -> _Block:
    source: _Block
    if document.data is not None:
        source = {"type": "base64", "media_type": document.media_type, "data": document.data}
    elif document.url is not None:
        source = {"type": "url", "url": document.url}
    else:
        source = {"type": "text", "media_type": "text/plain", "data": document.text}
    return {"type": "document", "source": source}


def _tool_result_block(result: ToolResult, path: str) -> _Block:
    items: list[JSON] = []
    for i_index, item in enumerate(result.content):
        if isinstance(item, Image):
            items.append(_image_block(item, f"{path}.content[{i_index}]"))
        elif item.text:
            items.append(_text_block(item.text))
    block: _Block = {
        "type": "tool_result",
        "tool_use_id": result.tool_use_id,
        # Empty text blocks are rejected; an empty result is sent as "".
        "content": items or "",
    }
    if result.is_error:
        block["is_error"] = True
    return block


# -- reading --------------------------------------------------------------------------


def from_anthropic(
    messages: Iterable[Mapping[str, object]],
    *,
    system: str | Sequence[Mapping[str, object]] | None = None,
) -> list[Message]:
    """Read Messages API ``messages`` (and the top-level ``system``, if any).

    ``system`` becomes one system message first. Each API message becomes one
    :class:`Message`, except that a user message holding ``tool_result`` blocks becomes
    a ``TOOL`` message with all of them, followed by a ``USER`` message with the rest
    of its blocks when there are any. Unknown extra keys of blocks are ignored.

    Raises:
        ConfigurationError: the input is not Messages API messages; the message names
            the offending path, e.g. ``messages[3].content[1].tool_use_id``.
    """
    return read_anthropic(messages, system=system)[0]


def read_anthropic(
    messages: Iterable[Mapping[str, object]],
    *,
    system: str | Sequence[Mapping[str, object]] | None = None,
) -> tuple[list[Message], list[tuple[int, ...]]]:
    """:func:`from_anthropic`, and for each message the index of the API message it was
    read from (``()`` for the system message read from ``system``)."""
    out: list[Message] = []
    origins: list[tuple[int, ...]] = []
    if system is not None:
        out.append(_read_system(system))
        origins.append(())
    for index, raw in enumerate(get_messages(messages)):
        read = _read_message(raw, f"messages[{index}]")
        out.extend(read)
        origins.extend((index,) for _ in read)
    return out, origins


def _read_message(raw: object, path: str) -> list[Message]:
    item = get_mapping(raw, path)
    role = get_str(item, "role", path)
    if role not in ("user", "assistant"):
        raise fail(path, f"must be 'user' or 'assistant', got {show(role)}", at="role")
    content = item.get("content")
    blocks: list[ContentBlock]
    if isinstance(content, str):
        blocks = [text_or_compaction(content)] if content else []
    else:
        raw_blocks = get_list(content, f"{path}.content")
        blocks = [read_block(b, f"{path}.content[{k}]") for k, b in enumerate(raw_blocks)]
    if role == "assistant":
        return [build(path, lambda: Message(role=Role.ASSISTANT, content=blocks))]
    out: list[Message] = []
    results = [block for block in blocks if isinstance(block, ToolResult)]
    rest = [block for block in blocks if not isinstance(block, ToolResult)]
    if results:
        out.append(Message(role=Role.TOOL, content=results))
    if rest or not results:
        out.append(build(path, lambda: Message(role=Role.USER, content=rest)))
    return out


def _read_system(system: str | Sequence[Mapping[str, object]]) -> Message:
    if isinstance(system, str):
        return Message(role=Role.SYSTEM, content=(text_or_compaction(system),))
    blocks: list[ContentBlock] = []
    for b_index, raw in enumerate(get_list(system, "system")):
        path = f"system[{b_index}]"
        block = get_mapping(raw, path)
        if get_str(block, "type", path) != "text":
            raise fail(path, "must be 'text'", at="type")
        blocks.append(text_or_compaction(get_str(block, "text", path)))
    return Message(role=Role.SYSTEM, content=blocks)


def read_block(raw: object, path: str) -> ContentBlock:
    """One content block of a Messages API message, read from ``raw`` at ``path``."""
    block = get_mapping(raw, path)
    kind = get_str(block, "type", path)
    if kind == "text":
        return text_or_compaction(get_str(block, "text", path))
    if kind == "image":
        return _read_image(block, path)
    if kind == "document":
        return _read_document(block, path)
    if kind == "tool_use":
        use_id = get_str(block, "id", path)
        name = get_str(block, "name", path)
        tool_input = get_mapping(block.get("input"), f"{path}.input")
        check_depth(tool_input, f"{path}.input")
        return build(path, lambda: ToolUse(id=use_id, name=name, input=tool_input))
    if kind == "tool_result":
        return _read_tool_result(block, path)
    if kind == "thinking":
        thinking = get_str(block, "thinking", path)
        signature = get_text(block, "signature", path) or ""
        return Thinking(thinking=thinking, signature=signature)
    if kind == "redacted_thinking":
        return RedactedThinking(data=get_str(block, "data", path))
    raise fail(path, f"is not a supported block type: {show(kind)}", at="type")


def _read_image(block: Mapping[str, object], path: str) -> Image:
    source = get_mapping(block.get("source"), f"{path}.source")
    kind = get_str(source, "type", f"{path}.source")
    if kind == "base64":
        media_type = get_str(source, "media_type", f"{path}.source")
        data = get_str(source, "data", f"{path}.source")
        return build(path, lambda: Image(media_type=media_type, data=data))
    if kind == "url":
        url = get_str(source, "url", f"{path}.source")
        return build(path, lambda: Image(url=url))
    raise fail(path, f"is not a supported image source: {show(kind)}", at="source.type")


def _read_document(block: Mapping[str, object], path: str) -> Document:
    source = get_mapping(block.get("source"), f"{path}.source")
    kind = get_str(source, "type", f"{path}.source")
    if kind == "base64":
        media_type = get_str(source, "media_type", f"{path}.source")
        data = get_str(source, "data", f"{path}.source")
        return build(path, lambda: Document(media_type=media_type, data=data))
    if kind == "text":
        text_type = get_text(source, "media_type", f"{path}.source") or "text/plain"
        text = get_str(source, "data", f"{path}.source")
        return build(path, lambda: Document(media_type=text_type, text=text))
    if kind == "url":
        url = get_str(source, "url", f"{path}.source")
        return build(path, lambda: Document(media_type="application/pdf", url=url))
    raise fail(path, f"is not a supported document source: {show(kind)}", at="source.type")


def _read_tool_result(block: Mapping[str, object], path: str) -> ToolResult:
    use_id = get_str(block, "tool_use_id", path)
    is_error = get_bool(block, "is_error", path)
    content = block.get("content")
    items: list[Text | Image] = []
    if isinstance(content, str):
        items.append(Text(text=content))
    elif content is not None:
        for i_index, raw in enumerate(get_list(content, f"{path}.content")):
            item_path = f"{path}.content[{i_index}]"
            item = get_mapping(raw, item_path)
            kind = get_str(item, "type", item_path)
            if kind == "text":
                items.append(Text(text=get_str(item, "text", item_path)))
            elif kind == "image":
                items.append(_read_image(item, item_path))
            else:
                raise fail(item_path, f"must be 'text' or 'image', got {show(kind)}", at="type")
    return build(path, lambda: ToolResult(tool_use_id=use_id, content=items, is_error=is_error))
