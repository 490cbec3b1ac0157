"""Conversion between pydantic-ai's ``ModelMessage`` s and our messages: the mapping, and
reading pydantic-ai's as ours (writing ours as pydantic-ai's, the inverse, is
:mod:`.parts`).

A ``ModelResponse`` is one assistant message; a ``ModelRequest`` holds one message of ours
per part, and a run of our non-assistant messages is one ``ModelRequest`` again:

========================================  ============================================
pydantic-ai                               ours
========================================  ============================================
``SystemPromptPart``                      a ``SYSTEM`` message
``UserPromptPart``                        a ``USER`` message (``str`` items are
                                          ``Text``; ``BinaryContent`` and ``ImageUrl``
                                          / ``DocumentUrl`` are ``Image`` /
                                          ``Document``)
``CompactionPart`` (in a request)         a ``USER`` message holding a ``Compaction``
``ToolReturnPart``                        a ``TOOL`` message with one result
                                          (``is_error`` for the ``failed`` and
                                          ``retried`` outcomes)
``RetryPromptPart`` (legacy)              a tool result with ``is_error``, or user text
``RetryFeedbackPart``                     user text
``TextPart`` / ``ToolCallPart``           ``Text`` / ``ToolUse``
``FilePart`` (a file the model made)      ``Image`` / ``Document`` in the assistant
                                          message (its bytes, base64)
``ThinkingPart``                          ``Thinking`` (``RedactedThinking`` for the
                                          ``id="redacted_thinking"`` form pydantic-ai
                                          gives Anthropic's redacted blocks)
========================================  ============================================

So ``from_pydantic_ai(to_pydantic_ai(m)) == m`` except that a tool message with several
results comes back as one message per result, and what pydantic-ai cannot hold: an
image's ``width``/``height``, a data image's unknown media type (sent as ``image/png``),
a document's ``pages`` and (beside its data or URL) ``text``; base64 data must be valid
(pydantic-ai keeps bytes). A document given only as text travels as a ``TextContent``
marked in its ``metadata``. Parts we cannot express (audio, video, uploaded files, native
tool calls, provider compaction, instruction and capability deltas) are left out of our
copy; the history processor still returns such a message as it was whenever the strategy
keeps it. A part we cannot read (a tool return whose content pydantic cannot serialize,
content nested too deeply) is a ``ConfigurationError`` naming its path (the history
processor then returns the history as pydantic-ai gave it). A tool call's id
or name that pydantic-ai holds empty reads as ``"∅"`` and is written back empty (see
:mod:`neuron_context.ext._ids`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from base64 import b64encode
from collections.abc import Iterable, Sequence

from pydantic_ai.messages import (
    ERROR_OUTCOMES,
    BinaryContent,
    CompactionPart,
    DocumentUrl,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)

from ..._messages.content import (
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
from ..._messages.message import Message, Role
from ..._validators import require_sequence_of
from ...formats import RAW_ARGUMENTS
from ...formats._common import check_depth
from .. import _ids as ids
from .._core import read_at

__all__ = [
    "DOCUMENT_METADATA",
    "REDACTED_THINKING_ID",
    "Origin",
    "flatten",
    "from_pydantic_ai",
    "read",
    "read_message",
    "stamp",
]

DOCUMENT_METADATA = "neuron_context.document"
"""The ``TextContent.metadata`` key marking a text-only :class:`~neuron_context.Document`."""

REDACTED_THINKING_ID = "redacted_thinking"
"""The ``ThinkingPart.id`` pydantic-ai gives Anthropic's redacted thinking blocks."""

Origin = tuple[int, int]
"""Where a message of ours came from: ``(message index, part index)``; ``-1`` for a response."""


# -- pydantic-ai -> ours ----------------------------------------------------------------


def from_pydantic_ai(messages: Iterable[ModelMessage]) -> list[Message]:
    """Our messages for pydantic-ai ``messages`` (see the module docstring for the mapping)."""
    return read(messages)[0]


def read(messages: Iterable[ModelMessage], offset: int = 0) -> tuple[list[Message], list[Origin]]:
    """Our messages and, for each, where it came from (indices counted from ``offset``:
    where ``messages`` starts in a longer list)."""
    checked = require_sequence_of(
        messages, "messages", (ModelRequest, ModelResponse), "pydantic-ai ModelMessages"
    )
    return flatten([read_message(message, offset + i) for i, message in enumerate(checked)], offset)


def read_message(message: ModelMessage, index: int) -> list[tuple[Message, int]]:
    """Our messages for one pydantic-ai message, each with its part index (``-1``: all).

    Raises:
        ConfigurationError: a part holds what we cannot read (a tool return whose content
            pydantic cannot serialize, content nested too deeply), naming its path
            (``messages[3].parts[1]``).
    """
    path = f"messages[{index}]"
    if isinstance(message, ModelResponse):
        blocks = read_at(path, functools.partial(_response_blocks, message.parts))
        return [(Message(role=Role.ASSISTANT, content=blocks), -1)]
    out: list[tuple[Message, int]] = []
    for part_index, part in enumerate(message.parts):
        where = f"{path}.parts[{part_index}]"
        read_part = read_at(where, functools.partial(_request_message, part))
        if read_part is not None:
            out.append((read_part, part_index))
    return out


def flatten(
    per_message: Sequence[list[tuple[Message, int]]], offset: int = 0
) -> tuple[list[Message], list[Origin]]:
    """:func:`read`'s result from :func:`read_message`'s, message by message."""
    out: list[Message] = []
    origins: list[Origin] = []
    for index, read_parts in enumerate(per_message, offset):
        for message, part in read_parts:
            out.append(message)
            origins.append((index, part))
    return out, origins


def stamp(message: ModelMessage) -> tuple[object, ...]:
    """What a conversion of ``message`` depends on: its parts (for the reader's check of
    messages edited in place, :class:`~.._incremental.Reader`)."""
    return (message.parts, *message.parts)


def _request_message(part: ModelRequestPart) -> Message | None:
    if isinstance(part, SystemPromptPart):
        return Message.system(part.content)
    if isinstance(part, UserPromptPart):
        content = part.content
        blocks = [Text(text=content)] if isinstance(content, str) else _user_blocks(content)
        return Message(role=Role.USER, content=tuple(blocks))
    if isinstance(part, CompactionPart):
        if part.provider_name is not None or part.content is None:
            return None  # a provider's own (opaque) compaction
        return Message(role=Role.USER, content=(Compaction(content=part.content),))
    if isinstance(part, ToolReturnPart):
        result = ToolResult(
            tool_use_id=ids.ours(part.tool_call_id),
            content=_result_items(part),
            is_error=part.outcome in ERROR_OUTCOMES,
        )
        return Message(role=Role.TOOL, content=(result,))
    if isinstance(part, RetryPromptPart):
        if part.tool_name is None:
            return Message.user(part.model_response())
        call_id = ids.ours(part.tool_call_id)
        return Message.tool_result(call_id, part.model_response(), is_error=True)
    if isinstance(part, RetryFeedbackPart):
        return Message.user(_text(part.content))
    return None


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    # Free-form data: the JSON limits hold here too (no RecursionError from json.dumps).
    check_depth(value, "content")
    return json.dumps(value, ensure_ascii=False, default=str)


def _user_blocks(items: Sequence[UserContent]) -> list[ContentBlock]:
    blocks: list[ContentBlock] = []
    for item in items:
        if isinstance(item, str):
            blocks.append(Text(text=item))
        elif isinstance(item, TextContent):
            blocks.append(_text_content(item))
        elif (media := _media(item)) is not None:
            blocks.append(media)
    return blocks


def _text_content(item: TextContent) -> Text | Document:
    marker = item.metadata.get(DOCUMENT_METADATA) if isinstance(item.metadata, dict) else None
    if not isinstance(marker, dict):
        return Text(text=item.content)
    return Document(
        media_type=marker.get("media_type") or "text/plain",
        text=item.content,
        pages=marker.get("pages"),
    )


def _url_media_type(item: ImageUrl | DocumentUrl) -> str | None:
    try:
        return item.media_type
    except (ValueError, NotImplementedError):
        return None


def _media(item: object) -> Image | Document | None:
    if isinstance(item, BinaryContent):
        data = b64encode(item.data).decode("ascii")
        if item.is_image:
            return Image(media_type=item.media_type, data=data)
        return Document(media_type=item.media_type, data=data)
    if isinstance(item, ImageUrl):
        return Image(url=item.url, media_type=_url_media_type(item))
    if isinstance(item, DocumentUrl):
        return Document(url=item.url, media_type=_url_media_type(item) or "application/pdf")
    return None


def _result_items(part: ToolReturnPart) -> list[Text | Image]:
    content = part.content
    values: Sequence[object] = content if isinstance(content, list) else [content]
    items: list[Text | Image] = []
    for value in values:
        if value is None:
            continue
        media = _media(value)
        if isinstance(media, Image):
            items.append(media)
        elif media is None and not isinstance(value, ImageUrl | DocumentUrl | BinaryContent):
            items.append(Text(text=value if isinstance(value, str) else _tool_text(part, value)))
    return items


def _tool_text(part: ToolReturnPart, value: object) -> str:
    # pydantic-ai's own rendering of structured tool output, so we count what the model sees.
    return dataclasses.replace(part, content=value, outcome="success").model_response_str()


def _response_blocks(parts: Sequence[ModelResponsePart]) -> tuple[ContentBlock, ...]:
    blocks: list[ContentBlock] = []
    for part in parts:
        if isinstance(part, FilePart):
            media = _media(part.content)
            if media is not None:
                blocks.append(media)
        elif isinstance(part, TextPart):
            blocks.append(Text(text=part.content))
        elif isinstance(part, ThinkingPart):
            if part.id == REDACTED_THINKING_ID:
                blocks.append(RedactedThinking(data=part.signature or ""))
            else:
                blocks.append(Thinking(thinking=part.content, signature=part.signature or ""))
        elif isinstance(part, ToolCallPart):
            blocks.append(
                ToolUse(
                    id=ids.ours(part.tool_call_id),
                    name=ids.ours(part.tool_name),
                    input=_arguments(part),
                )
            )
    return tuple(blocks)


def _arguments(part: ToolCallPart) -> dict[str, JSON]:
    try:
        args: dict[str, JSON] = part.args_as_dict(raise_if_invalid=True)
    except (ValueError, AssertionError):
        return {RAW_ARGUMENTS: part.args if isinstance(part.args, str) else ""}
    return args
