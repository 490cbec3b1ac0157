"""Images in Chat Completions: image parts, and the images of tool results.

Chat Completions tool messages hold text only, so :func:`~neuron_context.formats.to_openai`
sends the images of an exchange's tool results after its tool messages, in one ``user``
message: for each result a text part naming its call (:data:`TOOL_IMAGES_HEADING`), then
its images; :func:`~neuron_context.formats.from_openai` recognises exactly that message
and puts the images back into their results.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TypeAlias

import attrs

from .._messages.content import JSON, Image, Text, ToolResult
from .._messages.message import Message
from ._common import build, fail, get_mapping, get_str, parse_data_url

__all__ = [
    "TOOL_IMAGES_HEADING",
    "image_part",
    "read_image_url",
    "read_tool_images",
    "tool_images",
    "with_images",
]

TOOL_IMAGES_HEADING = "[Images returned by tool call {id}]"
"""The text part that introduces a tool result's images in the user message after the
tool messages (Chat Completions tool messages hold text only)."""

_TOOL_IMAGES = re.compile(r"\[Images returned by tool call (.+)\]", re.DOTALL)

_Part: TypeAlias = dict[str, JSON]


def image_part(image: Image, path: str) -> _Part:
    if image.url is not None:
        url = image.url
    elif image.media_type is None:
        raise fail(path, "is required to send an image given as data", at="media_type")
    else:
        url = f"data:{image.media_type};base64,{image.data}"
    return {"type": "image_url", "image_url": {"url": url}}


def tool_images(result: ToolResult, path: str) -> list[JSON]:
    images: list[JSON] = [
        image_part(item, f"{path}.content[{i_index}]")
        for i_index, item in enumerate(result.content)
        if isinstance(item, Image)
    ]
    if not images:
        return []
    return [{"type": "text", "text": TOOL_IMAGES_HEADING.format(id=result.tool_use_id)}, *images]


def read_image_url(value: object, path: str) -> Image:
    url = value if isinstance(value, str) else get_str(get_mapping(value, path), "url", path)
    parsed = parse_data_url(url)
    if parsed is not None and parsed[0] is not None:
        media_type, data = parsed
        return build(path, lambda: Image(media_type=media_type, data=data))
    return build(path, lambda: Image(url=url))


def read_tool_images(
    content: object, run: Sequence[tuple[str, int]], path: str
) -> list[tuple[int, list[Image]]] | None:
    """The images of a user message written by :func:`to_openai` after tool messages.

    Returns ``(index of the tool message, images)`` pairs, or ``None`` unless the content
    is exactly groups of an image heading naming the results of the run in order, each
    followed by one or more image parts.
    """
    if not isinstance(content, list | tuple):
        return None
    groups: list[tuple[int, list[Image]]] = []
    position = 0  # the next entry of the run a heading may name
    for p_index, raw in enumerate(content):
        if not isinstance(raw, Mapping):
            return None
        kind, text = raw.get("type"), raw.get("text")
        if kind == "text" and isinstance(text, str):
            match = _TOOL_IMAGES.fullmatch(text)
            if match is None or (groups and not groups[-1][1]):
                return None
            ids = [use_id for use_id, _ in run[position:]]
            if match.group(1) not in ids:
                return None
            position += ids.index(match.group(1)) + 1
            groups.append((run[position - 1][1], []))
        elif kind == "image_url" and groups:
            part_path = f"{path}.content[{p_index}].image_url"
            groups[-1][1].append(read_image_url(raw.get("image_url"), part_path))
        else:
            return None
    return groups if groups and groups[-1][1] else None


def with_images(message: Message, images: Sequence[Image]) -> Message:
    (result,) = message.tool_results
    items = () if result.content == (Text(text=""),) else result.content
    new = attrs.evolve(result, content=(*items, *images))
    return attrs.evolve(message, content=(new,))
