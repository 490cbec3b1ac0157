"""Where a transcript's tokens go: by role, by tool, by block kind, and its largest messages.

The first question about a long history is what fills it. In agent transcripts the
answer is nearly always tool results (file reads, test logs), which is why clearing old
results is the cheapest first step of a stack; this breakdown shows whether that holds
for the user's own agent, and which tools are worth excluding or clearing first.

Every figure is computed once per counter (the heuristic always, an exact tokenizer when
asked), so the two columns can be compared side by side. A message's cost is its
blocks plus the counter's per-message overhead, shown as its own kind. The tool
definitions a file's request holds (its ``tools``) are sent with every model call, so
they count too, as the agent loop counts them: a kind of their own, in the total.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import attrs

from .._counting.counter import BaseCounter
from .._messages.content import ContentBlock, Text, ToolResult, ToolUse
from .._messages.message import Message, Role
from ..formats._transcripts.files import Transcript

__all__ = ["Census", "Largest", "Row", "census"]

_LARGEST = 10
_PREVIEW = 60
_EMPTY = Message(role=Role.USER)
"""A message with no content: what a counter charges per message."""


@attrs.frozen
class Row:
    """One line of a breakdown."""

    label: str
    """What it counts (a role, a tool name, a block kind)."""
    count: int
    """How many messages, calls or blocks."""
    tokens: tuple[int, ...]
    """Their tokens, one figure per counter (in the order of :attr:`Census.counters`)."""


@attrs.frozen
class Largest:
    """One of the largest messages."""

    transcript: str
    """The transcript that holds it."""
    index: int
    """Its index in that transcript."""
    role: str
    """Its role."""
    tokens: tuple[int, ...]
    """Its tokens, one figure per counter."""
    preview: str
    """What it is: its tool, or the start of its text."""


@attrs.frozen
class Census:
    """Where the tokens of one or more transcripts go."""

    transcripts: tuple[str, ...]
    """The transcripts counted (summed)."""
    counters: tuple[str, ...]
    """The names of the counters, one per column of tokens."""
    messages: int
    """How many messages."""
    total: tuple[int, ...]
    """All their tokens, per counter (the tool definitions included)."""
    by_role: tuple[Row, ...]
    """Per role, largest first."""
    by_tool: tuple[Row, ...]
    """Per tool name: its calls and their results, largest first."""
    by_kind: tuple[Row, ...]
    """Per block kind (and the per-message overhead), largest first."""
    largest: tuple[Largest, ...]
    """The ten largest messages, largest first."""


_KIND = {
    "Text": "text",
    "Image": "image",
    "Document": "document",
    "ToolUse": "tool_use",
    "ToolResult": "tool_result",
    "Thinking": "thinking",
    "RedactedThinking": "redacted_thinking",
    "Compaction": "compaction",
}


def _preview(message: Message) -> str:
    if message.tool_uses:
        return "calls " + ", ".join(use.name for use in message.tool_uses)
    text = message.text
    if message.is_tool:
        text = "result: " + " ".join(
            item.text for r in message.tool_results for item in r.content if isinstance(item, Text)
        )
    text = " ".join(text.split())
    return text[: _PREVIEW - 1] + "…" if len(text) > _PREVIEW else text


class _Tally:
    """Sums per key for several counters at once."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.count: Counter[str] = Counter()
        self.tokens: dict[str, list[int]] = {}

    def add(self, key: str, tokens: Sequence[int], count: int = 1) -> None:
        self.count[key] += count
        row = self.tokens.setdefault(key, [0] * self.width)
        for column, value in enumerate(tokens):
            row[column] += value

    def rows(self) -> tuple[Row, ...]:
        rows = [Row(k, self.count[k], tuple(v)) for k, v in self.tokens.items()]
        return tuple(sorted(rows, key=lambda r: (-r.tokens[0], r.label)))


def _block_cost(counter: BaseCounter, role: Role, block: ContentBlock, empty: int) -> int:
    """What ``block`` adds to a message of ``role``."""
    return counter.estimate_message(Message(role=role, content=(block,))) - empty


def census(transcripts: Sequence[Transcript], counters: Mapping[str, BaseCounter]) -> Census:
    """Count ``transcripts`` (summed) with each of ``counters``."""
    width = len(counters)
    roles, tools, kinds = _Tally(width), _Tally(width), _Tally(width)
    largest: list[Largest] = []
    total = [0] * width
    messages = 0
    for transcript in transcripts:
        if transcript.tools:  # sent with every request, as the agent loop counts them
            definitions = [c.estimate_tools(transcript.tools) for c in counters.values()]
            total = [t + c for t, c in zip(total, definitions, strict=True)]
            kinds.add("tool definitions", definitions, count=len(transcript.tools))
        called: dict[str, str] = {}  # tool_use_id -> tool name, for the results
        for index, message in enumerate(transcript.messages):
            messages += 1
            costs = tuple(c.estimate_message(message) for c in counters.values())
            empties = [c.estimate_message(_EMPTY) for c in counters.values()]
            total = [t + c for t, c in zip(total, costs, strict=True)]
            roles.add(message.role.value, costs)
            kinds.add("message overhead", empties)
            for block in message.content:
                block_costs = [
                    _block_cost(c, message.role, block, e)
                    for c, e in zip(counters.values(), empties, strict=True)
                ]
                kinds.add(_KIND.get(type(block).__name__, type(block).__name__), block_costs)
                if isinstance(block, ToolUse):
                    called[block.id] = block.name
                    tools.add(block.name, block_costs)
                elif isinstance(block, ToolResult):
                    name = called.get(block.tool_use_id, "(unknown tool)")
                    tools.add(name, block_costs, count=0)
            largest.append(
                Largest(transcript.name, index, message.role.value, costs, _preview(message))
            )
    largest.sort(key=lambda m: -m.tokens[0])
    return Census(
        transcripts=tuple(t.name for t in transcripts),
        counters=tuple(counters),
        messages=messages,
        total=tuple(total),
        by_role=roles.rows(),
        by_tool=tools.rows(),
        by_kind=kinds.rows(),
        largest=tuple(largest[:_LARGEST]),
    )
