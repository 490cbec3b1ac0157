"""What a line or a token of a text is, for its facts: the name a line of code defines,
the ``key=value`` a setting's line holds, whether a token is salient (a date, a version,
an identifier with letters and digits, a code name) or a call through an object.

Each answer looks at one line or one token (what a line is in a table: at the two lines
after it), and every pattern is anchored and bounded by its length, so a scan that asks
of every line stays linear (see :mod:`neuron_context._summary.facts`, which notes what
these find).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator

from .._messages.markers import stands_for
from .facts_json import NAME, VALUE
from .scan import is_data, is_file_name

__all__ = [
    "CUT",
    "FIXED",
    "HEADER",
    "ROW",
    "SEGMENT",
    "calls",
    "cells",
    "definition",
    "is_code_name",
    "is_salient",
    "key_value",
    "lines_of",
    "pairs_line",
    "segment",
    "table_columns",
    "table_lines",
]

SEGMENT = 160
"""The most characters of a line a fact shows (a window around its name when longer)."""

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z?)?")
_VERSION = re.compile(r"v?\d+(?:\.\d+){2,3}")
_ID = re.compile(r"[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)*")
_CAMEL = re.compile(r"[a-z0-9][A-Z]")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_MODIFIERS = frozenset(
    (
        *("export", "default", "public", "private", "protected", "static", "async"),
        *("abstract", "final", "override", "inline", "extern", "unsafe", "open"),
        *("internal", "sealed", "lazy", "pub"),
    )
)
"""Words before what a line defines (``export``, ``static``, ``pub``): they make what a
keyword binds a member, not a local."""
_DEFINITION = re.compile(
    rf"\s*(?:(?:{'|'.join(sorted(_MODIFIERS))}|pub\([\w ]*\))\s+)*"
    r"(?P<kind>def|defp|defmodule|defmacro|defmacrop|defstruct|defprotocol|defimpl|"
    r"defdelegate|defguard|class|struct|enum|union|interface|trait|impl|fn|func|function|"
    r"fun|be|new|actor|primitive|object|record|type|typealias|module|namespace|const|let|"
    r"var|val|macro_rules!|CREATE TABLE|create table|#define)\s+"
    r"(?P<name>[A-Za-z_$][\w$.!?]*)"
)
_BINDING = frozenset(("const", "let", "var", "val"))
"""Keywords that bind a variable: a definition at a module's top level (unindented) or
with a modifier (``static let shared``, ``private val cache``: a member); an indented
bare one is taken for a local (``el``, ``mid``), not a name the module offers."""
_C_FUNCTION = re.compile(r"[A-Za-z_][\w \t*&:<>,]{0,80}?[\s*&]([A-Za-z_]\w*)\s*\(")
"""An unindented C-family function definition: ``static ast_t* make_pattern_type(``."""
_KEY = re.compile(r"[A-Za-z_][\w .-]{0,39}")
_SALIENT_VALUE = re.compile(r"[\w$@#+-]*[\dA-Z][\w .,:/$@#+-]*")
_KEY_WORDS = 4
"""The most words of a text key (``Total time``, ``Last modified by``)."""
_COMMON_KEYS = frozenset(("http", "https", "note", "warning", "error", "info", "debug"))
"""Text before a colon that is not a key (a URL's scheme, a log level)."""


def calls(word: str, text: str, start: int) -> bool:
    """Whether a dotted ``word`` (at ``start`` in ``text``) may be a call through an
    object, not a file name with a known extension (``user_data.csv``), a host (after
    ``//``), an address (``@``) or a version (``release_v1.2``: a part starts with a
    digit)."""
    if "@" in word or text[max(0, start - 2) : start] == "//" or is_file_name(word):
        return False
    return not any(part[:1].isdigit() for part in word.split("."))


def definition(line: str) -> str:
    """The name a line of code defines, or ``""``."""
    match = _DEFINITION.match(line)
    if match is not None:
        bare = not line[: match.start("kind")].strip()  # no modifier (static, private)
        if match.group("kind") in _BINDING and bare and line[:1].isspace():
            return ""
        return match.group("name").rstrip(".")
    if line[:1].isalpha() or line[:1] == "_":
        stripped = line.rstrip()
        if stripped.endswith((";", ".", ",")) or "=" in stripped.split("(", 1)[0]:
            return ""
        match = _C_FUNCTION.match(line)
        if match is not None and is_code_name(match.group(1)):
            return match.group(1)
    return ""


def key_value(line: str) -> str:
    """``key=value`` for a ``key: value`` or ``key = value`` line whose value is
    salient, else ``""``."""
    colon, equals = line.find(":"), line.find("=")
    positions = [p for p in (colon, equals) if p > 0]
    if not positions:
        return ""
    at = min(positions)
    if line[at] == ":" and line[at - 1].isdigit() and line[at + 1 : at + 2].isdigit():
        return ""  # a time (09:56), a host's port, a line:column: not a key's colon
    key = line[:at].strip().strip("\"'`*-").strip()
    if _KEY.fullmatch(key) is None or key.casefold() in _COMMON_KEYS:
        return ""
    words = key.split()
    if len(words) > _KEY_WORDS:
        return ""  # a sentence or a listing's row before its colon, not a key
    code = list(itertools.dropwhile(_MODIFIERS.__contains__, words))
    if len(code) > 1 and code[0] in _BINDING:
        return ""  # a line of code binding a variable (let mid = 3), not a setting
    value = line[at + 1 :].strip().rstrip(",;").strip().strip("\"'`").strip()
    if not value or len(value) > VALUE or value[:1] in "{[(<" or "(" in value:
        return ""
    if _SALIENT_VALUE.fullmatch(value) is None:
        return ""
    return f"{key}={value}"


def is_salient(word: str) -> bool:
    """Whether a token is worth noting: a date, a version, an identifier with letters
    and digits, a long number, or a code identifier."""
    if "/" in word:
        return False  # a path: the artifact index has those
    if is_data(word):
        return False  # a content digest, base64
    if _DATE.fullmatch(word) is not None or _VERSION.fullmatch(word) is not None:
        return True
    if _ID.fullmatch(word) is not None:
        has_digit = any(c.isdigit() for c in word)
        has_alpha = any(c.isalpha() for c in word)
        if has_digit and has_alpha:
            return True
        if has_digit:
            digits = sum(c.isdigit() for c in word)
            return digits >= 7 or (_NUMBER.fullmatch(word) is None and digits >= 5)
    return is_code_name(word)


def is_code_name(word: str) -> bool:
    """``snake_case``, ``camelCase``, ``PascalCase`` of two humps, ``SCREAMING_CASE``,
    or a dotted name with a capitalized part (``Spotter.Services.TranscriptRenderer``)."""
    if NAME.fullmatch(word) is None or len(word) < 4:
        return False
    body = word.rstrip("!?")
    if "." in body:
        parts = body.split(".")
        return all(parts) and any(p[:1].isupper() for p in parts) and len(parts) <= 8
    core = body.strip("_$")
    if "_" in core:
        return any(c.isalpha() for c in core)
    if _CAMEL.search(core) is not None:
        return True
    return core.isupper() and len(core) >= 5 and core.isalpha()


def segment(line: str, start: int, end: int) -> str:
    """The part of ``line`` (stripped) that shows ``line[start:end]`` among the words
    around it: the whole line when it has at most :data:`SEGMENT` characters, else a
    window of that many around it, cut at spaces and marked ``…``."""
    if len(line) > 4 * SEGMENT:  # a long line: only the part around the name is read
        low, high = max(0, start - SEGMENT), min(len(line), end + SEGMENT)
        shown = segment(line[low:high], start - low, end - low)
        before = "…" if low and not shown.startswith("…") else ""
        after = "…" if high < len(line) and not shown.endswith("…") else ""
        return f"{before}{shown}{after}"
    stripped = line.strip()
    if len(stripped) <= SEGMENT:
        return stripped
    offset = len(line) - len(line.lstrip())
    start, end = max(0, start - offset), max(0, end - offset)
    first = max(0, min(start - SEGMENT // 3, len(stripped) - SEGMENT))
    last = min(len(stripped), max(first + SEGMENT, end))
    if first:
        space = stripped.find(" ", first, start)
        first = space + 1 if space >= 0 else first
    if last < len(stripped):
        space = stripped.rfind(" ", end, last)
        last = space if space >= 0 else last
    piece = stripped[first:last].strip()
    return f"{'…' if first else ''}{piece}{'…' if last < len(stripped) else ''}"


def cells(segment: str) -> int:
    """How many cells ``segment`` holds read as a table's row (a cell holds no ``|``:
    a table's writer puts ``/`` for one, see :mod:`.facts_json`)."""
    return segment.count("|") + 1


def table_columns(segment: str, after: str) -> int:
    """How many columns ``segment`` names when it is a table's header as the facts
    index writes one (``flights: origin|destination|date``, in a summary's facts line or
    a condensed result), else 0: it reads as a header (its key and columns each a
    field's name: see :func:`_named`) and is followed by its first row (a header is
    written with its first row, never alone: ``after``, a cell under each column, not
    itself a header's shape: two compiler lines ``a.py: str|None``, ``b.py: int|float``
    are lines)."""
    columns = _named(segment)
    return columns if columns and cells(after) == columns and not _named(after) else 0


def _named(segment: str) -> int:
    """How many columns ``segment`` names read as ``key: column|column``, its key and
    columns each a field's name (no space, ``:`` or ``|`` in one: a compiler's
    ``src/a.py:12: error: has type: str|None`` is no header), else 0."""
    key, separator, names = segment.partition(": ")
    if not separator or _FIELD.fullmatch(key) is None:
        return 0
    columns = names.split("|")
    if len(columns) < 2 or not all(_FIELD.fullmatch(name) for name in columns):
        return 0
    return len(columns)


_FIELD = re.compile(r"[^\s:|]+")
"""A table's key or column as a header writes it: a JSON object's key, one word."""


CUT = "cut"
"""A line a cut wrote (its marker): read for nothing, and it ends a table."""
HEADER = "header"
"""A table's header (``flights: origin|date``), followed by its first row."""
ROW = "row"
"""A row of the table whose header is above it (a cell under each column)."""
FIXED = "fixed"
"""A line of pairs directly above a table's header (``status=available, cabin=economy``):
the values every row of the table holds, which the facts index writes once before it."""

_PAIRS = re.compile(r"[^\s:|=,]+=[^\s,]")
"""A line that starts with a pair, as the facts index writes a group of them."""


def pairs_line(segment: str) -> bool:
    """Whether ``segment`` reads as a group of pairs as the facts index writes one
    (``status=available, cabin=economy``)."""
    return _PAIRS.match(segment) is not None and ": " not in segment


def table_lines(lines: Iterable[str], longest: int) -> Iterator[tuple[str, str]]:
    """Each of ``lines`` with what it is in a table as the facts index writes one (a
    condensed result read again): :data:`HEADER`, :data:`ROW`, :data:`FIXED`,
    :data:`CUT`, or ``""`` (none of these: a line read for its names). A line longer
    than ``longest`` characters is none, nor a header whose first row is (a table's
    lines are each read whole), and it ends the table."""
    columns = 0  # the columns of the table whose rows are being read (0: none is)
    window = itertools.chain(lines, ("", ""))
    raw, after = next(window), next(window)
    for beyond in window:
        kind = ""
        if stands_for(raw):
            columns, kind = 0, CUT
        elif len(raw) <= longest:
            found = table_columns(raw, after) if len(after) <= longest else 0
            if found:
                columns, kind = found, HEADER
            elif columns and cells(raw) == columns:
                kind = ROW
            else:
                columns = 0
                below = len(after) <= longest and len(beyond) <= longest
                if pairs_line(raw) and below and table_columns(after, beyond):
                    kind = FIXED
        else:
            columns = 0
        yield raw, kind
        raw, after = after, beyond


def lines_of(text: str) -> Iterator[str]:
    """The lines of ``text``, one at a time (a long text is not split whole)."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        yield text[start:end]
        start = end + 1
