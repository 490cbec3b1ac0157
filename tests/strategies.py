"""Hypothesis strategies for the neuron_context test suite.

Every strategy here generates values the library accepts: texts, content blocks, tool
calls, whole agent conversations (well formed or deliberately broken), counters, random
stacks of the built-in strategies, and :func:`cases` tying a strategy to a conversation
and a budget around its cost. The last sections are the opposite: the hostile values the
agent loop must refuse where they cross in (:func:`hostile_hook_values`,
:func:`hostile_replies`), and hostile files and arguments, which the command line must
refuse with one clear line.

The factories are cached (``functools.cache``) and conversations are drawn by plain
helpers inside one composite: building a fresh strategy object per draw costs more than
drawing from it, and the property suite must stay fast.
"""

from __future__ import annotations

import functools
import json
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Generic, TypeVar

import attrs
from hypothesis import strategies as st

from neuron_context import (
    JSON,
    Compaction,
    CompositeStrategy,
    ContentBlock,
    ContextStrategy,
    Document,
    Image,
    Message,
    RedactedThinking,
    Role,
    SlidingWindowStrategy,
    StripProcessedImagesStrategy,
    StripToolCallsStrategy,
    SupersededToolCallsStrategy,
    Text,
    Thinking,
    TokenCounter,
    ToolDefinition,
    ToolResult,
    ToolResultClearingStrategy,
    ToolUse,
)
from neuron_context.strategies import (
    CollapseRepeatedCallsStrategy,
    DedupeFetchesStrategy,
    StaleFileReadsStrategy,
    Structure,
    TruncateLargeResultsStrategy,
)

S = TypeVar("S", bound=ContextStrategy)

TOOL_NAMES = ("get_time", "read_file", "search", "bash", "write_memory", "查询")
"""The tools generated conversations call; ``exclude_tools`` draws from these."""

TOOL_USE_IDS = ("toolu_01", "toolu_02", "call_a", "call_b", "1", "2", "id-é", "🆔")
"""A small pool of ids, so that later exchanges often reuse an earlier exchange's ids."""

ORPHAN_PREFIX = "orphan-"
"""Ids of results that answer no call; no generated tool use has such an id."""

DANGLING_PREFIX = "dangling-"
"""Ids of calls that malformed conversations leave unanswered."""

_NON_ASCII = (
    "日本語のテキストです。",
    "汉字和标点\uff0c\u3002",
    "🙂",
    "👩‍👩‍👧‍👦 family emoji",
    "café naïve façade",
    "Ωμέγα και άλφα",
    "emoji 🎉 in ascii",
    "e\u0301",
    "Привет, мир",
)

_LONG_PIECES = ("lorem ipsum dolor sit amet ", "日志行 ", "🙂", "x", "def f():\n    return 1\n")


def _repeat(piece: str, times: int) -> str:
    return piece * times


@functools.cache
def long_texts() -> st.SearchStrategy[str]:
    """Long texts (hundreds to thousands of bytes), built cheaply from repeated pieces."""
    return st.builds(_repeat, st.sampled_from(_LONG_PIECES), st.integers(20, 400))


@functools.cache
def huge_ints() -> st.SearchStrategy[int]:
    """Ints beyond what a float holds exactly (``2**53``), up to far beyond what one holds
    at all (``10**400``): budgets, windows and priorities of any size."""
    return st.one_of(
        st.sampled_from([2**53 + 1, 2**63 - 1, 2**64 - 1, 2**64, 10**400]),
        st.integers(min_value=2**53, max_value=2**1100),
    )


def texts(*, max_size: int = 40) -> st.SearchStrategy[str]:
    """Texts: empty, ASCII, any Unicode, hand-picked non-ASCII (CJK, emoji, accents), long."""
    return st.one_of(
        st.just(""),
        st.text(string.printable, max_size=max_size),
        st.text(max_size=max_size),
        st.sampled_from(_NON_ASCII),
        long_texts(),
    )


def surrogate_texts(*, max_size: int = 60) -> st.SearchStrategy[str]:
    """Texts holding lone surrogates (a tool's output decoded with ``surrogateescape``),
    high and low ones side by side included (which JSON escapes would join into one
    character): what a ``Message`` accepts and a store must carry."""
    surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=())
    around = st.text(st.one_of(st.characters(), surrogates), max_size=max_size // 2)
    return st.one_of(
        st.builds(lambda a, s, b: a + s + b, around, st.text(surrogates, min_size=1), around),
        st.sampled_from(["\ud83d\ude00", "binary \udcff\udcfe output", "\udfff", "a\ud800"]),
    )


_TOKENIZER_TRAPS = (
    "<|endoftext|>",
    "<|im_start|>",
    "1234567890",
    "'s 'T 'LL 're",
    "   \n\n\t  ",
    "\r\n",
    "e\u0301\u0301",
    "\ud83d",  # a lone surrogate (a tool output cut inside an emoji)
    "\ud83d\ude00",  # a pair of surrogates, as json.loads reads "\\ud83d\\ude00"
    "\u200d\ufeff",
    "🙂" * 3,
    "ÀÉÎõü",
    "\U0001d518\U0001d52b\U0001d526",  # mathematical Fraktur
    "x" * 64,
    " " * 40,
    "٣٤٥ ١٢",
)


@functools.cache
def hostile_texts() -> st.SearchStrategy[str]:
    """Texts that stress a tokenizer: special-token look-alikes, digit and whitespace
    runs, contractions, combining marks, lone and paired surrogates, any code point."""
    piece = st.one_of(
        st.sampled_from(_TOKENIZER_TRAPS),
        st.text(st.characters(exclude_categories=()), max_size=12),
        st.text(string.printable, max_size=12),
    )
    return st.lists(piece, max_size=12).map("".join)


_LISTING_LINES = (
    "def {name}(order_id):",
    "class {Name}:",
    "    return {name}(reservation_id={id}, price={number})",
    "        raise ValueError('{id} not found')",
    "    {name} = fetch('{id}')",
    "ERROR {name} failed for {id} at src/app/{name}.py:{number}",
    "| {id} | {number} | confirmed |",
    "",
    "    pass",
    "{text}",
)


@functools.cache
def listings() -> st.SearchStrategy[str]:
    """Texts a tool reads back: lines of code, logs and tables holding names (an id, a
    number, a code name, a path, an error), indented bodies under their definitions,
    blank lines and any text between, with or without a numbered gutter (``47→``)."""
    line = st.builds(
        lambda template, name, number, text: template.format(
            name=name,
            Name=name.title().replace("_", ""),
            id=f"HAT{number % 1000:03d}",
            number=number,
            text=text,
        ),
        st.sampled_from(_LISTING_LINES),
        st.from_regex(r"[a-z]{2,8}_[a-z]{2,8}", fullmatch=True),
        st.integers(0, 10**7),
        texts(max_size=60),
    )
    numbered = st.booleans()
    return st.tuples(st.lists(line, max_size=120), numbered).map(
        lambda drawn: "\n".join(
            f"{i + 1:>6}→{row}" if drawn[1] else row for i, row in enumerate(drawn[0])
        )
    )


_TABLE_STYLES = ("|", " | ", "\t", "markdown")
"""How a table's cells are separated: bars, bars between spaces, tabs, a markdown table
(``| a | b |`` with its separator line under the header)."""


@st.composite
def tables(draw: st.DrawFn) -> tuple[str, list[tuple[str, list[str]]]]:
    """A text of tables between lines of text (or none: a line of prose right after a
    table; a blank line between two tables, which would otherwise read as one), and each
    table's header (``""``: a headerless table) with its rows. A header is a title and
    column names of one to three words (long ones cut into pieces), each word holding
    ``_`` and the table's letter (``ab_xcd``), in any style of :data:`_TABLE_STYLES`; a
    row holds ids, numbers and words and no ``_`` (its first cell an id or a number: a
    value), nor does the text between."""
    cell = st.one_of(
        st.from_regex(r"[A-Z]{3}[0-9]{3}", fullmatch=True),
        st.integers(0, 10**6).map(str),
        st.from_regex(r"[a-z]{2,8}", fullmatch=True),
    )
    value = st.one_of(
        st.from_regex(r"[A-Z]{3}[0-9]{3}", fullmatch=True), st.integers(0, 10**6).map(str)
    )
    lines: list[str] = []
    found: list[tuple[str, list[str]]] = []
    for number in range(draw(st.integers(1, 3))):
        prose = draw(st.lists(texts(max_size=60).filter(_no_table), max_size=3))
        blank = number > 0 and (not prose or draw(st.booleans()))  # else one table
        lines.extend([*prose, ""] if blank else prose)
        style = draw(st.sampled_from(_TABLE_STYLES))
        width = draw(st.integers(3, 8))
        word = st.from_regex(rf"[a-p]{{2,6}}_{'xyz'[number]}[a-p]{{1,6}}", fullmatch=True)
        names = st.lists(word, min_size=1, max_size=3).map(" ".join)
        columns = draw(st.lists(names, min_size=width, max_size=width))
        cells = draw(
            st.lists(
                st.tuples(value, st.lists(cell, min_size=width - 1, max_size=width - 1)).map(
                    lambda row: [row[0], *row[1]]
                ),
                min_size=1,
                max_size=30,
                unique_by=lambda row: row[0],
            )
        )
        if style == "markdown":
            header = f"| {' | '.join(columns)} |"
            head = [header, "|" + "---|" * width]
            body = [f"| {' | '.join(row)} |" for row in cells]
        else:
            title = draw(st.sampled_from(["", f"table_{'xyz'[number]}: "]))
            header = title + style.join(columns)
            head = [header]
            body = [style.join(row) for row in cells]
        if draw(st.booleans()):
            lines.extend([*head, *body])
            found.append((header, body))
        else:
            lines.extend(body)
            found.append(("", body))
    lines.extend(draw(st.lists(texts(max_size=60).filter(_no_table), max_size=2)))
    return "\n".join(lines), found


def _no_table(line: str) -> bool:
    """Whether ``line`` is one line of text holding something, no cell's separator and no
    ``_`` (what marks a header's words)."""
    breaks = "|\t_\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
    return not any(mark in line for mark in breaks) and bool(line.strip())


@functools.cache
def _base64() -> st.SearchStrategy[str]:
    return st.text(string.ascii_letters + string.digits + "+/", min_size=4, max_size=64)


@functools.cache
def _urls() -> st.SearchStrategy[str]:
    return st.builds("https://example.com/{}".format, st.text(string.ascii_lowercase, max_size=8))


_SIZES = st.none() | st.integers(0, 5000)


@functools.cache
def images() -> st.SearchStrategy[Image]:
    """Images given inline (base64) or by URL, with or without a known size."""
    media_types = st.none() | st.sampled_from(("image/png", "image/jpeg", "image/webp"))
    return st.one_of(
        st.builds(Image, media_type=media_types, data=_base64(), width=_SIZES, height=_SIZES),
        st.builds(Image, media_type=media_types, url=_urls(), width=_SIZES, height=_SIZES),
    )


@functools.cache
def documents() -> st.SearchStrategy[Document]:
    """Documents given as base64 data, a URL or their text (with or without pages)."""
    media_types = st.sampled_from(("application/pdf", "text/plain"))
    pages = st.none() | st.integers(0, 300)
    extra_text = st.none() | texts()
    return st.one_of(
        st.builds(Document, media_type=media_types, data=_base64(), text=extra_text, pages=pages),
        st.builds(Document, media_type=media_types, url=_urls(), text=extra_text, pages=pages),
        st.builds(Document, media_type=media_types, text=texts(), pages=pages),
    )


@functools.cache
def thinking_blocks() -> st.SearchStrategy[Thinking | RedactedThinking]:
    """Visible (signed) thinking or redacted thinking."""
    return st.one_of(
        st.builds(Thinking, thinking=texts(), signature=st.just("") | _base64()),
        st.builds(RedactedThinking, data=_base64()),
    )


@functools.cache
def json_values() -> st.SearchStrategy[JSON]:
    """JSON values (no NaN or infinities: they are not JSON and never equal themselves)."""
    scalars: st.SearchStrategy[JSON] = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**40), 2**40),
        st.floats(allow_nan=False, allow_infinity=False),
        texts(max_size=12),
    )

    def extend(children: st.SearchStrategy[JSON]) -> st.SearchStrategy[JSON]:
        return st.lists(children, max_size=3) | st.dictionaries(
            st.text(max_size=6), children, max_size=3
        )

    return st.recursive(scalars, extend, max_leaves=6)


@st.composite
def record_lists(draw: st.DrawFn) -> list[list[dict[str, JSON]]]:
    """A list of two to four lists of records (a search's itineraries, each a list of
    flights): each record has a unique ``id`` and the same few other fields, each an
    airport code, a status, a date or a number (a field may hold one value throughout)."""
    fields = draw(
        st.lists(st.sampled_from(("origin", "date", "price", "status", "seat")), max_size=4)
    )
    cell = st.sampled_from(("JFK", "ATL", "available", "2024-05-20")) | st.integers(0, 999)
    lists: list[list[dict[str, JSON]]] = []
    for _ in range(draw(st.integers(2, 4))):
        inner: list[dict[str, JSON]] = []
        for _ in range(draw(st.integers(1, 3))):
            record: dict[str, JSON] = {"id": f"R{sum(map(len, lists)) + len(inner):04d}X"}
            record.update((field, draw(cell)) for field in dict.fromkeys(fields))
            inner.append(record)
        lists.append(inner)
    return lists


_KEYS = ("path", "query", "command", "content", "ключ", "")


@functools.cache
def tool_inputs() -> st.SearchStrategy[dict[str, JSON]]:
    """A tool call's arguments: a JSON object, mostly flat with realistic keys."""
    flat = st.dictionaries(st.sampled_from(_KEYS), texts(max_size=20) | st.integers(), max_size=2)
    nested = st.dictionaries(
        st.sampled_from(_KEYS) | st.text(max_size=6), json_values(), max_size=3
    )
    return st.one_of(st.just({}), flat, flat, nested)


@functools.cache
def tool_uses() -> st.SearchStrategy[ToolUse]:
    """Tool calls with JSON inputs and ids from the shared pool."""
    return st.builds(
        ToolUse,
        id=st.sampled_from(TOOL_USE_IDS),
        name=st.sampled_from(TOOL_NAMES),
        input=tool_inputs(),
    )


@functools.cache
def tool_definitions() -> st.SearchStrategy[ToolDefinition]:
    """Tool definitions with a name, a description and an object schema."""
    schemas = st.builds(
        lambda properties: {"type": "object", "properties": properties},
        st.dictionaries(st.sampled_from(_KEYS), json_values(), max_size=3),
    )
    return st.builds(
        ToolDefinition,
        name=st.sampled_from(TOOL_NAMES),
        description=texts(max_size=30),
        input_schema=schemas,
    )


@functools.cache
def tool_result_contents() -> st.SearchStrategy[str | list[Text | Image]]:
    """What a tool returns: a plain string, or a list of text and image items."""
    text_items = st.builds(Text, text=texts())
    items: st.SearchStrategy[Text | Image] = text_items | images()
    return st.one_of(texts(), st.lists(text_items, max_size=2), st.lists(items, max_size=3))


def _tool_result(draw: st.DrawFn, tool_use_id: str) -> ToolResult:
    return ToolResult(
        tool_use_id=tool_use_id,
        content=draw(tool_result_contents()),
        is_error=draw(st.integers(0, 4)) == 0,
    )


@functools.cache
def system_messages() -> st.SearchStrategy[Message]:
    """System messages."""
    return st.builds(Message.system, texts())


def _summary(content: str) -> Message:
    return Message(role=Role.USER, content=(Compaction(content=content),))


@functools.cache
def summary_messages() -> st.SearchStrategy[Message]:
    """An existing summary: a user message holding one :class:`Compaction`."""
    return st.builds(_summary, texts())


@functools.cache
def _attachments() -> st.SearchStrategy[list[Image | Document]]:
    return st.lists(images() | documents(), max_size=2)


def _user(draw: st.DrawFn) -> Message:
    text = draw(texts())
    attachments = draw(_attachments()) if draw(st.integers(0, 4)) == 0 else []
    if not attachments:
        return Message.user(text)
    return Message(role=Role.USER, content=(Text(text=text), *attachments))


@functools.cache
def _thinking_lists() -> st.SearchStrategy[list[Thinking | RedactedThinking]]:
    return st.lists(thinking_blocks(), max_size=2)


def _assistant(draw: st.DrawFn, uses: tuple[ToolUse, ...] = ()) -> Message:
    blocks: list[ContentBlock] = []
    if draw(st.integers(0, 3)) == 0:
        blocks.extend(draw(_thinking_lists()))
    # Without tool uses the text is rarely left out: an assistant message with no content.
    with_text = draw(st.booleans()) if uses else draw(st.integers(0, 7)) > 0
    if with_text:
        blocks.append(Text(text=draw(texts())))
    blocks.extend(uses)
    return Message(role=Role.ASSISTANT, content=tuple(blocks))


@functools.cache
@st.composite
def user_messages(draw: st.DrawFn) -> Message:
    """User messages: text, sometimes with attached images or documents."""
    return _user(draw)


@functools.cache
@st.composite
def assistant_messages(draw: st.DrawFn) -> Message:
    """Assistant replies without tool uses: optional thinking, then a text (maybe empty),
    rarely nothing at all (real transcripts hold assistant messages with no content)."""
    return _assistant(draw)


def _exchange_ids(draw: st.DrawFn, turn: int) -> list[str]:
    """1-4 ids, unique within the exchange: a slice of the shared pool (so often reused
    by other exchanges) or fresh ones."""
    size = draw(st.integers(1, 4))
    offset = draw(st.integers(-1, len(TOOL_USE_IDS) - 1))
    if offset < 0:
        return [f"toolu_{turn}_{k}" for k in range(size)]
    return [TOOL_USE_IDS[(offset + k) % len(TOOL_USE_IDS)] for k in range(size)]


def _exchange(draw: st.DrawFn, *, turn: int, running: bool, systems: bool) -> list[Message]:
    ids = _exchange_ids(draw, turn)
    uses = tuple(
        ToolUse(id=use_id, name=draw(st.sampled_from(TOOL_NAMES)), input=draw(tool_inputs()))
        for use_id in ids
    )
    messages = [_assistant(draw, uses)]
    answered = draw(st.permutations(ids))
    if running:
        answered = answered[: draw(st.integers(0, len(answered)))]
    groups: list[tuple[ToolResult, ...]] = []
    pending: list[ToolResult] = []
    for index, use_id in enumerate(answered):
        pending.append(_tool_result(draw, use_id))
        if index == len(answered) - 1 or draw(st.booleans()):
            groups.append(tuple(pending))
            pending = []
    messages.extend(Message(role=Role.TOOL, content=group) for group in groups)
    if systems and draw(st.integers(0, 3)) == 0:
        # A system message inside the exchange: after the assistant message or between
        # two of its tool messages.
        slot = draw(st.integers(1, max(1, len(messages) - 1)))
        messages.insert(slot, draw(system_messages()))
    return messages


@functools.cache
@st.composite
def tool_exchanges(draw: st.DrawFn, *, running: bool = False) -> list[Message]:
    """An assistant message with 1-4 parallel tool uses and the tool messages answering it.

    The results come in any order, one per tool message or several in one, with system
    messages possibly between the assistant message and its tool messages. When
    ``running``, only some calls (maybe none) are answered: the calls are still running.
    """
    return _exchange(draw, turn=0, running=running, systems=True)


_TURNS = ("user", "user", "assistant", "exchange", "exchange", "exchange", "system")


@functools.cache
@st.composite
def well_formed_conversations(
    draw: st.DrawFn,
    *,
    min_turns: int = 0,
    max_turns: int = 10,
    tools: bool = True,
    systems: bool = True,
    summaries: bool = True,
    running: bool = True,
) -> list[Message]:
    """Realistic, well-formed agent conversations built from turns.

    Leading system messages, maybe an existing summary right after them, then user
    messages, assistant replies, tool exchanges (see :func:`tool_exchanges`; tool-use ids
    are unique within an exchange and often reused by later ones) and system messages
    anywhere; maybe a trailing assistant message whose calls are still running. Every
    message is a distinct object.

    Args:
        min_turns: the fewest turns after the leading part.
        max_turns: the most turns after the leading part.
        tools: whether tool exchanges occur at all.
        systems: whether system messages occur at all.
        summaries: whether an existing summary may occur.
        running: whether the last assistant message may have calls still running.
    """
    messages: list[Message] = []
    if systems:
        messages.extend(draw(st.lists(system_messages(), max_size=2)))
    if summaries and draw(st.integers(0, 4)) == 0:
        messages.append(draw(summary_messages()))
    kinds = [k for k in _TURNS if (tools or k != "exchange") and (systems or k != "system")]
    for turn in range(draw(st.integers(min_turns, max_turns))):
        kind = draw(st.sampled_from(kinds))
        if kind == "user":
            messages.append(_user(draw))
        elif kind == "assistant":
            messages.append(_assistant(draw))
        elif kind == "system":
            messages.append(draw(system_messages()))
        else:
            messages.extend(_exchange(draw, turn=turn, running=False, systems=systems))
    if tools and running and draw(st.integers(0, 3)) == 0:
        messages.extend(_exchange(draw, turn=max_turns, running=True, systems=systems))
        if systems and draw(st.booleans()):
            messages.append(draw(system_messages()))
    return messages


# -- malformed conversations ----------------------------------------------------------


@attrs.frozen
class Broken:
    """A malformed conversation and the faults that were put into it."""

    messages: list[Message]
    """The conversation."""
    ids: tuple[str, ...]
    """Ids that :func:`neuron_context.validate` must name (it may name more)."""
    dangling: tuple[tuple[Message, str], ...]
    """``(assistant message, id)`` of calls left unanswered before a later turn."""


def _has_later_turn(messages: list[Message], index: int) -> bool:
    return any(m.role in (Role.USER, Role.ASSISTANT) for m in messages[index:])


def _drop_result(draw: st.DrawFn, messages: list[Message]) -> tuple[Message, str] | None:
    """Remove one answer of an exchange that a later turn follows: a dangling call."""
    structure = Structure.of(messages)
    exchanges = [
        e for e in structure.exchanges if e.tool_messages and _has_later_turn(messages, e.stop)
    ]
    if not exchanges:
        return None
    exchange = draw(st.sampled_from(exchanges))
    m_index = draw(st.sampled_from(exchange.tool_messages))
    content = messages[m_index].content
    b_index = draw(st.integers(0, len(content) - 1))
    block = content[b_index]
    assert isinstance(block, ToolResult)
    rest = content[:b_index] + content[b_index + 1 :]
    if rest:
        messages[m_index] = Message(role=Role.TOOL, content=rest)
    else:
        del messages[m_index]
    return messages[exchange.start], block.tool_use_id


def _duplicate_result(draw: st.DrawFn, messages: list[Message]) -> str | None:
    """Answer a call of an exchange a second time, in the same or a new tool message."""
    structure = Structure.of(messages)
    exchanges = [e for e in structure.exchanges if e.tool_messages]
    if not exchanges:
        return None
    exchange = draw(st.sampled_from(exchanges))
    results = [b for i in exchange.tool_messages for b in messages[i].tool_results]
    again = _tool_result(draw, draw(st.sampled_from(results)).tool_use_id)
    last = exchange.tool_messages[-1]
    if draw(st.booleans()):
        messages[last] = Message(role=Role.TOOL, content=(*messages[last].content, again))
    else:
        messages.insert(last + 1, Message(role=Role.TOOL, content=(again,)))
    return again.tool_use_id


def _insert_orphan(draw: st.DrawFn, messages: list[Message], number: int) -> str:
    """A result that answers nothing: an unknown id anywhere, or a known id right after a
    user message."""
    users = [i for i, m in enumerate(messages) if m.role is Role.USER]
    known = [u.id for m in messages for u in m.tool_uses]
    if users and known and draw(st.booleans()):
        index = draw(st.sampled_from(users)) + 1
        use_id = draw(st.sampled_from(known))
    else:
        index = draw(st.integers(0, len(messages)))
        use_id = f"{ORPHAN_PREFIX}{number}"
    messages.insert(index, Message.tool_result(use_id, draw(texts())))
    return use_id


def _insert_dangling(draw: st.DrawFn, messages: list[Message], number: int) -> Message:
    """Insert, at a safe cut, an assistant message whose calls a user message follows
    unanswered; return the assistant message."""
    structure = Structure.of(messages)
    cuts = sorted({structure.safe_cut(i) for i in range(len(messages) + 1)})
    index = draw(st.sampled_from(cuts))
    size = draw(st.integers(1, 2))
    uses = tuple(
        ToolUse(id=f"{DANGLING_PREFIX}{number}-{k}", name=draw(st.sampled_from(TOOL_NAMES)))
        for k in range(size)
    )
    assistant = _assistant(draw, uses)
    messages[index:index] = [assistant, _user(draw)]
    return assistant


FAULTS = ("drop", "duplicate", "orphan", "dangling")
"""The kinds of fault: a removed answer (a dangling call), a second answer, an orphan
result, an inserted unanswered call."""


@functools.cache
@st.composite
def broken_conversations(
    draw: st.DrawFn, *, max_turns: int = 10, faults: tuple[str, ...] = FAULTS
) -> Broken:
    """Malformed conversations: orphan results (also tool messages right after user
    messages), second answers and dangling calls, one to three faults.

    Faults that remove an answer are applied first, so later faults cannot undo them.
    """
    messages = draw(well_formed_conversations(max_turns=max_turns))
    chosen = sorted(
        draw(st.lists(st.sampled_from(faults), min_size=1, max_size=3)), key=FAULTS.index
    )
    ids: list[str] = []
    dangling: list[tuple[Message, str]] = []
    for number, fault in enumerate(chosen):
        if fault == "drop":
            dropped = _drop_result(draw, messages)
            if dropped is not None:
                dangling.append(dropped)
                ids.append(dropped[1])
                continue
        elif fault == "duplicate":
            duplicated = _duplicate_result(draw, messages)
            if duplicated is not None:
                ids.append(duplicated)
                continue
        elif fault == "dangling":
            assistant = _insert_dangling(draw, messages, number)
            dangling.extend((assistant, use.id) for use in assistant.tool_uses)
            ids.extend(use.id for use in assistant.tool_uses)
            continue
        ids.append(_insert_orphan(draw, messages, number))
    return Broken(messages=messages, ids=tuple(ids), dangling=tuple(dangling))


@functools.cache
@st.composite
def malformed_conversations(
    draw: st.DrawFn, *, max_turns: int = 10, faults: tuple[str, ...] = FAULTS
) -> list[Message]:
    """Conversations that are not well formed (see :func:`broken_conversations`)."""
    return draw(broken_conversations(max_turns=max_turns, faults=faults)).messages


@functools.cache
def conversations(*, max_turns: int = 10) -> st.SearchStrategy[list[Message]]:
    """Well-formed or malformed conversations."""
    return well_formed_conversations(max_turns=max_turns) | malformed_conversations(
        max_turns=max_turns
    )


# -- counters and strategies ----------------------------------------------------------


@functools.cache
def counters() -> st.SearchStrategy[TokenCounter]:
    """Heuristic counters: integral and non-integral ratios, varied fixed costs."""
    ratios = st.one_of(
        st.sampled_from((4.0, 4, 1, 2, 3, 0.5, 1.5, 2.5, 3.7, 4.2, 1 / 3)),
        st.floats(0.1, 16.0),
    )
    return st.builds(
        TokenCounter,
        chars_per_token=ratios,
        image_tokens=st.sampled_from((300, 0, 1)) | st.integers(0, 2000),
        document_tokens=st.sampled_from((500, 0)) | st.integers(0, 3000),
        message_overhead=st.sampled_from((4, 0)) | st.integers(0, 10),
        image_pricing=st.sampled_from(("fixed", "fixed", "openai", "anthropic")),
        document_pricing=st.sampled_from(("fixed", "fixed", "content")),
        tokens_per_page=st.integers(0, 2000),
    )


@functools.cache
def max_tokens() -> st.SearchStrategy[int]:
    """Budgets for strategies (leaf strategies ignore theirs when called directly)."""
    return st.just(0) | st.integers(0, 10_000)


@st.composite
def budgets(draw: st.DrawFn, estimate: int) -> int:
    """Budgets around a history costing ``estimate``: 0, below it, exactly it, above it."""
    kind = draw(st.sampled_from(("zero", "below", "exact", "above")))
    if kind == "zero":
        return 0
    if kind == "below":
        return int(estimate * draw(_FRACTIONS))
    if kind == "exact":
        return estimate
    return estimate + draw(_MARGINS)


_FRACTIONS = st.floats(0.0, 1.0)
_MARGINS = st.integers(0, 1000)


PLACEHOLDERS = ("[tool result cleared]", "", "x", "[已清除 🧹]", "cleared " * 30)
"""Placeholders for clearing: the default, empty, tiny, non-ASCII and long ones."""


def _with_counter(
    factories: st.SearchStrategy[Callable[[TokenCounter], S]], counter: TokenCounter
) -> st.SearchStrategy[S]:
    return factories.map(lambda factory: factory(counter))


def _window(
    window_size: int, max_tokens: int, start_on_user: bool = False
) -> Callable[[TokenCounter], SlidingWindowStrategy]:
    return lambda counter: SlidingWindowStrategy(
        window_size, max_tokens, counter=counter, start_on_user=start_on_user
    )


@attrs.frozen
class _ClearingOptions:
    keep_recent_n: int
    max_tokens: int
    placeholder: str
    exclude_tools: frozenset[str]
    clear_tool_inputs: bool
    min_reclaim_tokens: int

    def __call__(self, counter: TokenCounter) -> ToolResultClearingStrategy:
        return ToolResultClearingStrategy(counter=counter, **attrs.asdict(self, recurse=False))


def _strip(max_tokens: int) -> Callable[[TokenCounter], StripToolCallsStrategy]:
    return lambda counter: StripToolCallsStrategy(max_tokens, counter=counter)


def _composite(
    children: list[Callable[[TokenCounter], ContextStrategy]], max_tokens: int
) -> Callable[[TokenCounter], ContextStrategy]:
    return lambda counter: CompositeStrategy(
        [child(counter) for child in children], max_tokens, counter=counter
    )


@functools.cache
def _window_factories() -> st.SearchStrategy[Callable[[TokenCounter], SlidingWindowStrategy]]:
    return st.builds(_window, st.integers(0, 15), max_tokens(), st.booleans())


@functools.cache
def _clearing_factories() -> st.SearchStrategy[_ClearingOptions]:
    return st.builds(
        _ClearingOptions,
        keep_recent_n=st.integers(0, 8),
        max_tokens=max_tokens(),
        placeholder=st.sampled_from(PLACEHOLDERS) | texts(max_size=10),
        exclude_tools=st.frozensets(st.sampled_from(TOOL_NAMES), max_size=3),
        clear_tool_inputs=st.booleans(),
        min_reclaim_tokens=st.just(0) | st.integers(0, 3000),
    )


@functools.cache
def _strip_factories() -> st.SearchStrategy[Callable[[TokenCounter], StripToolCallsStrategy]]:
    return st.builds(_strip, max_tokens())


@functools.cache
def _leaf_factories() -> st.SearchStrategy[Callable[[TokenCounter], ContextStrategy]]:
    return st.one_of(_window_factories(), _clearing_factories(), _strip_factories())


@functools.cache
def _stack_factories() -> st.SearchStrategy[Callable[[TokenCounter], ContextStrategy]]:
    def extend(
        children: st.SearchStrategy[Callable[[TokenCounter], ContextStrategy]],
    ) -> st.SearchStrategy[Callable[[TokenCounter], ContextStrategy]]:
        return st.builds(_composite, st.lists(children, min_size=1, max_size=4), max_tokens())

    return st.recursive(_leaf_factories(), extend, max_leaves=6)


def windows(counter: TokenCounter) -> st.SearchStrategy[SlidingWindowStrategy]:
    """Sliding windows of 0-15 messages using ``counter``."""
    return _with_counter(_window_factories(), counter)


def clearings(counter: TokenCounter) -> st.SearchStrategy[ToolResultClearingStrategy]:
    """Tool-result clearing with random options using ``counter``."""
    return _with_counter(_clearing_factories(), counter)


def strips(counter: TokenCounter) -> st.SearchStrategy[StripToolCallsStrategy]:
    """Tool-call stripping using ``counter``."""
    return _with_counter(_strip_factories(), counter)


def leaf_strategies(counter: TokenCounter) -> st.SearchStrategy[ContextStrategy]:
    """One built-in non-composite strategy using ``counter``."""
    return _with_counter(_leaf_factories(), counter)


def strategy_stacks(counter: TokenCounter) -> st.SearchStrategy[ContextStrategy]:
    """A leaf strategy or nested composites of them (random budgets), all using ``counter``.

    Every strategy shares the counter: a composite measures with its own counter, and
    "never worse" only holds when its children price messages the same way.
    """
    return _with_counter(_stack_factories(), counter)


# -- test cases -----------------------------------------------------------------------


@attrs.frozen
class Case(Generic[S]):
    """A strategy under test, the conversation it is given, and the counter it uses."""

    strategy: S
    """The strategy, its ``max_tokens`` drawn around the conversation's estimate."""
    messages: Sequence[Message]
    """The conversation, as a list or a tuple."""
    counter: TokenCounter
    """The counter every strategy of the case uses."""

    @property
    def estimate(self) -> int:
        """The conversation's estimated cost."""
        return self.counter.estimate_messages(self.messages)


@functools.cache
@st.composite
def cases(
    draw: st.DrawFn,
    strategies: Callable[[TokenCounter], st.SearchStrategy[S]],
    conversations: st.SearchStrategy[list[Message]] | None = None,
) -> Case[S]:
    """A counter, a conversation, and a strategy built by ``strategies(counter)`` whose
    budget is 0, below, at or above the conversation's estimate.

    Args:
        strategies: builds the strategy strategy from the counter.
        conversations: the conversations (default: well-formed ones).
    """
    counter = draw(counters())
    messages: Sequence[Message] = draw(
        well_formed_conversations() if conversations is None else conversations
    )
    budget = draw(budgets(counter.estimate_messages(messages)))
    strategy = attrs.evolve(draw(strategies(counter)), max_tokens=budget)  # type: ignore[misc]
    if draw(st.booleans()):
        messages = tuple(messages)
    return Case(strategy=strategy, messages=messages, counter=counter)


# -- start on a user message ----------------------------------------------------------------


@functools.cache
def _user_first_leaves() -> st.SearchStrategy[Callable[[TokenCounter], ContextStrategy]]:
    windows = st.builds(_window, st.integers(0, 15), max_tokens(), st.just(True))
    return st.one_of(windows, _clearing_factories(), _strip_factories())


def user_first_stacks(counter: TokenCounter) -> st.SearchStrategy[ContextStrategy]:
    """Leaf strategies and nested composites of them whose windows all have
    ``start_on_user=True`` (the others keep a first user message by construction)."""

    def extend(
        children: st.SearchStrategy[Callable[[TokenCounter], ContextStrategy]],
    ) -> st.SearchStrategy[Callable[[TokenCounter], ContextStrategy]]:
        return st.builds(_composite, st.lists(children, min_size=1, max_size=4), max_tokens())

    return _with_counter(st.recursive(_user_first_leaves(), extend, max_leaves=5), counter)


def _mixed(
    children: list[Callable[[TokenCounter], ContextStrategy]],
    child_counters: list[TokenCounter],
    max_tokens: int,
) -> Callable[[TokenCounter], ContextStrategy]:
    return lambda counter: CompositeStrategy(
        [child(c) for child, c in zip(children, child_counters, strict=False)],
        max_tokens,
        counter=counter,
    )


def mixed_counter_composites(counter: TokenCounter) -> st.SearchStrategy[ContextStrategy]:
    """Composites measuring with ``counter`` whose children price with other counters."""
    return _with_counter(
        st.builds(
            _mixed,
            st.lists(_leaf_factories(), min_size=1, max_size=4),
            st.lists(counters(), min_size=4, max_size=4),
            max_tokens(),
        ),
        counter,
    )


# -- the collection strategies (superseded calls, images, fetches, reads, repeats, large) -


COLLECTION_TOOLS = (
    "create_python_script",
    "Read",
    "Write",
    "WebFetch",
    "bash",
    "str_replace_editor",
)
"""Tool names the collection strategies recognise by default or in the test keys."""

_COLLECTION_CALLS: tuple[tuple[str, dict[str, JSON]], ...] = (
    ("create_python_script", {"path": "a.py", "code": "print(1)"}),
    ("create_python_script", {"path": "a.py", "code": "print(2)"}),
    ("Write", {"file_path": "a.py", "content": "x = 2"}),
    ("Read", {"file_path": "a.py"}),
    ("Read", {"file_path": "./src/../a.py"}),
    ("WebFetch", {"url": "https://example.com/a"}),
    ("WebFetch", {"url": "HTTPS://Example.com/a#top"}),
    ("WebFetch", {"urls": ["https://example.com/b", "see http://x.org/c."]}),
    ("bash", {"command": "ls -la"}),
    ("bash", {"command": "ls -la"}),
    ("str_replace_editor", {"command": "view", "path": "a.py"}),
    ("str_replace_editor", {"command": "create", "path": "a.py", "file_text": "x = 1"}),
)
"""Calls that repeat, supersede and go stale: one path written twice, a URL in two
spellings, a file read and written, one command run again."""

_LOG = "".join(f"line {i}: ok\n" for i in range(120))
_COLLECTION_OUTPUTS: tuple[str, ...] = (
    "ok",
    "File written",
    "done",
    _LOG,
    _LOG + "line 120: done\n",
    "src/module_a.py defines parse_config_v2\n" * 40,
    "x" * 3000,
)


@functools.cache
def _collection_contents() -> st.SearchStrategy[tuple[Text | Image, ...]]:
    common = st.sampled_from(_COLLECTION_OUTPUTS[2:5]).map(lambda text: (Text(text=text),))
    fixed = st.sampled_from(_COLLECTION_OUTPUTS).map(lambda text: (Text(text=text),))
    mixed = st.lists(
        st.builds(Text, text=st.sampled_from(_COLLECTION_OUTPUTS)) | images(), max_size=3
    )
    return st.one_of(common, common, fixed, mixed.map(tuple), tool_result_contents().map(_as_items))


def _as_items(content: str | list[Text | Image]) -> tuple[Text | Image, ...]:
    return (Text(text=content),) if isinstance(content, str) else tuple(content)


def _repetitive(draw: st.DrawFn, message: Message) -> Message:
    blocks: list[ContentBlock] = []
    for original in message.content:
        block = original
        if isinstance(block, ToolUse) and draw(st.integers(0, 5)) > 0:
            name, arguments = draw(st.sampled_from(_COLLECTION_CALLS))
            block = attrs.evolve(block, name=name, input=arguments)
        elif isinstance(block, ToolResult) and draw(st.integers(0, 5)) > 0:
            content = draw(_collection_contents())
            block = attrs.evolve(block, content=content, is_error=draw(st.integers(0, 5)) == 0)
        blocks.append(block)
    if message.role is Role.USER and not message.is_compaction and draw(st.integers(0, 3)) == 0:
        blocks.append(draw(images()))
    if message.role is Role.ASSISTANT and draw(st.integers(0, 5)) == 0:
        blocks.insert(0, Text(text="I will look at src/module_a.py and line 120: done"))
    return Message(role=message.role, content=tuple(blocks))


@functools.cache
@st.composite
def repetitive_conversations(draw: st.DrawFn, *, max_turns: int = 16) -> list[Message]:
    """Well-formed conversations whose calls repeat: tool names, arguments and outputs are
    drawn from small pools (one path written twice, a URL fetched in two spellings, a file
    read and written, identical and near-identical logs, large outputs, images), so the
    collection strategies find work. Well formed, since only names, inputs and contents
    change."""
    messages = draw(well_formed_conversations(max_turns=max_turns))
    return [_repetitive(draw, message) for message in messages]


def _superseded_key(arguments: Mapping[str, JSON]) -> object:
    return arguments.get("path") if arguments.get("command") == "create" else None


COLLECTION_KEYS: dict[str, str | Callable[[Mapping[str, JSON]], object]] = {
    "create_python_script": "path",
    "Write": "file_path",
    "bash": "command",
    "str_replace_editor": _superseded_key,
}
"""Keys for :class:`SupersededToolCallsStrategy` in the tests: arguments and a function."""


@functools.cache
def _collection_factories() -> st.SearchStrategy[Callable[[TokenCounter], ContextStrategy]]:
    budgets = max_tokens()
    superseded = st.builds(
        lambda m: lambda c: SupersededToolCallsStrategy(COLLECTION_KEYS, max_tokens=m, counter=c),
        budgets,
    )
    stripped = st.builds(
        lambda m: lambda c: StripProcessedImagesStrategy(max_tokens=m, counter=c), budgets
    )
    fetches = st.builds(
        lambda m, tools, placeholder: (
            lambda c: DedupeFetchesStrategy(
                max_tokens=m, tools=tools, placeholder=placeholder, counter=c
            )
        ),
        budgets,
        st.none() | st.frozensets(st.sampled_from(COLLECTION_TOOLS), max_size=3),
        st.sampled_from(PLACEHOLDERS),
    )
    reads = st.builds(
        lambda m, age, placeholder: (
            lambda c: StaleFileReadsStrategy(
                max_tokens=m, max_age=age, placeholder=placeholder, counter=c
            )
        ),
        budgets,
        st.none() | st.integers(0, 6),
        st.sampled_from(PLACEHOLDERS),
    )
    repeats = st.builds(
        lambda m, similarity, minimum: (
            lambda c: CollapseRepeatedCallsStrategy(
                max_tokens=m, similarity=similarity, min_repeats=minimum, counter=c
            )
        ),
        budgets,
        st.sampled_from((1.0, 0.9, 0.5)),
        st.integers(0, 4),
    )
    large = st.builds(
        lambda m, limit, keep, turns: (
            lambda c: TruncateLargeResultsStrategy(
                max_tokens=m,
                max_result_tokens=limit,
                keep_recent=keep,
                recent_turns=turns,
                counter=c,
            )
        ),
        budgets,
        st.sampled_from((1, 40, 200, 2000)),
        st.integers(0, 3),
        st.integers(0, 3),
    )
    return st.one_of(superseded, stripped, fetches, reads, repeats, large)


def collection_strategies(counter: TokenCounter) -> st.SearchStrategy[ContextStrategy]:
    """One of the collection strategies, with random options, using ``counter``."""
    return _with_counter(_collection_factories(), counter)


@functools.cache
def _mixed_stack_factories() -> st.SearchStrategy[Callable[[TokenCounter], ContextStrategy]]:
    def extend(
        children: st.SearchStrategy[Callable[[TokenCounter], ContextStrategy]],
    ) -> st.SearchStrategy[Callable[[TokenCounter], ContextStrategy]]:
        return st.builds(_composite, st.lists(children, min_size=1, max_size=4), max_tokens())

    leaves = st.one_of(_collection_factories(), _collection_factories(), _leaf_factories())
    return st.recursive(leaves, extend, max_leaves=6)


def collection_stacks(counter: TokenCounter) -> st.SearchStrategy[ContextStrategy]:
    """Composites mixing the collection strategies with the other built-in leaves (random
    budgets), all using ``counter``."""
    return _with_counter(_mixed_stack_factories(), counter)


@functools.cache
def _user_first_mixed_factories() -> st.SearchStrategy[Callable[[TokenCounter], ContextStrategy]]:
    def extend(
        children: st.SearchStrategy[Callable[[TokenCounter], ContextStrategy]],
    ) -> st.SearchStrategy[Callable[[TokenCounter], ContextStrategy]]:
        return st.builds(_composite, st.lists(children, min_size=1, max_size=4), max_tokens())

    leaves = st.one_of(_collection_factories(), _user_first_leaves())
    return st.recursive(leaves, extend, max_leaves=6)


def collection_user_first_stacks(counter: TokenCounter) -> st.SearchStrategy[ContextStrategy]:
    """Composites mixing the collection strategies with leaves that keep a first user
    message (windows with ``start_on_user=True``), all using ``counter``."""
    return _with_counter(_user_first_mixed_factories(), counter)


# -- hostile values: what a hook or a provider must not hand back to the loop ------------

HOOKS = (
    "before_agent",
    "before_model",
    "wrap_model_call",
    "after_model",
    "wrap_tool_call",
    "after_agent",
)
"""The six middleware hooks, in the order a run with one tool call reaches them."""


class _Opaque:
    """An object of no kind the library knows, with a ``__repr__`` that raises."""

    def __repr__(self) -> str:
        msg = "no repr"
        raise RuntimeError(msg)


@functools.cache
def _junk() -> st.SearchStrategy[object]:
    """Values of no kind a hook returns: scalars, text, bytes, sets, wire dicts, blocks."""
    return st.one_of(
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=True),
        st.text(max_size=20),
        st.binary(max_size=8),
        st.frozensets(st.integers(), max_size=3),
        st.fixed_dictionaries({"role": st.just("user"), "content": st.text(max_size=10)}),
        st.builds(Text, text=texts()),
        st.builds(_Opaque),
    )


def _not_all_messages(items: list[object]) -> bool:
    return any(not isinstance(item, Message) for item in items)


@functools.cache
def _junk_lists() -> st.SearchStrategy[list[object]]:
    """Lists holding at least one thing that is not a message."""
    return st.lists(st.one_of(_junk(), user_messages()), min_size=1, max_size=4).filter(
        _not_all_messages
    )


def _tool_message() -> Message:
    return Message.tool_result("call_x", "a result passed off as something else")


@functools.cache
def hostile_hook_values(hook: str) -> st.SearchStrategy[object]:
    """Values ``hook`` must not return (``None`` is one only for the wrappers, whose
    result is the reply or the tool's result itself): junk, lists holding junk, a bare
    message where a list or a response is expected, a tool message where a reply is."""
    common = st.one_of(_junk(), st.builds(_tool_message), assistant_messages())
    if hook in ("before_agent", "after_agent"):
        return st.one_of(_junk(), _junk_lists(), user_messages(), assistant_messages())
    if hook in ("before_model", "after_model"):
        return st.one_of(common, _junk_lists())
    if hook == "wrap_model_call":
        return st.one_of(common, st.none(), _junk_lists())
    if hook == "wrap_tool_call":
        return st.one_of(common, st.none(), _junk_lists())
    msg = f"no such hook: {hook}"
    raise ValueError(msg)


@functools.cache
def hostile_replies() -> st.SearchStrategy[object]:
    """What a provider's ``complete`` must not return: anything but a
    ``CompletionResponse`` (a bare message, a str, ``None``, junk)."""
    return st.one_of(st.none(), _junk(), assistant_messages(), st.builds(_tool_message))


# -- hostile files and arguments (the command line must refuse them cleanly) ------------

HOSTILE_STRINGS = (
    "\ud800",
    "lone \udfff surrogate",
    "[/]",
    "[bold]x",
    "$\\frac$",
    "\x1b[31mred",
    "\u202eevil",
    "a\x00b",
    "",
    " ",
    "🙂" * 50,
)
"""Strings that break naive code: lone surrogates (valid JSON escapes), rich markup,
matplotlib math, terminal escapes, NUL, empty."""

_HOSTILE_KEYS = (
    "role", "content", "type", "text", "id", "name", "input", "tool_calls", "tool_call_id",
    "tool_use_id", "function", "arguments", "messages", "system", "format", "version",
    "source", "data", "media_type", "url", "image_url", "is_error", "cache_control",
    "uuid", "parentUuid", "isSidechain", "message", "payload", "call_id", "output",
    "kind", "parts", "part_kind", "tool_name", "args", "summary", "tools",
)  # fmt: skip
_HOSTILE_TYPES = (
    "user", "assistant", "system", "tool", "developer", "text", "image", "tool_use",
    "tool_result", "thinking", "redacted_thinking", "function", "image_url", "file",
    "human", "ai", "request", "response", "message", "function_call",
    "function_call_output", "reasoning", "response_item", "session_meta", "user-prompt",
    "tool-call", "tool-return", "summary", "neuron-context", "openai-chat",
    "anthropic-messages", "compaction", "junk",
)  # fmt: skip


@functools.cache
def _hostile_leaves() -> st.SearchStrategy[object]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from(HOSTILE_STRINGS),
        st.sampled_from(_HOSTILE_TYPES),
        st.text(max_size=12),
    )


@functools.cache
def hostile_json() -> st.SearchStrategy[object]:
    """JSON-shaped values built from the keys and type names of every transcript format,
    with hostile leaves: what a corrupt, foreign or malicious transcript holds."""
    return st.recursive(
        _hostile_leaves(),
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.sampled_from(_HOSTILE_KEYS), children, max_size=5),
        ),
        max_leaves=25,
    )


@st.composite
def hostile_messages(draw: st.DrawFn) -> dict[str, object]:
    """A message of any format, almost right: a real role and content, a wrong field."""
    message: dict[str, object] = {
        "role": draw(st.sampled_from(("user", "assistant", "system", "tool", "robot"))),
        "content": draw(st.one_of(st.sampled_from(HOSTILE_STRINGS), hostile_json())),
    }
    extra = draw(st.dictionaries(st.sampled_from(_HOSTILE_KEYS), hostile_json(), max_size=3))
    return {**message, **extra}


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


@st.composite
def hostile_files(draw: st.DrawFn) -> bytes:
    """The bytes of a hostile transcript file: JSON or JSONL of almost-messages and of
    anything, lone surrogates, nesting deeper than any parser, 5,000-digit integers,
    truncation, invalid UTF-8, a byte-order mark, binary data."""
    documents = st.one_of(
        hostile_json(),
        st.lists(hostile_messages(), max_size=4),
        st.builds(dict, messages=st.lists(hostile_messages(), max_size=4)),
        st.fixed_dictionaries(
            {"system": hostile_json(), "messages": st.lists(hostile_messages(), max_size=3)}
        ),
    )
    document = draw(documents)
    layout = draw(st.sampled_from(("json", "ascii", "lines", "truncated", "bytes", "special")))
    if layout == "special":
        return draw(
            st.sampled_from(
                (
                    _deep(100_000).encode(),
                    b'{"messages": [{"role": "user", "content": "x", "n": ' + b"9" * 5000 + b"}]}",
                    b'[{"role": "user", "content": "\\ud800"}]',
                    b"\xef\xbb\xbf[]",
                    b"\xff\xfe\x00garbage",
                    b"NaN",
                    b"",
                    ('{"messages": [{"role": "user", "content": ' + _deep(500) + "}]}").encode(),
                )
            )
        )
    if layout == "bytes":
        return draw(st.binary(max_size=64))
    if layout == "lines" and isinstance(document, list):
        text = "\n".join(json.dumps(item) for item in document) + "\n"
    else:
        text = json.dumps(document, ensure_ascii=layout == "ascii")
    if layout == "truncated":
        text = text[: draw(st.integers(0, max(0, len(text) - 1)))]
    return text.encode("utf-8", "surrogatepass")


_HOSTILE_SPECS = (
    "default", "window:2", "clear-tools:keep=1,window:3", "window:[/]",
    "summarize:keep=" + "9" * 40, "x" * 5000, ",", "default:target=nan",
)  # fmt: skip


@functools.cache
def hostile_arguments() -> st.SearchStrategy[list[str]]:
    """Options a user (or a script gone wrong) may pass: budgets out of range, unknown
    steps and providers, odd tokenizer names."""
    budget = st.one_of(
        st.tuples(
            st.just("--max-tokens"),
            st.sampled_from(("0", "-5", "1", "100", "9" * 32, "9" * 5000, "1e3", "nan", "")),
        ),
        st.tuples(
            st.just("--fraction"),
            st.sampled_from(("0", "0.25", "1", "2", "nan", "inf", "-1", "1e-300", "x")),
        ),
    )
    extras = st.lists(
        st.one_of(
            st.tuples(
                st.just("--strategy"),
                st.one_of(st.sampled_from(_HOSTILE_SPECS), st.text(max_size=20)),
            ),
            st.tuples(
                st.just("--format"),
                st.sampled_from(("openai", "anthropic", "neuron-context", "nope")),
            ),
            st.tuples(st.just("--tokenizer"), st.sampled_from(("nope", "/dev/null", "\ud800"))),
            st.tuples(st.just("--provider"), st.sampled_from(("extractive", "x:", "openai"))),
            st.tuples(st.sampled_from(("--repair", "--json", "-v"))),
        ),
        max_size=3,
    )
    unknown = st.lists(st.sampled_from(("--nope", "-x", "--max-tokens")), max_size=1)
    return st.builds(
        lambda b, e, u: [*b, *(word for option in e for word in option), *u],
        budget,
        extras,
        unknown,
    )


COUNT_REFUSES = ("--max-tokens", "--fraction", "--strategy", "--provider")
"""The options of :func:`hostile_arguments` that ``count`` does not take (with a value)."""


def _digits(value: int, separator: str) -> str:
    """``value`` written as a refusal may write it (``130,542``, ``130_542``)."""
    text = str(value)
    if not separator:
        return text
    groups = [text[max(0, end - 3) : end] for end in range(len(text), 0, -3)][::-1]
    return separator.join(groups)


@functools.cache
def refusal_numbers() -> st.SearchStrategy[str]:
    """Numbers as a provider's refusal writes them: 0 to thousands of digits (beyond
    Python's int-digits limit for ``int()``), with or without separators."""
    small = st.integers(min_value=0, max_value=10**12)
    long = st.integers(min_value=1, max_value=9).map(lambda d: str(d) * 5_000)
    written = st.builds(_digits, small, st.sampled_from(["", ",", "_"]))
    return st.one_of(written, long, st.just("0" * 4_400 + "7"))


REFUSAL_TEMPLATES = (
    "prompt is too long: {0} tokens > {1} maximum",
    "input length and `max_tokens` exceed context limit: {0} + {1} > {0}",
    "This model's maximum context length is {1} tokens. However, your messages resulted "
    "in {0} tokens. Please reduce the length of the messages.",
    "This model's maximum context length is {1} tokens. However, you requested {0} tokens "
    "({0} in the messages, {1} in the completion).",
    "400 The input token count ({0}) exceeds the maximum number of tokens allowed ({1}).",
)
"""The refusals that state numbers, one per shape: ``{0}`` the count, ``{1}`` the limit."""


@st.composite
def refusal_texts(draw: st.DrawFn) -> str:
    """A provider's refusal of a request's size, with numbers of any length."""
    template = draw(st.sampled_from(REFUSAL_TEMPLATES))
    return template.format(draw(refusal_numbers()), draw(refusal_numbers()))
