"""A summarizer whose calls are counted, so ``simulate`` can price a compaction's own cost.

An LLM summarizer reads the part it summarizes and writes the summary: a compaction that
saves cache misses but calls a model to do it is only cheaper when that call costs less
than it saves. :class:`Metered` wraps the run's summarizer and adds up each call's input
and output tokens (as the provider reports them, else as the run's counter estimates
them), for the cost model to price.
"""

from __future__ import annotations

from .._counting.counter import BaseCounter
from .._messages.message import Message
from ..providers._base import CompletionRequest, CompletionResponse, Provider

__all__ = ["Metered"]


class Metered(Provider):
    """``provider``, with the tokens of its calls added up in :attr:`tokens`."""

    def __init__(self, provider: Provider, counter: BaseCounter) -> None:
        self.provider = provider
        self.counter = counter
        self.tokens: tuple[int, int] = (0, 0)
        """Input and output tokens of every call so far."""

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Call ``provider`` and count the call."""
        response = await self.provider.complete(request)
        usage = response.usage
        if usage is not None:
            read, written = usage.input_tokens, usage.output_tokens
        else:
            sent = list(request.messages)
            if request.system:
                sent.insert(0, Message.system(request.system))
            read = self.counter.estimate_messages(sent)
            written = self.counter.estimate_message(response.message)
        self.tokens = (self.tokens[0] + read, self.tokens[1] + written)
        return response
