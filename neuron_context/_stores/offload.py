"""Offloading as a strategy does it: put, and never fail the compaction.

A strategy given a store calls :func:`offload` with what it removes and writes the key it
gets into what it keeps (:func:`reference`). A store that raises (a full disk, a Redis
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
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import attrs

from .._errors import described
from .._log import logger
from .._messages.content import Compaction, ContentBlock, Image, Text, ToolResult, ToolUse
from .._messages.message import Message, Role
from .batch import OffloadFailure, collect_failures, current, offloading
from .serialized import KEY_LENGTH, Content
from .store import Store

if TYPE_CHECKING:  # the counter is a parameter: no import of a higher room at run time
    from .._counting.counter import BaseCounter

__all__ = [
    "OffloadFailure",
    "collect_failures",
    "describe_call",
    "is_reference",
    "largest_reference",
    "messages_reference",
    "offload",
    "referenced",
    "references_in",
    "result_content",
    "short_reference",
    "spare",
    "with_originals",
    "with_reference",
]


def offload(store: Store | None, content: Content, strategy: str) -> str | None:
    """Put ``content`` in ``store`` and return its key; ``None`` without a store, when
    the put fails (logged at WARNING and recorded, see the module), or when the store
    already failed in this compaction (skipped: see
    :mod:`~neuron_context._stores.batch`)."""
    if store is None:
        return None
    session = current()
    identity = store._names_of(())[0]
    if session is not None and session.is_down(identity):
        return None
    try:
        return store.put(content)
    except Exception as exc:  # a store's failure costs only the offload
        reason = described(exc)
        logger.warning(
            "%s: offload to %s failed, compacting without it%s: %s",
            strategy,
            type(store).__name__,
            "" if session is None else " (its other puts in this compaction skipped)",
            reason,
            extra={"strategy": strategy, "store": type(store).__name__},
        )
        if session is not None:
            session.fail(identity, OffloadFailure(type(store).__name__, strategy, reason))
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


def _short(value: str) -> str:
    text = " ".join(value.split())
    return text if len(text) <= _WHAT_CHARS else text[: _WHAT_CHARS - 1] + "…"


def describe_call(use: ToolUse | None) -> str | None:
    """A call in a few words: its tool's name and what it acted on (its ``command``,
    ``path``, ``url``... arguments, else its first string argument), each cut to 60
    characters; ``None`` for no call."""
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


def messages_reference(
    store: Store,
    removed: Sequence[Message],
    counter: BaseCounter,
    strategy: str,
    *,
    label: str = "[original messages]",
    short: bool = False,
    kept: Sequence[Message] = (),
) -> str | None:
    """Offload ``removed`` (messages a summary replaced, or that were cut or dropped) and
    return the reference to them, ``[original messages: 37, 52,314 tokens — recall:
    <key>]``, or with ``short`` only ``[recall: <key>]`` (``None`` when there is nothing
    to offload or the put failed). The entries ``kept`` (what the output keeps)
    references are spared from the eviction the put may cause."""
    if not removed:
        return None
    with offloading():  # the reads and the put: one compaction's, when called alone
        spare(store, kept)
        originals = with_originals(store, removed)
        key = offload(store, originals, strategy)
    if key is None:
        return None
    if short:
        return short_reference(key)
    return referenced(label, counter.estimate_messages(originals), key, f"{len(originals):,}")


def with_originals(store: Store, removed: Sequence[Message]) -> list[Message]:
    """``removed`` as it was before earlier offloads: a tool result cleared or cut with a
    key gets its content back, and the messages a summary's or a note's key holds come
    before it (read from ``store``; a key it cannot read is left as it is).

    A reference that is removed again takes its content with it: the new key then
    reaches everything directly rather than through a key the request no longer shows
    (the price: what a long session offloads is stored again with each compaction that
    removes it again; bound it with the store's ``max_age``)."""
    output: list[Message] = []
    seen: set[str] = set()

    def before(key: str) -> None:
        if key not in seen:
            seen.add(key)
            content = _stored(store, key)
            if isinstance(content, list):
                output.extend(content)

    for message in removed:
        if message.is_compaction:
            for block in message.content:
                if isinstance(block, Compaction):
                    for key in references_in(block.content):
                        before(key)
        restore = message.role is Role.TOOL and any(
            isinstance(block, ToolResult) and references_in(block.text) for block in message.content
        )
        output.append(_restored(store, message, before) if restore else message)
    return output


def _restored(store: Store, message: Message, before: Callable[[str], None]) -> Message:
    """``message`` (a tool message) with each result's offloaded content put back."""
    content: list[ContentBlock] = []
    for block in message.content:
        if not isinstance(block, ToolResult):
            content.append(block)
            continue
        items: list[Text | Image] = []
        for item in block.content:
            keys = references_in(item.text) if isinstance(item, Text) else []
            stored = _stored(store, keys[0]) if len(keys) == 1 else None
            for _ in range(_DEPTH):  # a reference to a reference: follow it
                inner = references_in(stored) if isinstance(stored, str) else []
                if len(inner) != 1 or not isinstance(deeper := _stored(store, inner[0]), str):
                    break
                stored = deeper
            if isinstance(stored, str):  # a cleared or cut text: the whole text
                items.append(Text(text=stored))
                continue
            if isinstance(stored, list):  # a cleared exchange, or a note of removed calls
                original = _result_in(stored, block.tool_use_id)
                if original is not None:
                    items.extend(original.content)
                    continue
                before(keys[0])
            items.append(item)
        content.append(attrs.evolve(block, content=tuple(items)))
    return Message._of(message.role, tuple(content))


_DEPTH = 8
"""How many references to references :func:`with_originals` follows."""


def _result_in(messages: list[Message], tool_use_id: str) -> ToolResult | None:
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolResult) and block.tool_use_id == tool_use_id:
                return block
    return None


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


def largest_reference(label: str = "[original messages]") -> str:
    """A reference as long as a :func:`messages_reference` can be (a billion tokens, a
    million messages): what a strategy prices to keep room for the real one."""
    return referenced(label, 10**9, "f" * KEY_LENGTH, f"{10**6:,}")


def with_reference(
    messages: Sequence[Message],
    output: list[Message],
    store: Store | None,
    counter: BaseCounter,
    strategy: str,
) -> list[Message]:
    """``output`` with the input messages it does not hold as they are (dropped, or
    changed: their originals) offloaded to ``store``, and one reference to them after the
    output's leading system messages (``[original messages: 3, 812 tokens — recall:
    <key>]``, a summary-like user message).

    ``output`` as it is without a store, with nothing removed, or when the put fails (the
    compaction as without a store); ``messages`` as they are (nothing compacted, nothing
    lost) when the reference would make the output cost as much as the input."""
    if store is None:
        return output
    kept = {id(message) for message in output}
    removed = [message for message in messages if id(message) not in kept]
    if not removed:
        return output
    reference = messages_reference(store, removed, counter, strategy, kept=output)
    if reference is None:
        return output
    at = 0
    while at < len(output) and output[at].role is Role.SYSTEM:
        at += 1
    note = Message(role=Role.USER, content=(Compaction(content=reference),))
    referenced_output = [*output[:at], note, *output[at:]]
    if counter.estimate_messages(referenced_output) >= counter.estimate_messages(messages):
        return list(messages)
    return referenced_output
