"""Conversion between ``langchain_core.messages`` and our messages.

Reading goes through LangChain's own normalisation, ``message.content_blocks`` (the v1
standard blocks, with each provider's format translated by LangChain's translators), so
OpenAI- and Anthropic-shaped content read the same; writing produces standard blocks.
This module converts the messages (roles, tool calls, tool messages);
:mod:`.blocks` converts their content blocks.

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
result per ``ToolMessage``). A tool call's id or name that LangChain holds empty (it
accepts ``id=""``, and answers an invalid call that has an id) reads as ``"∅"`` and is
written back empty (see :mod:`neuron_context.ext._ids`), so what LangChain accepts is
read, and written back as it came. Audio and video blocks are read as a ``Document`` with
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
from collections.abc import Iterable, Mapping
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

from ..._errors import ConfigurationError
from ..._messages.content import ContentBlock, ToolResult, ToolUse
from ..._messages.message import Message, Role
from ..._validators import require_sequence_of
from ...formats import RAW_ARGUMENTS
from .. import _ids as ids
from .._core import read_at
from .blocks import (
    content_blocks,
    read_blocks,
    read_reply_block,
    read_result_content,
    to_content,
)

__all__ = ["from_langchain", "read_message", "stamp", "to_langchain", "tool_message"]


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


def stamp(message: BaseMessage) -> tuple[object, ...]:
    """What a conversion of ``message`` depends on (the objects it holds), for the
    reader's check of messages edited in place (:class:`~.._core.Reader`)."""
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
        return Message(role=Role.USER, content=read_blocks(message, summaries=True))
    if isinstance(message, SystemMessage):
        return Message(role=Role.SYSTEM, content=read_blocks(message, summaries=False))
    msg = f"{path}: a {type(message).__name__} cannot be converted (no role of ours matches it)"
    raise ConfigurationError(msg)


def _read_ai(message: AIMessage, path: str) -> Message:
    blocks: list[ContentBlock] = []
    seen: set[str] = set()
    for raw in content_blocks(message):
        if raw.get("type") == "tool_call":
            use = _read_call(raw, f"{path}.tool_calls")
            if use.id not in seen:
                seen.add(use.id)
                blocks.append(use)
        elif (block := read_reply_block(raw)) is not None:
            blocks.append(block)
    for index, call in enumerate(message.tool_calls):
        if call.get("id") not in seen:
            use = _read_call(cast("Mapping[str, Any]", call), f"{path}.tool_calls[{index}]")
            seen.add(use.id)
            blocks.append(use)
    for invalid in message.invalid_tool_calls:
        raw_id = invalid.get("id")
        if raw_id is None:
            continue  # a call no result can answer (LangChain answers only those with ids)
        call_id, name = ids.ours(str(raw_id)), ids.ours(str(invalid.get("name") or ""))
        if call_id not in seen:
            seen.add(call_id)
            blocks.append(
                ToolUse(id=call_id, name=name, input={RAW_ARGUMENTS: invalid.get("args") or ""})
            )
    return Message(role=Role.ASSISTANT, content=tuple(blocks))


def _read_call(raw: Mapping[str, Any], path: str) -> ToolUse:
    call_id = raw.get("id")
    if call_id is None:
        msg = f"{path}.id is missing: a tool call needs an id for its result to answer"
        raise ConfigurationError(msg)
    name = ids.ours(raw.get("name") or "")
    return ToolUse(id=ids.ours(call_id), name=name, input=raw.get("args") or {})


def _read_tool_result(message: ToolMessage, path: str) -> ToolResult:
    items = read_result_content(message)
    if not isinstance(message.tool_call_id, str):
        msg = f"{path}.tool_call_id must be a str, got {type(message.tool_call_id).__name__}"
        raise ConfigurationError(msg)
    return ToolResult(
        tool_use_id=ids.ours(message.tool_call_id),
        content=items,
        is_error=message.status == "error",
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
            out.append(HumanMessage(content=to_content(message.content)))
        else:
            out.append(SystemMessage(content=to_content(message.content)))
    return out


def tool_message(result: ToolResult, name: str | None) -> ToolMessage:
    """The ``ToolMessage`` for one result of ours."""
    return ToolMessage(
        content=to_content(result.content),
        tool_call_id=ids.theirs(result.tool_use_id),
        name=None if name is None else ids.theirs(name),
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
                    type="invalid_tool_call",
                    id=ids.theirs(use.id),
                    name=ids.theirs(use.name),
                    args=raw,
                    error=None,
                )
            )
        else:
            calls.append(
                ToolCall(
                    type="tool_call",
                    id=ids.theirs(use.id),
                    name=ids.theirs(use.name),
                    args=dict(use.input),
                )
            )
    return AIMessage(content=to_content(content), tool_calls=calls, invalid_tool_calls=invalid)
