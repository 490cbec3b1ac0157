"""The recall tool's core, shared by our loop and every adapter: a key (and lines) or a
query in, a page of the content or the matching lines out, or an error result; never an
exception.

Each framework wraps :func:`recall` in its own tool type (our
:class:`~neuron_context.Tool`, a LangChain tool, a pydantic-ai tool, an Agents SDK
function tool); they all read the same store the same way, with the same error texts, so
a model that learned the tool in one loop uses it in another. A model learns of it from
:data:`RECALL_INSTRUCTIONS` in the system prompt and from the references themselves,
which end in ``recall: <key>``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TypeVar

import attrs

from .._counting.counter import BaseCounter
from .._counting.heuristic import to_counter
from .._errors import ConfigurationError, described, show
from .pages import MIN_TOKENS, page
from .search import SearchError, find, format_hits
from .serialized import is_key, render, shown_key
from .store import Store

__all__ = [
    "MAX_TOKENS",
    "RECALL_DESCRIPTION",
    "RECALL_INSTRUCTIONS",
    "RECALL_TOOL_NAME",
    "Recalled",
    "answer",
    "reader",
    "recall",
    "search",
    "text_reader",
]

T = TypeVar("T")

RECALL_TOOL_NAME = "recall"
"""The name every recall tool is given."""

RECALL_DESCRIPTION = (
    "Read back content that was moved out of the conversation to save space. Pass the key "
    "from a reference such as '[tool result cleared: read_file a.py, 2,314 tokens — recall: "
    "<key>]'; a long text comes back a page at a time (the page says how to read the next), "
    "and start_line and end_line (1-based, inclusive) read only those lines. Or pass a query "
    "instead of a key: the lines of everything moved out that contain it (ignoring case; "
    "regex=true for a Python regular expression), each with its key and line number (with a "
    "key too: only that entry's lines)."
)
"""The tool's description, for the model."""

RECALL_INSTRUCTIONS = (
    "Older parts of this conversation may have been moved out of your context to save "
    "space; each left a short reference ending in 'recall: <key>', or a line in an index "
    "of original messages ('- get_order #W123 (412 tokens): order_id=W123, total=54.10 — "
    "recall: <key>': what the entry holds, its size, a few of its facts with their "
    "labels, its key; 'earlier: N entries' lines hold several, and the first of more than "
    "a page starts with the keys of what it holds; an 'earlier, a page each' line lists "
    "the oldest pages, oldest first, each a few words of what it holds, then its key). A "
    "fact an index line shows can be used as it is. When you need more of what a "
    "reference or index line stands for, call the recall tool with that key (and "
    "start_line/end_line for part of a long text; a long text comes back a page at a time) "
    "instead of guessing or redoing the work. When you do not know which key holds "
    "something (an id, a path, an error; a page key without words), call the recall tool "
    "with a query instead: it returns the matching lines with their keys and line numbers."
)
"""The sentence to add to a system prompt so that a model uses the recall tool."""

MAX_TOKENS = 2_000
"""What one recall or search returns at most, in tokens (about)."""


@attrs.frozen
class Recalled:
    """What the recall tool answers: the text, and whether it is an error."""

    text: str
    is_error: bool = False


def _error(text: str) -> Recalled:
    return Recalled(text, is_error=True)


def _bound(max_tokens: object, where: str) -> int:
    if type(max_tokens) is not int or max_tokens < MIN_TOKENS:
        msg = f"{where}: max_tokens must be an int of at least {MIN_TOKENS}, got {show(max_tokens)}"
        raise ConfigurationError(msg)
    return max_tokens


def recall(
    store: Store,
    key: str,
    start_line: int | None = None,
    end_line: int | None = None,
    *,
    max_tokens: int = MAX_TOKENS,
    counter: BaseCounter | None = None,
) -> Recalled:
    """Read ``key`` back from ``store`` as text, lines ``start_line``..``end_line``
    (1-based, inclusive) when given, at most about ``max_tokens`` (counted with
    ``counter``, the heuristic by default): a page cut short ends with a note saying
    which lines it holds and how to read the next. An unknown key, a string that is not
    a key, a bad range or a failing store is an error result.

    Raises:
        ConfigurationError: ``max_tokens`` is not an int of at least 100, or ``counter``
            not a counter (the caller's configuration, not the model's input).
    """
    limit = _bound(max_tokens, "recall")
    measure = to_counter(counter)
    if not isinstance(key, str) or not key.strip():
        return _error("recall: key must be a non-empty string")
    wanted = key.strip().lower()
    if not is_key(wanted):
        return _error(
            f"recall: {shown_key(key)} is not a key (a key is the 16 hex digits after "
            "'recall:' in a reference)"
        )
    try:
        content = store.get(wanted)
    except Exception as exc:  # a failing store is the tool's error, not the run's
        return _error(f"recall: the store failed to read {wanted!r}: {_reason(exc)}")
    if content is None:
        return _error(
            f"recall: no content under key {wanted!r} (it was never stored here, or has expired)"
        )
    lines = render(content).split("\n")
    first = 1 if start_line is None else start_line
    last = len(lines) if end_line is None else end_line
    if (
        type(first) is not int
        or type(last) is not int
        or first < 1
        or last < first
        or first > len(lines)
    ):
        return _error(
            f"recall: lines {_shown(start_line)}..{_shown(end_line)} are outside "
            f"1..{len(lines)} of {wanted!r}"
        )
    last = min(last, len(lines))
    return Recalled(page(lines, first, last, key=wanted, max_tokens=limit, counter=measure))


def search(
    store: Store,
    query: str,
    *,
    max_tokens: int = MAX_TOKENS,
    regex: bool = False,
    key: str | None = None,
    counter: BaseCounter | None = None,
) -> Recalled:
    """The lines of ``store``'s entries (of its namespace; only ``key``'s when given)
    that match ``query``, each as ``<key>:<line>: <text>``, at most about
    ``max_tokens`` (a note says how many were left out).

    ``query`` is a literal matched ignoring case, or with ``regex`` a Python regular
    expression (an invalid one, or one that runs longer than two seconds, is an error
    result). No match is a result saying so; an empty query or a failing store is an
    error result.

    Raises:
        ConfigurationError: ``max_tokens`` is not an int of at least 100, or ``counter``
            not a counter.
    """
    limit = _bound(max_tokens, "search")
    measure = to_counter(counter)
    if not isinstance(query, str) or not query:
        return _error("search: query must be a non-empty string")
    try:
        if key is not None:
            wanted = key.strip().lower() if isinstance(key, str) else ""
            if not is_key(wanted):
                return _error(f"search: {shown_key(str(key))} is not a key")
            keys = [wanted]
        else:
            keys = sorted(store)
        contents = [(k, store.get(k)) for k in keys]
    except Exception as exc:
        return _error(f"search: the store failed: {_reason(exc)}")
    held = [(k, render(c)) for k, c in contents if c is not None]
    if key is not None and not held:
        return _error(f"search: no content under key {keys[0]!r}")
    texts = [text for _, text in held]
    try:
        hits = find(texts, query, regex=regex)
    except SearchError as exc:
        return _error(str(exc))
    if not hits:
        where = f"of {keys[0]}" if key is not None else f"in the {len(held):,} stored entries"
        return Recalled(f"search: no line {where} matches {query[:80]!r}")
    return Recalled(
        format_hits(
            hits,
            [k for k, _ in held],
            [text.split("\n") for text in texts],
            query=query,
            max_tokens=limit,
            counter=measure,
        )
    )


def answer(
    store: Store,
    key: str | None,
    *,
    start_line: int | None = None,
    end_line: int | None = None,
    query: str | None = None,
    regex: bool = False,
    max_tokens: int = MAX_TOKENS,
    counter: BaseCounter | None = None,
) -> Recalled:
    """What every recall tool answers: a search when a ``query`` is given, else the
    recall of ``key``."""
    if query is not None and query != "":
        return search(
            store, query, max_tokens=max_tokens, regex=bool(regex), key=key, counter=counter
        )
    if key is None or key == "":
        return _error("recall: give the key of a reference, or a query to search for")
    return recall(store, key, start_line, end_line, max_tokens=max_tokens, counter=counter)


def _reason(exc: Exception) -> str:
    text = described(exc)
    return text if len(text) <= 300 else text[:300] + "…"


def _shown(value: object) -> str:
    text = str(value)
    return text if len(text) <= 20 else text[:20] + "…"


def reader(
    store: Store,
    shape: Callable[[Recalled], T],
    returns: type[T],
    *,
    max_tokens: int = MAX_TOKENS,
    counter: BaseCounter | None = None,
    scope: Callable[[], AbstractContextManager[object]] | None = None,
) -> Callable[..., T]:
    """The recall tool as a plain function of the tool's arguments: the one
    implementation every framework's tool is made from. Its signature and docstring
    are the tool's (frameworks build the schema from them); what it returns is what
    ``shape`` makes of the answer, annotated as ``returns`` (the annotation is read
    too: pydantic-ai builds a return schema from it). With ``scope``, the store is read
    inside ``scope()`` (the conversation a framework's thread belongs to)."""
    _bound(max_tokens, "recall_tool")
    to_counter(counter)

    def read(
        key: str | None = None,
        start_line: int | None = None,
        end_line: int | None = None,
        query: str | None = None,
        regex: bool = False,
    ) -> T:
        """Read back content moved out of the conversation, by key or by a query.

        Args:
            key: the key after 'recall:' in a reference.
            start_line: first line to read (1-based), for part of a long text.
            end_line: last line to read (inclusive).
            query: text to search for in everything moved out (instead of a key).
            regex: whether the query is a Python regular expression.
        """
        with contextlib.nullcontext() if scope is None else scope():
            found = answer(
                store,
                key,
                start_line=start_line,
                end_line=end_line,
                query=query,
                regex=regex,
                max_tokens=max_tokens,
                counter=counter,
            )
        return shape(found)

    read.__annotations__ = {**read.__annotations__, "return": returns}
    return read


def text_reader(
    store: Store, *, max_tokens: int = MAX_TOKENS, counter: BaseCounter | None = None
) -> Callable[..., str]:
    """The recall tool returning text (an error as its text), for the frameworks whose
    tool results have no error flag (pydantic-ai, the Agents SDK)."""
    return reader(store, _text, str, max_tokens=max_tokens, counter=counter)


def _text(found: Recalled) -> str:
    return found.text
