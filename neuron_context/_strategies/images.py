"""Processed images: an image the model has already answered becomes a short text stub.

An image costs hundreds to thousands of tokens on every later call, yet once the model
has answered it, what it saw lives on in its answer. The LangChain-middleware README
this project started from replaced such images with text stubs so the agent could
switch back to a text-only model; with this strategy in front,
:class:`~neuron_context.middleware.DynamicModelSelectionMiddleware` routes to the multimodal model
only while an unanswered image is in the request.

An image is *processed* when an assistant message follows it; the stub names its media
type, its size when known, and where it came from (its URL, or the tool that returned
it), so the model can ask for it again. Images inside tool results are stubbed the same
way; the result keeps its id and flag, so the conversation stays well formed. A stub that
would cost no less than the image (a counter pricing images at 0) is not used.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from .._log import log_compaction
from .._messages.content import ContentBlock, Image, Text, ToolResult
from .._messages.conversation import Structure, replace_blocks, replace_content
from .._messages.message import Message, Role
from .._stores.index import with_reference
from .._stores.store import Store, optional_store
from .._validators import non_negative_int
from .strategy import PureStrategy

__all__ = ["StripProcessedImagesStrategy", "image_stub"]


def image_stub(image: Image, *, tool: str | None = None) -> str:
    """The stub that replaces ``image``: ``"[image/png image, 800x600, from tool
    screenshot, already processed]"`` (the parts that are unknown are left out)."""
    parts = [f"{image.media_type} image" if image.media_type else "image"]
    if image.width is not None and image.height is not None:
        parts.append(f"{image.width}x{image.height}")
    if tool is not None:
        parts.append(f"from tool {tool}")
    if image.url is not None and not image.url.startswith("data:"):
        parts.append(f"at {image.url}")
    parts.append("already processed")
    return "[" + ", ".join(parts) + "]"


@attrs.define
class StripProcessedImagesStrategy(PureStrategy):
    """Replaces every image that a later assistant message answered with a ``Text`` stub.

    The stub names the image (``"[image/png image, already processed]"``, with its size,
    URL or tool when known); images in tool results are stubbed too; an image no
    assistant message has answered yet (the newest one, typically) stays.

    Examples:
        >>> strategy = StripProcessedImagesStrategy()
    """

    max_tokens: int = attrs.field(default=0, kw_only=True, validator=non_negative_int())
    """The trigger: compact when the history costs more than this (0: always)."""
    store: Store | None = attrs.field(default=None, kw_only=True, validator=optional_store())
    """Where what it removes goes: the output then starts (after the system messages)
    with an index of it, a line per entry (``- read_file a.py (812 tokens) — recall: <key>``)."""

    def _stub(self, image: Image, tool: str | None) -> Text | None:
        text = image_stub(image, tool=tool)
        counter = self.counter
        if counter.estimate_text(text) >= counter.estimate_content((image,)):
            return None
        return Text(text=text)

    def _apply(self, messages: Sequence[Message]) -> list[Message]:
        answered = max((i for i, m in enumerate(messages) if m.role is Role.ASSISTANT), default=-1)
        replaced: dict[tuple[int, int], ContentBlock] = {}
        structure: Structure | None = None
        stubbed = 0
        for m_index in range(answered):
            message = messages[m_index]
            if message.role is Role.SYSTEM:
                continue  # system messages are never changed
            for b_index, block in enumerate(message.content):
                if isinstance(block, Image):
                    stub = self._stub(block, None)
                    if stub is not None:
                        replaced[m_index, b_index] = stub
                        stubbed += 1
                elif isinstance(block, ToolResult) and any(
                    isinstance(item, Image) for item in block.content
                ):
                    if structure is None:
                        structure = Structure.of(messages)
                    use = structure.tool_use_for(m_index, block)
                    tool = use.name if use is not None else None
                    items: list[Text | Image] = []
                    for item in block.content:
                        stub = self._stub(item, tool) if isinstance(item, Image) else None
                        items.append(item if stub is None else stub)
                        stubbed += stub is not None
                    if any(new is not old for new, old in zip(items, block.content, strict=True)):
                        replaced[m_index, b_index] = replace_content(block, tuple(items))
        if not replaced:
            return list(messages)
        output = replace_blocks(messages, replaced)
        log_compaction(
            "StripProcessedImagesStrategy", self.counter, messages, output, {"stubbed": stubbed}
        )
        return with_reference(
            messages, output, self.store, self.counter, "StripProcessedImagesStrategy"
        )
