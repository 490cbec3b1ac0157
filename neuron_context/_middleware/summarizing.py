"""Summarization as a middleware, persisted into the agent's history.

Why persisted: a summary costs a model call and is not deterministic. If it lived only
in the request (as :class:`ContextEditingMiddleware` edits do), every later call would
find the full history over budget again and summarize the same messages again: one
extra model call per turn, a slightly different summary each time (the model's view of
its own past keeps shifting), and a request prefix that never repeats, so the
provider's prompt cache never hits. Written into the history, the summary is made once
when the budget is crossed; later calls send it with the new messages, and the next
summary updates it (one anchored summary, see
:class:`~neuron_context.SummarizationStrategy`).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from .._compaction.reporting import reporter
from .._counting.counter import BaseCounter
from .._errors import InvalidConversationError
from .._log import logger
from .._messages.conversation import Structure
from .._messages.message import Message, Role
from .._messages.wellformed import validate
from .._strategies.strategy import to_counter
from .._strategies.summarization import SummarizationStrategy
from .._validators import instance_of, non_negative_int
from ..providers._base import Provider
from .compacting import compact_request
from .types import AgentMiddleware, ModelRequest

__all__ = ["SummarizationMiddleware"]


def _derives(original: Message, edited: Message) -> bool:
    """Whether ``edited`` is ``original`` or a copy of it with blocks taken out."""
    if original is edited or original == edited:
        return True
    if original.role is not edited.role or not edited.content:
        return False
    blocks = iter(original.content)
    return all(any(block == candidate for candidate in blocks) for block in edited.content)


def _kept_start(history: Sequence[Message], kept: Sequence[Message]) -> int | None:
    """Where the kept messages of a request begin in ``history``, or ``None``.

    The request is the history edited by earlier middlewares (a window drops messages, a
    strip takes tool blocks out), so its kept messages are aligned with the history from
    the end: each is matched with the nearest earlier history message it derives from.
    """
    position = len(history)
    found: int | None = None
    for message in reversed(kept):
        for index in range(position - 1, -1, -1):
            if _derives(history[index], message):
                position = found = index
                break
    return found


def _persisted(history: list[Message], summarized: Sequence[Message]) -> list[Message] | None:
    """The history with what the request's summary replaced taken out, or ``None``.

    ``summarized`` is the compacted request: system messages, one summary, the kept
    messages. The history keeps everything from where the first kept message came
    from; the cut moves back to a safe one, so no tool exchange is split (a little of
    what was summarized may then stay twice, which loses nothing).
    """
    summary_at = next((i for i, m in enumerate(summarized) if m.is_compaction), None)
    if summary_at is None:
        return None
    kept = [m for m in summarized[summary_at + 1 :] if m.role is not Role.SYSTEM]
    start = _kept_start(history, kept) if kept else len(history)
    if start is None:
        return None
    structure = Structure.of(history)
    while start > 0 and structure.safe_cut(start) != start:
        start -= 1
    systems = [m for m in history[:start] if m.role is Role.SYSTEM]
    persisted = [*systems, summarized[summary_at], *history[start:]]
    try:
        validate(persisted)
    except InvalidConversationError:
        return None
    return persisted


@attrs.define
class SummarizationMiddleware(AgentMiddleware):
    """Summarizes older messages when a request exceeds ``max_tokens``, and keeps the
    summary in the agent's history.

    Before each model call the request goes through the compaction step every caller
    uses (counted with the system prompt and the tools); over ``max_tokens``, its
    messages are summarized by ``provider`` with a
    :class:`~neuron_context.SummarizationStrategy` keeping the newest
    ``preserve_recent``; the history is replaced the same way (see the module for why),
    and the request continues with the summary. A failed summary leaves both as they
    were (reported as :class:`CompactionFailed`).

    Examples:
        >>> from neuron_context import ExtractiveSummarizer
        >>> summarize = SummarizationMiddleware(ExtractiveSummarizer(), 50_000)
    """

    provider: Provider = attrs.field(validator=instance_of(Provider, "a Provider"))
    """Writes the summaries."""
    max_tokens: int = attrs.field(validator=non_negative_int())
    """The trigger: summarize when a request costs more than this."""
    preserve_recent: int = attrs.field(default=6, kw_only=True, validator=non_negative_int())
    """How many of the newest non-system messages are kept as they are."""
    counter: BaseCounter = attrs.field(default=None, kw_only=True, converter=to_counter)
    """Measures the summary's effect (the trigger uses the agent's counter)."""
    strategy: SummarizationStrategy = attrs.field(init=False)
    """The strategy it summarizes with."""

    def __attrs_post_init__(self) -> None:
        self.strategy = SummarizationStrategy(
            self.provider, self.preserve_recent, self.max_tokens, counter=self.counter
        )

    async def before_model(self, request: ModelRequest) -> None:
        """Summarize the request (and the history) when it is over ``max_tokens``."""
        context = request.context
        state = context.state
        result = await compact_request(
            request, self.strategy, label=self.name, report=reporter(context, self.name)
        )
        if not result.compacted:
            return
        summarized = result.messages
        history = _persisted(state.messages, summarized)
        if history is not None:
            state.messages = history
        else:
            logger.info("SummarizationMiddleware: the summary could not be matched to the history")
        request.messages = list(summarized)
