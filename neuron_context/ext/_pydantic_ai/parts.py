"""Writing our messages as pydantic-ai's ``ModelMessage`` s: the inverse of the reading in
:mod:`.messages`, whose docstring has the mapping and what does not survive
a round trip.

Its own module because it is the other direction, used on its own: the history
processor writes only the messages a strategy made or changed (a summary, a cleared tool
return) through :func:`request_parts`, :func:`response_parts` and :func:`tool_return`,
and returns every message it kept as pydantic-ai gave it. What pydantic-ai cannot hold
is a ``ConfigurationError``, never dropped: base64 data that does not decode
(pydantic-ai keeps bytes), naming its path, or a block with no pydantic-ai form.
"""

from __future__ import annotations

import binascii
from base64 import b64decode
from collections.abc import Iterable
from typing import Any

from pydantic_ai.messages import (
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
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)

from ..._errors import ConfigurationError
from ..._messages.content import (
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
from ...formats import RAW_ARGUMENTS
from .. import _ids as ids
from .messages import DOCUMENT_METADATA, REDACTED_THINKING_ID

__all__ = ["request_parts", "response_parts", "to_pydantic_ai", "tool_return"]


def to_pydantic_ai(messages: Iterable[Message]) -> list[ModelMessage]:
    """pydantic-ai messages for ours: the inverse of
    :func:`~neuron_context.ext.pydantic_ai.from_pydantic_ai`, with the same mapping.

    Raises:
        ConfigurationError: base64 data that does not decode, naming its path.
    """
    out: list[ModelMessage] = []
    parts: list[ModelRequestPart] = []
    names: dict[str, str] = {}
    for index, message in enumerate(messages):
        path = f"messages[{index}]"
        if message.role is Role.ASSISTANT:
            if parts:
                out.append(ModelRequest(parts=parts))
                parts = []
            names.update((use.id, use.name) for use in message.tool_uses)
            out.append(ModelResponse(parts=response_parts(message)))
        else:
            parts.extend(request_parts(message, names, path))
    if parts:
        out.append(ModelRequest(parts=parts))
    return out


def request_parts(message: Message, names: dict[str, str], path: str) -> list[ModelRequestPart]:
    """The request parts for one non-assistant message of ours."""
    if message.role is Role.SYSTEM:
        return [SystemPromptPart(content=message.text)]
    if message.role is Role.TOOL:
        return [
            tool_return(result, names.get(result.tool_use_id, ""), f"{path}.content[{i}]")
            for i, result in enumerate(message.tool_results)
        ]
    parts: list[ModelRequestPart] = []
    items: list[UserContent] = []
    for i, block in enumerate(message.content):
        if isinstance(block, Compaction):
            if items:
                parts.append(UserPromptPart(content=items))
                items = []
            parts.append(CompactionPart(content=block.content))
        else:
            items.append(_user_item(block, f"{path}.content[{i}]"))
    if items or not parts:
        single = len(items) == 1 and isinstance(items[0], str)
        parts.append(UserPromptPart(content=items[0] if single else items))  # type: ignore[arg-type]
    return parts


def tool_return(result: ToolResult, name: str, path: str) -> ToolReturnPart:
    """The ``ToolReturnPart`` for one result of ours."""
    items: list[Any] = [
        _user_item(item, f"{path}.content[{i}]") for i, item in enumerate(result.content)
    ]
    content: Any = items[0] if len(items) == 1 and isinstance(items[0], str) else items
    return ToolReturnPart(
        tool_name=ids.theirs(name),
        content=content,
        tool_call_id=ids.theirs(result.tool_use_id),
        outcome="failed" if result.is_error else "success",
    )


def _decode(data: str, path: str) -> bytes:
    try:
        return b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        msg = f"{path}.data is not valid base64: {exc}"
        raise ConfigurationError(msg) from exc


def _user_item(block: ContentBlock, path: str) -> UserContent:
    if isinstance(block, Text):
        return block.text
    if isinstance(block, Image):
        if block.data is not None:
            media_type = block.media_type or "image/png"
            return BinaryContent(data=_decode(block.data, path), media_type=media_type)
        return ImageUrl(url=block.url or "", media_type=block.media_type)
    if isinstance(block, Document):
        if block.data is not None:
            return BinaryContent(data=_decode(block.data, path), media_type=block.media_type)
        if block.url is not None:
            return DocumentUrl(url=block.url, media_type=block.media_type)
        marker = {"media_type": block.media_type, "pages": block.pages}
        return TextContent(content=block.text or "", metadata={DOCUMENT_METADATA: marker})
    msg = f"{path}: a {type(block).__name__} block has no pydantic-ai user content form"
    raise ConfigurationError(msg)


def response_parts(message: Message) -> list[ModelResponsePart]:
    """The response parts for one assistant message of ours."""
    parts: list[ModelResponsePart] = []
    for block in message.content:
        if isinstance(block, Text):
            parts.append(TextPart(content=block.text))
        elif isinstance(block, Thinking):
            signed = bool(block.signature)
            parts.append(
                ThinkingPart(
                    content=block.thinking,
                    signature=block.signature if signed else None,
                    provider_name="anthropic" if signed else None,
                )
            )
        elif isinstance(block, RedactedThinking):
            parts.append(
                ThinkingPart(
                    content="",
                    id=REDACTED_THINKING_ID,
                    signature=block.data,
                    provider_name="anthropic",
                )
            )
        elif isinstance(block, Image | Document) and block.data is not None:
            # A file the model made (pydantic-ai's FilePart): its bytes and media type.
            media_type = block.media_type or "image/png"
            content = BinaryContent(data=_decode(block.data, "content"), media_type=media_type)
            parts.append(FilePart(content=content))
        elif isinstance(block, ToolUse):
            raw = block.input.get(RAW_ARGUMENTS)
            args: str | dict[str, Any] = (
                raw if len(block.input) == 1 and isinstance(raw, str) else dict(block.input)
            )
            parts.append(
                ToolCallPart(
                    tool_name=ids.theirs(block.name), args=args, tool_call_id=ids.theirs(block.id)
                )
            )
        else:
            msg = f"an assistant's {type(block).__name__} block has no pydantic-ai response form"
            raise ConfigurationError(msg)
    return parts
