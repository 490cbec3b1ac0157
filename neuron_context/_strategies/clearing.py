"""Tool-result clearing: old tool results become a short placeholder.

An agent clears the same old results turn after turn (the history it keeps still holds
them), so the cleared copy of a tool message is remembered across calls: by the message's
identity, the blocks cleared and the placeholder, in a module-level cache that holds the
original only by a weak reference (its entry goes when it dies; a message never stays
alive for the cache) and whose entries are immutable tuples stored and read with single
dict operations (safe when one strategy, or many, clear concurrently in threads). The
copies are built with the blocks' private constructors (no re-validation of what was
valid already) and are equal to what ``attrs.evolve`` builds.

An agent also calls the strategy each turn on the same history grown by a message or
two. Without ``exclude_tools`` and ``clear_tool_inputs`` (whose decisions read the
calls), with a frozen rule-based counter and nothing logged at INFO, the strategy
continues its last clearing instead of redoing it (:class:`_Progress`; the sum reclaimed
for ``min_reclaim_tokens`` is carried): the decisions are the same, taken once per
result, and a turn costs a C-speed comparison of the history's messages (held by the
progress, until the next history replaces it), its new messages and the output list.
Otherwise every call decides every result.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence

import attrs

from .._counting.counter import BaseCounter, compact_json
from .._counting.heuristic import TokenCounter
from .._counting.tokenizer import TokenizerCounter
from .._log import log_compaction, logger
from .._messages.content import ContentBlock, Text, ToolResult, ToolUse
from .._messages.conversation import Structure, replace_content, tool_results
from .._messages.message import Message
from .._prefix import starts_with
from .._stores.offload import (
    describe_call,
    is_reference,
    offload,
    referenced,
    result_content,
)
from .._stores.serialized import content_key
from .._stores.store import Store, optional_store
from .._validators import bool_, non_negative_int, require_names, string
from .strategy import PureStrategy, max_tokens_field

__all__ = ["ToolResultClearingStrategy"]

_EMPTY_INPUT_JSON = "{}"

_Entry = tuple["weakref.ref[Message]", tuple[int, ...], str, Message]
_CLEARED: dict[int, _Entry] = {}
"""``id(original)`` -> (weak reference to it, blocks cleared, placeholder, cleared copy)."""


def _forget(ref: weakref.ref[Message], key: int, cache: dict[int, _Entry] = _CLEARED) -> None:
    # The cache is bound as a default: at interpreter exit the module's globals may be
    # gone before the last messages die.
    entry = cache.get(key)
    if entry is not None and entry[0] is ref:
        cache.pop(key, None)


def _cleared_message(
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


def _referenced(
    message: Message,
    at: int,
    blocks: list[int],
    references: dict[tuple[int, int], str],
    placeholder: str,
) -> Message:
    """``message`` (``messages[at]``) with each result at ``blocks`` holding its reference
    (the placeholder where its offload failed)."""
    content = list(message.content)
    for index in blocks:
        result = content[index]
        assert isinstance(result, ToolResult)
        text = references.get((at, index), placeholder)
        content[index] = replace_content(result, (Text(text=text),))
    return Message._of(message.role, tuple(content))


def _exclude_tools(value: Iterable[str]) -> frozenset[str]:
    return require_names(value, "ToolResultClearingStrategy.exclude_tools")


_FROZEN_COUNTERS = (TokenCounter, TokenizerCounter)
"""Counters whose rules cannot change after construction (frozen): a cost they gave
stays true, so progress made with them can be carried to the next call."""


class _Progress:
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
                    copies[-1] = _cleared_message(message, self.last_blocks, placeholder)
                else:
                    self.last_blocks = (b_index,)
                    at.append(m_index)
                    copies.append(_cleared_message(message, self.last_blocks, placeholder))
            del pending[:take]
        output = list(messages)
        if self.count and self.reclaimed >= min_reclaim:
            for m_index, copy in zip(self.at, self.copies, strict=True):
                output[m_index] = copy
        return output


class _Memo:
    """A strategy's last :class:`_Progress`; no part of its value (copies start empty)."""

    __slots__ = ("lock", "progress")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.progress: _Progress | None = None

    def __reduce__(self) -> tuple[type[_Memo], tuple[()]]:
        return (_Memo, ())

    def __copy__(self) -> _Memo:
        return _Memo()

    def __deepcopy__(self, memo: dict[int, object]) -> _Memo:
        return _Memo()


@attrs.define
class ToolResultClearingStrategy(PureStrategy):
    """Replaces the content of all but the ``keep_recent_n`` newest tool results.

    The placeholder keeps each result's ``tool_use_id`` and ``is_error``, so the
    conversation stays well formed; no message is removed. A result that costs no more
    than the placeholder is left as it is.

    Examples:
        >>> strategy = ToolResultClearingStrategy(2, 100_000, exclude_tools={"read_memory"})
    """

    keep_recent_n: int = attrs.field(validator=non_negative_int())
    """How many of the newest tool results are never cleared."""
    max_tokens: int = max_tokens_field()
    """The trigger: compact when the history costs more than this."""
    placeholder: str = attrs.field(
        default="[tool result cleared]", kw_only=True, validator=string()
    )
    """What a cleared result says instead."""
    exclude_tools: frozenset[str] = attrs.field(
        default=frozenset(), kw_only=True, converter=_exclude_tools
    )
    """Names of tools whose results are never cleared."""
    clear_tool_inputs: bool = attrs.field(default=False, kw_only=True, validator=bool_())
    """Also replace the inputs of the calls whose results are cleared with ``{}``."""
    min_reclaim_tokens: int = attrs.field(default=0, kw_only=True, validator=non_negative_int())
    """Clear nothing unless at least this many tokens would be reclaimed (protects the
    provider's prompt cache from churn; Anthropic's ``clear_at_least``)."""
    store: Store | None = attrs.field(default=None, kw_only=True, validator=optional_store())
    """Where cleared results go: each placeholder then names the call, its size and the
    key to recall it by (``[tool result cleared: read_file a.py, 2,314 tokens — recall:
    <key>]``)."""
    _memo: _Memo = attrs.field(factory=_Memo, init=False, eq=False, repr=False)

    def _apply(self, messages: Sequence[Message]) -> list[Message]:
        counter = self.counter
        if (
            not isinstance(messages, list | tuple)
            or self.exclude_tools
            or self.clear_tool_inputs
            or self.store is not None
            or type(counter) not in _FROZEN_COUNTERS
            or logger.isEnabledFor(logging.INFO)
        ):
            return self._clear(messages)
        # An agent clears its history grown by a message or two since the last call:
        # continue that clearing (the same decisions, in the same order) from where it
        # stopped, rather than re-deciding every old result.
        config = (self.keep_recent_n, self.placeholder, counter)
        memo = self._memo
        with memo.lock:
            progress = memo.progress
            if progress is None or not progress.extends(messages, config):
                progress = memo.progress = _Progress(config)
            try:
                return progress.advance(messages, self.min_reclaim_tokens)
            except BaseException:
                # Whatever failed (junk in the list, a counter's error), the progress
                # may be half-advanced: the next call starts afresh.
                memo.progress = None
                raise

    def _reference_cost(self, result: ToolResult, use: ToolUse | None, cost: int) -> int:
        """What the reference that replaces a result of ``cost`` tokens costs, under the
        key any store gives its content, computed before anything is put (a clearing
        that ``min_reclaim_tokens`` skips puts nothing)."""
        removed = result_content(result, use, with_call=self.clear_tool_inputs)
        reference = referenced(self.placeholder, cost, content_key(removed), describe_call(use))
        return self.counter.estimate_text(reference)

    def _offload(self, result: ToolResult, use: ToolUse | None, cost: int) -> str | None:
        """Put ``result`` in the store and return the reference that replaces it
        (``None`` when the put failed: the placeholder replaces it)."""
        assert self.store is not None
        removed = result_content(result, use, with_call=self.clear_tool_inputs)
        key = offload(self.store, removed, "ToolResultClearingStrategy")
        if key is None:
            return None
        return referenced(self.placeholder, cost, key, describe_call(use))

    def _cleared(
        self,
        messages: Sequence[Message],
        at: int,
        blocks: list[int],
        references: dict[tuple[int, int], str],
    ) -> Message:
        """``messages[at]`` with its results at ``blocks`` cleared (each with its
        reference, when it was offloaded)."""
        if any((at, block) in references for block in blocks):
            return _referenced(messages[at], at, blocks, references, self.placeholder)
        return _cleared_message(messages[at], tuple(blocks), (Text(text=self.placeholder),))

    def _clear(self, messages: Sequence[Message]) -> list[Message]:
        positions = list(tool_results(messages))
        candidates = positions[: max(0, len(positions) - self.keep_recent_n)]
        if not candidates:
            return list(messages)
        counter = self.counter
        placeholder = (Text(text=self.placeholder),)
        placeholder_cost = counter.estimate_text(self.placeholder)
        empty_input_cost = counter.estimate_text(_EMPTY_INPUT_JSON)
        offloading = self.store is not None
        structure = (
            Structure.of(messages)
            if self.exclude_tools or self.clear_tool_inputs or offloading
            else None
        )

        replaced: dict[int, list[int]] = {}  # tool message index -> blocks to clear
        planned: list[tuple[int, int, ToolResult, ToolUse | None, int]] = []  # to offload
        blanked: dict[int, set[str]] = {}  # assistant index -> tool-use ids to blank
        reclaimed = 0
        cleared_ids: list[str] = []
        for ref in candidates:
            m_index, result = ref.message, ref.result
            use: ToolUse | None = None
            if structure is not None:
                use = structure.tool_use_for(m_index, result)
                if use is not None and use.name in self.exclude_tools:
                    continue
            if result.content == placeholder or (offloading and is_reference(result)):
                continue
            cost = counter.estimate_content(result.content)
            if cost <= placeholder_cost:
                continue
            marker_cost = placeholder_cost
            if offloading:
                marker_cost = self._reference_cost(result, use, cost)
            if cost <= marker_cost:
                continue
            if offloading:
                planned.append((m_index, ref.block, result, use, cost))
            replaced.setdefault(m_index, []).append(ref.block)
            reclaimed += cost - marker_cost
            cleared_ids.append(result.tool_use_id)
            if self.clear_tool_inputs and use is not None and structure is not None:
                input_cost = counter.estimate_text(compact_json(use.input))
                if input_cost > empty_input_cost:
                    caller = structure.caller_of(m_index)
                    ids = blanked.setdefault(caller, set()) if caller is not None else {use.id}
                    # A call answered twice (malformed input) has its input blanked
                    # once, so it counts toward min_reclaim_tokens once.
                    if use.id not in ids:
                        ids.add(use.id)
                        reclaimed += input_cost - empty_input_cost

        if not replaced or reclaimed < self.min_reclaim_tokens:
            if replaced:
                log_compaction(
                    "ToolResultClearingStrategy",
                    counter,
                    messages,
                    messages,
                    {"skipped": f"would reclaim {reclaimed} < {self.min_reclaim_tokens}"},
                )
            return list(messages)

        return self._output(messages, replaced, blanked, planned, (cleared_ids, reclaimed))

    def _output(
        self,
        messages: Sequence[Message],
        replaced: dict[int, list[int]],
        blanked: dict[int, set[str]],
        planned: list[tuple[int, int, ToolResult, ToolUse | None, int]],
        logged: tuple[list[str], int],
    ) -> list[Message]:
        """The clearing decided by :meth:`_clear`: ``planned`` results put in the store
        (only now: a skipped clearing puts nothing), then each message at ``replaced``
        with its results cleared and each call at ``blanked`` with its input emptied."""
        cleared_ids, reclaimed = logged
        # Decided: only now is anything put in the store.
        references: dict[tuple[int, int], str] = {}  # with a store: what replaces each
        for m_index, block, result, use, cost in planned:
            reference = self._offload(result, use, cost)
            if reference is not None:
                references[m_index, block] = reference
        output = list(messages)
        for m_index, blocks in replaced.items():
            output[m_index] = self._cleared(messages, m_index, blocks, references)
        for a_index, ids in blanked.items():
            message = messages[a_index]
            content: list[ContentBlock] = [
                attrs.evolve(block, input={})
                if isinstance(block, ToolUse) and block.id in ids
                else block
                for block in message.content
            ]
            output[a_index] = Message._of(message.role, tuple(content))
        log_compaction(
            "ToolResultClearingStrategy",
            self.counter,
            messages,
            output,
            {"cleared": len(cleared_ids), "cleared_ids": cleared_ids, "reclaimed": reclaimed},
        )
        return output
