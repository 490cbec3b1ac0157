"""The front of a history, read without reading the rest: what
:class:`~neuron_context._strategies.default.DefaultStack`'s trigger needs on every turn
(O(the front), not of the history)."""

from __future__ import annotations

from collections.abc import Sequence

from ..._counting.counter import BaseCounter
from ..._messages.message import Message, Role

__all__ = ["leading_summaries", "leading_system_cost"]


def leading_summaries(messages: Sequence[Message]) -> int:
    """How many summaries the front of ``messages`` holds, where a compaction puts them:
    among the system messages and the task, before the first other message (O(their
    number), not of the history)."""
    found = 0
    task = False
    for message in messages:
        if message.is_compaction:
            found += 1
        elif message.role is Role.USER and not task:
            task = True
        elif message.role is not Role.SYSTEM:
            break
    return found


def leading_system_cost(messages: Sequence[Message], counter: BaseCounter) -> int:
    """The cost of the system messages at the start of ``messages`` (O(their number))."""
    leading: list[Message] = []
    for message in messages:
        if message.role is not Role.SYSTEM:
            break
        leading.append(message)
    return counter.estimate_messages(leading)
