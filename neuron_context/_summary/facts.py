"""The facts of a tool result, as a compact index: what the agent may need to quote again.

An agent acts on what its tools told it: it books the flight number a search returned,
adds the prices it looked up, calls the function it read, quotes the reservation id. A
summary that indexes only paths and errors loses all of that, and a truncation marker
that says only how much it cut leaves the model guessing what was there. So both index
the *facts* of what they replace, newest first, in the order a careful reader would note
them:

1. **Definitions** in code: the functions, classes, modules, constants a listing defines,
   with their line when the listing is numbered (``make_pattern_type:282``); a name
   defined again (a function's further clauses) is noted once, by its first line; a
   variable bound on an indented line with no modifier (``let``, ``const``, ``var``,
   ``val`` inside a function) is taken for a local, not a definition (``static let`` or
   ``private val`` is a member, and is one).
2. **Key/value pairs**: every scalar of a JSON result under its key
   (``flight_number=HAT170, price=1286``), the objects of a list set apart by ``;``, a
   list of values under its key once (``reservations=[MFRB94, PUNERT]``);
   in text, ``key: value`` and ``key=value`` lines whose value is salient (a number, an
   id, a date, a name), so a number is noted with what it is.
3. **Other salient tokens**, in order of appearance: identifiers with letters and digits
   (``4WQ150``, ``credit_card_9879898``, commit hashes; not data: content digests of 48
   hex digits or more, a lockfile's checksums, nor base64), dates, versions, code
   identifiers (``snake_case``, ``camelCase``, ``PascalCase``, ``SCREAMING_CASE``,
   dotted module names, and the code names a call through an object uses:
   ``getElementById`` of ``document.getElementById``).

Paths and URLs are left to the artifact index, which has its own section. The lines a
cut wrote (a truncation marker and the names it lists) are not read: its names stand
without their lines, a list that says nothing an agent can act on. Each fact is
noted once (its first occurrence), and everything is bounded: :func:`facts` stops at
``limit`` facts, reads a line of at most :data:`_LINE` characters, and every scan is
linear (runs of word characters found by one character class, each checked with an
anchored pattern bounded by its length; see :mod:`neuron_context._summary.scan`). What a
line or a token is (a definition, a key/value pair, a salient token) is told by
:mod:`neuron_context._summary.facts_text`; this module notes and orders them, and
:mod:`neuron_context._summary.fact_chunks` holds the noted :class:`Fact` and writes the
facts in chunks, each as a line.
"""

from __future__ import annotations

import itertools
import json
import re

import attrs

from .fact_chunks import Fact, render
from .facts_json import VALUE, Braced, Table, cut_lists, leaves
from .facts_text import (
    CUT,
    FIXED,
    HEADER,
    ROW,
    SEGMENT,
    calls,
    definition,
    is_code_name,
    is_salient,
    key_value,
    lines_of,
    segment,
    table_lines,
)
from .scan import is_data

__all__ = ["condense", "facts"]

_LINE = 2_000
"""The longest line read for definitions and key/value pairs (a minified line is not)."""
_JSON = 2_000_000
"""The largest text parsed as JSON (a bigger one is read as text)."""
_CONDENSED = 100_000
"""The most facts of a condensed JSON text (one with more is not condensed)."""
_WORD_MAX = 100
"""The longest run of word characters considered (longer ones are data, not names)."""

_TABLE_LINE = 2 * SEGMENT
"""The longest line of a text read as a table's header or row (a longer one is read
for its names, as any line is)."""

_RUN = re.compile(r"[\w$.@#+-]+")
_GUTTER = re.compile(r"\s*(\d{1,7})(?:→|\t|:(?=\S)| {1,2}(?=\S)|\| ?)")
"""A numbered listing's line number: ``   47→`` (Claude Code), ``    47\\t`` (``cat -n``),
``47:`` (SWE-agent), ``47| `` (the space after the bar is the gutter's, not the code's)."""
_JSON_PAIR = re.compile(
    r'"([A-Za-z_][\w .-]{0,39})"\s{0,4}:\s{0,4}'
    r'("(?:[^"\\\n]|\\.){1,80}"|-?\d[\d.eE+-]{0,30}|true|false)'
)
"""A ``"key": value`` pair of JSON that is not whole (the middle of a truncated result)."""
_TRIM = ".,;:!?'\"`()[]{}<>"
_PAIRS_READ = 8
"""How many pairs of JSON in a text are read per fact noted at most (repeats are few)."""


def condense(text: str) -> str:
    """A JSON text as the index of its values (every scalar under its key, collections
    of objects as tables), one group a line; ``""`` when ``text`` is not a JSON object
    or array. What a truncation keeps of a JSON result before it cuts anything."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "[") or len(stripped) > _JSON:
        return ""
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return ""
    if not isinstance(value, dict | list):
        return ""
    collector = _Collector(_CONDENSED)
    collector.json(value)
    return render(collector.found, lines=True) if not collector.full else ""


def facts(text: str, *, limit: int = 400) -> list[Fact]:
    """The facts of ``text`` (a tool result), most telling first, at most ``limit``."""
    collector = _Collector(limit)
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and len(stripped) <= _JSON:
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):
            pass
        else:
            if isinstance(value, dict | list):
                collector.json(value)
                return collector.found
    collector.text(text)
    return collector.found


@attrs.define
class _Collector:
    limit: int
    found: list[Fact] = attrs.Factory(list)
    seen: set[str] = attrs.Factory(set)

    @property
    def full(self) -> bool:
        return len(self.found) >= self.limit

    def add(self, text: str, *, group: bool = False, key: str = "") -> None:
        if self.full or not text or text in self.seen:
            return
        self.seen.add(text)
        if key:
            self.seen.add(key)
        self.found.append(Fact(text, group))

    # -- JSON -----------------------------------------------------------------------------

    def json(self, value: object) -> None:
        group = False
        for key, leaf, starts in leaves(value):
            if self.full:
                return
            group = group or starts
            before = len(self.found)
            if isinstance(leaf, Table):
                group = True
                for name, cell in leaf.fixed:  # a value every row holds: once, before them
                    self._add_pair(f"{name}={cell}", cell, group, fixed=True)
                    group = False
                header = f"{key or 'items'}: {'|'.join(leaf.columns)}"
                self.found.append(Fact(header, group=True, header=True))
                for row in leaf.rows:
                    if self.full:
                        return
                    self.found.append(Fact(row, True, row=True))
                group = True  # what follows the table is set apart from its last row
                continue
            if isinstance(leaf, Braced):
                self._add_pair(f"{key}={leaf}", "", group)
                if leaf.startswith("["):  # a list's values: not noted again as tokens
                    self.seen.update(leaf[1:-1].split(", "))
            elif isinstance(leaf, str):
                if not leaf.strip():
                    continue
                if len(leaf) <= VALUE and "\n" not in leaf:
                    self._add_pair(f"{key}={leaf}" if key else leaf, leaf, group)
                else:
                    self.text(leaf)  # a long text: its lines, as a text's
            elif key:
                self._add_pair(f"{key}={json.dumps(leaf)}", "", group)
            if len(self.found) > before:
                group = False

    def _add_pair(self, shown: str, value: str, group: bool, *, fixed: bool = False) -> None:
        # Every pair of a JSON value is noted, repeats included: the same date or
        # origin in two objects of a list says something about each.
        self.seen.add(value)
        self.found.append(Fact(shown, group, fixed=fixed))

    # -- text -----------------------------------------------------------------------------

    def text(self, text: str) -> None:
        """The facts of a text that is not JSON: its pairs, then its lines that define
        something, then its other lines that hold a salient token (not the lines a cut
        wrote, see :func:`~neuron_context._messages.markers.stands_for`), each a segment of
        the line as it stands (see :func:`.facts_text.segment`), so a name keeps what it is beside
        it (``47→def make_pattern_type(ast_t* pattern)``, ``| HAT170 | 08:00 |``); a
        table as the facts index writes one (a condensed result read again, see
        :func:`~.facts_text.table_lines`) is noted whole, its header with its rows and
        the values every row holds (the line of pairs above it) before it, each row
        once."""
        definitions: list[tuple[str, str]] = []
        pairs: list[str] = []
        kinds: list[str] = []  # each line's kind, read once for both passes
        self._json_pairs(text)
        for raw, kind in table_lines(lines_of(text), _TABLE_LINE):
            kinds.append(kind)
            if kind in (CUT, FIXED):
                continue  # a cut's marker (names without what they are), a table's values
            line = raw[:_LINE]
            body = line
            gutter = _GUTTER.match(line)
            if gutter is not None:
                body = line[gutter.end() :]
            name = definition(body)
            if name:
                at = line.find(name)
                definitions.append((name, segment(line, at, at + len(name))))
                continue
            pair = key_value(body)
            if pair:
                pairs.append(pair)
        for name, shown in definitions:
            if name not in self.seen:  # a function's further clauses: its first line says it
                self._add_segment(shown)
                self.seen.add(name)
        for pair in pairs:
            self.add(pair, key=pair.partition("=")[2])
        pending: list[Fact] = []  # a table's values and header, waiting for a new row
        for raw, kind in zip(lines_of(text), kinds, strict=True):
            if self.full:
                return
            if kind in (FIXED, HEADER):
                shown = _DATA_RUN.sub(_undata, raw.strip())
                fact = Fact(shown, line=True, header=kind == HEADER, fixed=kind == FIXED)
                after_fixed = kind == HEADER and pending and pending[-1].fixed
                pending = [*pending, fact] if after_fixed else [fact]
            elif kind == ROW:
                if self._add_row(raw, pending):
                    pending = []
            else:
                pending = []
                if kind != CUT:
                    self._line_tokens(raw)

    def _add_row(self, line: str, table: list[Fact]) -> bool:
        """Note a row of a table as the facts index writes one (a condensed result read
        again), whole, unless it was noted already (a table repeated): the first one
        noted after ``table`` (the values every row holds and the header) with them, so
        a header is never a chunk alone (see :attr:`Fact.header`). Whether it is noted."""
        shown = _DATA_RUN.sub(_undata, line.strip())
        if shown in self.seen:
            return False
        self.seen.add(shown)
        for fact in (*table, Fact(shown, line=True, row=True)):
            self.found.append(fact)
            self._see_names(fact.text)
        return True

    def _add_segment(self, shown: str) -> None:
        """Note a segment of a line, and the salient names it holds as seen."""
        shown = _DATA_RUN.sub(_undata, shown)
        if self.full or not shown or shown in self.seen:
            return
        self.seen.add(shown)
        self.found.append(Fact(shown, line=True))
        self._see_names(shown)

    def _see_names(self, shown: str) -> None:
        """Mark the names a noted segment holds as seen (not noted again alone)."""
        for match in _RUN.finditer(shown):
            word = match.group().strip(_TRIM + "-+#@$")
            if 4 <= len(word) <= _WORD_MAX:
                self.seen.add(word)

    def _line_tokens(self, line: str) -> None:
        """The segments of ``line`` around its salient tokens not noted yet: a name is
        noted with the words it stands among, never alone."""
        start = 0
        while not self.full:
            match = _RUN.search(line, start)
            if match is None:
                return
            start = match.end()
            word = match.group().strip(_TRIM + "-+#@$")
            if not 4 <= len(word) <= _WORD_MAX or word in self.seen:
                continue
            salient = is_salient(word) or (
                "." in word
                and calls(word, line, match.start())
                and any(is_code_name(part) for part in word.split("."))
            )
            if salient:
                at = line.find(word, match.start())
                shown = segment(line, at, at + len(word))
                self._add_segment(shown)
                self.seen.add(word)
                shown_at = line.find(shown.strip("…"), max(0, at - SEGMENT))
                start = max(start, shown_at + len(shown))

    def _json_pairs(self, text: str) -> None:
        """The ``"key": value`` pairs of JSON in a text that is not JSON (a cut result,
        a log of JSON lines), and its ``"key": [...]`` lists of scalars (bracketed as
        a whole result's, see :func:`.facts_json.cut_lists`), in the text's order. A
        key whose every pair holds one value (a session id on every line of a log) is
        noted once; one whose values differ (each object's status) is noted at each
        pair, as a parsed list's objects are; a list follows the same rules, and a piece
        noted already is not noted again. At most :data:`_PAIRS_READ` times ``limit``
        pairs are read."""
        matches = itertools.islice(_JSON_PAIR.finditer(text), self.limit * _PAIRS_READ)
        pairs = [(match.start(), match.group(1), match.group(2).strip('"')) for match in matches]
        values: dict[str, set[str]] = {}
        for _, key, value in pairs:
            values.setdefault(key, set()).add(value)
        lists = [(at, key, list(pieces)) for at, key, pieces in cut_lists(text, self.limit)]
        listed: dict[str, set[tuple[str, ...]]] = {}
        for _, key, pieces in lists:
            listed.setdefault(key, set()).add(tuple(pieces))
        noted: set[str] = set()
        for _, key, value in sorted([*pairs, *lists], key=lambda found: found[0]):
            if self.full:
                return
            if isinstance(value, list):  # a list of scalars, in its pieces, as a pair is
                if len(listed[key]) == 1 and f"[{key}]" in noted:
                    continue
                noted.add(f"[{key}]")
                for piece in value:
                    shown = f"{key}={piece}"
                    if self.full:
                        return
                    if shown not in self.seen:
                        self.seen.add(shown)
                        self.found.append(Fact(shown))
                        self.seen.update(piece[1:-1].split(", "))
                continue
            self.seen.update((key, value))  # neither is noted again as a token
            if len(values[key]) == 1:
                if key in noted:
                    continue
                noted.add(key)
            self.found.append(Fact(f"{key}={value}"))


_DATA_RUN = re.compile(r"[A-Za-z0-9+/=_-]{32,}")
"""A run that may be data (a digest, base64): checked by ``is_data``."""


def _undata(match: re.Match[str]) -> str:
    """A run of data shown as ``…``: a segment keeps the words around a digest or a
    signature, not the data itself (it would take the space of names)."""
    return "…" if is_data(match.group()) else match.group()
