"""Helpers for the agent tests: scripted replies over ``FunctionProvider``."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping

from neuron_context import (
    JSON,
    CompletionRequest,
    CompletionResponse,
    Message,
    TokenUsage,
    ToolUse,
    validate,
)
from neuron_context.testing import FunctionProvider

_ids = itertools.count()


def calls(*uses: tuple[str, Mapping[str, JSON]], text: str = "") -> CompletionResponse:
    """An assistant reply calling each ``(name, arguments)``, with fresh ids."""
    blocks = [ToolUse(id=f"call_{next(_ids)}", name=name, input=dict(args)) for name, args in uses]
    return CompletionResponse(
        Message.assistant(text, tool_uses=blocks),
        stop_reason="tool_use",
        usage=TokenUsage(100, 10),
    )


def answer(text: str) -> CompletionResponse:
    """A final assistant reply."""
    return CompletionResponse(
        Message.assistant(text), stop_reason="end_turn", usage=TokenUsage(100, 5)
    )


Reply = CompletionResponse | Callable[[CompletionRequest], CompletionResponse]


def scripted(replies: Iterable[Reply]) -> FunctionProvider:
    """A provider answering with ``replies`` in order; every request must be well formed."""
    queue = list(replies)

    def reply(request: CompletionRequest) -> CompletionResponse:
        validate(request.messages)
        if not queue:
            return answer("done")
        item = queue.pop(0)
        return item(request) if callable(item) else item

    return FunctionProvider(reply)


def first_turn_role(messages: Iterable[Message]) -> str | None:
    """The role of the first non-system message."""
    for message in messages:
        if message.role != "system":
            return str(message.role)
    return None
