"""Helpers for the offloading tests: what a compacted history lets an agent recover."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence

from neuron_context import Compaction, Message, Role, Store, Text, ToolResult, ToolUse

__all__ = [
    "FailingStore",
    "block_texts",
    "keys_in",
    "page_keys",
    "recoverable",
    "step_in_progress",
    "unrecoverable",
]

_KEY = re.compile(r"recall: ([0-9a-f]{16})\b")
_PAGES = re.compile(r"^- earlier, a page each, oldest first: (.+)$", re.MULTILINE)
_PAGE_KEY = re.compile(r"(?:^| )([0-9a-f]{16})(?=, |$)")
"""A key on an index's line of page keys: after its words, before the next page."""


class FailingStore(Store):
    """A store whose every call raises (a Redis that went away)."""

    def _write(self, key: str, text: str) -> None:
        msg = "the store is down"
        raise ConnectionError(msg)

    def _read(self, key: str) -> str | None:
        msg = "the store is down"
        raise ConnectionError(msg)

    def _keys(self) -> Iterator[str]:
        msg = "the store is down"
        raise ConnectionError(msg)


def block_texts(messages: Iterable[Message]) -> Iterator[str]:
    """Every text a history holds: text, tool-result text, summaries, tool inputs."""
    for message in messages:
        for block in message.content:
            if isinstance(block, Text):
                yield block.text
            elif isinstance(block, ToolResult):
                yield from (item.text for item in block.content if isinstance(item, Text))
            elif isinstance(block, Compaction):
                yield block.content
            elif isinstance(block, ToolUse):
                yield json.dumps([block.id, block.name, block.input], sort_keys=True)


def page_keys(text: str) -> list[str]:
    """The keys of the lines of page keys in ``text``, in order."""
    return [key for line in _PAGES.findall(text) for key in _PAGE_KEY.findall(line)]


def keys_in(texts: Iterable[str]) -> list[str]:
    """The keys of the references in ``texts`` (``recall: <key>``, and the keys of an
    index's line of page keys)."""
    return [key for text in texts for key in [*_KEY.findall(text), *page_keys(text)]]


def recoverable(
    messages: list[Message], store: Store | None, *, transitive: bool = True
) -> set[str]:
    """Every text in ``messages`` or behind a key in them (and, ``transitive``, behind a
    key in what a key holds)."""
    found = set(block_texts(messages))
    queue = keys_in(found)
    seen: set[str] = set()
    while queue and store is not None:
        key = queue.pop()
        if key in seen:
            continue
        seen.add(key)
        content = store.get(key)
        if content is None:
            continue
        texts = {content} if isinstance(content, str) else set(block_texts(content))
        if transitive:
            queue.extend(keys_in(texts - found))
        found |= texts
    return found


def unrecoverable(
    original: list[Message],
    output: list[Message],
    store: Store | None,
    *,
    transitive: bool = True,
) -> list[str]:
    """The texts of ``original`` that are neither in ``output`` nor behind its keys (a
    text longer than a page is offloaded in page-sized segments: it counts as behind
    the keys when its segments, each behind one, make it up)."""
    found = recoverable(output, store, transitive=transitive)
    return [
        text for text in block_texts(original) if text not in found and not _pieced(text, found)
    ]


def _pieced(text: str, found: set[str]) -> bool:
    """Whether ``text`` is a concatenation of texts in ``found``."""
    pieces = [piece for piece in found if piece and piece in text]
    reached = {0}
    frontier = [0]
    while frontier:
        position = frontier.pop()
        for piece in pieces:
            end = position + len(piece)
            if end not in reached and text.startswith(piece, position):
                if end == len(text):
                    return True
                reached.add(end)
                frontier.append(end)
    return False


def step_in_progress(messages: Sequence[Message]) -> list[int]:
    """The indices of the step in progress, as ``default_stack`` reads it: the last
    assistant message when it called tools, and the tool messages after it (results the
    model has not answered yet); ``[]`` when the last assistant message called none."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role is Role.ASSISTANT:
            if not message.tool_uses:
                return []
            after = range(index + 1, len(messages))
            return [index, *(i for i in after if messages[i].role is Role.TOOL)]
    return []
