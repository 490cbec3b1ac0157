"""The shapes of a JSON tool result that the facts index keeps compact (see
:mod:`neuron_context._summary.facts`): a collection of objects written once as a table
(keys once, a row each, a value every row holds once beside it; a list of lists of
objects one table, a column telling its lists apart), a small nested object braced on
one line, and the scalar leaves of the rest under their keys, the fields of ids,
amounts and dates before those of words (where the facts are cut, what a next call
reuses stays)."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Mapping

import attrs

from .._messages.markers import is_truncated

__all__ = ["GROUP", "NAME", "VALUE", "Braced", "Table", "cut_lists", "leaves"]

VALUE = 80
"""The longest value noted whole (a longer string contributes its salient tokens)."""
NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*[!?]?")
"""A code name, dotted or not (a JSON key that is one names a field)."""


class Braced(str):
    """A small object of scalars under a key, shown whole: ``{economy=177, business=276}``
    (its keys would be ambiguous flattened beside a sibling object's); or a list of
    scalars, bracketed: ``[MFRB94, PUNERT]``."""

    __slots__ = ()


_BRACED = 8
"""The most fields of a nested object shown whole in braces."""


def _braced(node: Mapping[object, object]) -> Braced | None:
    if not 0 < len(node) <= _BRACED:
        return None
    fields: list[str] = []
    for key, value in node.items():
        name = str(key)
        if not _is_key(name) or isinstance(value, Mapping | list):
            return None
        if value is None or value == "":
            continue
        if isinstance(value, str):
            if len(value) > VALUE or "\n" in value:
                return None
            fields.append(f"{name}={value}")
        else:
            fields.append(f"{name}={json.dumps(value)}")
    return Braced("{" + ", ".join(fields) + "}") if fields else None


_LISTED = 16
"""The most scalars of a list shown in one pair of brackets (a longer list takes more)."""
_LISTED_CHARS = 160
"""... and the most characters of them (a summary takes its facts in chunks this long)."""


def _listed(node: list[object]) -> list[Braced] | None:
    """A list of two or more short scalars as bracketed pieces (``[MFRB94, PUNERT,
    HSR97W]``) of at most :data:`_LISTED` values and about :data:`_LISTED_CHARS`
    characters: its key is written once, not once per value. Blank strings and nulls
    say nothing and are left out. ``None`` when an item is not a short scalar, or a
    value would read ambiguously in brackets (it holds ``", "``, ``[`` or ``]``)."""
    if len(node) < 2:
        return None
    cells: list[str] = []
    for value in node:
        if isinstance(value, str):
            if len(value) > VALUE or "\n" in value or ", " in value or _BRACKETS & set(value):
                return None
            if value.strip():
                cells.append(value)
        elif isinstance(value, bool | int | float):
            cells.append(json.dumps(value))
        elif value is not None:
            return None
    if len(cells) < 2:
        return None  # one value: a pair
    listed: list[Braced] = []
    piece: list[str] = []
    size = 0
    for cell in cells:
        if piece and (len(piece) >= _LISTED or size + len(cell) > _LISTED_CHARS):
            listed.append(Braced("[" + ", ".join(piece) + "]"))
            piece, size = [], 0
        piece.append(cell)
        size += len(cell) + 2
    if piece:
        listed.append(Braced("[" + ", ".join(piece) + "]"))
    return listed or None


_BRACKETS = frozenset("[]")


@attrs.frozen
class Table:
    """Objects of the same shape, one row each: the keys are written once
    (``flights: flight_number|date|price; HAT170|2024-05-16|136; HAT171|...``)."""

    columns: tuple[str, ...]
    rows: tuple[str, ...]
    fixed: tuple[tuple[str, str], ...] = ()
    """The columns that hold one value in every row, with it (``status=available``):
    written once, beside the table, not in each row."""


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false")
"""A cell never set apart as a table's fixed value: a number or a flag (nor a blank)."""
_TABLE_MIN = 2
"""The fewest objects written as a table."""


GROUP = "group"
"""The column of a table made of a list of lists of objects: which list a row is of,
from 1 (``items: group|flight_number|date; 1|HAT057|...; 1|HAT039|...; 2|HAT136|...``)."""


def _table(node: object) -> Table | None:
    """``node`` as a table when it is a list of objects, or an object keyed by ids whose
    values are objects (``{"1434748144": {"item_id": ..., "price": ...}}``), whose
    fields are scalars or small objects of scalars; a list of lists of such objects (a
    search's itineraries, each a list of flights) is one table whose :data:`GROUP`
    column tells its lists apart: the header is written once, not once per list."""
    if isinstance(node, list) and len(node) >= _TABLE_MIN:
        lists = [inner for inner in node if isinstance(inner, list) and inner]
        if len(lists) == len(node):
            return _grouped(lists)
    if isinstance(node, list):
        keyed = False
        objects = node
    elif isinstance(node, Mapping) and not any(_is_key(str(k)) for k in node):
        keyed = True
        objects = list(node.values())
    else:
        return None
    if len(objects) < _TABLE_MIN or not all(isinstance(o, Mapping) for o in objects):
        return None
    written = _rows(objects)
    if written is None:
        return None
    names, cells = written
    if keyed:
        keys = [str(k) for k in node]
        # The key is shown unless a column already holds it (item_id repeats it).
        if not any(
            all(r[i] == k for r, k in zip(cells, keys, strict=True)) for i in range(len(names))
        ):
            names.insert(0, "key")
            cells = [[k, *r] for r, k in zip(cells, keys, strict=True)]
    return _tabled(names, cells)


def _grouped(lists: list[list[object]]) -> Table | None:
    """A list of lists of objects as one table, each row led by the position of its
    list (:data:`GROUP`; not when each list holds one object: the rows tell them
    apart); ``None`` when an item of an inner list is not an object that :func:`_flat`
    writes as a row."""
    written = _rows([item for inner in lists for item in inner])
    if written is None or GROUP in written[0]:
        return None
    names, cells = written
    if len(cells) > len(lists):
        groups = [group for group, inner in enumerate(lists, start=1) for _ in inner]
        names = [GROUP, *names]
        cells = [[str(group), *row] for group, row in zip(groups, cells, strict=True)]
    return _tabled(names, cells)


def _rows(objects: list[object]) -> tuple[list[str], list[list[str]]] | None:
    """The columns of ``objects`` (each field's name, in the order first met) and each
    object's cells under them (:func:`_flat`; ``""`` where it has no such field);
    ``None`` when one is not an object :func:`_flat` writes as a row."""
    flat: list[dict[str, str]] = []
    for item in objects:
        row = _flat(item) if isinstance(item, Mapping) else None
        if row is None:
            return None
        flat.append(row)
    columns: dict[str, None] = {}
    for row in flat:
        columns.update(dict.fromkeys(row))
    names = list(columns)
    return names, [[row.get(name, "") for name in names] for row in flat]


def _tabled(names: list[str], cells: list[list[str]]) -> Table:
    """The table of ``cells`` under ``names``, a column that holds one value in every
    row (and is not the only one) set apart as :attr:`Table.fixed`, unless that value
    is a number (the same count or price in a few rows says nothing of the rest)."""
    fixed = [
        column
        for column in range(len(names))
        if cells[0][column]
        and _NUMBER.fullmatch(cells[0][column]) is None
        and all(row[column] == cells[0][column] for row in cells)
    ]
    if len(fixed) == len(names):
        fixed = fixed[1:]
    kept = [column for column in range(len(names)) if column not in set(fixed)]
    return Table(
        tuple(names[column] for column in kept),
        tuple("|".join(row[column] for column in kept) for row in cells),
        tuple((names[column], cells[0][column]) for column in fixed),
    )


def _flat(item: Mapping[object, object]) -> dict[str, str] | None:
    """The fields of one object of a table, nested objects of scalars flattened under
    their own keys (``options.color`` when ``color`` is taken); ``None`` when a field
    holds more (a list of objects, deeper nesting)."""
    row: dict[str, str] = {}
    pending: list[tuple[str, object]] = [(str(k), v) for k, v in item.items()]
    for key, value in pending:
        if isinstance(value, Mapping):
            if not all(_cell(v) is not None for v in value.values()):
                return None
            for sub, v in value.items():
                name = str(sub) if str(sub) not in row else f"{key}.{sub}"
                row[name] = _cell(v) or ""
            continue
        cell = _cell(value)
        if cell is None:
            return None
        row[key] = cell
    return row


def _cell(value: object) -> str | None:
    """A scalar (or a list of scalars) as a table cell; ``None`` for anything else."""
    if isinstance(value, list):
        cells = [_cell(v) for v in value]
        if any(c is None or isinstance(v, list) for c, v in zip(cells, value, strict=True)):
            return None
        return ", ".join(c for c in cells if c)
    if value is None:
        return ""
    if isinstance(value, str):
        flat = " ".join(value.split()).replace("|", "/")
        return flat if len(flat) <= VALUE else flat[: VALUE - 1] + "…"
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


def leaves(value: object) -> Iterator[tuple[str, object, bool]]:
    """``(key, scalar, starts a list object)`` of a JSON value, in document order
    (iterative: a result may nest deeply), except that the fields of an object at the
    top that hold what an agent passes on come first (see :func:`_telling_first`). A key
    that is data (an id used as a key) is a leaf of its own; a small object of scalars
    under a key is one leaf, braced; a collection of objects of scalars is one leaf, a
    :class:`Table`."""
    if isinstance(value, Mapping) and any(_is_key(str(key)) for key in value):
        value = _telling_first(value)
    stack: list[tuple[str, object, bool]] = [("", value, False)]
    while stack:
        key, node, starts = stack.pop()
        table = _table(node)
        if table is not None:
            yield key, table, starts
            continue
        braced = _braced(node) if key and isinstance(node, Mapping) else None
        listed = _listed(node) if key and isinstance(node, list) else None
        if braced is not None:
            yield key, braced, starts
        elif listed is not None:
            for piece in listed:
                yield key, piece, starts
                starts = False
        elif isinstance(node, Mapping):
            children: list[tuple[str, object, bool]] = []
            first = starts
            for child_key, child in node.items():
                name = str(child_key)
                if not _is_key(name) and isinstance(child, Mapping | list):
                    children.append(("", name, first))  # an id keying an object
                    first = False
                children.append((name, child, first))
                first = False
            stack.extend(reversed(children))
        elif isinstance(node, list):
            stack.extend(
                reversed(
                    [
                        (key, item, index > 0 and isinstance(item, Mapping | list))
                        for index, item in enumerate(node)
                    ]
                )
            )
        elif node is not None:
            yield key, node, starts


def _is_key(name: str) -> bool:
    """Whether a JSON key names a field (``price``, ``address1``) rather than being data
    (``HAT170``, ``certificate_8045380``: an id used as a key)."""
    if not name or name[0].isdigit() or NAME.fullmatch(name) is None:
        return False
    return sum(c.isdigit() for c in name) < 3


_SAMPLE = 400
"""The characters of a field's values read to tell whether it is mostly words."""
_VISITS = 64
"""The most values (and children of each) looked at to tell it: a field is judged in
bounded work, however big it is."""
_TOKEN = re.compile(r"[^\s,;:|=\"'(){}\[\]]+")


def _telling_first(node: Mapping[object, object]) -> dict[object, object]:
    """The fields of ``node`` with those whose values are mostly what an agent passes on
    (ids, amounts, dates, codes: see :func:`_telling`) first and those that are mostly
    words (a name, an address, a description, a status) after them, each part in
    document order: where a result's facts are cut, what a next call reuses is what
    stays. Each field is judged by the first :data:`_SAMPLE` characters of its values."""
    telling: dict[object, object] = {}
    words: dict[object, object] = {}
    for key, child in node.items():
        part = telling if _is_key(str(key)) is False or _telling(child) else words
        part[key] = child
    telling.update(words)
    return telling


def _telling(value: object) -> bool:
    """Whether at least half of the characters of the first :data:`_SAMPLE` of
    ``value``'s scalars (and of the keys that are data) are in tokens an agent passes
    on: one holding a character other than a letter (``4421486``, ``credit_card_44``,
    ``2024-05-20``, ``a/b.py``), or a code in capitals (``JFK``)."""
    told = seen = 0
    stack: list[object] = [value]
    visits = _VISITS
    while stack and seen < _SAMPLE and visits:
        node = stack.pop()
        visits -= 1
        if isinstance(node, Mapping):
            for key, child in reversed(list(itertools.islice(node.items(), _VISITS))):
                stack.append(child)
                if not _is_key(str(key)):
                    stack.append(str(key))  # read before its value
            continue
        if isinstance(node, list):
            stack.extend(reversed(node[:_VISITS]))
            continue
        if isinstance(node, bool) or node is None:
            continue
        for match in _TOKEN.finditer(str(node), 0, _SAMPLE):
            token = match.group()
            seen += len(token)
            if not token.isalpha() or (len(token) >= 2 and token.isupper()):
                told += len(token)
    return 2 * told >= seen > 0


_CUT_LIST = re.compile(r'"([A-Za-z_][\w .-]{0,39})"\s{0,4}:\s{0,4}(\[[^\[\]{}]{1,2000}\])')
"""A ``"key": [...]`` list of scalars in JSON that is not whole (its brackets hold no
nested container; on one line or pretty-printed, an item a line)."""


_JSON_LINES = 20
"""How many of a text's first lines are looked at for a line of JSON."""


def _json_like(text: str) -> bool:
    """Whether ``text`` is JSON that is not whole: it opens as JSON does, holds a cut's
    marker, or one of its first lines is an object (a log of JSON lines). Source code
    (a dict or an object literal in a file) is not."""
    if text.lstrip()[:1] in ("{", "["):
        return True
    for line in text.split("\n", _JSON_LINES)[:_JSON_LINES]:
        stripped = line.strip()
        if stripped.startswith("{") and stripped.endswith("}"):
            return True
    return is_truncated(text)


def cut_lists(text: str, limit: int) -> Iterator[tuple[int, str, list[Braced]]]:
    """``(position, key, pieces)`` of the lists of scalars in ``text``, JSON that is not
    whole (the head and tail of a cut result, a log of JSON lines; not source code):
    each bracketed as a whole result's list is (:func:`_listed`), so a cut result's list
    reads as its whole result's; at most ``limit`` of them."""
    if not _json_like(text):
        return
    for match in itertools.islice(_CUT_LIST.finditer(text), limit):
        try:
            value = json.loads(match.group(2))
        except ValueError:
            continue
        listed = _listed(value) if isinstance(value, list) else None
        if listed is not None:
            yield match.start(), match.group(1), listed
