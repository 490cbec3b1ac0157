"""A noted fact (:class:`Fact`), and the facts of a result as a summary writes them: in
chunks of about :data:`CHUNK` characters (:func:`chunks`), each rendered as one line
(:func:`render`), a result's further chunks ranked :data:`STRIDE` places down.

:func:`~neuron_context._summary.facts.facts` notes them; the summary's items
(:mod:`.fact_items`), its reading of the results (:mod:`.findings`), the lists an agent
walks (:mod:`.walked`) and what the rest of a request shows (:mod:`.shown`) read them.
A segment of a line is a chunk of its own, and a table's header shares its chunk with
its first row (and the values every row holds, written before it): it says nothing
without them.
"""

from __future__ import annotations

import attrs

__all__ = ["CHUNK", "STRIDE", "Fact", "chunks", "render"]

CHUNK = 160
"""Characters of facts per summary item: a result's facts are taken a chunk at a time."""
STRIDE = 4
"""How far down a summary's ranking each further chunk of one result's facts goes: the
newest result's second chunk comes after the first chunks of the four results before it."""


@attrs.frozen
class Fact:
    """One noted fact and how it is set apart from the one before it."""

    text: str
    """The fact: ``key=value``, a definition, or a salient token."""
    group: bool = False
    """Whether it starts a new object of a list (rendered after ``;`` instead of ``,``)."""
    line: bool = False
    """Whether it is a segment of a line of the text as it stands (rendered on a line
    of its own)."""
    header: bool = False
    """Whether it is a table's header (its key and columns): it says nothing without
    the row after it."""
    row: bool = False
    """Whether it is a row of the table whose header is the last one before it: it
    says what its cells are only under that header."""
    fixed: bool = False
    """Whether it is a value every row of the table after it holds (``status=available``):
    it says which rows it belongs to only beside them."""


def chunks(noted: list[Fact]) -> list[list[Fact]]:
    """``noted`` in chunks of about :data:`CHUNK` characters: a segment of a line is a
    chunk of its own, and a table's header shares its chunk with its first row (and
    the values every row holds, written before it)."""
    found: list[list[Fact]] = []
    chunk: list[Fact] = []
    size = 0
    for fact in noted:
        closes = fact.line or chunk[-1].line or size + len(fact.text) > CHUNK if chunk else False
        if closes and not chunk[-1].header and not chunk[-1].fixed:
            found.append(chunk)
            chunk, size = [], 0
        chunk.append(fact)
        size += len(fact.text) + 2
    if chunk:
        found.append(chunk)
    return found


def render(found: list[Fact], *, lines: bool = False) -> str:
    """``found`` as one line: ``a=1, b=2; a=3, b=4`` (with ``lines``, each group on a
    line of its own); a segment of a line (:attr:`Fact.line`) is always on its own."""
    parts: list[str] = []
    for position, fact in enumerate(found):
        if position:
            if fact.line or found[position - 1].line:
                parts.append("\n")
            else:
                parts.append(("\n" if lines else "; ") if fact.group else ", ")
        parts.append(fact.text)
    return "".join(parts)
