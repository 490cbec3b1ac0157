"""Conversion between ``langchain_core.messages`` and our messages.

Reading goes through LangChain's own normalisation, ``message.content_blocks`` (the v1
standard blocks, with each provider's format translated by LangChain's translators), so
OpenAI- and Anthropic-shaped content read the same; writing produces standard blocks.

=====================  ===========================================================
ours                   LangChain
=====================  ===========================================================
``SYSTEM``             ``SystemMessage``
``USER``               ``HumanMessage``
``ASSISTANT``          ``AIMessage``: text and reasoning in ``content``, each
                       ``ToolUse`` in ``tool_calls`` (one whose input is only
                       ``{"_raw": ...}`` in ``invalid_tool_calls``)
``TOOL``               one ``ToolMessage`` per result (``status="error"`` for
                       ``is_error``; ``name`` from the call it answers)
``Text``               a ``text`` block (a lone non-empty text: ``content`` as a str)
``Compaction``         a ``text`` block starting ``[Summary of earlier conversation]``
``Image``              an ``image`` block (``base64`` + ``mime_type``, or ``url``;
                       ``width``/``height`` in ``extras``)
``Document``           a ``file`` block (data or URL) or a ``text-plain`` block
                       (text only); other fields in ``extras``; an ``audio`` or
                       ``video`` block for an audio or video media type
``Thinking``           a ``reasoning`` block, ``extras.signature``
``RedactedThinking``   ``non_standard`` ``{"type": "redacted_thinking", "data": ...}``
=====================  ===========================================================

So ``from_langchain(to_langchain(m)) == m`` for every conversation, except that a tool
message with several results comes back as one message per result (LangChain has one
result per ``ToolMessage``). Audio and video blocks are read as a ``Document`` with
their media type (so they are counted, and kept when a message is edited); OpenAI's
``image_url`` part holding a plain string (which LangChain leaves untranslated) is an
``Image``; a reasoning block's ``summary`` is its text when it has no ``reasoning``.
LangChain content we cannot express is left out of our copy: file references by
``file_id``, server-side tool calls and results, citations, and provider blocks LangChain
itself does not translate. (The middleware still sends such a message as it was whenever
the strategy keeps it.) A message we cannot read is a ``ConfigurationError`` naming its
path.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    SystemMessage,
    ToolCall,
    ToolMessage,
)

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
from ..formats import RAW_ARGUMENTS
from ..formats._common import parse_data_url, render_compaction, text_or_compaction
from ._core import read_at

__all__ = ["from_langchain", "read_message", "stamp", "to_langchain", "tool_message"]

_Block = dict[str, Any]


# -- LangChain -> ours ------------------------------------------------------------------


def from_langchain(messages: Iterable[BaseMessage]) -> list[Message]:
    """Our messages for LangChain ``messages`` (see the module docstring for the mapping).

    Raises:
        ConfigurationError: a message of a kind we cannot express (``ChatMessage``,
            ``FunctionMessage``, ``RemoveMessage``), or a tool call without an id, naming
            its path (``messages[3].tool_calls[0].id``).
    """
    checked = require_sequence_of(messages, "messages", BaseMessage, "LangChain messages")
    return [read_message(message, index) for index, message in enumerate(checked)]


def _standard_blocks(message: BaseMessage) -> Sequence[object]:
    """``message.content_blocks``, without its cost for plain string content.

    ``content_blocks`` runs every provider translator; a string is one text block unless
    an AI message's provider metadata or extra fields may add reasoning to it.
    """
    content = message.content
    if isinstance(content, str) and not (
        isinstance(message, AIMessage)
        and (message.additional_kwargs or message.response_metadata.get("model_provider"))
    ):
        return [{"type": "text", "text": content}] if content else []
    return message.content_blocks


def stamp(message: BaseMessage) -> tuple[object, ...]:
    """What a conversion of ``message`` depends on (the objects it holds), for the
    reader's check of messages edited in place (:class:`~._core.Reader`)."""
    if isinstance(message, AIMessage):
        return (message.content, message.tool_calls, message.invalid_tool_calls)
    if isinstance(message, ToolMessage):
        return (message.content, message.tool_call_id, message.status)
    return (message.content,)


def read_message(message: BaseMessage, index: int) -> Message:
    """Our message for the LangChain message at ``messages[index]``.

    Raises:
        ConfigurationError: the message holds what we cannot read (``extras`` that are
            not an object, a width that is not a number), or LangChain's own reading of
            its content fails, naming its path (``messages[3]``).
    """
    path = f"messages[{index}]"
    return read_at(path, functools.partial(_read_message, message, path))


def _read_message(message: BaseMessage, path: str) -> Message:
    if isinstance(message, ToolMessage):
        return Message(role=Role.TOOL, content=(_read_tool_result(message, path),))
    if isinstance(message, AIMessage):
        return _read_ai(message, path)
    if isinstance(message, HumanMessage):
        return Message(role=Role.USER, content=_read_blocks(message, summaries=True))
    if isinstance(message, SystemMessage):
        return Message(role=Role.SYSTEM, content=_read_blocks(message, summaries=False))
    msg = f"{path}: a {type(message).__name__} cannot be converted (no role of ours matches it)"
    raise ConfigurationError(msg)


def _mapping(value: object, name: str) -> Mapping[str, Any]:
    """An optional mapping of a block (its ``extras``, ``value``): ``None`` is empty."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        msg = f"a content block's {name} must be an object, got {type(value).__name__}"
        raise ConfigurationError(msg)
    return value


def _blocks(message: BaseMessage) -> list[Mapping[str, Any]]:
    """The standard blocks of ``message``, each an object."""
    blocks = _standard_blocks(message)
    for number, block in enumerate(blocks):
        if not isinstance(block, Mapping):
            msg = f"content block {number} must be an object, got {type(block).__name__}"
            raise ConfigurationError(msg)
    return cast("list[Mapping[str, Any]]", list(blocks))


def _read_blocks(message: BaseMessage, *, summaries: bool) -> tuple[ContentBlock, ...]:
    blocks: list[ContentBlock] = []
    for raw in _blocks(message):
        if raw.get("type") == "text":
            text = str(raw.get("text", ""))
            blocks.append(text_or_compaction(text) if summaries else Text(text=text))
        elif (media := _read_media(raw)) is not None:
            blocks.append(media)
    return tuple(blocks)


def _read_media(raw: Mapping[str, Any]) -> Image | Document | None:
    kind = raw.get("type")
    extras = _mapping(raw.get("extras"), "extras")
    if kind == "non_standard":
        # OpenAI's image_url part with a plain string, which LangChain leaves untranslated.
        value = _mapping(raw.get("value"), "value")
        url = value.get("image_url")
        if value.get("type") == "image_url" and isinstance(url, str):
            parsed = parse_data_url(url)
            if parsed is None:
                return Image(url=url)
            return Image(media_type=parsed[0], data=parsed[1])
        return None
    if kind in ("audio", "video") and ("base64" in raw or "url" in raw):
        # No block of ours is audio or video: a Document with its media type, counted
        # as a document, written back as the same kind of block.
        return Document(
            media_type=raw.get("mime_type") or f"{kind}/*",
            data=raw.get("base64"),
            url=None if "base64" in raw else raw.get("url"),
        )
    if kind == "image" and ("base64" in raw or "url" in raw):
        return Image(
            media_type=raw.get("mime_type"),
            data=raw.get("base64"),
            url=None if "base64" in raw else raw.get("url"),
            width=extras.get("width"),
            height=extras.get("height"),
        )
    if kind == "file" and ("base64" in raw or "url" in raw):
        default = "application/pdf" if "url" in raw else "application/octet-stream"
        return Document(
            media_type=raw.get("mime_type") or default,
            data=raw.get("base64"),
            url=None if "base64" in raw else raw.get("url"),
            text=extras.get("text"),
            pages=extras.get("pages"),
        )
    if kind == "text-plain" and ("text" in raw or "base64" in raw or "url" in raw):
        return Document(
            media_type=extras.get("media_type") or "text/plain",
            data=raw.get("base64"),
            url=None if "base64" in raw else raw.get("url"),
            text=raw.get("text"),
            pages=extras.get("pages"),
        )
    return None


def _read_ai(message: AIMessage, path: str) -> Message:
    blocks: list[ContentBlock] = []
    seen: set[str] = set()
    for raw in _blocks(message):
        kind = raw.get("type")
        if kind == "text":
            blocks.append(Text(text=str(raw.get("text", ""))))
        elif kind == "reasoning":
            signature = _mapping(raw.get("extras"), "extras").get("signature") or ""
            blocks.append(Thinking(thinking=_reasoning(raw), signature=signature))
        elif kind == "non_standard":
            value = _mapping(raw.get("value"), "value")
            if value.get("type") == "redacted_thinking":
                blocks.append(RedactedThinking(data=str(value.get("data", ""))))
            elif value.get("type") == "thinking":
                thinking = str(value.get("thinking", ""))
                blocks.append(Thinking(thinking=thinking, signature=value.get("signature") or ""))
        elif kind == "tool_call":
            use = _read_call(raw, f"{path}.tool_calls")
            if use.id not in seen:
                seen.add(use.id)
                blocks.append(use)
    for index, call in enumerate(message.tool_calls):
        if call.get("id") not in seen:
            use = _read_call(cast("Mapping[str, Any]", call), f"{path}.tool_calls[{index}]")
            seen.add(use.id)
            blocks.append(use)
    for invalid in message.invalid_tool_calls:
        call_id, name = invalid.get("id"), invalid.get("name")
        if call_id and name and call_id not in seen:
            seen.add(call_id)
            blocks.append(
                ToolUse(id=call_id, name=name, input={RAW_ARGUMENTS: invalid.get("args") or ""})
            )
    return Message(role=Role.ASSISTANT, content=tuple(blocks))


def _reasoning(raw: Mapping[str, Any]) -> str:
    """A reasoning block's text: ``reasoning``, else its ``summary`` (a string, or a
    list of parts with a ``text``, as providers write it)."""
    if "reasoning" in raw:
        return str(raw.get("reasoning") or "")
    summary = raw.get("summary")
    if isinstance(summary, str):
        return summary
    if isinstance(summary, list):
        return "\n".join(str(_mapping(part, "summary part").get("text") or "") for part in summary)
    return ""


def _read_call(raw: Mapping[str, Any], path: str) -> ToolUse:
    call_id = raw.get("id")
    if not call_id:
        msg = f"{path}.id is missing: a tool call needs an id for its result to answer"
        raise ConfigurationError(msg)
    return ToolUse(id=call_id, name=raw.get("name") or "", input=raw.get("args") or {})


def _read_tool_result(message: ToolMessage, path: str) -> ToolResult:
    items: list[Text | Image] = []
    for raw in _blocks(message):
        if raw.get("type") == "text":
            items.append(Text(text=str(raw.get("text", ""))))
        elif isinstance(media := _read_media(raw), Image):
            items.append(media)
    if not message.tool_call_id:
        msg = f"{path}.tool_call_id is empty"
        raise ConfigurationError(msg)
    return ToolResult(
        tool_use_id=message.tool_call_id, content=items, is_error=message.status == "error"
    )


# -- ours -> LangChain ------------------------------------------------------------------


def to_langchain(messages: Iterable[Message]) -> list[BaseMessage]:
    """LangChain messages for ours (see the module docstring for the mapping)."""
    names: dict[str, str] = {}
    out: list[BaseMessage] = []
    for message in messages:
        role = message.role
        if role is Role.TOOL:
            out.extend(
                tool_message(result, names.get(result.tool_use_id))
                for result in message.tool_results
            )
        elif role is Role.ASSISTANT:
            names.update((use.id, use.name) for use in message.tool_uses)
            out.append(_ai_message(message))
        elif role is Role.USER:
            out.append(HumanMessage(content=_content(message.content)))
        else:
            out.append(SystemMessage(content=_content(message.content)))
    return out


def tool_message(result: ToolResult, name: str | None) -> ToolMessage:
    """The ``ToolMessage`` for one result of ours."""
    return ToolMessage(
        content=_content(result.content),
        tool_call_id=result.tool_use_id,
        name=name,
        status="error" if result.is_error else "success",
    )


def _ai_message(message: Message) -> AIMessage:
    content = [block for block in message.content if not isinstance(block, ToolUse)]
    calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    for use in message.tool_uses:
        raw = use.input.get(RAW_ARGUMENTS)
        if len(use.input) == 1 and isinstance(raw, str):
            invalid.append(
                InvalidToolCall(
                    type="invalid_tool_call", id=use.id, name=use.name, args=raw, error=None
                )
            )
        else:
            calls.append(ToolCall(type="tool_call", id=use.id, name=use.name, args=dict(use.input)))
    return AIMessage(content=_content(content), tool_calls=calls, invalid_tool_calls=invalid)


def _content(blocks: Sequence[ContentBlock]) -> str | list[str | dict[Any, Any]]:
    if len(blocks) == 1 and isinstance(blocks[0], Text) and blocks[0].text:
        return blocks[0].text
    return [_block(block) for block in blocks]


def _block(block: ContentBlock) -> _Block:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, Compaction):
        return {"type": "text", "text": render_compaction(block)}
    if isinstance(block, Image):
        return _image_block(block)
    if isinstance(block, Document):
        return _document_block(block)
    if isinstance(block, Thinking):
        out: _Block = {"type": "reasoning", "reasoning": block.thinking}
        if block.signature:
            out["extras"] = {"signature": block.signature}
        return out
    if isinstance(block, RedactedThinking):
        return {"type": "non_standard", "value": {"type": "redacted_thinking", "data": block.data}}
    msg = f"a {type(block).__name__} block has no LangChain content form"  # ToolUse, ToolResult
    raise ConfigurationError(msg)


def _with_extras(out: _Block, extras: Mapping[str, object]) -> _Block:
    kept = {key: value for key, value in extras.items() if value is not None}
    if kept:
        out["extras"] = kept
    return out


def _image_block(image: Image) -> _Block:
    out: _Block = {"type": "image"}
    if image.data is not None:
        out["base64"] = image.data
    else:
        out["url"] = image.url
    if image.media_type is not None:
        out["mime_type"] = image.media_type
    return _with_extras(out, {"width": image.width, "height": image.height})


def _document_block(document: Document) -> _Block:
    kind = document.media_type.split("/", 1)[0]
    if kind in ("audio", "video") and (document.data is not None or document.url is not None):
        out: _Block = {"type": kind}
        if document.data is not None:
            out["base64"] = document.data
        else:
            out["url"] = document.url
        if not document.media_type.endswith("/*"):
            out["mime_type"] = document.media_type
        return out
    if document.data is None and document.url is None:
        out = {"type": "text-plain", "text": document.text, "mime_type": "text/plain"}
        media_type = None if document.media_type == "text/plain" else document.media_type
        return _with_extras(out, {"media_type": media_type, "pages": document.pages})
    out = {"type": "file", "mime_type": document.media_type}
    if document.data is not None:
        out["base64"] = document.data
    else:
        out["url"] = document.url
    return _with_extras(out, {"text": document.text, "pages": document.pages})
