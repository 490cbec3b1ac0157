"""Re-fetched URLs: when a page is fetched again, the older copies of it are cleared.

A research agent fetches the same page several times (to follow a link, after an edit
it made, because it forgot); every copy stays in its history though only the newest
says what the page holds now. This is the first of the LangChain-middleware README's
"future enhancements" ("filter old web results for the same URL").

A call *fetches* a URL when one of its arguments holds one (``http://`` or ``https://``,
found in nested arguments too); two calls fetch the same thing when they are calls of
the same tool with the same set of URLs (compared without the fragment, scheme and host
case-insensitive). The older results are replaced by a placeholder, as
:class:`~neuron_context.ToolResultClearingStrategy` does (the calls stay, so the model
still sees what it fetched); which call supersedes which is the shared rule: only a
fetch that succeeded replaces older ones.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterator, Sequence
from urllib.parse import urlsplit, urlunsplit

import attrs

from .._log import log_compaction
from .._messages.content import JSON
from .._messages.conversation import Structure, ToolCall, replace_blocks, tool_calls
from .._messages.message import Message
from .._stores.store import Store, optional_store
from .._validators import non_negative_int, require_names, string
from .strategy import PureStrategy
from .supersede import clear_results, superseded

__all__ = ["DedupeFetchesStrategy", "urls_in"]

_URL = re.compile(r"https?://[^\s\"'<>\\]+", re.IGNORECASE)
_TRAILING = ".,;:!?)]}"


def _normalized(url: str) -> str:
    url = url.rstrip(_TRAILING)
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    path = parts.path or "/"
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def _strings(value: JSON) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def urls_in(arguments: JSON) -> frozenset[str]:
    """The URLs in a call's arguments, normalized (no fragment; scheme and host lower
    case; trailing punctuation dropped)."""
    return frozenset(
        _normalized(match.group()) for text in _strings(arguments) for match in _URL.finditer(text)
    )


def _optional_names(value: object) -> frozenset[str] | None:
    return None if value is None else require_names(value, "DedupeFetchesStrategy.tools")


@attrs.define
class DedupeFetchesStrategy(PureStrategy):
    """Clears the results of older fetches of a URL that a later call fetched again.

    Calls of the same tool whose arguments hold the same URLs fetch the same thing; of
    those, every result but the newest successful fetch's becomes ``placeholder`` (a
    result that costs no more than the placeholder is left as it is). No message or call
    is removed.

    Examples:
        >>> strategy = DedupeFetchesStrategy(tools={"WebFetch", "fetch_url"})
    """

    max_tokens: int = attrs.field(default=0, kw_only=True, validator=non_negative_int())
    """The trigger: compact when the history costs more than this (0: always)."""
    tools: frozenset[str] | None = attrs.field(
        default=None, kw_only=True, converter=_optional_names
    )
    """The fetching tools; ``None``: every tool whose arguments hold a URL."""
    placeholder: str = attrs.field(
        default="[superseded: this URL was fetched again later]",
        kw_only=True,
        validator=string(),
    )
    """What an older fetch's result says instead."""
    store: Store | None = attrs.field(default=None, kw_only=True, validator=optional_store())
    """Where cleared results go: each placeholder then names the call, its size and the
    key to recall it by."""

    def _key(self, call: ToolCall) -> Hashable | None:
        name = call.use.name
        if self.tools is not None and name not in self.tools:
            return None
        urls = urls_in(dict(call.use.input))
        return (name, urls) if urls else None

    def _apply(self, messages: Sequence[Message]) -> list[Message]:
        structure = Structure.of(messages)
        old = superseded(tool_calls(structure), self._key)
        if not old:
            return list(messages)
        refs = [ref for call, _ in old for ref in call.results]
        cleared = clear_results(
            refs,
            self.placeholder,
            self.counter,
            store=self.store,
            calls=[call for call, _ in old],
            strategy="DedupeFetchesStrategy",
        )
        if not cleared:
            return list(messages)
        output = replace_blocks(messages, cleared)
        urls = sorted({url for call, _ in old for url in urls_in(dict(call.use.input))})
        log_compaction(
            "DedupeFetchesStrategy",
            self.counter,
            messages,
            output,
            {"cleared": len(cleared), "urls": urls},
        )
        return output
