"""Tool-result clearing: old tool results become a short placeholder.

What a clearing remembers across calls (the cleared copies of tool messages, and the
progress it continues when an agent's history has grown) is in
:mod:`neuron_context._strategies.clearing_memo`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import attrs

from .._counting.counter import compact_json
from .._log import log_compaction, logger
from .._messages.content import ContentBlock, Text, ToolResult, ToolUse
from .._messages.conversation import Structure, replace_content, tool_results
from .._messages.message import Message
from .._stores.offload import (
    describe_call,
    is_reference,
    offload,
    referenced,
    result_content,
)
from .._stores.serialized import Content, content_key
from .._stores.store import Store, optional_store
from .._validators import bool_, non_negative_int, require_names, string
from .clearing_memo import FROZEN_COUNTERS, Memo, Progress, cleared_message
from .strategy import PureStrategy, max_tokens_field

__all__ = ["ToolResultClearingStrategy"]

_EMPTY_INPUT_JSON = "{}"


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
    _memo: Memo = attrs.field(factory=Memo, init=False, eq=False, repr=False)

    def _apply(self, messages: Sequence[Message]) -> list[Message]:
        counter = self.counter
        if (
            not isinstance(messages, list | tuple)
            or self.exclude_tools
            or self.clear_tool_inputs
            or self.store is not None
            or type(counter) not in FROZEN_COUNTERS
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
                progress = memo.progress = Progress(config)
            try:
                return progress.advance(messages, self.min_reclaim_tokens)
            except BaseException:
                # Whatever failed (junk in the list, a counter's error), the progress
                # may be half-advanced: the next call starts afresh.
                memo.progress = None
                raise

    def _reference(self, use: ToolUse | None, cost: int, key: str) -> str:
        """The reference that replaces a result of ``cost`` tokens (called by ``use``)
        whose content is under ``key`` in the store."""
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
        return cleared_message(messages[at], tuple(blocks), (Text(text=self.placeholder),))

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
        planned: list[tuple[int, int, Content, ToolUse | None, int]] = []  # to offload
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
                # Priced under the key any store gives the content, before anything is
                # put: a clearing that min_reclaim_tokens skips puts nothing.
                removed = result_content(result, use, with_call=self.clear_tool_inputs)
                reference = self._reference(use, cost, content_key(removed))
                marker_cost = counter.estimate_text(reference)
            if cost <= marker_cost:
                continue
            if offloading:
                planned.append((m_index, ref.block, removed, use, cost))
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
        planned: list[tuple[int, int, Content, ToolUse | None, int]],
        logged: tuple[list[str], int],
    ) -> list[Message]:
        """The clearing decided by :meth:`_clear`: ``planned`` results put in the store
        (only now: a skipped clearing puts nothing), then each message at ``replaced``
        with its results cleared and each call at ``blanked`` with its input emptied."""
        cleared_ids, reclaimed = logged
        # Decided: only now is anything put in the store.
        references: dict[tuple[int, int], str] = {}  # with a store: what replaces each
        for m_index, block, removed, use, cost in planned:
            key = offload(self.store, removed, "ToolResultClearingStrategy")
            if key is not None:  # else (the put failed) the placeholder replaces it
                references[m_index, block] = self._reference(use, cost, key)
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
