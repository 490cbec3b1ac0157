"""Stripping tool calls: remove tool messages and the tool uses that called them."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from .._log import log_compaction
from .._messages.content import ToolUse
from .._messages.conversation import opens_exchange
from .._messages.message import Message, Role
from .._stores.index import with_reference
from .._stores.store import Store, optional_store
from .strategy import PureStrategy, max_tokens_field

__all__ = ["StripToolCallsStrategy"]


@attrs.define
class StripToolCallsStrategy(PureStrategy):
    """Removes tool messages and tool uses; an assistant message left empty is removed.

    What remains is the conversation's text: user requests and assistant answers. No
    user message is removed, so the output starts on a user message whenever the input
    did.

    Examples:
        >>> strategy = StripToolCallsStrategy()
    """

    max_tokens: int = max_tokens_field()
    """The trigger: compact when the history costs more than this."""
    store: Store | None = attrs.field(default=None, kw_only=True, validator=optional_store())
    """Where what it removes goes: the output then starts (after the system messages)
    with an index of it, a line per entry (``- read_file a.py (812 tokens) — recall: <key>``)."""

    def _apply(self, messages: Sequence[Message]) -> list[Message]:
        output: list[Message] = []
        removed_messages = 0
        removed_ids: list[str] = []
        for message in messages:
            if message.role is Role.TOOL:
                removed_messages += 1
                removed_ids.extend(r.tool_use_id for r in message.tool_results)
                continue
            if opens_exchange(message):
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
        return with_reference(messages, output, self.store, self.counter, "StripToolCallsStrategy")
