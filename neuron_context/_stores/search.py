"""Search: the lines of a store's entries that match a query, with their keys and line
numbers, bounded by tokens like a recall page.

A query is a literal (matched ignoring case) or, with ``regex=True``, a Python regular
expression. A regular expression can backtrack for longer than any agent can wait
(``(a+)+$``, or ``.*a.*b`` on a long line: seconds per line), and Python's ``re`` cannot
be interrupted, so a regular expression runs in a child interpreter (``python -I``)
that is killed after :data:`REGEX_SECONDS`: the tool answers with an error result
saying so, never a hung agent. An invalid pattern is an error result naming the
problem. A literal runs in process (an escaped pattern matches in linear time).
"""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
from collections.abc import Sequence

from .._counting.counter import BaseCounter
from .pages import NOTE_ROOM, cut_to

__all__ = ["REGEX_SECONDS", "Hit", "find", "format_hits"]

REGEX_SECONDS = 2.0
"""How long a regular-expression search may run."""

_WINDOW = 240
"""Characters of a long matching line shown around the match."""

_LIMIT = 2_000
"""Matches looked for at most (far more than a page holds)."""

Hit = tuple[int, int, int, int]
"""A match: the entry's index, the line's index, the match's start and end."""

_CHILD = """
import pickle, re, sys
pattern, flags, texts, limit = pickle.load(sys.stdin.buffer)
rx = re.compile(pattern, flags)
out = []
for e, text in enumerate(texts):
    for n, line in enumerate(text.split("\\n")):
        m = rx.search(line)
        if m:
            out.append((e, n, m.start(), m.end()))
            if len(out) >= limit:
                break
    if len(out) >= limit:
        break
sys.stdout.buffer.write(pickle.dumps(out))
"""


class SearchError(Exception):
    """A query that cannot be run: its message is the tool's error text."""


def find(texts: Sequence[str], query: str, *, regex: bool) -> list[Hit]:
    """The matches of ``query`` in ``texts``' lines, in order (at most 2,000).

    Raises:
        SearchError: an invalid pattern, or a regular expression that ran too long.
    """
    try:
        compiled = re.compile(query) if regex else re.compile(re.escape(query), re.IGNORECASE)
    except (re.error, OverflowError, RecursionError) as exc:
        msg = f"search: {query[:80]!r} is not a valid regular expression: {exc}"
        raise SearchError(msg) from exc
    if not regex:
        hits: list[Hit] = []
        for entry, text in enumerate(texts):
            for number, line in enumerate(text.split("\n")):
                if (match := compiled.search(line)) is not None:
                    hits.append((entry, number, match.start(), match.end()))
                    if len(hits) >= _LIMIT:
                        return hits
        return hits
    payload = pickle.dumps((query, compiled.flags, list(texts), _LIMIT))
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _CHILD],
            input=payload,
            capture_output=True,
            timeout=REGEX_SECONDS,
            check=True,
        )
    except subprocess.TimeoutExpired as exc:
        msg = (
            f"search: the regular expression {query[:80]!r} ran for more than "
            f"{REGEX_SECONDS:g} s (it backtracks too much): simplify it, or search for a "
            "literal"
        )
        raise SearchError(msg) from exc
    except (OSError, subprocess.CalledProcessError) as exc:
        msg = f"search: regular expressions cannot run here ({exc}); search for a literal"
        raise SearchError(msg) from exc
    found: list[Hit] = pickle.loads(done.stdout)  # our own child's output
    return found


def format_hits(
    hits: Sequence[Hit],
    keys: Sequence[str],
    lines_of: Sequence[Sequence[str]],
    *,
    query: str,
    max_tokens: int,
    counter: BaseCounter,
) -> str:
    """The hits as ``<key>:<line>: <text>`` lines (a long line shown around its match),
    as many as fit ``max_tokens``, then a note when some were left out."""
    budget = max_tokens - NOTE_ROOM
    shown: list[str] = []
    used = 0
    for entry, number, start, end in hits:
        line = lines_of[entry][number]
        if len(line) > 2 * _WINDOW:
            left = max(0, start - _WINDOW // 2)
            right = min(len(line), max(end, start) + _WINDOW // 2)
            line = ("…" if left else "") + line[left:right] + ("…" if right < len(line) else "")
        text = f"{keys[entry]}:{number + 1}: {line}"
        cost = counter.estimate_text(text) + 1
        if used + cost > budget:
            if not shown:
                shown.append(cut_to(text, budget, counter))
            break
        shown.append(text)
        used += cost
    entries = len({entry for entry, *_ in hits})
    more = "2,000 or more" if len(hits) >= _LIMIT else f"{len(hits):,}"
    if len(shown) < len(hits):
        shown.append(
            f"[search: {len(shown):,} of {more} matching lines (in {entries:,} entries) "
            f"shown, within {max_tokens:,} tokens; narrow the query, or recall a key with "
            "start_line and end_line around a line]"
        )
    return "\n".join(shown)
