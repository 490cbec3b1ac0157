"""The entries of an index: what a compaction removed, item by item.

What a compaction removes goes to the store entry by entry, each under its own key
(the hash of its content, so an entry removed again has the same key):

- a tool result with its call (the call says what the result is); an assistant message
  that called tools, with its results, is one entry when it fits a page;
- a user, assistant or summary message on its own;
- a text longer than a page (:data:`PAGE_TOKENS`) in page-sized segments cut at line
  boundaries (a line longer than a page is cut too), each its own entry; an image or a
  tool call's input is not cut (an indivisible block);
- a reference the removed message already held (a cleared result, a cut, an earlier
  index's lines) is carried as it is: its key is already in the store.

Each entry is an :class:`~neuron_context._stores.lines.Entry`: an index line (what it
holds, its token count) and its key (:mod:`~neuron_context._stores.lines` writes and
reads the lines, :mod:`~neuron_context._stores.index` the index). ``Entry``,
``INDEX_HEADING``, ``index_lines`` and ``is_index`` are re-exported here, where the
offloading strategies and the tests import them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias

import attrs

from .._messages.content import Compaction, Image, Text, ToolResult, ToolUse
from .._messages.message import Message, Role
from .lines import INDEX_HEADING, Entry, carried, index_lines, is_index, is_reference_only
from .offload import describe_call
from .pages import cut_end
from .serialized import content_key

if TYPE_CHECKING:  # the counter is a parameter: no import of a higher room at run time
    from .._counting.counter import BaseCounter

__all__ = [
    "FACT_CHARS",
    "INDEX_HEADING",
    "PAGE_TOKENS",
    "SEGMENT_TOKENS",
    "Entry",
    "entries_of",
    "facts_of",
    "index_lines",
    "is_index",
]

PAGE_TOKENS = 2_000
"""A recall page: no entry is larger, bar an indivisible block."""

SEGMENT_TOKENS = 1_800
"""What one segment of a long text holds at most, in tokens: a page less a margin for
what rendering adds."""

_QUOTE = 48
"""Characters of a message quoted in its index line."""

FACT_CHARS = 100
"""The most characters of facts an index line shows."""

_FACTS = 8
"""The most facts read for an index line."""

_READ = 2_000
"""Characters of a text read for its line's facts (the first facts are near its start,
and a whole long result would cost a compaction a scan of it)."""


def _quote(text: str) -> str:
    words = " ".join(text.split())
    return words if len(words) <= _QUOTE else words[: _QUOTE - 1] + "…"


def _label(message: Message) -> str:
    """``user: "…"``, ``assistant: "…" → read_file a.py``, or ``summary: "…"``."""
    if message.is_compaction:
        text = next(b.content for b in message.content if isinstance(b, Compaction))
        return f'summary: "{_quote(text)}"'
    role = message.role.value
    parts = []
    if message.text.strip():
        parts.append(f'{role}: "{_quote(message.text)}"')
    calls = [d for use in message.tool_uses if (d := describe_call(use))]
    if calls:
        parts.append("; ".join(calls) if parts else f"{role}: " + "; ".join(calls))
    if not parts:
        return f"{role}: (no text)"
    return " → ".join(parts)


def _tokens(n: int) -> str:
    return f"{n:,} tokens"


def _segments(text: str, counter: BaseCounter) -> list[tuple[int, int, str]]:
    """``text`` cut at line boundaries into pieces of at most :data:`SEGMENT_TOKENS` tokens
    (a longer line is cut where it must): ``(first line, last line, piece)``, 1-based."""
    pieces: list[tuple[int, int, str]] = []
    current: list[str] = []
    cost = 0
    first = 1
    number = 0
    # Lines end at "\n" alone, as recall and search number them (``splitlines`` also
    # breaks at "\r", "\x0c", "\u2028"...: a progress bar's output read "lines 1-258 of 2").
    for whole in re.findall(r"[^\n]*\n|[^\n]+", text):
        number += 1
        line = whole
        line_cost = counter.estimate_text(line)
        if current and cost + line_cost > SEGMENT_TOKENS:
            pieces.append((first, number - 1, "".join(current)))
            current, cost, first = [], 0, number
        if line_cost > SEGMENT_TOKENS:  # a line longer than a segment: cut it
            start = 0  # each piece priced on its own window: linear in the line
            while (end := cut_end(line, start, SEGMENT_TOKENS, counter)) < len(line):
                end = max(end, start + 1)
                pieces.append((number, number, line[start:end]))
                start = end
            line = line[start:]
            line_cost = counter.estimate_text(line)
            first = number
        if line:
            current.append(line)
            cost += line_cost
    if current:
        pieces.append((first, number, "".join(current)))
    return pieces


def facts_of(text: str) -> str:
    """The first facts of ``text`` (a tool's output; its first :data:`_READ`
    characters) with their labels, as :func:`~neuron_context._summary.facts.facts`
    orders them (definitions, key/value pairs, salient tokens), within
    :data:`FACT_CHARS` characters; none of a line's segments (too long for a line)."""
    from .._summary.facts import facts  # on first use: the summary room is higher

    shown: list[str] = []
    used = 0
    for fact in facts(text[:_READ], limit=_FACTS):
        if fact.line or "\n" in fact.text:
            continue
        if used + len(fact.text) > FACT_CHARS:
            break
        shown.append(fact.text)
        used += len(fact.text) + 2
    return ", ".join(shown)


Noted: TypeAlias = "dict[str, str]"
"""The keys of the new entries whose line may show facts, and the text they come from
(a tool's output): noted for the newest entries only (see :func:`entries_of`)."""


def _text_entries(
    what: str, text: str, counter: BaseCounter, noted: Noted | None = None
) -> list[Entry]:
    """A text as one entry, or as page-sized segments when longer than a page (each
    a tool's output whose facts its line may show, with ``noted``)."""
    cost = counter.estimate_text(text)
    if cost <= SEGMENT_TOKENS:
        key = content_key(text)
        if noted is not None:
            noted[key] = text
        return [Entry(f"{what} ({_tokens(cost)})", key, text, tokens=cost)]
    pieces = _segments(text, counter)
    total = text.count("\n") + (0 if text.endswith("\n") else 1)
    found = []
    for first, last, piece in pieces:
        lines = f"line {first}" if first == last else f"lines {first}-{last}"
        tokens = counter.estimate_text(piece)
        key = content_key(piece)
        if noted is not None:
            noted[key] = piece
        found.append(
            Entry(f"{what}, {lines} of {total:,} ({_tokens(tokens)})", key, piece, tokens=tokens)
        )
    return found


def _messages_entry(
    what: str, content: list[Message], counter: BaseCounter, noted: Noted | None = None
) -> Entry:
    """One entry of ``content`` (its results' facts noted, with ``noted``)."""
    tokens = counter.estimate_messages(content)
    key = content_key(content)
    if noted is not None:
        noted[key] = "\n".join(r.text for message in content for r in message.tool_results)
    return Entry(f"{what} ({_tokens(tokens)})", key, content, tokens=tokens)


def _result_entries(
    result: ToolResult, use: ToolUse | None, counter: BaseCounter, noted: Noted
) -> list[Entry]:
    """A tool result's entries: with its call when it fits a page, else its texts in
    segments (an image result, indivisible, with its call whatever its size)."""
    what = describe_call(use) or "tool result"
    exchange = [] if use is None else [Message(role=Role.ASSISTANT, content=(use,))]
    exchange.append(Message(role=Role.TOOL, content=(result,)))
    tokens = counter.estimate_messages(exchange)
    if tokens <= SEGMENT_TOKENS or any(isinstance(item, Image) for item in result.content):
        return [_messages_entry(what, exchange, counter, noted)]
    found: list[Entry] = []
    for item in result.content:
        if isinstance(item, Text):
            found.extend(_text_entries(what, item.text, counter, noted))
    return found


def _message_entries(
    message: Message, uses: dict[str, ToolUse], counter: BaseCounter, noted: Noted
) -> list[Entry]:
    """The entries of one removed message (see the module)."""
    if message.role is Role.TOOL:
        found: list[Entry] = []
        for block in message.content:
            if isinstance(block, ToolResult):
                if is_reference_only(block):
                    continue  # carried as a line
                found.extend(_result_entries(block, uses.get(block.tool_use_id), counter, noted))
        return found
    whole = [message]
    tokens = counter.estimate_messages(whole)
    label = _label(message)
    texts = [b for b in message.content if isinstance(b, Text | Compaction)]
    if tokens <= SEGMENT_TOKENS or not texts:
        return [_messages_entry(label, whole, counter)]
    found = []
    for block in texts:
        text = block.content if isinstance(block, Compaction) else block.text
        found.extend(_text_entries(label, text, counter))
    rest = tuple(b for b in message.content if not isinstance(b, Text | Compaction))
    if rest:  # the blocks no cut divides (tool calls, images, documents): one entry
        found.append(_messages_entry(label, [Message(role=message.role, content=rest)], counter))
    return found


def entries_of(
    removed: Sequence[Message],
    counter: BaseCounter,
    *,
    everything: Sequence[Message] = (),
    facts: int = 0,
) -> list[Entry]:
    """The index lines of ``removed``, oldest first, each key once (see the module):
    new entries with their content, carried ones without; the newest ``facts`` new
    entries of a tool's output with their facts (:func:`facts_of`: an index shows the
    newest lines' facts, and reading the others' would cost a scan of every removed
    result). ``everything``: the whole input, where the calls of removed results are
    found."""
    uses = {use.id: use for message in (everything or removed) for use in message.tool_uses}
    noted: Noted = {}
    found: list[Entry] = []
    index = 0
    while index < len(removed):
        message = removed[index]
        found.extend(carried(message))
        if is_index(message):
            index += 1
            continue
        # An assistant message that called tools, with its results that follow it.
        if message.role is Role.ASSISTANT and message.tool_uses:
            ids = {use.id for use in message.tool_uses}
            end = index + 1
            while (
                end < len(removed)
                and removed[end].role is Role.TOOL
                and all(r.tool_use_id in ids for r in removed[end].tool_results)
            ):
                end += 1
            group = list(removed[index:end])
            plain = not any(is_reference_only(r) for m in group[1:] for r in m.tool_results)
            if end > index + 1 and plain and counter.estimate_messages(group) <= SEGMENT_TOKENS:
                for member in group[1:]:  # a cut result's reference, carried
                    found.extend(carried(member))
                found.append(_messages_entry(_label(message), group, counter, noted))
                index = end
                continue
        found.extend(_message_entries(message, uses, counter, noted))
        index += 1
    seen: set[str] = set()
    unique = []
    for entry in found:
        if entry.key not in seen:
            seen.add(entry.key)
            unique.append(entry)
    for position in range(len(unique) - 1, -1, -1):
        if facts <= 0:
            break
        entry = unique[position]
        if entry.content is not None and entry.key in noted:
            unique[position] = attrs.evolve(entry, facts=facts_of(noted[entry.key]))
            facts -= 1
    return unique
