"""What the framework-adapter tests share: expected round trips and agent-run checks."""

from __future__ import annotations

from collections.abc import Sequence

from neuron_context import (
    CompositeStrategy,
    ContextStrategy,
    Message,
    Role,
    SlidingWindowStrategy,
    ToolResultClearingStrategy,
    validate,
)

__all__ = ["one_result_per_message", "stack", "well_formed"]


def one_result_per_message(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with each multi-result tool message split into one message per result:
    the frameworks hold one result per message, so that is what a round trip returns."""
    out: list[Message] = []
    for message in messages:
        if message.role is Role.TOOL and len(message.content) > 1:
            out.extend(Message(role=Role.TOOL, content=(block,)) for block in message.content)
        else:
            out.append(message)
    return out


def stack(max_tokens: int) -> ContextStrategy:
    """The stack the adapter tests run: clear old tool results, then a sliding window."""
    return CompositeStrategy(
        [ToolResultClearingStrategy(2, max_tokens), SlidingWindowStrategy(8, max_tokens)],
        max_tokens,
    )


def well_formed(messages: Sequence[Message]) -> bool:
    """Whether ``messages`` is well formed (no orphan result, no unanswered call)."""
    validate(messages)
    return True
