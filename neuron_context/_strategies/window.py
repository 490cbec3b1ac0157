"""The sliding window: keep the system messages and the newest messages."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from .._log import log_compaction
from .._messages.conversation import cut_keeping_last, turn_start
from .._messages.message import Message, Role
from .._stores.index import with_reference
from .._stores.store import Store, optional_store
from .._validators import bool_, non_negative_int
from .strategy import PureStrategy, max_tokens_field

__all__ = ["SlidingWindowStrategy"]


@attrs.define
class SlidingWindowStrategy(PureStrategy):
    """Drops all but the last ``window_size`` non-system messages.

    System messages are never dropped and nothing is reordered: the output is the input
    minus the dropped messages. A window that would begin inside a tool exchange starts
    after it instead, so the kept part is well formed and never larger than asked.

    With ``start_on_user=True``, a window whose first kept non-system message is not a
    user message also keeps the user message that opened its turn (the request the agent
    is working on; in an agent session of one request and hundreds of tool turns, that
    request), so the output starts on a user message whenever the input did, as
    Anthropic requires. The window then holds one message more than ``window_size``.

    Examples:
        >>> strategy = SlidingWindowStrategy(10, 100_000)
    """

    window_size: int = attrs.field(validator=non_negative_int())
    """How many non-system messages to keep, at most."""
    max_tokens: int = max_tokens_field()
    """The trigger: compact when the history costs more than this."""
    start_on_user: bool = attrs.field(default=False, kw_only=True, validator=bool_())
    """Keep the output starting on a user message (off by default: the window then keeps
    exactly its last messages, and may begin on an assistant message)."""
    store: Store | None = attrs.field(default=None, kw_only=True, validator=optional_store())
    """Where what it removes goes: the output then starts (after the system messages)
    with an index of it, a line per entry (``- read_file a.py (812 tokens) — recall: <key>``)."""

    def _apply(self, messages: Sequence[Message]) -> list[Message]:
        cut = cut_keeping_last(messages, self.window_size)
        pin = pinned_request(messages, cut) if self.start_on_user else None
        system = Role.SYSTEM
        if pin is None:
            kept = [m for m in messages[:cut] if m.role is system]
        else:
            kept = [m for i, m in enumerate(messages[:cut]) if m.role is system or i == pin]
        dropped = cut - len(kept)
        kept.extend(messages[cut:])
        if dropped:
            log_compaction(
                "SlidingWindowStrategy", self.counter, messages, kept, {"dropped": dropped}
            )
        return with_reference(messages, kept, self.store, self.counter, "SlidingWindowStrategy")


def pinned_request(messages: Sequence[Message], cut: int) -> int | None:
    """The index of the user message to keep before ``cut`` so that the kept part starts
    on a user message; ``None`` when it already does, keeps no non-system message, or no
    user message precedes the cut."""
    for message in messages[cut:]:
        if message.role is Role.USER:
            return None
        if message.role is not Role.SYSTEM:
            return turn_start(messages, cut - 1) if cut > 0 else None
    return None
