"""Stripping tool calls: remove tool messages and the tool uses that called them."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from .._counting.base import BaseCounter
from .._log import log_compaction
from .._messages.content import ToolUse
from .._messages.message import Message, Role
from .base import BudgetedStrategy, check_count, to_counter

__all__ = ["StripToolCallsStrategy"]


@attrs.define
class StripToolCallsStrategy(BudgetedStrategy):
    """Removes tool messages and tool uses; an assistant message left empty is removed.

    What remains is the conversation's text: user requests and assistant answers.

    Examples:
        >>> strategy = StripToolCallsStrategy()
    """

    max_tokens: int = attrs.field(default=0, validator=check_count("StripToolCallsStrategy"))
    """The trigger: compact when the history costs more than this."""
    counter: BaseCounter = attrs.field(default=None, kw_only=True, converter=to_counter)
    """Prices messages (default: the heuristic :class:`TokenCounter`)."""

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Remove every tool message and tool use."""
        return self.apply(messages)

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        """The synchronous core of :meth:`compact`."""
        output: list[Message] = []
        removed_messages = 0
        removed_ids: list[str] = []
        for message in messages:
            if message.role is Role.TOOL:
                removed_messages += 1
                removed_ids.extend(r.tool_use_id for r in message.tool_results)
                continue
            if message.role is Role.ASSISTANT and any(
                isinstance(block, ToolUse) for block in message.content
            ):
                content = tuple(b for b in message.content if not isinstance(b, ToolUse))
                if not content:
                    removed_messages += 1
                    continue
                output.append(attrs.evolve(message, content=content))
                continue
            output.append(message)
        if removed_messages or removed_ids:
            log_compaction(
                "StripToolCallsStrategy",
                self.counter,
                messages,
                output,
                {"removed_messages": removed_messages, "removed_result_ids": removed_ids},
            )
        return output
