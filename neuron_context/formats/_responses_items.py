"""Conversion between OpenAI Responses-API input items (the Agents SDK's ``TResponseInputItem``)
and our messages.

=====================================================  ===================================
Responses input items                                  ours
=====================================================  ===================================
``message`` ``user``                                   ``USER``
``message`` ``system`` / ``developer``                 ``SYSTEM``
``reasoning``, ``message`` ``assistant``,              one ``ASSISTANT`` message:
``function_call`` (a run of them)                      ``Thinking``, ``Text``, ``ToolUse``
``function_call_output``                               ``TOOL`` with one result
``input_text`` / ``output_text`` / ``refusal``         ``Text`` (a user text starting
                                                       ``[Summary of earlier conversation]``
                                                       is a ``Compaction``)
``input_image``                                        ``Image`` (a ``data:`` URL for data)
``input_file``                                         ``Document``
``reasoning``: ``summary`` + ``encrypted_content``     ``Thinking(thinking, signature)``; no
                                                       summary: ``RedactedThinking(data)``
=====================================================  ===================================

A run of assistant-side items is one assistant message, and a new one starts where a
``reasoning`` item follows a message, or a ``message`` follows a message (the order one
model response has); after a ``function_call`` the run goes on to the outputs, so a
reasoning item or message between calls (``function_call``, ``reasoning``,
``function_call``, then both outputs) stays in the message of the calls it sits
between. Arguments are the input's compact JSON, as in
:func:`~neuron_context.formats.to_openai`; arguments that are not a JSON object are kept
as ``{"_raw": "<the string>"}`` and sent back verbatim.

So ``from_responses_items(to_responses_items(m)) == m`` except for what Responses input
cannot hold: a tool message with several results comes back as one per result,
``is_error`` is not kept (no such field), ``developer`` reads as ``system``, an
assistant message holding only tool calls merges into an assistant message right before
it (Responses has one run of items for both), an
image's ``width``/``height`` and a URL image's media type are lost, a URL document reads
as PDF, a document's ``pages`` (and ``text`` beside its data) are lost, and a text-only
document is sent as text. Items we cannot express (hosted and computer tool calls, MCP,
item references, custom tool calls, ...) travel with the message read before them: the
filter keeps or drops them with it, unchanged.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._errors import ConfigurationError
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
from .._messages.message import Message, Role
from .._validators import require_sequence_of
from ._common import (
    fail,
    get_list,
    get_mapping,
    get_str,
    get_text,
    parse_data_url,
    read_at,
    render_compaction,
    text_or_compaction,
)
from ._openai_arguments import arguments_from_openai, arguments_to_openai

__all__ = [
    "Item",
    "from_responses_items",
    "message_items",
    "read",
    "to_responses_items",
    "tool_output",
]

Item = dict[str, Any]
"""A Responses input item, as a plain dict (the Agents SDK's ``TResponseInputItem``)."""

_ASSISTANT_ITEMS = frozenset({"reasoning", "message", "function_call"})


# -- Responses -> ours ------------------------------------------------------------------


def from_responses_items(items: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Our messages for Responses input ``items`` (see the module docstring)."""
    return read(items)[0]


def _kind(item: Mapping[str, Any]) -> str:
    kind = item.get("type")
    if kind is None and "role" in item:
        return "message"  # an EasyInputMessage
    return str(kind)


def _is_assistant_side(item: Mapping[str, Any]) -> bool:
    kind = _kind(item)
    return kind in _ASSISTANT_ITEMS and (kind != "message" or item.get("role") == "assistant")


def read(
    items: Iterable[Mapping[str, Any]], offset: int = 0
) -> tuple[list[Message], list[list[int]]]:
    """Our messages and, for each, the indices of the items it was read from (items we
    cannot express are attached to the message read before them, else the first one);
    indices count from ``offset``, where ``items`` starts in a longer list.

    Raises:
        ConfigurationError: an item we read holds a value of the wrong kind (``output:
            42``, ``content: 5``, ``arguments`` that are not a string), naming its path
            (``items[3].output``).
    """
    messages: list[Message] = []
    sources: list[list[int]] = []
    leading: list[int] = []
    group: list[ContentBlock] = []
    group_items: list[int] = []
    stage = 0  # 0: reasoning so far, 1: a message, 2: a call

    def close() -> None:
        nonlocal group, group_items, stage
        if group_items:
            messages.append(Message(role=Role.ASSISTANT, content=tuple(group)))
            sources.append(group_items)
        group, group_items, stage = [], [], 0

    checked = require_sequence_of(items, "items", Mapping, "Responses input items (dicts)")
    for index, raw in enumerate(checked, offset):
        item = raw if isinstance(raw, Mapping) else {}
        path = f"items[{index}]"
        kind = _kind(item)
        if _is_assistant_side(item):
            item_stage = {"reasoning": 0, "message": 1, "function_call": 2}[kind]
            if group_items and stage < 2 and (stage > item_stage or stage == item_stage == 1):
                close()  # after a call, the calls are still open: their outputs come later
            stage = max(stage, item_stage)
            group.extend(read_at(path, functools.partial(_assistant_blocks, item, kind, path)))
            group_items.append(index)
            continue
        message = read_at(path, functools.partial(_other_message, item, kind, path))
        if message is None:
            (group_items if group_items else sources[-1] if sources else leading).append(index)
            continue
        close()
        messages.append(message)
        sources.append([index])
    close()
    if sources:
        sources[0][:0] = leading
    return messages, sources


def _parts(value: object, path: str) -> Sequence[object]:
    """A content list (``None`` or missing: empty)."""
    return () if value is None else get_list(value, path)


def _summary_texts(item: Mapping[str, Any], key: str, path: str) -> list[str]:
    """The texts of a reasoning item's ``summary`` or ``content``: a list of parts with a
    ``text``, or one string (as some providers write a summary)."""
    value = item.get(key)
    if isinstance(value, str):
        return [value]
    texts: list[str] = []
    for number, part in enumerate(_parts(value, f"{path}.{key}")):
        where = f"{path}.{key}[{number}]"
        text = get_text(get_mapping(part, where), "text", where)
        texts.append(text or "")
    return texts


def _assistant_blocks(item: Mapping[str, Any], kind: str, path: str) -> list[ContentBlock]:
    if kind == "reasoning":
        summary = _summary_texts(item, "summary", path)
        parts = _summary_texts(item, "content", path)
        encrypted = get_text(item, "encrypted_content", path) or ""
        if not summary and not parts and encrypted:
            return [RedactedThinking(data=encrypted)]
        return [Thinking(thinking="\n".join(summary or parts), signature=encrypted)]
    if kind == "message":
        content = item.get("content")
        if isinstance(content, str):
            return [Text(text=content)]
        where = f"{path}.content"
        return [
            Text(text=_part_text(part, f"{where}[{number}]"))
            for number, part in enumerate(_parts(content, where))
            if _text_part(get_mapping(part, f"{where}[{number}]"))
        ]
    arguments = item.get("arguments")
    if arguments is not None and not isinstance(arguments, str):
        kind_name = type(arguments).__name__
        raise fail(
            path, f"must be a string (the arguments' JSON text), got {kind_name}", at="arguments"
        )
    return [
        ToolUse(
            id=get_str(item, "call_id", path),
            name=get_text(item, "name", path) or "",
            input=arguments_from_openai(arguments or "", f"{path}.arguments"),
        )
    ]


def _text_part(part: Mapping[str, Any]) -> bool:
    return part.get("type") in ("input_text", "output_text", "refusal")


def _part_text(part: object, path: str) -> str:
    """The text of a text part (``refusal`` for a refusal), a string or an error."""
    mapping = get_mapping(part, path)
    key = "refusal" if mapping.get("type") == "refusal" else "text"
    return get_text(mapping, key, path) or ""


def _other_message(item: Mapping[str, Any], kind: str, path: str) -> Message | None:
    if kind == "function_call_output":
        output = item.get("output")
        content: list[Text | Image] = (
            [Text(text=output)]
            if isinstance(output, str)
            else _items(_parts(output, f"{path}.output"), f"{path}.output")
        )
        result = ToolResult(tool_use_id=get_str(item, "call_id", path), content=content)
        return Message(role=Role.TOOL, content=(result,))
    if kind != "message":
        return None
    role = item.get("role")
    body = item.get("content")
    where = f"{path}.content"
    if role in ("system", "developer"):
        if isinstance(body, str):
            return Message.system(body)
        blocks = _user_blocks(_parts(body, where), where, summaries=False)
        return Message(role=Role.SYSTEM, content=tuple(blocks))
    if role == "user":
        if isinstance(body, str):
            return Message(role=Role.USER, content=(text_or_compaction(body),))
        return Message(role=Role.USER, content=tuple(_user_blocks(_parts(body, where), where)))
    return None


def _items(parts: Sequence[object], path: str) -> list[Text | Image]:
    blocks = _user_blocks(parts, path, summaries=False)
    return [b for b in blocks if isinstance(b, Text | Image)]


def _user_blocks(
    parts: Sequence[object], path: str, *, summaries: bool = True
) -> list[ContentBlock]:
    blocks: list[ContentBlock] = []
    for number, raw in enumerate(parts):
        where = f"{path}[{number}]"
        part = get_mapping(raw, where)
        kind = part.get("type")
        if _text_part(part):
            text = _part_text(part, where)
            blocks.append(text_or_compaction(text) if summaries else Text(text=text))
        elif kind == "input_image":
            url = get_text(part, "image_url", where)
            if url is None:
                continue  # an uploaded file's id: nothing of it to read
            parsed = parse_data_url(url)
            if parsed is None:
                blocks.append(Image(url=url))
            else:
                blocks.append(Image(media_type=parsed[0], data=parsed[1]))
        elif kind == "input_file":
            if (data := get_text(part, "file_data", where)) is not None:
                parsed = parse_data_url(data)
                media_type, payload = parsed if parsed else (None, data)
                blocks.append(Document(media_type=media_type or "application/pdf", data=payload))
            elif (url := get_text(part, "file_url", where)) is not None:
                blocks.append(Document(media_type="application/pdf", url=url))
    return blocks


# -- ours -> Responses ------------------------------------------------------------------


def to_responses_items(messages: Iterable[Message]) -> list[Item]:
    """Responses input items for our messages (see the module docstring)."""
    items: list[Item] = []
    for message in messages:
        items.extend(message_items(message))
    return items


def message_items(message: Message) -> list[Item]:
    """The items of one message of ours."""
    role = message.role
    if role is Role.TOOL:
        return [tool_output(result) for result in message.tool_results]
    if role is Role.ASSISTANT:
        return _assistant_items(message)
    content = message.content
    if len(content) == 1 and isinstance(content[0], Text) and role is Role.SYSTEM:
        return [{"type": "message", "role": "system", "content": content[0].text}]
    parts = [_part(block) for block in content]
    return [{"type": "message", "role": role.value, "content": parts}]


def tool_output(result: ToolResult) -> Item:
    """The ``function_call_output`` item for one result of ours."""
    content = result.content
    if len(content) == 1 and isinstance(content[0], Text):
        output: str | list[Item] = content[0].text
    else:
        output = [_part(item) for item in content]
    return {"type": "function_call_output", "call_id": result.tool_use_id, "output": output}


def _assistant_items(message: Message) -> list[Item]:
    items: list[Item] = []
    texts: list[Item] = []
    for block in message.content:
        if isinstance(block, Thinking):
            reasoning: Item = {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": block.thinking}],
            }
            if block.signature:
                reasoning["encrypted_content"] = block.signature
            items.append(reasoning)
        elif isinstance(block, RedactedThinking):
            items.append({"type": "reasoning", "summary": [], "encrypted_content": block.data})
        elif isinstance(block, Text):
            texts.append({"type": "output_text", "text": block.text, "annotations": []})
        elif not isinstance(block, ToolUse):
            msg = f"an assistant's {type(block).__name__} block has no Responses input form"
            raise ConfigurationError(msg)
    if texts or not message.tool_uses:
        items.append({"type": "message", "role": "assistant", "content": texts})
    for use in message.tool_uses:
        arguments = arguments_to_openai(use.input)
        items.append(
            {"type": "function_call", "call_id": use.id, "name": use.name, "arguments": arguments}
        )
    return items


def _part(block: ContentBlock) -> Item:
    if isinstance(block, Text):
        return {"type": "input_text", "text": block.text}
    if isinstance(block, Compaction):
        return {"type": "input_text", "text": render_compaction(block)}
    if isinstance(block, Image):
        if block.data is not None:
            url = f"data:{block.media_type or ''};base64,{block.data}"
        else:
            url = block.url or ""
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    if isinstance(block, Document):
        if block.data is not None:
            data = f"data:{block.media_type};base64,{block.data}"
            return {"type": "input_file", "file_data": data, "filename": "document"}
        if block.url is not None:
            return {"type": "input_file", "file_url": block.url}
        return {"type": "input_text", "text": block.text or ""}
    msg = f"a {type(block).__name__} block has no Responses input form"
    raise ConfigurationError(msg)
