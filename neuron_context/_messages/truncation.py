"""Truncation: the last resort that can always shrink a text, a result or a message.

When a budget must hold and nothing else can shrink the history (one tool result bigger
than the whole budget; a pasted log in the user's request), a text is cut in the
middle: its head and its tail are kept, since the head of a file or log says what it
is and the tail holds how it ended (a test summary, the last error), and a marker in
between says what was cut, so neither the model nor the user mistakes the rest for the
whole: how many lines, characters and tokens, and, when the caller can name them, the
names the cut part held (its identifiers, numbers with their keys, paths), counted, as
many as a share of the space allows::

    [... 212 lines (41,802 characters, about 10,450 tokens) cut, naming 64: HAT170 ·
    price=1286 · src/app.py · ... and 51 more ...]

(the marker, and the names it shows: :mod:`neuron_context._messages.markers`).

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

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

import attrs

from .content import ContentBlock, Image, RedactedThinking, Text, Thinking, ToolResult
from .markers import condensed_marker, fitting, marker, pieces, tight, whole
from .message import Message
from .segments import Weigh, choose_segments

if TYPE_CHECKING:  # the counter is a parameter: no import of a higher room at run time
    from .._counting.counter import BaseCounter

__all__ = [
    "HEAD_SHARE",
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

Describe: TypeAlias = Callable[[str], Sequence[str]]
"""Given the part of a text that is cut, the names it holds, most telling first (the
marker counts them and shows as many as its share of the space allows)."""

HEAD_SHARE = 0.6
"""The share of what is kept that comes from the head of the text (the rest: its tail)."""

NOTE_SHARE = (0.3, 0.7)
"""The most of a truncated text's space the names in its marker may take: the first
share when little is cut, growing with the share cut up to the second (a text cut to a
tenth of itself keeps a head and a tail that say little; the names of what was cut
say more)."""

_NEAR = 5
"""A line end in the last (first) ``1/_NEAR`` of a head (tail) is where it is cut."""

_NEAR_CHARS = 80
"""... or in its last (first) this many characters (a line of a listing)."""

_MIN_KEEP = 16
"""Characters below which a text is not worth cutting: it is replaced by the marker."""


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
            body = _truncated(
                short,
                max_tokens - counter.estimate_text(line),
                counter,
                pieces if describe is not None else None,
                reference,
            )
            if body and counter.estimate_text(line + body) <= max_tokens:
                return line + body
    return _truncated(text, max_tokens, counter, describe, reference)


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
        middle = _truncated(text, max_tokens, counter, describe, reference)
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


def _truncated(
    text: str,
    max_tokens: int,
    counter: BaseCounter,
    describe: Describe | None,
    reference: str = "",
) -> str:
    """:func:`truncate_text` without condensing.

    The names in the marker get their share of ``max_tokens`` first (a larger share the
    more is cut, see :data:`NOTE_SHARE`); the head and the tail share the rest. Each try
    that comes out too long shrinks the head and the tail by the overshoot, then the
    names."""
    cost = counter.estimate_text(text)
    if cost <= max_tokens:
        return text
    low, high = NOTE_SHARE
    kept = max(max_tokens, 0) / cost
    short = tight(max_tokens, counter)
    note = int(max(max_tokens, 0) * min(high, low + (high - low) * (1 - kept))) if describe else 0
    bare = counter.estimate_text(
        marker(len(text), cost, lines=text.count("\n") + 1, reference=reference, short=short)
    )
    keep = int(len(text) * max(0, max_tokens - bare - note) / cost)
    best = ""
    for _ in range(12):
        head, tail = _ends(text, keep)
        cut = text[len(head) : len(text) - len(tail)]
        names: list[str] = []
        named = 0
        if describe is not None and note > 0:
            found = describe(whole(cut, head, tail, index=describe is pieces))
            named = len(found)
            names = fitting(found, note, counter)
        cut_tokens = max(0, cost - counter.estimate_text(head) - counter.estimate_text(tail))
        line = marker(
            len(cut),
            cut_tokens,
            lines=cut.count("\n") + 1,
            names=names,
            named=named,
            reference=reference,
            short=short,
        )
        # The marker ends a line: a tail that starts one keeps its indent.
        starts = not tail or len(tail) == len(text) or text[-len(tail) - 1] == "\n"
        candidate = head.rstrip(" ") + line + (tail if starts else tail.lstrip(" "))
        over = counter.estimate_text(candidate) - max_tokens
        if over <= 0:
            return candidate
        best = candidate
        if keep > 0:  # shrink the head and tail by the overshoot, at this text's density
            keep = max(0, keep - max(int(over * len(text) / cost * 1.1), keep // 10, 1))
        elif note > 0:
            note = max(0, note - over - 1)
        else:
            break
    return best if counter.estimate_text(best) <= max_tokens else ""


def _ends(text: str, keep: int) -> tuple[str, str]:
    """The head and the tail kept of ``text`` when ``keep`` characters are kept, cut
    at line ends where a line end is near (in the fifth of each nearest the cut, or in
    the ``_NEAR_CHARS`` characters nearest it when the line cut is no longer than that,
    see :func:`_near`): a line of a listing or a table is kept whole or not at all,
    never as a part that reads as another value (an id cut in two)."""
    if keep < _MIN_KEEP:
        return "", ""
    head_chars = int(keep * HEAD_SHARE)
    if _piece_of_row(text, len(text) - (keep - head_chars), len(text)):
        head_chars = keep  # the tail would be a piece of the last row: the head takes it
        if _piece_of_row(text, 0, keep) and "\n" in text.rstrip("\n"):
            return "", ""  # ... unless it too would be one: no row fits, only the marker
    elif _piece_of_row(text, 0, head_chars):
        head_chars = 0  # ... or the head a piece of the first row: the tail takes it
        if _piece_of_row(text, len(text) - keep, len(text)) and "\n" in text.rstrip("\n"):
            return "", ""
    tail_start = len(text) - (keep - head_chars)
    head = text[:head_chars]
    tail = text[tail_start:]
    end = head.rfind("\n")
    if end > 0 and text[head_chars : head_chars + 1] != "\n":  # not at a row's end already
        line_end = text.find("\n", head_chars)
        row = (len(text) if line_end < 0 else line_end) - end - 1  # the line cut
        if _near(len(head) - end, len(head), row):
            head = head[:end]  # the marker starts on a line of its own
    start = tail.find("\n")
    if 0 <= start < len(tail) - 1 and text[tail_start - 1] != "\n":
        row = tail_start + start - text.rfind("\n", 0, tail_start) - 1  # the line cut
        if _near(start, len(tail), row):
            tail = tail[start + 1 :]
    return head, tail


def _piece_of_row(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (a head from 0 or a tail to the end) is a piece of
    one row of a listing (a line of at most ``_NEAR_CHARS`` characters), not all of it:
    shown alone, a piece of a row reads as another value (``665742`` of ``6589665742``)."""
    if start >= end:
        return False
    if start == 0:  # a head: the first line
        line_end = text.find("\n")
        line_end = len(text) if line_end < 0 else line_end
        return end < line_end <= _NEAR_CHARS
    body_end = len(text.rstrip("\n"))
    if start >= body_end or "\n" in text[start:body_end]:
        return False
    line_start = text.rfind("\n", 0, start) + 1
    return line_start < start and body_end - line_start <= _NEAR_CHARS


def _near(dropped: int, kept: int, row: int) -> bool:
    """Whether a part kept (``kept`` characters) ends at the line end ``dropped``
    characters from its cut: in its fifth nearest the cut, or, when the line cut is a
    row of a listing (``row`` characters, at most ``_NEAR_CHARS``), wherever it is (a
    part of a long line, a paragraph, is kept rather than the whole head or tail)."""
    return dropped <= kept // _NEAR or (row <= _NEAR_CHARS and dropped <= _NEAR_CHARS)


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
