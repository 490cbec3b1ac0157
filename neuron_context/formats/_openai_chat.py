"""OpenAI Chat Completions messages: :func:`to_openai` and :func:`from_openai`.

The rules, and what the format cannot hold, are listed in :mod:`neuron_context.formats`;
a tool call's ``arguments`` string is read and written by
:mod:`~neuron_context.formats._openai_arguments`.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Iterable, Mapping
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
    get_list,
    get_mapping,
    get_messages,
    get_str,
    get_text,
    parse_data_url,
    render_compaction,
    require_messages,
    require_system,
    text_or_compaction,
)
from ._openai_arguments import RAW_ARGUMENTS, arguments_to_openai, parse_arguments
from ._openai_images import (
    TOOL_IMAGES_HEADING,
    image_part,
    read_image_url,
    read_tool_images,
    tool_images,
    with_images,
)

__all__ = ["TOOL_IMAGES_HEADING", "from_openai", "read_openai", "to_openai"]


_Part: TypeAlias = dict[str, JSON]
_OpenAIMessage: TypeAlias = dict[str, JSON]


# -- rendering ------------------------------------------------------------------------


def to_openai(messages: Iterable[Message], *, system: str | None = None) -> list[dict[str, JSON]]:
    """Render ``messages`` as Chat Completions messages.

    Args:
        messages: the conversation.
        system: a system prompt to put first, as its own ``system`` message.

    Returns:
        New plain dicts, ready for ``client.chat.completions.create(messages=...)``.

    Raises:
        ConfigurationError: ``messages`` is not a list of :class:`Message`, ``system``
            is not a ``str`` or ``None``, or a block cannot be expressed in Chat
            Completions (an image given as data without a media type, a document given
            only by URL); the message names its path, e.g. ``messages[2].content[0]``.
    """
    checked = require_messages(messages)
    system = require_system(system)
    out: list[_OpenAIMessage] = []
    if system is not None:
        out.append({"role": "system", "content": system})
    pending: list[JSON] = []  # image parts of the tool results since the last turn
    # Chat Completions wants an assistant message's tool calls followed by their tool
    # messages: a system message inside an open exchange (well formed for us) is held
    # back and written after the exchange's results.
    held: list[_OpenAIMessage] = []
    in_exchange = False

    def close_exchange() -> None:
        nonlocal pending
        if pending:
            out.append({"role": "user", "content": pending})
            pending = []
        out.extend(held)
        held.clear()

    for index, message in enumerate(checked):
        path = f"messages[{index}]"
        role = message.role
        if role is Role.USER or role is Role.ASSISTANT:
            close_exchange()
            in_exchange = role is Role.ASSISTANT and bool(message.tool_uses)
        if role is Role.TOOL:
            # A TOOL message holds ToolResult blocks only (Message checks it).
            for b_index, result in enumerate(message.tool_results):
                out.append(_tool_message(result))
                pending.extend(tool_images(result, f"{path}.content[{b_index}]"))
        elif role is Role.ASSISTANT:
            out.append(_assistant_message(message, path))
        elif role is Role.SYSTEM:
            system_message: _OpenAIMessage = {"role": "system", "content": _content(message, path)}
            (held if in_exchange else out).append(system_message)
        elif role is Role.USER:
            out.append({"role": "user", "content": _content(message, path)})
        else:
            assert_never(role)
    close_exchange()
    return out


def _text_part(text: str) -> _Part:
    return {"type": "text", "text": text}


def _parts(message: Message, path: str) -> list[_Part]:
    parts: list[_Part] = []
    for b_index, block in enumerate(message.content):
        part = _part(block, f"{path}.content[{b_index}]")
        if part is not None:
            parts.append(part)
    return parts


def _content(message: Message, path: str) -> JSON:
    return _collapse(_parts(message, path))


def _collapse(parts: list[_Part]) -> JSON:
    """One text part as a plain string, none as ``""``, else the list of parts."""
    if not parts:
        return ""
    if len(parts) == 1 and parts[0]["type"] == "text":
        return parts[0]["text"]
    rendered: list[JSON] = [*parts]
    return rendered


def _part(block: ContentBlock, path: str) -> _Part | None:
    if isinstance(block, Text):
        return _text_part(block.text)
    if isinstance(block, Compaction):
        return _text_part(render_compaction(block))
    if isinstance(block, Image):
        return image_part(block, path)
    if isinstance(block, Document):
        return _document_part(block, path)
    if isinstance(block, ToolUse | ToolResult | Thinking | RedactedThinking):
        # Tool uses become tool_calls, results tool messages; reasoning is not sent.
        return None
    assert_never(block)


def _document_part(document: Document, path: str) -> _Part:
    if document.data is not None:
        extension = mimetypes.guess_extension(document.media_type) or ""
        data_url = f"data:{document.media_type};base64,{document.data}"
        return {"type": "file", "file": {"file_data": data_url, "filename": "document" + extension}}
    if document.text is not None:
        return _text_part(document.text)
    raise fail(path, "is a document given only by URL, which Chat Completions cannot fetch")


def _assistant_message(message: Message, path: str) -> _OpenAIMessage:
    calls: list[JSON] = [
        {
            "id": use.id,
            "type": "function",
            "function": {"name": use.name, "arguments": arguments_to_openai(use.input)},
        }
        for use in message.tool_uses
    ]
    parts = _parts(message, path)
    rendered: _OpenAIMessage = {
        "role": "assistant",
        "content": None if calls and not parts else _collapse(parts),
    }
    if calls:
        rendered["tool_calls"] = calls
    return rendered


def _tool_message(result: ToolResult) -> _OpenAIMessage:
    texts = [item.text for item in result.content if isinstance(item, Text)]
    content: JSON = ""
    if len(texts) == 1:
        content = texts[0]
    elif texts:
        content = [_text_part(text) for text in texts]
    return {"role": "tool", "tool_call_id": result.tool_use_id, "content": content}


# -- reading --------------------------------------------------------------------------


def from_openai(messages: Iterable[Mapping[str, object]]) -> list[Message]:
    """Read Chat Completions messages.

    Each OpenAI message becomes one :class:`Message` (``developer`` reads as ``system``),
    except the user message that :func:`to_openai` writes after tool messages to carry
    tool-result images: its images are put back into their results.

    Raises:
        ConfigurationError: the input is not Chat Completions messages; the message
            names the offending path, e.g. ``messages[3].tool_calls[0].id``.
    """
    return read_openai(messages)[0]


def read_openai(
    messages: Iterable[Mapping[str, object]],
) -> tuple[list[Message], list[tuple[int, ...]]]:
    """:func:`from_openai`, and for each message the indices of the OpenAI messages it was
    read from (its own, and the user message that carried its images, if any)."""
    out: list[Message] = []
    origins: list[tuple[int, ...]] = []
    run: list[tuple[str, int]] = []  # (tool_call_id, index in `out`) since the last turn
    for index, raw in enumerate(get_messages(messages)):
        path = f"messages[{index}]"
        item = get_mapping(raw, path)
        role = get_str(item, "role", path)
        if role == "tool":
            result = _read_tool(item, path)
            run.append((result.tool_use_id, len(out)))
            out.append(Message._of(Role.TOOL, (result,)))
            origins.append((index,))
            continue
        if role == "user" and run:
            groups = read_tool_images(item.get("content"), run, path)
            if groups is not None:
                for target, images in groups:
                    out[target] = with_images(out[target], images)
                    origins[target] = (*origins[target], index)
                run = []
                continue
        if role in ("user", "assistant"):
            run = []
        if role in ("system", "developer", "user"):
            out.append(_read_plain(item, path, Role.USER if role == "user" else Role.SYSTEM))
        elif role == "assistant":
            out.append(_read_assistant(item, path))
        else:
            problem = f"must be system, developer, user, assistant or tool, got {show(role)}"
            raise fail(path, problem, at="role")
        origins.append((index,))
    return out, origins


def _read_plain(item: Mapping[str, object], path: str, role: Role) -> Message:
    blocks = _read_content(item, path, keep_empty=True)
    return build(path, lambda: Message._of(role, tuple(blocks)))


def _read_content(item: Mapping[str, object], path: str, *, keep_empty: bool) -> list[ContentBlock]:
    content = item.get("content")
    if content is None:
        return []
    if isinstance(content, str):
        return [text_or_compaction(content)] if content or keep_empty else []
    parts = get_list(content, f"{path}.content")
    return [_read_part(part, f"{path}.content[{p_index}]") for p_index, part in enumerate(parts)]


def _read_part(raw: object, path: str) -> ContentBlock:
    part = get_mapping(raw, path)
    kind = get_str(part, "type", path)
    if kind == "text":
        return text_or_compaction(get_str(part, "text", path))
    if kind == "refusal":
        return Text(text=get_str(part, "refusal", path))
    if kind == "image_url":
        return read_image_url(part.get("image_url"), f"{path}.image_url")
    if kind == "file":
        return _read_file(part.get("file"), f"{path}.file")
    raise fail(path, f"is not a supported content part type: {show(kind)}", at="type")


def _read_file(value: object, path: str) -> Document:
    file = get_mapping(value, path)
    file_data = get_text(file, "file_data", path)
    if file_data is None:
        if file.get("file_id") is not None:
            raise fail(path, "is not supported: give the file's data instead", at="file_id")
        raise fail(path, "is missing", at="file_data")
    parsed = parse_data_url(file_data)
    media_type, data = parsed if parsed is not None else (None, file_data)
    return build(path, lambda: Document(media_type=media_type or "application/pdf", data=data))


def _read_assistant(item: Mapping[str, object], path: str) -> Message:
    if item.get("function_call") is not None:
        raise fail(path, "(legacy function calling) is not supported", at="function_call")
    calls = item.get("tool_calls")
    # "" next to tool calls is kept, so that it is written back as "" rather than null.
    blocks = _read_content(item, path, keep_empty=bool(calls))
    if calls is not None:
        for c_index, call in enumerate(get_list(calls, f"{path}.tool_calls")):
            blocks.append(_read_tool_call(call, f"{path}.tool_calls[{c_index}]"))
    return build(path, lambda: Message._of(Role.ASSISTANT, tuple(blocks)))


def _read_tool_call(raw: object, path: str) -> ToolUse:
    call = get_mapping(raw, path)
    kind = call.get("type", "function")
    if kind != "function":
        raise fail(path, f"must be 'function', got {show(kind)}", at="type")
    use_id = get_str(call, "id", path)
    function = get_mapping(call.get("function"), f"{path}.function")
    name = get_str(function, "name", f"{path}.function")
    value = function.get("arguments")
    arguments_path = f"{path}.function.arguments"
    arguments: Mapping[str, object]
    if value is None:
        arguments = {}
    elif isinstance(value, str):
        parsed = parse_arguments(value, arguments_path)
        fresh: dict[str, JSON] = {RAW_ARGUMENTS: value} if parsed is None else parsed
        # A dict just built by json.loads: checked (depth included), not copied.
        return build(path, lambda: ToolUse._of(use_id, name, fresh, path=arguments_path))
    else:
        arguments = get_mapping(value, arguments_path)
    check_depth(arguments, arguments_path)
    return build(path, lambda: ToolUse(id=use_id, name=name, input=arguments))


def _read_tool(item: Mapping[str, object], path: str) -> ToolResult:
    use_id = get_str(item, "tool_call_id", path)
    content = item.get("content")
    items: list[Text | Image] = []
    if isinstance(content, str):
        items.append(Text._of(content))
    elif content is not None:
        for p_index, raw in enumerate(get_list(content, f"{path}.content")):
            part_path = f"{path}.content[{p_index}]"
            part = get_mapping(raw, part_path)
            if get_str(part, "type", part_path) != "text":
                raise fail(part_path, "must be 'text' in a tool message", at="type")
            items.append(Text._of(get_str(part, "text", part_path)))
    return build(path, lambda: ToolResult._of(use_id, tuple(items)))
