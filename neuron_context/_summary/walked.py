"""The lists an agent walks: the items of an earlier result taken one by one as the
arguments of its next calls.

An agent often works through a list a tool gave it: the reservations of a user's
profile (``get_reservation_details(DQST39)``, then ``BSSSM3``, then ``RVQC22``). The
next step then needs the *next* item of that list, which sits in an older result, and
a later step often all of them (``cancel all my upcoming flights``). Only JSON is read
for walks: a list of scalars as the facts index writes it
(``reservations=[GXWCPN, DQST39, BSSSM3, RVQC22]``, in pieces of at most 16 items, see
:mod:`.facts_json`) and a JSON table (objects of one shape); a text listing (the paths
of ``ls`` or a grep, the tests a run names) or a text table is not walked. A list some
of whose items later calls used (their arguments, or the rest of the request the
summary goes into; never a boolean, ``null`` or a number of four characters or fewer)
while others are not used yet is being walked: the summary takes the piece that holds
the next item (the first not used after the last used) as its result's first chunk,
before the newer results' facts (after the newest result's first chunk where only one
item is used: that may be a choice), in new results and in a previous summary's facts
lines alike, for as long as items remain. A table is walked the same way along a
column whose cells differ row to row (the ids of a profile's payment methods refunded
one by one), but only once two of its rows are used: one row used is a choice (a
flight booked out of a search); the table then leads its result's facts under its
header, the next row first (then those passed over, then those used). A table is found
among the results read while their facts fit the summary's budget (a list beyond them
too, see ``findings``), and only in new results: a carried line's table keeps its
place. A list is kept whole and as written, the items used included (a later step
names the walked items again: the reservations to cancel, a report).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Set

from .fact_chunks import Fact

__all__ = [
    "Calls",
    "next_piece",
    "used_by",
    "used_items",
    "walked_facts",
    "walked_line",
    "words",
]

_LIST = re.compile(r"(?<![\w.=-])([A-Za-z_][\w.-]{0,39})=\[([^\[\]\n]{1,4000})\]")
"""A list of scalars as the facts index writes it (a piece of one): ``key=[a, b, c]``."""
_WORD = re.compile(r"[\w$.@#+-]+")
_TRIM = ".,;:!?'\"`()[]{}<>-+#@$"
_SHORTEST = 3
"""Words shorter than this say nothing on their own (``id``, ``1``)."""


def words(item: str) -> set[str]:
    """The words an item is known by (three characters or more), as a call's arguments
    or a request show them: ``src/app.py`` by ``src`` and ``app.py``."""
    trimmed = {found.strip(_TRIM) for found in set(_WORD.findall(item))}
    return {word for word in trimmed if len(word) >= _SHORTEST}


_CALLED = 2_000
"""The characters of a call's arguments read for the items it takes."""


class Calls:
    """The calls' arguments as they are read (newest first, each with when it was
    read), and their :func:`words`, found once and only when first asked: most
    conversations hold no list of scalars to walk."""

    __slots__ = ("_read", "_texts", "_words")

    def __init__(self) -> None:
        self._texts: list[tuple[str, int]] = []
        self._words: dict[str, int] = {}
        self._read = 0

    def add(self, arguments: str, read: int) -> None:
        """Note a call's ``arguments`` (their first :data:`_CALLED` characters: a longer
        argument is text the call writes, not an item it takes), read at ``read``."""
        self._texts.append((arguments[:_CALLED], read))

    def words(self) -> dict[str, int]:
        """Each word of the arguments noted, with when the newest call holding it was
        read."""
        for text, read in self._texts[self._read :]:
            for word in words(text):
                self._words.setdefault(word, read)
        self._read = len(self._texts)
        return self._words


_PLAIN = re.compile(r"true|false|null|-?[\d.]{1,4}")
"""Items no call is known to take from a list: a boolean, or a number of four characters
or fewer (any flag, limit, count or amount argument holds one)."""


def used_by(calls: Calls, shown: Set[str], read: int | None = None) -> Callable[[str], bool]:
    """Whether an item is used (never a boolean, ``null`` or a short number: see
    :data:`_PLAIN`): each of its :func:`words` is in ``shown`` (the rest of
    the request) or in the arguments of one of ``calls`` read before ``read`` (the
    result the item is of: a call before it in the conversation did not take it from
    it; ``None``: any call, all newer than the list)."""

    def used(item: str) -> bool:
        if _PLAIN.fullmatch(item):
            return False
        said = words(item)
        called = calls.words()
        if read is None:
            return bool(said) and all(w in shown or w in called for w in said)
        return bool(said) and all(w in shown or called.get(w, read) < read for w in said)

    return used


def next_piece(pieces: list[list[str]], used: Callable[[str], bool]) -> int | None:
    """Which of ``pieces`` (the items of one list, piece by piece) holds the next item
    of a walk: the first not used after the last used one (else the first not used);
    ``None`` when the list is not being walked (none of its items is used, or all)."""
    flat = [(at, used(item)) for at, piece in enumerate(pieces) for item in piece]
    if not any(done for _, done in flat) or all(done for _, done in flat):
        return None
    last = max(position for position, (_, done) in enumerate(flat) if done)
    after = [at for at, done in flat[last + 1 :] if not done]
    return after[0] if after else next(at for at, done in flat if not done)


def used_items(led: str, texts: list[str], used: Callable[[str], bool]) -> int:
    """How many items of the lists written in ``texts`` under the keys of the lists in
    ``led`` (the pieces a walk leads with) are used: one is a choice as much as a walk."""
    keys = {match.group(1) for match in _LIST.finditer(led)}
    return sum(
        used(item)
        for text in texts
        for match in _LIST.finditer(text)
        if match.group(1) in keys
        for item in match.group(2).split(", ")
    )


def walked_facts(found: list[Fact], used: Callable[[str], bool]) -> tuple[list[Fact], list[Fact]]:
    """The piece holding the next item of each list of ``found`` (one result's facts)
    being walked (see :func:`next_piece`), and the rest of ``found`` in its order;
    ``([], found)`` when no list is."""
    ahead: list[Fact] = []
    rest: list[Fact] = []
    at = 0
    while at < len(found):
        if found[at].header or found[at].fixed:
            end = _table_end(found, at)
            walked = _walked_table(found[at:end], used)
            (ahead if walked else rest).extend(walked or found[at:end])
            at = end
            continue
        match = _LIST.fullmatch(found[at].text)
        if match is None:
            rest.append(found[at])
            at += 1
            continue
        key, pieces, end = match.group(1), [match.group(2).split(", ")], at + 1
        while end < len(found) and (piece := _LIST.fullmatch(found[end].text)) is not None:
            if piece.group(1) != key:
                break
            pieces.append(piece.group(2).split(", "))
            end += 1
        chosen = next_piece(pieces, used)
        for number, fact in enumerate(found[at:end]):
            (ahead if number == chosen else rest).append(fact)
        at = end
    return ahead, rest


def walked_line(head: str, used: Callable[[str], bool]) -> tuple[str, str]:
    """A previous summary's facts line ``head`` (``label: facts``) split where it holds a
    list being walked: ``label: `` and the piece holding the next item of each such
    list (see :func:`next_piece`), and the rest of its facts; ``("", head)`` when it
    holds none. The label ends at the last ``": "`` before both the first list and the
    first separator of facts (a label may hold one: ``grep pattern=TODO: fix:
    matches=[...]``; a fact may too: ``payment_methods: source|id; ...``)."""
    first = _LIST.search(head)
    if first is None:
        return "", head
    bound = first.start()
    for separator in (", ", "; "):
        at = head.find(separator, 0, bound)
        bound = bound if at < 0 else at
    label_end = head.rfind(": ", 0, bound)
    if label_end < 0:
        label_end = head.find(": ", 0, first.start())
    if label_end < 0:
        return "", head
    facts = label_end + 2
    ahead: list[str] = []
    parts: list[str] = []
    done = facts
    for spans in _pieces(head, facts):
        chosen = next_piece([items for _, _, items in spans], used)
        if chosen is None:
            continue
        start, end, _ = spans[chosen]
        ahead.append(head[start:end])
        parts.append(head[done:start])
        done = end
    if not ahead:
        return "", head
    parts.append(head[done:])
    rest = _SEPARATORS.sub(_separator, "".join(parts)).strip(", ;")
    return f"{head[:facts]}{', '.join(ahead)}", rest


def _pieces(text: str, start: int) -> Iterator[list[tuple[int, int, list[str]]]]:
    """The pieces of each list written in ``text`` from ``start``: ``(start, end,
    items)`` each, side by side ones under one key together."""
    pending: list[tuple[int, int, list[str]]] = []
    key = ""
    for match in _LIST.finditer(text, start):
        joined = pending and key == match.group(1)
        if joined and text[pending[-1][1] : match.start()] in (", ", "; "):
            pending.append((match.start(), match.end(), match.group(2).split(", ")))
            continue
        if pending:
            yield pending
        key = match.group(1)
        pending = [(match.start(), match.end(), match.group(2).split(", "))]
    if pending:
        yield pending


_SEPARATORS = re.compile(r"(?:, |; )(?:, |; )+")
"""Separators left side by side where a piece was taken out of a line."""


def _separator(match: re.Match[str]) -> str:
    """One separator for those side by side: ``; `` (objects apart) where one is."""
    return "; " if ";" in match.group() else ", "


def _table_end(found: list[Fact], start: int) -> int:
    """Where the table whose values every row holds or header is at ``start`` ends."""
    at = start
    while at < len(found) and found[at].fixed:
        at += 1
    if at < len(found) and found[at].header:
        at += 1
        while at < len(found) and found[at].row:
            at += 1
    return max(at, start + 1)


def _walked_table(table: list[Fact], used: Callable[[str], bool]) -> list[Fact]:
    """``table`` (the values every row holds, its header, its rows) with its rows in the
    order of a walk where one of its columns whose cells differ row to row (ids) has
    some cells used and others not: the rows after the last used first, then those
    passed over, then the used ones; ``[]`` when no column is walked."""
    heads = [fact for fact in table if not fact.row]
    rows = [fact for fact in table if fact.row]
    if len(rows) < 2 or not heads[-1].header:
        return []
    cells = [row.text.split("|") for row in rows]
    for column in range(min(len(row) for row in cells)):
        values = [row[column] for row in cells]
        if len(set(values)) < len(values):
            continue
        done = [used(value) for value in values]
        if sum(done) >= 2 and not all(done):
            last = max(at for at, flag in enumerate(done) if flag)
            order = [at for at in (*range(last + 1, len(rows)), *range(last)) if not done[at]]
            order += [at for at in range(len(rows)) if done[at]]
            return [*heads, *(rows[at] for at in order)]
    return []
