"""Tool-result clearing: old tool results become a short placeholder."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from .._counting.base import BaseCounter, compact_json
from .._errors import ConfigurationError
from .._log import log_compaction
from .._messages.content import Text, ToolResult, ToolUse
from .._messages.conversation import Structure, iter_tool_results
from .._messages.message import Message
from .base import BudgetedStrategy, check_count, to_counter

__all__ = ["ToolResultClearingStrategy"]

_EMPTY_INPUT_JSON = "{}"


def _to_names(value: object) -> frozenset[str]:
    if isinstance(value, str):
        msg = "ToolResultClearingStrategy.exclude_tools must be a collection of names, not a str"
        raise ConfigurationError(msg)
    try:
        names: frozenset[object] = frozenset(value)  # type: ignore[call-overload]
    except TypeError:
        msg = f"ToolResultClearingStrategy.exclude_tools must be a collection, got {value!r}"
        raise ConfigurationError(msg) from None
    for name in names:
        if not isinstance(name, str):
            msg = f"ToolResultClearingStrategy.exclude_tools holds a non-str {name!r}"
            raise ConfigurationError(msg)
    return frozenset(str(name) for name in names)


def _check_placeholder(_: object, attribute: Any, value: object) -> None:
    if not isinstance(value, str):
        msg = f"ToolResultClearingStrategy.{attribute.name} must be a str, got {value!r}"
        raise ConfigurationError(msg)


def _check_bool(_: object, attribute: Any, value: object) -> None:
    # Fix (tests/test_clearing.py): attrs' instance_of raised TypeError, not ConfigurationError.
    if not isinstance(value, bool):
        msg = f"ToolResultClearingStrategy.{attribute.name} must be a bool, got {value!r}"
        raise ConfigurationError(msg)


@attrs.define
class ToolResultClearingStrategy(BudgetedStrategy):
    """Replaces the content of all but the ``keep_recent_n`` newest tool results.

    The placeholder keeps each result's ``tool_use_id`` and ``is_error``, so the
    conversation stays well formed; no message is removed. A result that costs no more
    than the placeholder is left as it is.

    Examples:
        >>> strategy = ToolResultClearingStrategy(2, 100_000, exclude_tools={"read_memory"})
    """

    keep_recent_n: int = attrs.field(validator=check_count("ToolResultClearingStrategy"))
    """How many of the newest tool results are never cleared."""
    max_tokens: int = attrs.field(default=0, validator=check_count("ToolResultClearingStrategy"))
    """The trigger: compact when the history costs more than this."""
    counter: BaseCounter = attrs.field(default=None, kw_only=True, converter=to_counter)
    """Prices messages (default: the heuristic :class:`TokenCounter`)."""
    placeholder: str = attrs.field(
        default="[tool result cleared]", kw_only=True, validator=_check_placeholder
    )
    """What a cleared result says instead."""
    exclude_tools: frozenset[str] = attrs.field(
        default=frozenset(), kw_only=True, converter=_to_names
    )
    """Names of tools whose results are never cleared."""
    clear_tool_inputs: bool = attrs.field(default=False, kw_only=True, validator=_check_bool)
    """Also replace the inputs of the calls whose results are cleared with ``{}``."""
    min_reclaim_tokens: int = attrs.field(
        default=0, kw_only=True, validator=check_count("ToolResultClearingStrategy")
    )
    """Clear nothing unless at least this many tokens would be reclaimed (protects the
    provider's prompt cache from churn; Anthropic's ``clear_at_least``)."""

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Clear the old tool results."""
        return self.apply(messages)

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        """The synchronous core of :meth:`compact`."""
        positions = list(iter_tool_results(messages))
        candidates = positions[: max(0, len(positions) - self.keep_recent_n)]
        if not candidates:
            return list(messages)
        counter = self.counter
        placeholder = (Text(text=self.placeholder),)
        placeholder_cost = counter.estimate_text(self.placeholder)
        empty_input_cost = counter.estimate_text(_EMPTY_INPUT_JSON)
        needs_structure = bool(self.exclude_tools) or self.clear_tool_inputs
        structure = Structure.of(messages) if needs_structure else None

        cleared: dict[int, dict[int, ToolResult]] = {}
        blanked: dict[int, set[str]] = {}  # assistant index -> tool-use ids to blank
        reclaimed = 0
        cleared_ids: list[str] = []
        for m_index, b_index, result in candidates:
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
            cleared.setdefault(m_index, {})[b_index] = attrs.evolve(result, content=placeholder)
            reclaimed += cost - placeholder_cost
            cleared_ids.append(result.tool_use_id)
            if self.clear_tool_inputs and use is not None and structure is not None:
                input_cost = counter.estimate_text(compact_json(use.input))
                if input_cost > empty_input_cost:
                    start = structure.exchanges[structure.exchange_of[m_index]].start
                    ids = blanked.setdefault(start, set())
                    # Fix (tests/test_properties.py, malformed input): a call answered
                    # twice has its input blanked once, so count it toward min_reclaim once.
                    if use.id not in ids:
                        ids.add(use.id)
                        reclaimed += input_cost - empty_input_cost

        if not cleared or reclaimed < self.min_reclaim_tokens:
            if cleared:
                log_compaction(
                    "ToolResultClearingStrategy",
                    counter,
                    messages,
                    messages,
                    {"skipped": f"would reclaim {reclaimed} < {self.min_reclaim_tokens}"},
                )
            return list(messages)

        output = list(messages)
        for m_index, blocks in cleared.items():
            message = output[m_index]
            content = tuple(blocks.get(i, block) for i, block in enumerate(message.content))
            output[m_index] = attrs.evolve(message, content=content)
        for a_index, ids in blanked.items():
            message = output[a_index]
            content = tuple(
                attrs.evolve(block, input={})
                if isinstance(block, ToolUse) and block.id in ids
                else block
                for block in message.content
            )
            output[a_index] = attrs.evolve(message, content=content)
        log_compaction(
            "ToolResultClearingStrategy",
            counter,
            messages,
            output,
            {"cleared": len(cleared_ids), "cleared_ids": cleared_ids, "reclaimed": reclaimed},
        )
        return output
