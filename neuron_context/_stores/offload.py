"""Offloading as a strategy does it: put, and never fail the compaction.

A strategy given a store calls :func:`offload` with what it removes and writes the key it
gets into what it keeps (:func:`referenced`; a strategy that removes whole messages writes
an index of them, :mod:`~neuron_context._stores.index`). A store that raises (a full disk, a Redis
that went away) costs only the offload: :func:`offload` logs a warning, records the
failure for whoever runs the compaction (the agent loop turns it into an
:class:`~neuron_context.events.OffloadFailed` event; see :func:`collect_failures`) and
returns ``None``, and the strategy then keeps what it would have kept without a store.
A strategy is synchronous, so the failures travel in a context variable rather than
through its return value (:mod:`~neuron_context._stores.batch`, which also makes a
store that failed fail once per compaction, and spares a compaction's entries from a
store's cap).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from .._errors import described
from .._log import logger
from .._messages.content import Compaction, Text, ToolResult, ToolUse
from .._messages.message import Message, Role
from .batch import OffloadFailure, collect_failures, current
from .paged import PAGES_LABEL, page_keys
from .serialized import KEY_LENGTH, Content
from .store import Store

__all__ = [
    "OffloadFailure",
    "collect_failures",
    "describe_call",
    "holds",
    "is_reference",
    "offload",
    "referenced",
    "references_in",
    "result_content",
    "short_reference",
    "spare",
]


def offload(store: Store | None, content: Content, strategy: str) -> str | None:
    """Put ``content`` in ``store`` and return its key; ``None`` without a store, when
    the put fails (logged at WARNING and recorded, see the module), or when the store
    already failed in this compaction (skipped: see
    :mod:`~neuron_context._stores.batch`)."""
    if store is None or _down(store):
        return None
    try:
        return store.put(content)
    except Exception as exc:  # a store's failure costs only the offload
        reason = described(exc)
        session = current()
        logger.warning(
            "%s: offload to %s failed, compacting without it%s: %s",
            strategy,
            type(store).__name__,
            "" if session is None else " (its other puts in this compaction skipped)",
            reason,
            extra={"strategy": strategy, "store": type(store).__name__},
        )
        if session is not None:
            failure = OffloadFailure(type(store).__name__, strategy, reason)
            session.fail(store._names_of(())[0], failure)
        return None


def spare(store: Store | None, messages: Iterable[Message]) -> None:
    """Keep the entries ``messages`` reference (what a compacted request shows) from the
    eviction of the current compaction's puts."""
    session = current()
    if store is None or session is None:
        return
    keys = [key for message in messages for key in _message_keys(message)]
    if keys:
        identity, names = store._names_of(keys)
        session.spare(identity, names)


def _message_keys(message: Message) -> Iterator[str]:
    for block in message.content:
        if isinstance(block, Text | Compaction | ToolResult):
            text = block.content if isinstance(block, Compaction) else block.text
            if "recall: " in text:
                yield from references_in(text)
            if PAGES_LABEL in text:
                yield from page_keys(text)


def referenced(placeholder: str, tokens: int, key: str, what: str | None = None) -> str:
    """``placeholder`` with what it stands for and the key, e.g. ``[tool result cleared]``
    becomes ``[tool result cleared: read_file src/app.py, 2,314 tokens — recall: <key>]``
    (``what``: ``read_file src/app.py``; ``tokens``: what the removed content cost)."""
    body = placeholder.strip()
    if body.startswith("[") and body.endswith("]"):
        body = body[1:-1]
    detail = f": {what}" if what else ""
    return f"[{body}{detail}, {tokens:,} tokens — recall: {key}]"


_KEY = rf"recall: ([0-9a-f]{{{KEY_LENGTH}}})\b"
_KEY_PATTERN = re.compile(_KEY)
_REFERENCE = re.compile(rf"\[[^\n]*{_KEY}\]")


def is_reference(result: ToolResult) -> bool:
    """Whether ``result`` is a reference already (one text, ``[... recall: <key>]``):
    offloading it again would store the reference, not the content."""
    content = result.content
    return (
        len(content) == 1
        and isinstance(content[0], Text)
        and _REFERENCE.fullmatch(content[0].text) is not None
    )


def references_in(text: str) -> list[str]:
    """The keys of the references in ``text`` (``recall: <key>``), in order."""
    return _KEY_PATTERN.findall(text)


_WHAT_CHARS = 60
"""Characters of a call's argument kept in a reference."""


_NAMING_ARGUMENTS = ("command", "path", "file_path", "file", "filename", "url", "query")
"""Arguments that say what a call did, in the order a reference names them."""


_WHAT_HEAD = 20
"""Characters of a longer argument kept before the cut (the rest kept are its end)."""


def _short(value: str) -> str:
    """``value`` on one line, cut in the middle to :data:`_WHAT_CHARS` characters: its
    start and its end (a path's file, a command's last argument) say what it is."""
    text = " ".join(value.split())
    if len(text) <= _WHAT_CHARS:
        return text
    return text[:_WHAT_HEAD] + "…" + text[len(text) - (_WHAT_CHARS - _WHAT_HEAD - 1) :]


def describe_call(use: ToolUse | None) -> str | None:
    """A call in a few words: its tool's name and what it acted on (its ``command``,
    ``path``, ``url``... arguments, else its first string argument), each cut in the
    middle to 60 characters; ``None`` for no call."""
    if use is None:
        return None
    named = [
        _short(value)
        for key in _NAMING_ARGUMENTS
        if isinstance(value := use.input.get(key), str) and value.strip()
    ][:2]
    if not named:
        named = [
            _short(value)
            for value in use.input.values()
            if isinstance(value, str) and value.strip()
        ][:1]
    return " ".join([use.name, *named])


def result_content(result: ToolResult, use: ToolUse | None, *, with_call: bool = False) -> Content:
    """What is offloaded for a cleared ``result``: its text when it is one text block (and
    not ``with_call``), else the exchange (the call, when known, and the result) as
    messages."""
    if not with_call and len(result.content) == 1 and isinstance(result.content[0], Text):
        return result.content[0].text
    messages = [] if use is None else [Message(role=Role.ASSISTANT, content=(use,))]
    return [*messages, Message(role=Role.TOOL, content=(result,))]


def _down(store: Store) -> bool:
    """Whether ``store`` already failed in this compaction (its other puts and reads
    are skipped: see :mod:`~neuron_context._stores.batch`)."""
    session = current()
    return session is not None and session.is_down(store._names_of(())[0])


def holds(store: Store, key: str) -> bool:
    """Whether ``store`` holds ``key``: ``False`` only when it answers that it does not
    (a store that is down or fails to answer may hold it: ``True``). Read for the keys a
    removed text quotes, so that an index shows no line that reads back nothing."""
    if _down(store):
        return True
    try:
        return store.get(key) is not None
    except Exception:  # unknown: the line stays, as before the check
        return True


def _stored(store: Store, key: str) -> Content | None:
    session = current()
    identity = store._names_of(())[0]
    if session is not None and session.is_down(identity):
        return None
    try:
        return store.get(key)
    except Exception as exc:  # an unreadable key costs only its expansion
        logger.warning("offload: could not read %s back to expand it", key)
        if session is not None:
            reason = described(exc)
            session.fail(identity, OffloadFailure(type(store).__name__, "offload", reason))
        return None


def short_reference(key: str) -> str:
    """The shortest reference, ``[recall: <key>]``, for a budget with no room for more."""
    return f"[recall: {key}]"
