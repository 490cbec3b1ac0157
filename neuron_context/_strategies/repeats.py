"""Repeated calls: the same call returning the same output, kept once with a count.

An agent stuck in a loop (polling a job, re-running a failing command, re-asking for the
same record) fills its history with copies of one call and one output; one of the shared
real transcripts ends in dozens of them. This is the LangChain-middleware README's
"collapse repeated shell outputs", pair-safe: the older repeats are removed *with their
calls* through the boundary API, and the newest result says how many times it came back,
so the model still knows it has been looping::

    [this call returned the same output 64 times; the older repeats were removed]

Calls repeat when they are calls of the same tool with the same arguments and their
outputs are the same (or, with ``similarity`` below 1, near the same, as
:class:`difflib.SequenceMatcher` rates them: timestamps and durations differ between
runs; long outputs are compared line by line). Calls with the same output but different
arguments are left alone: they did different things. A group is collapsed only when
what it removes costs more than the note it adds, so the history never grows.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Hashable, Sequence

import attrs

from .._counting.counter import BaseCounter, compact_json
from .._log import log_compaction
from .._messages.content import ContentBlock, Image, Text, ToolResult
from .._messages.conversation import (
    Structure,
    ToolCall,
    replace_blocks,
    replace_content,
    tool_calls,
)
from .._messages.message import Message
from .._stores.index import with_reference
from .._stores.store import Store, optional_store
from .._validators import non_negative_int, number
from .strategy import PureStrategy
from .supersede import group

__all__ = ["CollapseRepeatedCallsStrategy", "repeat_note"]

_CHAR_LIMIT = 4_000
"""Outputs up to this size (both together) are compared character by character."""

_NOTE = re.compile(r"\A\[this call returned the same output (\d+) times\b")


def repeat_note(times: int) -> str:
    """The note the kept result gets for a call repeated ``times`` times."""
    return f"[this call returned the same output {times} times; the older repeats were removed]"


def _split(result: ToolResult) -> tuple[tuple[Text | Image, ...], int]:
    """The result's content without an earlier note, and that note's count (1: none)."""
    content = result.content
    if content and isinstance(content[-1], Text):
        found = _NOTE.match(content[-1].text)
        if found is not None:
            return content[:-1], int(found.group(1))
    return content, 1


def _text(content: Sequence[Text | Image]) -> str | None:
    if all(isinstance(item, Text) for item in content):
        return "\n".join(item.text for item in content if isinstance(item, Text))
    return None


@attrs.define
class CollapseRepeatedCallsStrategy(PureStrategy):
    """Keeps one of the calls with the same tool, arguments and output, with a count.

    Of each set of repeats, the newest call and its result stay; the result gets a note
    saying how many times the call returned that output; the older repeats are removed
    with their calls (an assistant message left with no content is removed).

    Examples:
        >>> strategy = CollapseRepeatedCallsStrategy(similarity=0.95)
    """

    max_tokens: int = attrs.field(default=0, kw_only=True, validator=non_negative_int())
    """The trigger: compact when the history costs more than this (0: always)."""
    similarity: float = attrs.field(
        default=1.0, kw_only=True, validator=number(minimum=0.0, maximum=1.0)
    )
    """How alike two outputs must be to count as the same (1.0: identical text)."""
    min_repeats: int = attrs.field(default=2, kw_only=True, validator=non_negative_int())
    """Collapse a call only when it returned the same output at least this many times."""
    store: Store | None = attrs.field(default=None, kw_only=True, validator=optional_store())
    """Where what it removes goes: the output then starts (after the system messages)
    with an index of it, a line per entry (``- read_file a.py (812 tokens) — recall: <key>``)."""

    def _same(self, a: Sequence[Text | Image], b: Sequence[Text | Image]) -> bool:
        if tuple(a) == tuple(b):
            return True
        if self.similarity >= 1.0:
            return False
        first, second = _text(a), _text(b)
        if first is None or second is None:
            return False
        # Characters for short outputs; lines for long ones, where a character match is
        # quadratic and a changed timestamp changes one line.
        if len(first) + len(second) <= _CHAR_LIMIT:
            matcher = difflib.SequenceMatcher(None, first, second, autojunk=False)
        else:
            matcher = difflib.SequenceMatcher(None, first.splitlines(), second.splitlines())
        return (
            matcher.real_quick_ratio() >= self.similarity
            and matcher.quick_ratio() >= self.similarity
            and matcher.ratio() >= self.similarity
        )

    def _apply(self, messages: Sequence[Message]) -> list[Message]:
        structure = Structure.of(messages)
        calls = [c for c in tool_calls(structure) if len(c.results) == 1]
        groups = group(calls, _same_call)
        counter = self.counter
        remove: dict[int, set[str]] = {}
        notes: dict[tuple[int, int], ContentBlock] = {}
        removed = 0
        for members in groups.values():
            if len(members) < 2:
                continue
            kept = members[-1]
            result = kept.results[0].result
            content, times = _split(result)
            repeats: list[ToolCall] = []
            for older in reversed(members[:-1]):
                other = older.results[0].result
                other_content, other_times = _split(other)
                if other.is_error == result.is_error and self._same(content, other_content):
                    repeats.append(older)
                    times += other_times
            if not repeats or times < max(self.min_repeats, 2):
                continue
            noted = (*content, Text(text=repeat_note(times)))
            saved = sum(_cost(counter, call) for call in repeats)
            added = counter.estimate_content(noted) - counter.estimate_content(result.content)
            if saved <= added:
                continue
            for call in repeats:
                remove.setdefault(call.message, set()).add(call.use.id)
            ref = kept.results[0]
            notes[ref.message, ref.block] = replace_content(result, noted)
            removed += len(repeats)
        if not remove:
            return list(messages)
        # Annotate first (positions are the input's), then remove the older pairs.
        annotated = replace_blocks(messages, notes)
        output = Structure.of(annotated).without_calls(remove)
        log_compaction(
            "CollapseRepeatedCallsStrategy",
            counter,
            messages,
            output,
            {"removed_calls": removed, "kept_calls": len(notes)},
        )
        return with_reference(
            messages, output, self.store, self.counter, "CollapseRepeatedCallsStrategy"
        )


def _same_call(call: ToolCall) -> Hashable:
    return (call.use.name, compact_json(call.use.input))


def _cost(counter: BaseCounter, call: ToolCall) -> int:
    """What removing ``call`` with its results saves at least (message overheads aside)."""
    use = call.use
    return (
        counter.estimate_text(use.name)
        + counter.estimate_text(compact_json(use.input))
        + sum(counter.estimate_content(ref.result.content) for ref in call.results)
    )
