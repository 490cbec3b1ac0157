"""A pydantic-ai history read as ours, and a compaction of it written back.

The history processor (and its recovery) reads the ``ModelMessage`` s it is given with a
:func:`reader` and hands back :func:`rebuild`'s list: a message the strategy kept is the
very object pydantic-ai gave, so the two paths differ only in when they compact.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, cast

from pydantic_ai.messages import (
    ERROR_OUTCOMES,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ToolReturnPart,
)

from ..._messages.message import Message, Role
from .._core import Converted, Reader
from .messages import Origin, read, stamp
from .parts import request_parts, response_parts, tool_return

__all__ = ["instructions", "reader", "rebuild"]


def reader() -> Reader[ModelMessage, Origin]:
    """A new reader of one conversation's pydantic-ai messages."""
    return Reader(read, span=lambda origin: (origin[0], origin[0]), stamp=stamp)


def instructions(messages: Sequence[ModelMessage]) -> str | None:
    """The instructions pydantic-ai sends with the next request: the newest request's."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            return message.instructions or None
    return None


def rebuild(
    compacted: Sequence[Message], converted: Converted[ModelMessage, Origin]
) -> list[ModelMessage]:
    """The pydantic-ai messages for a compaction of ``converted.messages``.

    A response the strategy kept is its original object; a request whose parts were all
    kept is the original request; a request that lost or changed parts is a copy of the
    original (instructions, timestamps and run id kept) holding the remaining parts; an
    edited tool return (a cleared result) is a copy of the original part with the new
    content; anything else is converted.
    """
    originals = converted.items
    origins = converted.sources
    expressed: dict[int, list[int]] = {}
    for source, part in origins:
        expressed.setdefault(source, []).append(part)
    out: list[ModelMessage] = []
    group: list[tuple[ModelRequestPart, Origin | None]] = []

    def flush() -> None:
        if not group:
            return
        parts = [part for part, _ in group]
        sources = [origin for _, origin in group if origin is not None]
        template = originals[sources[0][0]] if sources else None
        if not isinstance(template, ModelRequest):
            out.append(ModelRequest(parts=parts))
        elif [o for _, o in group] == [
            (sources[0][0], p) for p in expressed[sources[0][0]]
        ] and all(
            origin is not None and part is template.parts[origin[1]] for part, origin in group
        ):
            out.append(template)  # every part kept as it was
        else:
            out.append(dataclasses.replace(template, parts=parts))
        group.clear()

    names: dict[str, str] = {}
    last = -1
    for position, message in enumerate(compacted):
        path = f"messages[{position}]"
        names.update((use.id, use.name) for use in message.tool_uses)
        kept = converted.index(message)
        if kept >= 0:
            last = kept
        if message.role is Role.ASSISTANT:
            flush()
            kept_response = originals[origins[kept][0]] if kept >= 0 else None
            out.append(kept_response or ModelResponse(parts=response_parts(message)))
        elif kept >= 0:
            source, part = origins[kept]
            original = cast("ModelRequest", originals[source])
            group.append((original.parts[part], origins[kept]))
        elif message.is_tool:
            for result in message.tool_results:
                name = names.get(result.tool_use_id, "")
                fresh = tool_return(result, name, path)
                later = next((i for i in converted.results(result.tool_use_id) if i > last), -1)
                edited = _edited_return(fresh, later, origins, originals)
                if edited is None:
                    group.append((fresh, None))
                else:
                    group.append((edited, origins[later]))
                    last = later
        else:
            group.extend((part, None) for part in request_parts(message, names, path))
    flush()
    return out


def _edited_return(
    fresh: ToolReturnPart, index: int, origins: Sequence[Origin], originals: Sequence[ModelMessage]
) -> ToolReturnPart | None:
    if index < 0:
        return None
    source, part = origins[index]
    original = originals[source].parts[part]
    if type(original) is not ToolReturnPart:  # not a typed subclass (tool search, ...)
        return None
    plain = cast("ToolReturnPart[Any]", original)
    same_kind = (plain.outcome in ERROR_OUTCOMES) == (fresh.outcome in ERROR_OUTCOMES)
    outcome = plain.outcome if same_kind else fresh.outcome
    return dataclasses.replace(plain, content=fresh.content, outcome=outcome)
