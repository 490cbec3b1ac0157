"""An index's lines: the :class:`Entry` each stands for, written and read back.

An index (:mod:`~neuron_context._stores.index`) is a compaction message that starts with
:data:`INDEX_HEADING` and lists one entry a line, oldest first: what the entry holds, its
token count, a few facts, and its key (``- <what it holds> (<N> tokens): <facts> —
recall: <key>``), or, for the oldest pages, their words and keys on one line of page
keys (:mod:`~neuron_context._stores.paged`). A later compaction that removes an index, or
a message that quotes a reference (a cleared result, a cut's marker), carries those
lines into its own index as they are (:func:`carried`): their keys are in the store
already. What a compaction removed becomes entries in
:mod:`~neuron_context._stores.entries`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import attrs

from .._messages.content import Compaction, Text, ToolResult
from .._messages.message import Message
from .offload import references_in
from .paged import CARRIED_PAGE, is_pages_line, pages_line, pages_of, words_of
from .serialized import KEY_LENGTH, Content

__all__ = ["INDEX_HEADING", "Entry", "carried", "index_lines", "is_index", "is_reference_only"]

INDEX_HEADING = "[original messages, one entry per line, oldest first — recall a key to read it:"
"""The first line of an index."""

_LINE = re.compile(rf"^- (.+) — recall: ([0-9a-f]{{{KEY_LENGTH}}})$", re.MULTILINE)
_REFERENCE = re.compile(rf"\[(?:([^\[\]\n]*?) — )?recall: ([0-9a-f]{{{KEY_LENGTH}}})\]")
_EARLIER = re.compile(r"^earlier: ([\d,]+) entries, ([\d,]+) tokens")
_TOKENS = re.compile(r"([\d,]+) tokens\b")
_WITH_FACTS = re.compile(r"^(.*?\([\d,]+ tokens\)): (.+)$")
"""A line's description and its facts, split at the first ``(N tokens): `` (a fact may
quote that form: a summary, a log of an earlier agent)."""


@attrs.frozen
class Entry:
    """One index line: what the entry holds, its key, and (for an entry this compaction
    writes) its content; a carried line has none (it is in the store already)."""

    what: str
    key: str
    content: Content | None = None
    entries: int = 1
    """How many entries it stands for (more for an ``earlier:`` roll-up)."""
    tokens: int = 0
    """What its content costs (0 when not known: a carried reference)."""
    facts: str = ""
    """A few facts its content holds, each with its label (``reservation_id=MFRB94,
    price=1286``), shown after what it holds where the index has room for them."""
    holds: tuple[Entry, ...] = ()
    """The new entries a roll-up beyond a page lists in its directory: put with it."""
    paged: bool = False
    """Whether its line is its key alone, among the page keys
    (:mod:`~neuron_context._stores.paged`): an entry of at most a page."""
    quoted: bool = False
    """Whether it is a key a removed text merely quotes (``recall: <key>`` outside an
    index line or a reference: a cut's marker, a log of an earlier run): shown only where
    the store holds it."""
    words: str = attrs.field(
        default=attrs.Factory(lambda self: words_of(self.what), takes_self=True)
    )
    """A few words saying what it holds, shown before its key among the page keys
    (``read_file app.py``, ``get_order #W100``; by default :func:`words_of` its
    :attr:`what`; empty: its key alone)."""

    def line(self) -> str:
        """The entry's index line (a line of page keys with its words and key alone,
        ``paged``)."""
        if self.paged:
            return pages_line([(self.words, self.key)])
        facts = f": {self.facts}" if self.facts else ""
        return f"- {self.what}{facts} — recall: {self.key}"

    @property
    def rolled(self) -> bool:
        """Whether it holds earlier entries rolled up (``earlier: N entries, …``)."""
        return _EARLIER.match(self.what) is not None


def index_lines(entries: Sequence[Entry]) -> list[str]:
    """The lines of ``entries`` in order, each run of paged entries on one line."""
    lines: list[str] = []
    run: list[tuple[str, str]] = []
    for entry in entries:
        if entry.paged:
            run.append((entry.words, entry.key))
            continue
        if run:
            lines.append(pages_line(run))
            run = []
        lines.append(entry.line())
    if run:
        lines.append(pages_line(run))
    return lines


def is_index(message: Message) -> bool:
    """Whether ``message`` is an index (a compaction message starting with its heading)."""
    return (
        message.is_compaction
        and len(message.content) == 1
        and isinstance(block := message.content[0], Compaction)
        and block.content.startswith(INDEX_HEADING)
    )


def carried(message: Message) -> Iterator[Entry]:
    """The references ``message`` holds, as lines: the lines of an index (alone, or after
    a summary), and each ``[… — recall: <key>]`` in its texts."""
    for block in message.content:
        if isinstance(block, Text | ToolResult):
            text = block.text
        elif isinstance(block, Compaction):
            text = block.content
        else:
            continue
        shown = set()
        for line in text.split("\n"):
            if is_pages_line(line):
                for words, key in pages_of(line):
                    shown.add(key)
                    yield Entry(words or CARRIED_PAGE, key, paged=True, words=words)
                continue
            if (found := _LINE.fullmatch(line)) is None:
                continue
            what, key = found.groups()
            earlier = _EARLIER.match(what)
            count = int(earlier.group(1).replace(",", "")) if earlier else 1
            facts = ""
            if earlier is None and (split := _WITH_FACTS.match(what)) is not None:
                what, facts = split.groups()
            yield Entry(what, key, entries=count, tokens=_tokens_in(what), facts=facts)
        for found in _REFERENCE.finditer(text):
            what = (found.group(1) or "offloaded content").strip()
            shown.add(found.group(2))
            yield Entry(what, found.group(2), tokens=_tokens_in(what))
        for key in references_in(text):  # any other reference (a cut's marker)
            if key not in shown:
                shown.add(key)
                yield Entry("offloaded content", key, quoted=True)


def _tokens_in(what: str) -> int:
    """The token count a line names (its last ``N tokens``), 0 when none."""
    counts = _TOKENS.findall(what)
    return int(counts[-1].replace(",", "")) if counts else 0


def is_reference_only(result: ToolResult) -> bool:
    """Whether ``result`` holds a reference alone (``[… — recall: <key>]``): carried as a
    line, not stored again."""
    return (
        len(result.content) == 1
        and isinstance(result.content[0], Text)
        and _REFERENCE.fullmatch(result.content[0].text.strip()) is not None
    )
