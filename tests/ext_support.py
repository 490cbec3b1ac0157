"""What the framework-adapter tests share: expected round trips and agent-run checks."""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from neuron_context import (
    CompositeStrategy,
    ContextStrategy,
    Message,
    Role,
    SlidingWindowStrategy,
    ToolResultClearingStrategy,
    start_on_user,
    validate,
)

__all__ = ["compaction", "one_result_per_message", "stack", "well_formed"]


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


def _pending(messages: Sequence[Message]) -> int | None:
    """Where the trailing exchange whose calls await their results starts, or ``None``."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role is Role.USER:
            return None
        if message.role is Role.ASSISTANT:
            answered = {
                r.tool_use_id for later in messages[index + 1 :] for r in later.tool_results
            }
            waiting = any(use.id not in answered for use in message.tool_uses)
            return index if waiting else None
    return None


def compaction(strategy: ContextStrategy, messages: Sequence[Message]) -> list[Message]:
    """What the one compaction step sends for ``messages`` when ``strategy`` fires: its
    compaction, starting on a user message, with a trailing exchange whose calls still
    await their results held out and put back as it was."""
    held = _pending(messages)
    body = list(messages) if held is None else list(messages[:held])
    result = start_on_user(anyio.run(strategy.compact, body), body)
    return result if held is None else [*result, *messages[held:]]
