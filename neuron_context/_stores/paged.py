"""The index line of page keys: the oldest entries of an index, a few words and a key each.

An index line costs about 25 tokens even terse (``- earlier: 5 entries, 1,843 tokens —
recall: <key>``), and most of it is the words around the key. Where an index's terse
lines do not fit its room, its oldest entries of at most a page (the groups of up to a
page, the segments of a long text) stand on one line, oldest first, each as a few words
saying what it holds (its tool and what the call acted on, a file's name rather than
its path, the lines of a long text) and its key::

    - earlier, a page each, oldest first: read_file app.py 3f2a0c9d81e4b756, get_order
      #W100 9c41d2e07f3b6a58

about 15 tokens a page instead of 25: the same room shows more pages before anything
rolls up into one entry beyond a page. A key here goes without its ``recall:`` (the
index's heading says to recall a key): the words cost about what those tokens did, and
tell an agent which page to read. Where the words do not fit, the oldest keys stand
alone (about 10 tokens a page), and a search with a query names the key and line of
what it finds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .serialized import KEY_LENGTH

__all__ = [
    "CARRIED_PAGE",
    "PAGES_LABEL",
    "SAID",
    "WORDS_CHARS",
    "clean",
    "is_pages_line",
    "last_part",
    "page_keys",
    "pages_line",
    "pages_of",
    "words_of",
]

PAGES_LABEL = "earlier, a page each, oldest first"
"""What the line of page keys says before its pages."""

WORDS_CHARS = 32
"""The most characters of words a page key shows before its key (a segment's lines after
them, ``:181-370``, not counted)."""

_PAGE = rf"(?:[^,\n]* )?[0-9a-f]{{{KEY_LENGTH}}}(?:, |$)"
_PAGES = re.compile(rf"^- {re.escape(PAGES_LABEL)}: ((?:{_PAGE})+)", re.MULTILINE)
_ONE = re.compile(rf"(?:([^,\n]*) )?([0-9a-f]{{{KEY_LENGTH}}})(?:, |$)")
_OLD = "recall:"
"""What a key was written after before page keys had words (read as no words)."""


def clean(words: str, limit: int = WORDS_CHARS) -> str:
    """``words`` as a page key shows them: one line, no commas (they separate the
    pages), at most ``limit`` characters (cut at a word where it can be)."""
    text = _one_line(words)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ;:") + "…"


def _one_line(words: str) -> str:
    """``words`` on one line, without commas (they separate the pages)."""
    return " ".join(words.replace(",", " ").split())


def last_part(word: str) -> str:
    """A path's last part (``app.py`` of ``src/app.py``), a URL's host and last part
    (``hex.pm/…/opentelemetry_api``), else ``word``."""
    scheme, found, rest = word.partition("://")
    if found and scheme.isalpha():
        parts = [part for part in rest.split("/") if part]
        if not parts:  # a scheme alone (``https://``): nothing to shorten
            return word
        return parts[0] if len(parts) < 2 else f"{parts[0]}/…/{parts[-1]}"
    if "/" in word.strip("/") and "/…/" not in word:  # not a URL's words again
        return word.rstrip("/").rsplit("/", 1)[-1]
    return word


def pages_line(pages: Sequence[tuple[str, str]]) -> str:
    """The index line of ``pages``, each ``(words, key)`` a page, oldest first (the words
    on one line and without commas, which separate the pages, whatever they were)."""
    shown = ((_one_line(words), key) for words, key in pages)
    return f"- {PAGES_LABEL}: " + ", ".join(
        f"{words} {key}" if words else key for words, key in shown
    )


def pages_of(line: str) -> list[tuple[str, str]]:
    """The ``(words, key)`` of each page on a line of page keys, in order (none for
    another line)."""
    found = _PAGES.match(line)
    if found is None:
        return []
    pages = []
    for one in _ONE.finditer(found.group(1)):
        words = (one.group(1) or "").strip()
        pages.append(("" if words == _OLD else words, one.group(2)))
    return pages


def page_keys(text: str) -> list[str]:
    """The keys of the lines of page keys in ``text``, in order."""
    return [key for found in _PAGES.finditer(text) for _, key in pages_of(found.group(0))]


def is_pages_line(line: str) -> bool:
    """Whether ``line`` is a line of page keys."""
    return _PAGES.match(line) is not None


CARRIED_PAGE = "earlier page"
"""What a page key carried without words (written before page keys had them) holds."""


def words_of(what: str) -> str:
    """A few words of an index line's description, as a page key shows them: without
    its size, an assistant's text before its calls, a quote's marks; a path as its last
    part, a segment's lines after it (``read_file app.py:1-80``); where too long, the
    tool's name and the last file named (``str_replace_editor … match.c``);
    ``earlier: 5 entries, 1,843 tokens (read_file a.py; b.py)`` as its names,
    ``read_file a.py; b.py``."""
    if what == CARRIED_PAGE:
        return ""
    if (earlier := _EARLIER.match(what)) is not None:
        names = what[earlier.end() :].strip().removeprefix("(").removesuffix(")")
        return clean(" ".join(last_part(word) for word in names.replace('"', " ").split()))
    what = _SIZE.sub("", what)
    lines = ""
    if (place := _PLACE.search(what) or _SHOWN_PLACE.search(what)) is not None:
        lines = f":{place.group(1)}"
        what = what[: place.start()] + what[place.end() :]
    what = what.rsplit(" → ", 1)[-1]
    if what.startswith(_CALLS) and not what.startswith(f'{_CALLS}"'):
        what = what.removeprefix(_CALLS)
    words = [last_part(word) for word in what.replace('"', " ").split()]
    files = [i for i, word in enumerate(words) if "." in word.strip(".") and i > 1]
    shortest = f"{words[0]} … {words[files[-1]]}" if files else ""
    if len(" ".join(words)) > WORDS_CHARS and shortest and len(shortest) <= WORDS_CHARS:
        return clean(shortest) + lines  # a tool's name and the file it acted on
    return clean(" ".join(words)) + lines


SAID = ("user: ", "assistant: ", "summary: ")
"""How an index line's description of a message (not of a tool's call) starts: its role,
or ``summary`` (an assistant's that only called tools has its calls after it)."""
_CALLS = SAID[1]
"""How the line of an assistant message that only called tools starts (before its
calls, the words a page key shows)."""

_SIZE = re.compile(r" \([\d,]+ tokens\)$")
"""An index line's size (`` (2,314 tokens)``): its key's page says it."""

_PLACE = re.compile(r", lines? ([\d-]+) of [\d,]+")
"""A segment's place in its text (``, lines 1-80 of 900``)."""

_SHOWN_PLACE = re.compile(r":(\d+(?:-\d+)?)$")
"""A segment's place as a page key shows it (``app.py:1-80``), read again."""

_EARLIER = re.compile(r"^earlier: [\d,]+ entries, [\d,]+ tokens")
"""The start of a roll-up's line (its names, where it has them, follow)."""
