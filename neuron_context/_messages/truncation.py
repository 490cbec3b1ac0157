"""Truncation: the last resort that can always shrink a text, a result or a message.

When a budget must hold and nothing else can shrink the history (one tool result bigger
than the whole budget; a pasted log in the user's request), a text is cut in the
middle: its head and its tail are kept around a marker that says what was cut, and the
names the cut part held where the caller can name them
(:mod:`neuron_context._messages.middle`, which shows the marker).

A caller that can weigh what a text holds (:data:`~neuron_context._messages.segments.Weigh`)
gets a choice of its segments instead (:mod:`neuron_context._messages.segments`). A JSON
result keeps the records worth most whole with their keys (a record's field beside the
record's first field), in their order, the largest gap's marker in full and a one-token
``…`` in each other gap, or the rows of its condensed index under their headers when those hold more
in the same space; it is cut in the middle only when no choice of whole segments fills
35% of its space (one record bigger than the space, a string holding a whole file). A
text that is not JSON (a listing, a log, a page) keeps whichever holds more of what the
caller weighs: its lines worth most, whole and in order (a body line with its
definition's header, a row with its table's, a line of prose with its paragraph's first
line and its section's heading, a hit with its neighbours that hold names too; a long
line in pieces after its sentences or elements), a one-token gap between them; or the cut
in the middle, whose marker names the facts of the cut lines (ties go to the middle).
Each wins on some texts: a whole line keeps a name with its meaning (its label, the
code around it), a marker names more facts in the same space (long lines holding one
name each). A text of one line has no lines to choose from: it is cut in the middle.

Everything here is priced by the caller's counter, so "fits" means what the budget
means. Images and documents are left as they are, and thinking (signed by the provider) is
never cut: kept whole beside the calls it led to, left out whole of a message that called
none before its words are cut. Tool uses, ids and flags are never touched, so truncation
keeps a conversation well formed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

import attrs

from .content import ContentBlock, Image, RedactedThinking, Text, Thinking, ToolResult
from .markers import condensed_marker, pieces, tight
from .message import Message
from .middle import Describe, cut_middle
from .segments import Weigh, choose_segments

if TYPE_CHECKING:  # the counter is a parameter: no import of a higher room at run time
    from .._counting.counter import BaseCounter

__all__ = [
    "Condense",
    "Describe",
    "Weigh",
    "truncate_message",
    "truncate_text",
]

Condense: TypeAlias = Callable[[str], str]
"""Given a text, a shorter rendering that keeps every value it holds (a JSON result as
the index of its values), or ``""`` when there is none: a group of values a line, the
values of a group set apart by ``", "`` (what a cut of it names, see :func:`pieces`)."""


def truncate_text(
    text: str,
    max_tokens: int,
    counter: BaseCounter,
    *,
    describe: Describe | None = None,
    condense: Condense | None = None,
    weigh: Weigh | None = None,
    reference: str = "",
) -> str:
    """``text`` if it costs at most ``max_tokens``, else its head and tail around a
    :func:`marker`, costing at most ``max_tokens``; ``""`` when not even the marker fits.

    Args:
        text: the text.
        max_tokens: what the result may cost.
        counter: prices the text.
        describe: given the part that is cut, the names it holds, for the marker (for
            example the paths it mentions), or ``None``.
        condense: given the text, a shorter rendering that keeps its values; when it
            has one, that rendering (after a :func:`condensed_marker`) is what is kept,
            and cut if it still costs too much (its marker then names the rendering's
            own values, :func:`pieces`, when ``describe`` is given).
        weigh: given a segment of the text, the names an agent may reuse of it; when
            given, the text's segments worth most are kept whole instead
            (:func:`~neuron_context._messages.segments.choose_segments`): a JSON
            text's (of its ``condense`` rendering when that keeps more) unless no
            choice of them fills 35% of ``max_tokens``; another text's when its lines
            hold more of the weighed names than the cut in the middle (its marker's
            names counted).
        reference: where the whole text can be read back (``recall: <key>``), written
            in the marker whatever else it leaves out.
    """
    cost = counter.estimate_text(text)
    if cost <= max_tokens:
        return text
    if weigh is not None:
        chosen = _chosen(
            text,
            max_tokens,
            counter,
            weigh=weigh,
            condense=condense,
            describe=describe,
            reference=reference,
        )
        if chosen:
            return chosen
    if condense is not None:
        short = condense(text)
        if short:
            line = condensed_marker(len(text), cost, short=tight(max_tokens, counter))
            # What is cut of an index is named by its own values, in order: its rows
            # and pairs are the facts (a describer for text would take them apart).
            body = cut_middle(
                short,
                max_tokens - counter.estimate_text(line),
                counter,
                pieces if describe is not None else None,
                reference,
            )
            if body and counter.estimate_text(line + body) <= max_tokens:
                return line + body
    return cut_middle(text, max_tokens, counter, describe, reference)


def _chosen(
    text: str,
    max_tokens: int,
    counter: BaseCounter,
    *,
    weigh: Weigh,
    condense: Condense | None,
    describe: Describe | None,
    reference: str,
) -> str:
    """The segments of ``text`` worth most that fit ``max_tokens``: of a JSON text, or
    of its condensed rendering (after a :func:`condensed_marker`) when that keeps more
    worth in the same space (its rows under their header hold more values than the
    objects they render); of another text, its lines, unless its cut in the middle
    holds as much (:func:`_holds`); ``""`` when there is no choice or the text is one
    line (the caller cuts the text in the middle)."""
    if text.lstrip()[:1] not in ("{", "[") and "\n" not in text.strip():
        return ""  # one line (a paragraph, minified code): no lines to choose from
    best = choose_segments(text, max_tokens, counter, weigh=weigh, reference=reference)
    if best.unit != "items":  # a text (a log line in brackets too): lines or the middle
        if not best.text:
            return ""
        middle = cut_middle(text, max_tokens, counter, describe, reference)
        return best.text if _holds(best.text, weigh) > _holds(middle, weigh) else middle
    short = condense(text) if condense is not None else ""
    if short:
        line = condensed_marker(
            len(text), counter.estimate_text(text), short=tight(max_tokens, counter)
        )
        space = max_tokens - counter.estimate_text(line)
        index = choose_segments(short, space, counter, weigh=weigh, reference=reference)
        if index.text and index.worth > best.worth:
            candidate = line + index.text
            if counter.estimate_text(candidate) <= max_tokens:
                return candidate
    return best.text


def _holds(cut: str, weigh: Weigh) -> float:
    """What the names ``cut`` shows weigh together (each name once, at its weight on
    the line that shows it; the names in a marker's line count as shown)."""
    found: dict[str, float] = {}
    for line in cut.split("\n"):
        for name, weight in weigh(line).items():
            if weight > found.get(name, 0.0):
                found[name] = weight
    return sum(found.values())


def _text_cost(block: ContentBlock | Text | Image, counter: BaseCounter) -> int:
    if isinstance(block, Text):
        return counter.estimate_text(block.text)
    if isinstance(block, ToolResult):
        return sum(_text_cost(item, counter) for item in block.content)
    return 0


def _shrink(
    block: ContentBlock,
    share: float,
    counter: BaseCounter,
    *,
    describe: Describe | None,
    condense: Condense | None,
    weigh: Weigh | None,
) -> ContentBlock:
    if isinstance(block, Text):
        limit = int(counter.estimate_text(block.text) * share)
        return Text(text=truncate_text(block.text, limit, counter, describe=describe))
    if isinstance(block, ToolResult):
        items: list[Text | Image] = []
        for item in block.content:
            if isinstance(item, Text):
                limit = int(counter.estimate_text(item.text) * share)
                text = truncate_text(
                    item.text, limit, counter, describe=describe, condense=condense, weigh=weigh
                )
                items.append(Text(text=text))
            else:
                items.append(item)
        return attrs.evolve(block, content=tuple(items))
    return block


def _unthought(message: Message) -> Message:
    """``message`` without its thinking blocks when it called no tools and has words
    (text) beside them; else as it is. A signed block can only be kept whole or left
    out, and a provider reads an earlier turn's thinking as optional (it may drop it
    itself), but never the thinking of the calls in progress."""
    thinking = (Thinking, RedactedThinking)
    if message.tool_uses or not any(isinstance(b, thinking) for b in message.content):
        return message
    if not any(isinstance(b, Text) and b.text for b in message.content):
        return message
    kept = tuple(b for b in message.content if not isinstance(b, thinking))
    return attrs.evolve(message, content=kept)


def truncate_message(
    message: Message,
    max_tokens: int,
    counter: BaseCounter,
    *,
    describe: Describe | None = None,
    condense: Condense | None = None,
    weigh: Weigh | None = None,
) -> Message:
    """``message`` if it costs at most ``max_tokens``, else a copy whose texts (text and
    tool-result text) are cut in proportion to their size until it fits, or are as short
    as they can be. Its role, tool uses, ids and flags are unchanged. Thinking is never
    cut (a provider checks its signature): in a message that called tools it is kept
    whole (a provider requires it beside the calls it led to), in one that called none
    and has words it goes whole before any of its words are cut (the words are what
    the next call reads; :func:`_unthought`). ``describe``, ``condense`` and ``weigh``
    are :func:`truncate_text`'s (``condense`` and ``weigh`` apply to tool results only:
    a user's or the assistant's words are never rewritten, only cut)."""
    cost = counter.estimate_message(message)
    if cost <= max_tokens:
        return message
    message = _unthought(message)
    cost = counter.estimate_message(message)
    if cost <= max_tokens:
        return message
    texts = sum(_text_cost(block, counter) for block in message.content)
    if texts == 0:
        return message
    share = max(0.0, 1 - (cost - max_tokens) / texts)
    best = message
    for _ in range(8):
        content = tuple(
            _shrink(block, share, counter, describe=describe, condense=condense, weigh=weigh)
            for block in message.content
        )
        candidate = attrs.evolve(message, content=content)
        candidate_cost = counter.estimate_message(candidate)
        best = candidate
        if candidate_cost <= max_tokens or share <= 0:
            break
        share = max(0.0, share - max((candidate_cost - max_tokens) / texts * 1.1, 0.02))
    return best
