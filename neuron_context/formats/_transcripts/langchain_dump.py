"""LangChain message dumps: ``messages_to_dict(messages)`` (a LangGraph state's messages).

Each unit is ``{"type": "human" | "ai" | "system" | "tool", "data": {...}}``, the
message's fields. They are read without LangChain — the dump is plain JSON, so the
command line needs no framework:

- ``data.content`` is a string or a list of blocks: ``text``; images (``image_url``, or
  the standard ``image`` block with ``url`` or ``base64``); ``thinking`` and
  ``reasoning``; ``file`` blocks and ``text-plain`` documents. Tool-call blocks in an AI
  message's content are skipped (its ``tool_calls`` are the calls), as are blocks the
  library does not model (they are kept);
- an AI message's ``tool_calls`` are its tool uses (``invalid_tool_calls``: arguments
  that are not JSON, kept as ``{"_raw": ...}``); a tool message is one result
  (``status: "error"`` is an error);
- chunk types (``AIMessageChunk``, ...) read as their messages, ``chat`` by its
  ``role``; ``remove`` markers are kept and not read.

A changed message is written back over its unit, so ``id``, ``name``,
``response_metadata``, ``usage_metadata`` and a tool message's ``artifact`` stay; a new
message is written as ``messages_to_dict`` writes one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..._errors import show
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
from .._common import (
    SUMMARY_HEADING,
    build,
    check_depth,
    fail,
    get_list,
    get_mapping,
    get_str,
    make_tool_use,
    text_or_compaction,
)
from .._openai_arguments import RAW_ARGUMENTS
from .._openai_images import read_image_url
from .codec import Codec, Fit, Parsed, tag
from .graft import Rules, graft_list

__all__ = ["LangChainDumpCodec"]

_ROLES = {
    "human": Role.USER,
    "HumanMessageChunk": Role.USER,
    "user": Role.USER,
    "ai": Role.ASSISTANT,
    "AIMessageChunk": Role.ASSISTANT,
    "assistant": Role.ASSISTANT,
    "system": Role.SYSTEM,
    "SystemMessageChunk": Role.SYSTEM,
    "developer": Role.SYSTEM,
    "tool": Role.TOOL,
    "ToolMessageChunk": Role.TOOL,
}
_TYPES = {Role.USER: "human", Role.ASSISTANT: "ai", Role.SYSTEM: "system", Role.TOOL: "tool"}
_CALL_BLOCKS = frozenset({"tool_use", "tool_call", "tool_call_chunk", "function_call"})
_READ_BLOCKS = frozenset(
    {"text", "image_url", "image", "thinking", "reasoning", "redacted_thinking", "file",
     "text-plain"}
)  # fmt: skip


def _unit(unit: object) -> Mapping[str, Any]:
    return unit if isinstance(unit, Mapping) else {}


def _is_message(unit: object) -> bool:
    unit = _unit(unit)
    kind = unit.get("type")
    return (
        isinstance(kind, str)
        and kind in ("chat", *_ROLES)
        and isinstance(unit.get("data"), Mapping)
    )


def _skipped_block(block: object) -> bool:
    """A content block the reader skipped and the writer keeps (a tool call's block is
    not kept: the message's ``tool_calls`` say which calls it still makes)."""
    kind = block.get("type") if isinstance(block, Mapping) else None
    return isinstance(kind, str) and kind not in _READ_BLOCKS and kind not in _CALL_BLOCKS


def _role(unit: Mapping[str, Any], path: str) -> Role:
    kind = unit["type"]
    if kind == "chat":
        role = unit["data"].get("role")
        if isinstance(role, str) and role in _ROLES:
            return _ROLES[role]
        where = f"{path}.data"
        raise fail(where, f"must be a known role, got {show(role)}", at="role")
    return _ROLES[kind]


def _block(block: Mapping[str, Any], path: str) -> ContentBlock | None:
    kind = block.get("type")
    if kind == "text":
        return text_or_compaction(get_str(block, "text", path))
    if kind == "image_url":
        return read_image_url(block.get("image_url"), f"{path}.image_url")
    if kind in ("image", "file"):
        url, data = block.get("url"), block.get("base64") or block.get("data")
        media = block.get("mime_type") or block.get("media_type")
        media = media if isinstance(media, str) else None
        if kind == "image":
            if isinstance(url, str):
                return read_image_url(url, path)
            if isinstance(data, str):
                return build(path, lambda: Image(media_type=media, data=data))
            return None
        if isinstance(data, str):
            return build(path, lambda: Document(media_type=media or "application/pdf", data=data))
        if isinstance(url, str):
            return build(path, lambda: Document(media_type=media or "application/pdf", url=url))
        return None
    if kind == "text-plain":
        return build(
            path, lambda: Document(media_type="text/plain", text=get_str(block, "text", path))
        )
    if kind == "thinking":
        signature = block.get("signature")
        return Thinking(
            thinking=get_str(block, "thinking", path),
            signature=signature if isinstance(signature, str) else "",
        )
    if kind == "redacted_thinking":
        return RedactedThinking(data=get_str(block, "data", path))
    if kind == "reasoning":
        text = block.get("reasoning")
        if not isinstance(text, str):
            summary = block.get("summary")
            parts = summary if isinstance(summary, list) else []
            text = "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, Mapping))
        extras = block.get("extras")
        signature = extras.get("signature") if isinstance(extras, Mapping) else None
        return Thinking(thinking=text, signature=signature if isinstance(signature, str) else "")
    return None


def _content(data: Mapping[str, Any], path: str) -> list[ContentBlock]:
    content = data.get("content")
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [text_or_compaction(content)]
    blocks: list[ContentBlock] = []
    for index, raw in enumerate(get_list(content, f"{path}.content")):
        if isinstance(raw, str):
            blocks.append(Text(text=raw))
            continue
        block = get_mapping(raw, f"{path}.content[{index}]")
        if tag(block.get("type")) in _CALL_BLOCKS:
            continue
        read = _block(block, f"{path}.content[{index}]")
        if read is not None:
            blocks.append(read)
    return blocks


def _calls(data: Mapping[str, Any], path: str) -> list[ToolUse]:
    uses: list[ToolUse] = []
    for key in ("tool_calls", "invalid_tool_calls"):
        for index, raw in enumerate(get_list(data.get(key) or [], f"{path}.{key}")):
            where = f"{path}.{key}[{index}]"
            call = get_mapping(raw, where)
            use_id, name = get_str(call, "id", where), get_str(call, "name", where)
            args = call.get("args")
            if key == "tool_calls":
                arguments: Mapping[str, object] = get_mapping(
                    args if args is not None else {}, f"{where}.args"
                )
                check_depth(arguments, f"{where}.args")
            else:
                arguments = {RAW_ARGUMENTS: args if isinstance(args, str) else ""}
            uses.append(make_tool_use(where, use_id, name, arguments))
    return uses


def _read(unit: Mapping[str, Any], path: str) -> Message:
    data = get_mapping(unit.get("data"), f"{path}.data")
    role = _role(unit, path)
    where = f"{path}.data"
    if role is Role.TOOL:
        use_id = get_str(data, "tool_call_id", where)
        items = [b for b in _content(data, where) if isinstance(b, Text | Image)]
        if not items and data.get("content") == "":
            items = [Text(text="")]
        is_error = data.get("status") == "error"
        result = build(
            path, lambda: ToolResult(tool_use_id=use_id, content=items, is_error=is_error)
        )
        return Message(role=Role.TOOL, content=(result,))
    blocks = _content(data, where)
    if role is Role.ASSISTANT:
        blocks.extend(_calls(data, where))
    return build(path, lambda: Message(role=role, content=tuple(blocks)))


def _part(block: ContentBlock) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, Compaction):
        return {"type": "text", "text": f"{SUMMARY_HEADING}\n{block.content}"}
    if isinstance(block, Image):
        url = block.url or f"data:{block.media_type or 'image/png'};base64,{block.data}"
        return {"type": "image_url", "image_url": {"url": url}}
    if isinstance(block, Document):
        if block.data is not None:
            return {"type": "file", "base64": block.data, "mime_type": block.media_type}
        if block.url is not None:
            return {"type": "file", "url": block.url, "mime_type": block.media_type}
        return {"type": "text-plain", "text": block.text or "", "mime_type": "text/plain"}
    if isinstance(block, Thinking):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinking):
        return {"type": "redacted_thinking", "data": block.data}
    msg = f"a {type(block).__name__} block is not content"
    raise AssertionError(msg)


def _write(message: Message) -> dict[str, Any]:
    kind = _TYPES[message.role]
    if message.role is Role.TOOL:
        (result,) = message.tool_results[:1] or (ToolResult(tool_use_id="", content=()),)
        texts = [item.text for item in result.content if isinstance(item, Text)]
        data: dict[str, Any] = {
            "content": texts[0]
            if len(texts) == 1
            else [{"type": "text", "text": t} for t in texts],
            "additional_kwargs": {},
            "response_metadata": {},
            "type": kind,
            "name": None,
            "id": None,
            "tool_call_id": result.tool_use_id,
            "artifact": None,
            "status": "error" if result.is_error else "success",
        }
        return {"type": kind, "data": data}
    parts = [_part(b) for b in message.content if not isinstance(b, ToolUse)]
    content: object = parts[0]["text"] if len(parts) == 1 and parts[0]["type"] == "text" else parts
    data = {
        "content": "" if parts == [] else content,
        "additional_kwargs": {},
        "response_metadata": {},
        "type": kind,
        "name": None,
        "id": None,
    }
    if message.role is Role.ASSISTANT:
        data["tool_calls"] = [
            {"name": use.name, "args": dict(use.input), "id": use.id, "type": "tool_call"}
            for use in message.tool_uses
        ]
        data["invalid_tool_calls"] = []
        data["usage_metadata"] = None
    return {"type": kind, "data": data}


class LangChainDumpCodec(Codec):
    """LangChain ``messages_to_dict`` dumps."""

    name = "langchain"
    title = "LangChain message dump"
    rules = Rules(skipped=_skipped_block)

    def fits(self, units: Sequence[object], header: Mapping[str, object]) -> int:
        return Fit.DECLARED if any(_is_message(unit) for unit in units) else Fit.NO

    def read(self, units: Sequence[object], header: Mapping[str, object]) -> Parsed:
        messages: list[Message] = []
        origins: list[tuple[int, ...]] = []
        for index, unit in enumerate(units):
            if _unit(unit).get("type") == "remove":
                continue  # a RemoveMessage marker: kept, not read
            path = f"messages[{index}]"
            if not _is_message(unit):
                raise fail(path, "must be a LangChain message ({'type': ..., 'data': {...}})")
            messages.append(_read(_unit(unit), path))
            origins.append((index,))
        return Parsed(tuple(messages), tuple(origins))

    def render(self, messages: Sequence[Message], sources: Sequence[object]) -> list[object]:
        units: list[object] = []
        for message in messages:
            if message.role is Role.TOOL and len(message.tool_results) > 1:
                units.extend(
                    _write(Message(role=Role.TOOL, content=(r,))) for r in message.tool_results
                )
            else:
                units.append(_write(message))
        return graft_list(
            sources,
            units,
            self.rules,
            identity=_identity,
            kind=_kind,
            skipped=lambda u: not _is_message(u),
        )


def _identity(unit: object) -> tuple[str, str] | None:
    data = _unit(unit).get("data")
    call = data.get("tool_call_id") if isinstance(data, Mapping) else None
    return ("tool_call_id", call) if isinstance(call, str) else None


def _kind(unit: object) -> object:
    return _TYPES.get(_ROLES.get(str(_unit(unit).get("type")), Role.USER))
