"""A call's Responses input items read as ours, and the items for a compaction of them.

The filter and the session read items with one :class:`~neuron_context.ext._incremental.Reader`
each (only what is new converted on every call) and hand the SDK back, for a compaction,
the very objects it gave for every message the strategy kept: the SDK matches them back
to its run state by identity.

A run whose history the server keeps (``previous_response_id``,
``auto_previous_response_id``, ``conversation_id``, a resumed or handed-off
server-managed run) sends only its new items: outputs whose calls live on the server
come first, answering no call of the input. :func:`held` finds them, so that they are
passed on as they came and never compacted or dropped as orphans.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from ..._errors import show
from ..._log import logger
from ..._messages.message import Message
from ...formats._responses_items import Item, message_items, read, tool_output
from .._core import Converted, Reader

__all__ = ["as_given", "held", "items_reader", "rebuild"]


def items_reader() -> Reader[Item, list[int]]:
    """A reader of Responses input items (several items make one message; new items may
    continue the last one)."""
    return Reader(read, span=lambda sources: (sources[0], sources[-1]), regroup=True)


def rebuild(compacted: Sequence[Message], converted: Converted[Item, list[int]]) -> list[Any]:
    """The items for a compaction of ``converted.messages``.

    A message the strategy kept is its original items (the very objects of this call);
    a tool result it edited is a copy of the original ``function_call_output`` with the
    new output; anything else is converted. O(len(compacted)).
    """
    originals = converted.items
    sources = converted.sources
    out: list[Any] = []
    last = -1
    for message in compacted:
        kept = converted.index(message)
        if kept >= 0:
            out.extend(originals[i] for i in sources[kept])
            last = kept
        elif message.is_tool:
            for result in message.tool_results:
                fresh = tool_output(result)
                later = next((i for i in converted.results(result.tool_use_id) if i > last), -1)
                if later >= 0:
                    last = later
                    edited = copy.copy(originals[sources[later][0]])
                    edited["output"] = fresh["output"]
                    out.append(edited)
                    out.extend(originals[i] for i in sources[later][1:])
                else:
                    out.append(fresh)
        else:
            out.extend(message_items(message))
    return out


def held(converted: Converted[Item, list[int]]) -> int | None:
    """How many of ``converted.messages`` lead with outputs whose calls the input does not
    hold (the server does); ``None`` when such an output comes later, after other
    messages (what the server completes is then not known: nothing may be compacted).
    A well-formed conversation (the reader checks it from where it last stopped) holds
    none: 0 at once; otherwise O(n)."""
    if converted.well_formed:
        return 0
    calls: set[str] = set()
    leading = 0
    for position, message in enumerate(converted.messages):
        if message.is_tool:
            if any(result.tool_use_id not in calls for result in message.tool_results):
                if leading < position:
                    return None
                leading = position + 1
            continue
        calls.update(use.id for use in message.tool_uses)
    return leading


def as_given(label: str, what: str, exc: Exception) -> None:
    """Log that the items go on as the SDK gave them, because ``label`` ``what`` (``exc``):
    the compaction step's failure policy, for the adapter's own part (reading the items,
    writing a compaction back), so that it never costs the user's model call."""
    try:
        said = show(str(exc), 300)
    except Exception:  # an exception whose __str__ raises still leaves the items as given
        said = "?"
    logger.warning(
        "%s %s (%s: %s); passing the items on as the SDK gave them",
        label,
        what,
        type(exc).__name__,
        said,
    )
