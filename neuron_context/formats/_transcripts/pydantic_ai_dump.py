"""pydantic-ai message dumps: ``ModelMessagesTypeAdapter.dump_json(messages)``
(``result.all_messages_json()``).

A unit is a ``ModelRequest`` (``"kind": "request"``) or a ``ModelResponse``
(``"kind": "response"``). They are read without pydantic-ai — the dump is plain JSON —
as the library's adapter reads the objects (:mod:`neuron_context.ext.pydantic_ai`): a
response is one assistant message (``text``, ``tool-call``, ``thinking`` parts); each
part of a request is one message — ``system-prompt`` a system message, ``user-prompt`` a
user message (text, ``image-url``, ``document-url`` and ``binary`` content),
``tool-return`` a tool result (an error for the ``failed`` and ``retried`` outcomes), a
``retry-prompt`` a failed tool result or user text, a ``compaction`` part without a
provider a summary. Parts the library does not model (built-in tool calls, files,
provider compaction) are kept and not read. A request's ``instructions`` are not
messages: pydantic-ai sends them anew with every request.

A changed message is written back into its part, so timestamps, run ids, ``usage`` and
``provider_details`` stay; new messages go into a new request.
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
from ..._messages.jsonvalue import compact_json
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
from .._openai_arguments import RAW_ARGUMENTS, arguments_from_openai
from .codec import Codec, Fit, Parsed, tag
from .graft import Rules, graft_list

__all__ = ["PydanticAIDumpCodec"]

_ERRORS = frozenset({"failed", "retried", "error"})
_REQUEST_PARTS = frozenset(
    {"system-prompt", "user-prompt", "tool-return", "retry-prompt", "compaction", "retry-feedback"}
)
_RESPONSE_PARTS = frozenset({"text", "tool-call", "thinking"})
_RETRY = "Fix the errors and try again."


def _unit(unit: object) -> Mapping[str, Any]:
    return unit if isinstance(unit, Mapping) else {}


def _is_message(unit: object) -> bool:
    unit = _unit(unit)
    return unit.get("kind") in ("request", "response") and isinstance(unit.get("parts"), list)


def _skipped(part: object) -> bool:
    kind = _unit(part).get("part_kind")
    return tag(kind) not in _REQUEST_PARTS | _RESPONSE_PARTS


def _text(value: object) -> str:
    return value if isinstance(value, str) else compact_json(value)


def _user_item(item: object, path: str) -> ContentBlock | None:
    if isinstance(item, str):
        return Text(text=item)
    part = get_mapping(item, path)
    kind = part.get("kind")
    if kind == "image-url":
        url = get_str(part, "url", path)
        return build(path, lambda: Image(url=url))
    if kind == "document-url":
        url = get_str(part, "url", path)
        media = part.get("media_type")
        return build(
            path,
            lambda: Document(
                media_type=media if isinstance(media, str) else "application/pdf", url=url
            ),
        )
    if kind == "binary":
        data, media = get_str(part, "data", path), get_str(part, "media_type", path)
        if media.startswith("image/"):
            return build(path, lambda: Image(media_type=media, data=data))
        return build(path, lambda: Document(media_type=media, data=data))
    if kind == "text-content":
        return Text(text=get_str(part, "content", path))
    return None


def _request_message(part: Mapping[str, Any], path: str) -> Message | None:
    kind = part.get("part_kind")
    if kind == "system-prompt":
        return Message.system(get_str(part, "content", path))
    if kind == "user-prompt":
        content = part.get("content")
        if isinstance(content, str):  # a summary this module wrote reads back as one
            return Message(role=Role.USER, content=(text_or_compaction(content),))
        items = get_list(content, f"{path}.content")
        blocks = [_user_item(item, f"{path}.content[{i}]") for i, item in enumerate(items)]
        return Message(role=Role.USER, content=tuple(b for b in blocks if b is not None))
    if kind == "compaction":
        content = part.get("content")
        if part.get("provider_name") is not None or not isinstance(content, str):
            return None
        return Message(role=Role.USER, content=(Compaction(content=content),))
    if kind == "tool-return":
        use_id = get_str(part, "tool_call_id", path)
        content = part.get("content")
        values = content if isinstance(content, list) else [content]
        texts: list[Text | Image] = [Text(text=_text(v)) for v in values if v is not None]
        is_error = tag(part.get("outcome")) in _ERRORS
        return Message(
            role=Role.TOOL,
            content=(
                build(
                    path, lambda: ToolResult(tool_use_id=use_id, content=texts, is_error=is_error)
                ),
            ),
        )
    if kind in ("retry-prompt", "retry-feedback"):
        content = part.get("content")
        text = f"{_text(content)}\n\n{_RETRY}" if kind == "retry-prompt" else _text(content)
        call = part.get("tool_call_id")
        if kind == "retry-prompt" and part.get("tool_name") is not None and isinstance(call, str):
            return Message.tool_result(call, text, is_error=True)
        return Message.user(text)
    return None


def _response_blocks(parts: Sequence[object], path: str) -> list[ContentBlock]:
    blocks: list[ContentBlock] = []
    for index, raw in enumerate(parts):
        where = f"{path}.parts[{index}]"
        part = get_mapping(raw, where)
        kind = part.get("part_kind")
        if kind == "text":
            blocks.append(Text(text=get_str(part, "content", where)))
        elif kind == "thinking":
            signature = part.get("signature")
            signature = signature if isinstance(signature, str) else ""
            if part.get("id") == "redacted_thinking":
                blocks.append(RedactedThinking(data=signature))
            else:
                blocks.append(
                    Thinking(thinking=get_str(part, "content", where), signature=signature)
                )
        elif kind == "tool-call":
            use_id, name = get_str(part, "tool_call_id", where), get_str(part, "tool_name", where)
            args = part.get("args")
            arguments: Mapping[str, object]
            if isinstance(args, str):
                arguments = arguments_from_openai(args, f"{where}.args")
            else:
                arguments = get_mapping(args if args is not None else {}, f"{where}.args")
                check_depth(arguments, f"{where}.args")
            blocks.append(make_tool_use(where, use_id, name, arguments))
    return blocks


def _parts(message: Message, names: Mapping[str, str]) -> list[dict[str, Any]]:
    if message.role is Role.SYSTEM:
        return [{"content": message.text, "part_kind": "system-prompt"}]
    if message.role is Role.TOOL:
        return [
            {
                "tool_name": names.get(result.tool_use_id, "tool"),
                "content": "\n".join(i.text for i in result.content if isinstance(i, Text)),
                "tool_call_id": result.tool_use_id,
                "outcome": "failed" if result.is_error else "success",
                "part_kind": "tool-return",
            }
            for result in message.tool_results
        ]
    texts = []
    for block in message.content:
        if isinstance(block, Text):
            texts.append(block.text)
        elif isinstance(block, Compaction):
            texts.append(f"{SUMMARY_HEADING}\n{block.content}")
    return [{"content": "\n".join(texts), "part_kind": "user-prompt"}]


def _response(message: Message) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, Text):
            parts.append({"content": block.text, "part_kind": "text"})
        elif isinstance(block, Thinking):
            parts.append(
                {
                    "content": block.thinking,
                    "signature": block.signature or None,
                    "part_kind": "thinking",
                }
            )
        elif isinstance(block, RedactedThinking):
            parts.append(
                {
                    "content": "",
                    "id": "redacted_thinking",
                    "signature": block.data,
                    "part_kind": "thinking",
                }
            )
        elif isinstance(block, ToolUse):
            raw = block.input.get(RAW_ARGUMENTS)
            args = raw if len(block.input) == 1 and isinstance(raw, str) else dict(block.input)
            parts.append(
                {
                    "tool_name": block.name,
                    "args": args,
                    "tool_call_id": block.id,
                    "part_kind": "tool-call",
                }
            )
    return {"parts": parts, "kind": "response"}


class PydanticAIDumpCodec(Codec):
    """pydantic-ai ``ModelMessage`` dumps."""

    name = "pydantic-ai"
    title = "pydantic-ai message dump"
    rules = Rules(skipped=_skipped)

    def fits(self, units: Sequence[object], header: Mapping[str, object]) -> int:
        return Fit.DECLARED if any(_is_message(unit) for unit in units) else Fit.NO

    def read(self, units: Sequence[object], header: Mapping[str, object]) -> Parsed:
        messages: list[Message] = []
        origins: list[tuple[int, ...]] = []
        for index, unit in enumerate(units):
            path = f"messages[{index}]"
            if not _is_message(unit):
                raise fail(
                    path,
                    f"must be a pydantic-ai message (kind request or response), got {show(unit)}",
                )
            parts = _unit(unit)["parts"]
            if _unit(unit)["kind"] == "response":
                messages.append(
                    Message(role=Role.ASSISTANT, content=tuple(_response_blocks(parts, path)))
                )
                origins.append((index,))
                continue
            for p_index, raw in enumerate(parts):
                read = _request_message(
                    get_mapping(raw, f"{path}.parts[{p_index}]"), f"{path}.parts[{p_index}]"
                )
                if read is not None:
                    messages.append(read)
                    origins.append((index,))
        return Parsed(tuple(messages), tuple(origins))

    def render(self, messages: Sequence[Message], sources: Sequence[object]) -> list[object]:
        names = {
            part["tool_call_id"]: str(part.get("tool_name"))
            for unit in sources
            for part in map(_unit, _unit(unit).get("parts") or ())
            if isinstance(part.get("tool_call_id"), str)
        }
        units: list[object] = []
        request: list[dict[str, Any]] = []
        for message in messages:
            if message.role is Role.ASSISTANT:
                if request:
                    units.append({"parts": request, "kind": "request"})
                    request = []
                units.append(_response(message))
            else:
                request.extend(_parts(message, names))
        if request:
            units.append({"parts": request, "kind": "request"})
        return graft_list(
            sources,
            units,
            self.rules,
            identity=lambda u: None,
            skipped=lambda u: not _is_message(u),
        )
