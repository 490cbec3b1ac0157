"""Conversion between LangChain's standard content blocks and our content blocks.

The block-level half of the mapping drawn in :mod:`.messages`: one ``text``,
``image``, ``file``, ``text-plain``, ``audio``, ``video``, ``reasoning`` or
``non_standard`` block to one block of ours, and back. It is its own module because
every kind of message reads and writes its content through it, while what is particular
to a kind (roles, tool calls, tool messages) stays with the messages; a block we cannot
express is ``None`` here and left out by the reader of its message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from ..._errors import ConfigurationError
from ..._messages.content import (
    Compaction,
    ContentBlock,
    Document,
    Image,
    RedactedThinking,
    Text,
    Thinking,
)
from ...formats._common import parse_data_url, render_compaction, text_or_compaction

__all__ = [
    "content_blocks",
    "read_blocks",
    "read_reply_block",
    "read_result_content",
    "to_content",
]

_Block = dict[str, Any]


# -- LangChain -> ours ------------------------------------------------------------------


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


def _mapping(value: object, name: str) -> Mapping[str, Any]:
    """An optional mapping of a block (its ``extras``, ``value``): ``None`` is empty."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        msg = f"a content block's {name} must be an object, got {type(value).__name__}"
        raise ConfigurationError(msg)
    return value


def content_blocks(message: BaseMessage) -> list[Mapping[str, Any]]:
    """The standard blocks of ``message``, each an object."""
    blocks = _standard_blocks(message)
    for number, block in enumerate(blocks):
        if not isinstance(block, Mapping):
            msg = f"content block {number} must be an object, got {type(block).__name__}"
            raise ConfigurationError(msg)
    return cast("list[Mapping[str, Any]]", list(blocks))


def read_blocks(message: BaseMessage, *, summaries: bool) -> tuple[ContentBlock, ...]:
    """The content of a user or system message: its text and media (with ``summaries``,
    a text starting with the summary heading is a :class:`Compaction`)."""
    blocks: list[ContentBlock] = []
    for raw in content_blocks(message):
        if raw.get("type") == "text":
            text = str(raw.get("text", ""))
            blocks.append(text_or_compaction(text) if summaries else Text(text=text))
        elif (media := _read_media(raw)) is not None:
            blocks.append(media)
    return tuple(blocks)


def read_result_content(message: ToolMessage) -> list[Text | Image]:
    """The content of a tool result: its text and images."""
    items: list[Text | Image] = []
    for raw in content_blocks(message):
        if raw.get("type") == "text":
            items.append(Text(text=str(raw.get("text", ""))))
        elif isinstance(media := _read_media(raw), Image):
            items.append(media)
    return items


def read_reply_block(raw: Mapping[str, Any]) -> Text | Thinking | RedactedThinking | None:
    """A block of an AI message other than a tool call: text or reasoning (``None``: a
    block we cannot express)."""
    kind = raw.get("type")
    if kind == "text":
        return Text(text=str(raw.get("text", "")))
    if kind == "reasoning":
        signature = _mapping(raw.get("extras"), "extras").get("signature") or ""
        return Thinking(thinking=_reasoning(raw), signature=signature)
    if kind == "non_standard":
        value = _mapping(raw.get("value"), "value")
        if value.get("type") == "redacted_thinking":
            return RedactedThinking(data=str(value.get("data", "")))
        if value.get("type") == "thinking":
            thinking = str(value.get("thinking", ""))
            return Thinking(thinking=thinking, signature=value.get("signature") or "")
    return None


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


# -- ours -> LangChain ------------------------------------------------------------------


def to_content(blocks: Sequence[ContentBlock]) -> str | list[str | dict[Any, Any]]:
    """A LangChain message's ``content`` for our blocks (a lone non-empty text: the str)."""
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
