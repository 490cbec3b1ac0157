"""The sliding window: keep the system messages and the newest messages."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from .._counting.base import BaseCounter
from .._log import log_compaction
from .._messages.conversation import cut_keeping_last
from .._messages.message import Message, Role
from .base import BudgetedStrategy, check_count, to_counter

__all__ = ["SlidingWindowStrategy"]


@attrs.define
class SlidingWindowStrategy(BudgetedStrategy):
    """Drops all but the last ``window_size`` non-system messages.

    System messages are never dropped and nothing is reordered: the output is the input
    minus the dropped messages. A window that would begin inside a tool exchange starts
    after it instead, so the kept part is well formed and never larger than asked.

    Examples:
        >>> strategy = SlidingWindowStrategy(10, 100_000)
    """

    window_size: int = attrs.field(validator=check_count("SlidingWindowStrategy"))
    """How many non-system messages to keep, at most."""
    max_tokens: int = attrs.field(default=0, validator=check_count("SlidingWindowStrategy"))
    """The trigger: compact when the history costs more than this."""
    counter: BaseCounter = attrs.field(default=None, kw_only=True, converter=to_counter)
    """Prices messages (default: the heuristic :class:`TokenCounter`)."""

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Keep the system messages and the newest ``window_size`` others."""
        return self.apply(messages)

    def apply(self, messages: Sequence[Message]) -> list[Message]:
        """The synchronous core of :meth:`compact`."""
        cut = cut_keeping_last(messages, self.window_size)
        kept = [m for m in messages[:cut] if m.role is Role.SYSTEM]
        dropped = cut - len(kept)
        kept.extend(messages[cut:])
        if dropped:
            log_compaction(
                "SlidingWindowStrategy", self.counter, messages, kept, {"dropped": dropped}
            )
        return kept
