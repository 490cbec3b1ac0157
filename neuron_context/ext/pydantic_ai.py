"""pydantic-ai: a history processor and conversion of ``ModelMessage`` s.

Install the ``pydantic-ai`` extra (``python -m pip install ".[pydantic-ai]"`` from a
clone). :class:`HistoryProcessor` runs any :class:`~neuron_context.ContextStrategy` on the
history before each model request::

    agent = Agent(model, capabilities=[ProcessHistory(HistoryProcessor(strategy))])

:meth:`HistoryProcessor.wrap` gives the model the recovery from a provider's overflow
error (a request refused as too long is compacted to fit and sent once more)::

    processor = HistoryProcessor(strategy)
    agent = Agent(processor.wrap(model), capabilities=[ProcessHistory(processor)])

It is an async callable ``list[ModelMessage] -> list[ModelMessage]``, so it also serves
as an entry of ``history_processors=[...]`` in the pydantic-ai versions that have that
argument. pydantic-ai keeps what a processor returns as the run's history, so the
compaction persists (the history stops growing): pydantic-ai decides this, not the
processor, which is why this adapter has no non-destructive mode; each compaction then
starts from the last one (the earlier summary updated with what was evicted since), as
in a loop of our own.

A call converts only the messages added since the last one (the others are the same
objects as last time), so a turn costs its new messages. One processor serves every
conversation of a process: each is found by its ``conversation_id`` (pydantic-ai stamps it
on every message of a run, and a run given a ``message_history`` continues its
conversation), or by its messages where none is stamped. The request's instructions (the
system prompt pydantic-ai sends) are counted against the budget; the tool definitions
are not (a history processor is given the messages alone).

Messages the strategy keeps come back as the very objects pydantic-ai gave (a request
that lost some parts is a copy of the original with the remaining parts, so its
``instructions``, timestamps and run id stay); the conversation returned is well formed
(the one compaction step of :mod:`neuron_context._compaction.step` keeps the history as
it was when a strategy fails or breaks it), so no tool call is left without its return
and no return without its call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._compaction.recovery import Attempt
from .._compaction.refusal import Overflow
from .._compaction.step import compact_step
from .._errors import show
from .._exports import publish as _publish
from .._log import logger
from .._messages.message import Message, ToolDefinition
from .._stores.scope import conversation
from .._strategies.strategy import ContextStrategy, counter_of
from ._core import CounterLoad, Sessions, check_strategy, missing_extra, session_factory

try:
    from pydantic_ai.messages import ModelMessage

    from ._pydantic_ai.messages import DOCUMENT_METADATA, Origin, from_pydantic_ai
    from ._pydantic_ai.model import RecoveringModel
    from ._pydantic_ai.parts import to_pydantic_ai
    from ._pydantic_ai.reader import instructions, reader, rebuild
    from ._pydantic_ai.stores import conversation_of, recall_tool
except ModuleNotFoundError as exc:  # pragma: no cover - exercised by a test in a subprocess
    raise missing_extra(__name__) from exc

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pydantic_ai.models import Model

__all__ = [
    "DOCUMENT_METADATA",
    "HistoryProcessor",
    "from_pydantic_ai",
    "recall_tool",
    "to_pydantic_ai",
]


class HistoryProcessor:
    """Compacts a pydantic-ai agent's history before each model request.

    Args:
        strategy: any strategy, typically ``default_stack(...)``; its own trigger
            decides when to compact (the instructions counted).

    Examples:
        >>> processor = HistoryProcessor(SlidingWindowStrategy(20, 8_000))
    """

    __slots__ = ("_load", "_sessions", "strategy")
    # ``strategy`` becomes the smaller one after an overflow error (see :meth:`wrap`).

    def __init__(self, strategy: ContextStrategy) -> None:
        self.strategy = check_strategy("HistoryProcessor", strategy)
        self._load = CounterLoad(strategy)
        self._sessions: Sessions[ModelMessage, Origin] = Sessions(session_factory(strategy, reader))

    def __repr__(self) -> str:
        return f"HistoryProcessor({self.strategy!r})"

    async def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The history to send: ``messages`` itself, or its compaction."""
        await self._load()
        name = conversation_of(messages)
        session = self._sessions.take(messages, name)
        try:
            converted = session.reader(messages)
            start = converted.sendable("HistoryProcessor")
        except Exception as exc:
            self._sessions.put(session)
            return _as_given(messages, "its messages cannot be read", exc)
        with conversation(name):  # the run's conversation's view
            result = await compact_step(
                self.strategy,
                start,
                counter=session.view.counter,
                system_prompt=instructions(messages),
                label="HistoryProcessor",
            )
        if not result.compacted and start is converted.messages:
            self._sessions.put(session)
            return messages
        # Not returned to the pool: pydantic-ai continues from the compacted (or
        # repaired) history.
        try:
            return rebuild(result.messages, converted)
        except Exception as exc:
            return _as_given(messages, "its compaction cannot be written back", exc)

    def wrap(self, model: Model) -> Model:
        """``model``, recovering from its provider's overflow errors: a request refused as
        too long for the model is compacted to the size the refusal shows and sent once
        more, and this processor compacts to that smaller budget from then on; a second
        refusal is a :class:`~neuron_context.errors.ContextOverflowError` (the run's
        history is not edited by the recovery). A streamed request (``agent.run_stream``,
        an event stream handler) is recovered the same way when the refusal comes before
        its first event (as the stream opens, as a provider's HTTP refusal does, or as
        that first event, as an OpenAI Responses ``response.failed`` does).

        Examples:
            >>> from pydantic_ai.models.test import TestModel
            >>> model = HistoryProcessor(SlidingWindowStrategy(20, 8_000)).wrap(TestModel())
        """
        return RecoveringModel(model, self._recover, self._attempt, counter_of(self.strategy))

    def _attempt(
        self,
        messages: list[ModelMessage],
        tools: Sequence[ToolDefinition],
        budget: int | None = None,
    ) -> Attempt[list[ModelMessage]]:
        """``messages`` as the recovery step sends them (read as ours only when a reply's
        usage calibrates the counter)."""

        def read() -> Sequence[Message]:
            session = self._sessions.take(messages, conversation_of(messages))
            try:
                return session.reader(messages).sendable("HistoryProcessor")
            finally:
                self._sessions.put(session)

        return Attempt(
            messages, read=read, system_prompt=instructions(messages), tools=tools, budget=budget
        )

    async def _recover(
        self, overflow: Overflow, attempt: Attempt[list[ModelMessage]]
    ) -> Attempt[list[ModelMessage]]:
        """The refused request's messages recompacted to the size ``overflow`` showed
        (the request's tools counted in it); the processor keeps the smaller strategy."""
        messages = attempt.request
        name = conversation_of(messages)
        session = self._sessions.take(messages, name)
        try:
            converted = session.reader(messages)
            with conversation(name):
                result, budget = await session.view.recover(
                    overflow,
                    converted.sendable("HistoryProcessor"),
                    system_prompt=attempt.system_prompt,
                    tools=attempt.tools,
                    label="HistoryProcessor",
                )
            self._sessions.learn(session.view.strategy)
        finally:
            self._sessions.put(session)
        self.strategy = session.view.strategy
        return self._attempt(rebuild(result.messages, converted), attempt.tools, budget)


def _as_given(messages: list[ModelMessage], what: str, exc: Exception) -> list[ModelMessage]:
    """``messages`` as pydantic-ai gave them, logged: the compaction step's failure policy
    for what the adapter cannot read or write (pydantic-ai then sends them, and raises
    its own error for what it cannot send), so the model call is never lost to it."""
    logger.warning(
        "HistoryProcessor: the history is sent as pydantic-ai gave it: %s (%s: %s)",
        what,
        type(exc).__name__,
        show(str(exc), 200),
    )
    return messages


_publish(__name__, globals(), __all__)
