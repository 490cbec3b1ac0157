"""What a tool-result clearing remembers across calls: its cleared copies and its progress.

An agent clears the same old results turn after turn (the history it keeps still holds
them), so the cleared copy of a tool message is remembered across calls: by the message's
identity, the blocks cleared and the placeholder, in a module-level cache that holds the
original only by a weak reference (its entry goes when it dies; a message never stays
alive for the cache) and whose entries are immutable tuples stored and read with single
dict operations (safe when one strategy, or many, clear concurrently in threads). The
copies are built with the blocks' private constructors (no re-validation of what was
valid already) and are equal to what ``attrs.evolve`` builds.

An agent also calls the strategy each turn on the same history grown by a message or
two. Given a list or tuple, without ``exclude_tools`` and ``clear_tool_inputs`` (whose
decisions read the calls) nor a ``store`` (whose puts are made per clearing), with a
frozen rule-based counter and nothing logged at INFO, the strategy
continues its last clearing instead of redoing it (:class:`Progress`; the sum reclaimed
for ``min_reclaim_tokens`` is carried): the decisions are the same, taken once per
result, and a turn costs a C-speed comparison of the history's messages (held by the
progress, until the next history replaces it), its new messages and the output list.
Otherwise every call decides every result.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence

from .._counting.counter import BaseCounter
from .._counting.heuristic import TokenCounter
from .._counting.tokenizer import TokenizerCounter
from .._messages.content import Text, ToolResult
from .._messages.conversation import replace_content, tool_results
from .._messages.message import Message
from .._prefix import starts_with

__all__ = ["FROZEN_COUNTERS", "Memo", "Progress", "cleared_message"]

_Entry = tuple["weakref.ref[Message]", tuple[int, ...], str, Message]
_CLEARED: dict[int, _Entry] = {}
"""``id(original)`` -> (weak reference to it, blocks cleared, placeholder, cleared copy)."""


def _forget(ref: weakref.ref[Message], key: int, cache: dict[int, _Entry] = _CLEARED) -> None:
    # The cache is bound as a default: at interpreter exit the module's globals may be
    # gone before the last messages die.
    entry = cache.get(key)
    if entry is not None and entry[0] is ref:
        cache.pop(key, None)


def cleared_message(
    message: Message, blocks: tuple[int, ...], placeholder: tuple[Text, ...]
) -> Message:
    """``message`` with the tool results at ``blocks`` holding ``placeholder`` (cached)."""
    key = id(message)
    text = placeholder[0].text
    entry = _CLEARED.get(key)
    if entry is not None and entry[0]() is message and entry[1] == blocks and entry[2] == text:
        return entry[3]
    content = list(message.content)
    for index in blocks:
        result = content[index]
        assert isinstance(result, ToolResult)
        content[index] = (
            replace_content(result, placeholder)
            if result.is_error
            else ToolResult._of(result.tool_use_id, placeholder)
        )
    cleared = Message._of(message.role, tuple(content))

    def forget(dead: weakref.ref[Message], forget_entry: Callable[..., None] = _forget) -> None:
        forget_entry(dead, key)

    ref = weakref.ref(message, forget)
    _CLEARED[key] = (ref, blocks, text, cleared)
    return cleared


FROZEN_COUNTERS = (TokenCounter, TokenizerCounter)
"""Counters whose rules cannot change after construction (frozen): a cost they gave
stays true, so progress made with them can be carried to the next call."""


class Progress:
    """One clearing of a history, kept to continue it when the history has grown.

    Holds the history (the messages themselves: a grown history is recognised by one
    C-speed comparison of references, :func:`~neuron_context._prefix.starts_with`), the
    positions of the results not yet old enough to clear, and the cleared copies made so
    far with their indices. Used under its owner's lock.
    """

    __slots__ = (
        "at",
        "config",
        "copies",
        "count",
        "last_blocks",
        "messages",
        "pending",
        "reclaimed",
        "total",
    )

    def __init__(self, config: tuple[int, str, BaseCounter]) -> None:
        self.config = config
        self.messages: list[Message] = []  # the history cleared so far
        self.total = 0  # tool results seen
        self.pending: list[tuple[int, int]] = []  # results not yet candidates
        self.reclaimed = 0
        self.count = 0  # results cleared
        self.at: list[int] = []  # indices of the cleared messages, ascending
        self.copies: list[Message] = []  # their cleared copies
        self.last_blocks: tuple[int, ...] = ()  # blocks cleared in messages[at[-1]]

    def extends(self, messages: Sequence[Message], config: tuple[int, str, BaseCounter]) -> bool:
        """Whether ``messages`` is the history cleared so far, grown (same objects)."""
        keep, placeholder, counter = self.config
        return (
            keep == config[0]
            and placeholder == config[1]
            and counter is config[2]
            and (not self.messages or starts_with(messages, self.messages))
        )

    def advance(self, messages: Sequence[Message], min_reclaim: int) -> list[Message]:
        """Clear what became old in the messages added since; return the output."""
        keep, text, counter = self.config
        start = len(self.messages)
        new = messages[start:]
        # An item that is no Message fails here (TypeError), before the progress changed.
        if not all(isinstance(message, Message) for message in new):
            msg = "not a Message"
            raise TypeError(msg)
        self.messages.extend(new)
        pending = self.pending
        pending.extend((ref.message + start, ref.block) for ref in tool_results(new))
        total = self.total + len(pending) - min(self.total, keep)
        take = max(0, total - keep) - max(0, self.total - keep)
        self.total = total
        if take:
            placeholder = (Text._of(text),)
            placeholder_cost = counter.estimate_text(text)
            at, copies = self.at, self.copies
            for m_index, b_index in pending[:take]:
                message = messages[m_index]
                result = message.content[b_index]
                assert isinstance(result, ToolResult)
                if result.content == placeholder:
                    continue
                cost = counter.estimate_content(result.content)
                if cost <= placeholder_cost:
                    continue
                self.reclaimed += cost - placeholder_cost
                self.count += 1
                if at and at[-1] == m_index:
                    self.last_blocks = (*self.last_blocks, b_index)
                    copies[-1] = cleared_message(message, self.last_blocks, placeholder)
                else:
                    self.last_blocks = (b_index,)
                    at.append(m_index)
                    copies.append(cleared_message(message, self.last_blocks, placeholder))
            del pending[:take]
        output = list(messages)
        if self.count and self.reclaimed >= min_reclaim:
            for m_index, copy in zip(self.at, self.copies, strict=True):
                output[m_index] = copy
        return output


class Memo:
    """A strategy's last :class:`Progress`; no part of its value (copies start empty)."""

    __slots__ = ("lock", "progress")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.progress: Progress | None = None

    def __reduce__(self) -> tuple[type[Memo], tuple[()]]:
        return (Memo, ())

    def __copy__(self) -> Memo:
        return Memo()

    def __deepcopy__(self, memo: dict[int, object]) -> Memo:
        return Memo()
