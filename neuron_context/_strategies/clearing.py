"""Tool-result clearing: old tool results become a short placeholder."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from .._counting.base import compact_json
from .._errors import ConfigurationError, show
from .._log import log_compaction
from .._messages.content import ContentBlock, Text, ToolUse
from .._messages.conversation import Structure, replace_blocks, replace_content, tool_results
from .._messages.message import Message
from .._validators import bool_, non_negative_int, string
from .base import PureStrategy, max_tokens_field

__all__ = ["ToolResultClearingStrategy"]

_EMPTY_INPUT_JSON = "{}"


def _to_names(value: object) -> frozenset[str]:
    if isinstance(value, str):
        msg = "ToolResultClearingStrategy.exclude_tools must be a collection of names, not a str"
        raise ConfigurationError(msg)
    try:
        names: frozenset[object] = frozenset(value)  # type: ignore[call-overload]
    except TypeError:
        msg = f"ToolResultClearingStrategy.exclude_tools must be a collection, got {show(value)}"
        raise ConfigurationError(msg) from None
    for name in names:
        if not isinstance(name, str):
            msg = f"ToolResultClearingStrategy.exclude_tools holds a non-str {show(name)}"
            raise ConfigurationError(msg)
    return frozenset(str(name) for name in names)


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
        default=frozenset(), kw_only=True, converter=_to_names
    )
    """Names of tools whose results are never cleared."""
    clear_tool_inputs: bool = attrs.field(default=False, kw_only=True, validator=bool_())
    """Also replace the inputs of the calls whose results are cleared with ``{}``."""
    min_reclaim_tokens: int = attrs.field(default=0, kw_only=True, validator=non_negative_int())
    """Clear nothing unless at least this many tokens would be reclaimed (protects the
    provider's prompt cache from churn; Anthropic's ``clear_at_least``)."""

    def _apply(self, messages: Sequence[Message]) -> list[Message]:
        positions = list(tool_results(messages))
        candidates = positions[: max(0, len(positions) - self.keep_recent_n)]
        if not candidates:
            return list(messages)
        counter = self.counter
        placeholder = (Text(text=self.placeholder),)
        placeholder_cost = counter.estimate_text(self.placeholder)
        empty_input_cost = counter.estimate_text(_EMPTY_INPUT_JSON)
        needs_structure = bool(self.exclude_tools) or self.clear_tool_inputs
        structure = Structure.of(messages) if needs_structure else None

        replaced: dict[tuple[int, int], ContentBlock] = {}
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
            if result.content == placeholder:
                continue
            cost = counter.estimate_content(result.content)
            if cost <= placeholder_cost:
                continue
            replaced[m_index, ref.block] = replace_content(result, placeholder)
            reclaimed += cost - placeholder_cost
            cleared_ids.append(result.tool_use_id)
            if self.clear_tool_inputs and use is not None and structure is not None:
                input_cost = counter.estimate_text(compact_json(use.input))
                if input_cost > empty_input_cost:
                    caller = structure.caller_of(m_index)
                    ids = blanked.setdefault(caller, set()) if caller is not None else {use.id}
                    # Fix (tests/test_properties.py, malformed input): a call answered
                    # twice has its input blanked once, so count it toward min_reclaim once.
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

        for a_index, ids in blanked.items():
            for b_index, block in enumerate(messages[a_index].content):
                if isinstance(block, ToolUse) and block.id in ids:
                    replaced[a_index, b_index] = attrs.evolve(block, input={})
        output = replace_blocks(messages, replaced)
        log_compaction(
            "ToolResultClearingStrategy",
            counter,
            messages,
            output,
            {"cleared": len(cleared_ids), "cleared_ids": cleared_ids, "reclaimed": reclaimed},
        )
        return output
