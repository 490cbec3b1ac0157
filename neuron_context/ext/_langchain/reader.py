"""A list of LangChain messages read as ours, and a compaction of it written back.

Every path of the LangChain adapter (``compact_messages``, the middleware's view of each
request, the state's compaction with ``persist=True``) reads the same kind of list and
hands back the same: a message the strategy kept is the very object it was given. This
module is the one place that maps between the two, so those paths differ only in when
they compact.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, ToolMessage

from ..._messages.message import Message
from ..._validators import require_sequence_of
from .._core import Converted, Reader
from .messages import read_message, stamp, to_langchain, tool_message

__all__ = ["reader", "rebuild"]


def _read(items: Sequence[BaseMessage], offset: int) -> tuple[list[Message], list[int]]:
    """Our messages for LangChain's, one each (see :class:`~.._core.Reader`)."""
    checked = require_sequence_of(items, "messages", BaseMessage, "LangChain messages")
    messages = [read_message(message, offset + index) for index, message in enumerate(checked)]
    return messages, list(range(offset, offset + len(messages)))


def reader() -> Reader[BaseMessage, int]:
    """A new reader of one conversation's LangChain messages (each source: its index)."""
    return Reader(_read, span=lambda index: (index, index), stamp=stamp)


def rebuild(
    compacted: Sequence[Message], converted: Converted[BaseMessage, int]
) -> list[BaseMessage]:
    """The LangChain messages for a compaction of ``converted.messages``.

    A message the strategy kept is its original object (its id, metadata and provider
    format intact); a tool result it edited (a cleared result) is a copy of the original
    ``ToolMessage`` with the new content; anything else is converted. O(len(compacted)).
    """
    originals = converted.items
    names: dict[str, str] = {}
    out: list[BaseMessage] = []
    last = -1
    for message in compacted:
        names.update((use.id, use.name) for use in message.tool_uses)
        kept = converted.index(message)
        if kept >= 0:
            out.append(originals[converted.sources[kept]])
            last = kept
        elif message.is_tool:
            for result in message.tool_results:
                fresh = tool_message(result, names.get(result.tool_use_id))
                later = next((i for i in converted.results(result.tool_use_id) if i > last), -1)
                original = originals[converted.sources[later]] if later >= 0 else None
                if isinstance(original, ToolMessage):
                    last = later
                    update = {"content": fresh.content, "status": fresh.status}
                    fresh = original.model_copy(update=update)
                out.append(fresh)
        else:
            out.extend(to_langchain([message]))
    return out
