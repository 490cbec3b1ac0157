"""The OpenAI Agents SDK: a ``call_model_input_filter``, a compacting session, item conversion.

Install with ``pip install "neuron-context[openai-agents]"``. :class:`CallModelInputFilter`
runs any :class:`~neuron_context.ContextStrategy` on the Responses-API input items of each
model call::

    result = await Runner.run(agent, question, run_config=RunConfig(
        call_model_input_filter=CallModelInputFilter(strategy)))

The agent's instructions are counted against the budget but never edited; tool
definitions are not counted. Function calls stay with their outputs and reasoning items
with the reply they belong to. Items the strategy keeps are passed on as the very objects
the SDK gave (the SDK matches them back to its run state by identity), and every input
sent is well formed (checked after each compaction, repaired with a warning if a strategy
broke it). Like any ``call_model_input_filter``, it changes only what the model is sent:
the run's own items keep the whole history.

:class:`CompactingSession` wraps a ``Session`` (``SQLiteSession``, ...) so that what it
returns is compacted: the session keeps everything, each run starts from a history that
fits.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from .._errors import ConfigurationError, InvalidConversationError, show
from .._log import logger
from .._messages.message import Message
from .._messages.wellformed import repair, validate
from .._strategies.base import ContextStrategy
from ._core import compact_conversation, missing_extra

try:
    from agents import Session, SessionSettings, TResponseInputItem
    from agents.run_config import CallModelData, ModelInputData

    from ._responses_items import (
        from_responses_items,
        message_items,
        read,
        to_responses_items,
        tool_output,
    )
except ModuleNotFoundError as exc:  # pragma: no cover - exercised by a test in a subprocess
    raise missing_extra(__name__) from exc

__all__ = [
    "CallModelInputFilter",
    "CompactingSession",
    "from_responses_items",
    "to_responses_items",
]


def _check_strategy(owner: str, strategy: object) -> ContextStrategy:
    if not isinstance(strategy, ContextStrategy):
        msg = f"{owner}.strategy must be a ContextStrategy, got {show(strategy)}"
        raise ConfigurationError(msg)
    return strategy


def _well_formed(messages: list[Message]) -> list[Message]:
    try:
        validate(messages)
    except InvalidConversationError as exc:
        logger.info("CompactingSession: the stored history is not well formed (%s); repaired", exc)
        return repair(messages)
    return messages


async def _compact_items(
    strategy: ContextStrategy,
    items: Sequence[TResponseInputItem],
    instructions: str | None,
    *,
    repair_input: bool = False,
) -> list[TResponseInputItem] | None:
    originals: list[Any] = list(items)
    ours, sources = read(originals)
    start = _well_formed(ours) if repair_input else ours
    system = [Message.system(instructions)] if instructions else []
    compacted = await compact_conversation(strategy, [*system, *start])
    if compacted is None:
        if start is ours:
            return None
        compacted = start
    kept = [message for message in compacted if not any(message is s for s in system)]
    return _rebuild(kept, ours, sources, originals)


class CallModelInputFilter:
    """Compacts the input of each model call of an Agents SDK run.

    Args:
        strategy: any strategy, typically ``default_stack(...)``; its own trigger
            decides when to compact (the instructions counted).

    Examples:
        >>> run_config = RunConfig(
        ...     call_model_input_filter=CallModelInputFilter(SlidingWindowStrategy(20, 8_000))
        ... )
    """

    __slots__ = ("strategy",)

    def __init__(self, strategy: ContextStrategy) -> None:
        self.strategy = _check_strategy("CallModelInputFilter", strategy)

    def __repr__(self) -> str:
        return f"CallModelInputFilter({self.strategy!r})"

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        """The model input to send: the given one, or its compaction."""
        model_data = data.model_data
        items = await _compact_items(self.strategy, model_data.input, model_data.instructions)
        if items is None:
            return model_data
        return ModelInputData(input=items, instructions=model_data.instructions)


class CompactingSession:
    """A ``Session`` whose ``get_items`` returns the compaction of what the wrapped one holds.

    Writes go to the wrapped session unchanged, so it keeps the whole history.

    Args:
        session: the session to wrap (any implementation of the SDK's protocol).
        strategy: the strategy to compact with.
    """

    def __init__(self, session: Session, strategy: ContextStrategy) -> None:
        self.session = session
        self.strategy = _check_strategy("CompactingSession", strategy)
        self.session_id: str = session.session_id
        self.session_settings: SessionSettings | None = session.session_settings

    def __repr__(self) -> str:
        return f"CompactingSession({show(self.session)}, {show(self.strategy)})"

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The wrapped session's items (the newest ``limit``), compacted when needed.

        A ``limit`` can cut a function call away from its output: what comes back is
        always well formed (an output whose call was cut off is dropped).
        """
        items = await self.session.get_items(limit)
        compacted = await _compact_items(self.strategy, items, None, repair_input=True)
        return items if compacted is None else compacted

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Add ``items`` to the wrapped session."""
        await self.session.add_items(items)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the wrapped session's newest item."""
        return await self.session.pop_item()

    async def clear_session(self) -> None:
        """Clear the wrapped session."""
        await self.session.clear_session()


# -- after a compaction -----------------------------------------------------------------


def _rebuild(
    compacted: Sequence[Message],
    ours: Sequence[Message],
    sources: Sequence[Sequence[int]],
    originals: Sequence[Any],
) -> list[Any]:
    """The items for a compaction of ``ours`` (read from the items ``originals``).

    A message the strategy kept is its original items (the very objects); a tool result
    it edited is a copy of the original ``function_call_output`` with the new output;
    anything else is converted.
    """
    index_of = {id(message): index for index, message in enumerate(ours)}
    outputs: dict[str, list[int]] = {}
    for index, message in enumerate(ours):
        for result in message.tool_results:
            outputs.setdefault(result.tool_use_id, []).append(index)
    out: list[Any] = []
    last = -1
    for message in compacted:
        kept = index_of.get(id(message), -1)
        if kept >= 0:
            out.extend(originals[i] for i in sources[kept])
            last = kept
        elif message.is_tool:
            for result in message.tool_results:
                fresh = tool_output(result)
                later = next((i for i in outputs.get(result.tool_use_id, ()) if i > last), -1)
                if later >= 0:
                    last = later
                    edited = copy.copy(originals[sources[later][0]])
                    edited["output"] = fresh["output"]
                    out.append(edited)
                    out.extend(originals[i] for i in sources[later][1:])
                else:
                    out.append(fresh)
        else:
            out.extend(message_items(message))
    return out
