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
``reasoning`` item follows a message or call, or a ``message`` follows a message or call
(the order one model response has). Arguments are the input's compact JSON, as in
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

from collections.abc import Iterable, Mapping
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
from ..formats import arguments_from_openai, arguments_to_openai
from ..formats._common import parse_data_url, render_compaction, text_or_compaction

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
    indices count from ``offset``, where ``items`` starts in a longer list."""
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
        kind = _kind(item)
        if _is_assistant_side(item):
            item_stage = {"reasoning": 0, "message": 1, "function_call": 2}[kind]
            if group_items and (stage > item_stage or (stage == item_stage == 1)):
                close()
            stage = max(stage, item_stage)
            group.extend(_assistant_blocks(item, kind))
            group_items.append(index)
            continue
        message = _other_message(item, kind)
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


def _assistant_blocks(item: Mapping[str, Any], kind: str) -> list[ContentBlock]:
    if kind == "reasoning":
        summary = [str(p.get("text", "")) for p in item.get("summary") or () if _is_map(p)]
        parts = [str(p.get("text", "")) for p in item.get("content") or () if _is_map(p)]
        encrypted = item.get("encrypted_content") or ""
        if not summary and not parts and encrypted:
            return [RedactedThinking(data=encrypted)]
        return [Thinking(thinking="\n".join(summary or parts), signature=encrypted)]
    if kind == "message":
        content = item.get("content")
        if isinstance(content, str):
            return [Text(text=content)]
        return [Text(text=_part_text(p)) for p in content or () if _text_part(p)]
    arguments = item.get("arguments") or ""
    return [
        ToolUse(
            id=item.get("call_id") or "",
            name=item.get("name") or "",
            input=arguments_from_openai(arguments),
        )
    ]


def _is_map(value: object) -> bool:
    return isinstance(value, Mapping)


def _text_part(part: object) -> bool:
    return isinstance(part, Mapping) and part.get("type") in (
        "input_text",
        "output_text",
        "refusal",
    )


def _part_text(part: Mapping[str, Any]) -> str:
    return str(part.get("refusal", "") if part.get("type") == "refusal" else part.get("text", ""))


def _other_message(item: Mapping[str, Any], kind: str) -> Message | None:
    if kind == "function_call_output":
        output = item.get("output")
        content: list[Text | Image] = (
            [Text(text=output)] if isinstance(output, str) else _items(output or ())
        )
        result = ToolResult(tool_use_id=item.get("call_id") or "", content=content)
        return Message(role=Role.TOOL, content=(result,))
    if kind != "message":
        return None
    role = item.get("role")
    body = item.get("content")
    if role in ("system", "developer"):
        if isinstance(body, str):
            return Message.system(body)
        return Message(role=Role.SYSTEM, content=tuple(_user_blocks(body or (), summaries=False)))
    if role == "user":
        if isinstance(body, str):
            return Message(role=Role.USER, content=(text_or_compaction(body),))
        return Message(role=Role.USER, content=tuple(_user_blocks(body or ())))
    return None


def _items(parts: Iterable[object]) -> list[Text | Image]:
    return [b for b in _user_blocks(parts, summaries=False) if isinstance(b, Text | Image)]


def _user_blocks(parts: Iterable[object], *, summaries: bool = True) -> list[ContentBlock]:
    blocks: list[ContentBlock] = []
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if _text_part(part):
            text = _part_text(part)
            blocks.append(text_or_compaction(text) if summaries else Text(text=text))
        elif kind == "input_image" and isinstance(url := part.get("image_url"), str):
            parsed = parse_data_url(url)
            if parsed is None:
                blocks.append(Image(url=url))
            else:
                blocks.append(Image(media_type=parsed[0], data=parsed[1]))
        elif kind == "input_file":
            if isinstance(data := part.get("file_data"), str):
                parsed = parse_data_url(data)
                media_type, payload = parsed if parsed else (None, data)
                blocks.append(Document(media_type=media_type or "application/pdf", data=payload))
            elif isinstance(url := part.get("file_url"), str):
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
