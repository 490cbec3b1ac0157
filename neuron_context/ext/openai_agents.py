"""The OpenAI Agents SDK: a ``call_model_input_filter``, a compacting session, item conversion.

Install the ``openai-agents`` extra (``python -m pip install ".[openai-agents]"`` from a
clone). :class:`CallModelInputFilter` runs any :class:`~neuron_context.ContextStrategy` on
the Responses-API input items of each model call::

    result = await Runner.run(agent, question, run_config=RunConfig(
        call_model_input_filter=CallModelInputFilter(strategy)))

Like any ``call_model_input_filter``, it changes only what the model is sent: the run's
own items keep the whole history (the SDK decides this). So it sends a compacted *view*,
kept between calls per conversation: each call extends the view with the new items and
compacts it again only when the view itself crosses the trigger, so a run compacts as
rarely as a loop that rewrites its history, and the requests between two compactions
share their prefix (the provider's prompt cache serves it). The SDK rebuilds the input
items every turn, so the view is matched by the items' content, not their identity, and
a call converts only the items added since the last one.

The agent's instructions and its function tools are counted against the budget; the
instructions are never edited. Function calls stay with their outputs and reasoning items
with the reply they belong to. Items the strategy keeps are passed on as the very objects
the SDK gave for this call (the SDK matches them back to its run state by identity), and
every input sent is well formed (the one compaction step of
:mod:`neuron_context._compaction.step`: a failing strategy leaves the input as it was).

:class:`CompactingSession` wraps a ``Session`` (``SQLiteSession``, ...) so that what it
returns is compacted: the session keeps everything, each run starts from a history that
fits.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, cast

from .._compaction.request import RequestCounter
from .._compaction.step import compact_step
from .._errors import NeuronContextError, show
from .._messages.message import Message, ToolDefinition
from .._overflow import Overflow
from .._stores.recall import RECALL_DESCRIPTION, RECALL_TOOL_NAME, text_reader
from .._stores.store import Store
from .._strategies.strategy import ContextStrategy, counter_of
from ._core import (
    Converted,
    Reader,
    Sessions,
    ToolDefinitions,
    check_strategy,
    missing_extra,
    session_factory,
)
from ._recovery import recover

try:
    from agents import FunctionTool, Session, SessionSettings, TResponseInputItem, function_tool
    from agents.models.interface import Model
    from agents.run_config import CallModelData, ModelInputData

    from ._openai_agents_model import RecoveringModel
    from ._responses_items import (
        Item,
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
    "recall_tool",
    "to_responses_items",
]


def _reader() -> Reader[Item, list[int]]:
    return Reader(read, span=lambda sources: (sources[0], sources[-1]), regroup=True)


def _definition(tool: object) -> ToolDefinition | None:
    """A function tool's definition as the model receives it (hosted tools: ``None``)."""
    schema = getattr(tool, "params_json_schema", None)
    name = getattr(tool, "name", None)
    if not isinstance(schema, Mapping) or not isinstance(name, str) or not name:
        return None
    try:
        description = getattr(tool, "description", "") or ""
        return ToolDefinition(name=name, description=str(description), input_schema=schema)
    except NeuronContextError:
        return None


class CallModelInputFilter:
    """Compacts the input of each model call of an Agents SDK run.

    Args:
        strategy: any strategy, typically ``default_stack(...)``; its own trigger
            decides when to compact (the instructions and the tools counted).

    Examples:
        >>> run_config = RunConfig(
        ...     call_model_input_filter=CallModelInputFilter(SlidingWindowStrategy(20, 8_000))
        ... )
    """

    __slots__ = ("_sessions", "_tools", "strategy")

    def __init__(self, strategy: ContextStrategy) -> None:
        self.strategy = check_strategy("CallModelInputFilter", strategy)
        self._sessions: Sessions[Item, list[int]] = Sessions(session_factory(strategy, _reader))
        self._tools = ToolDefinitions(_definition)

    def __repr__(self) -> str:
        return f"CallModelInputFilter({self.strategy!r})"

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        """The model input to send: the given one, or its compacted view."""
        model_data = data.model_data
        items: list[Item] = cast("list[Item]", model_data.input)
        instructions = model_data.instructions
        tools = self._tools.of(getattr(data.agent, "tools", None) or ())
        session = self._sessions.take(items)
        try:
            converted = session.reader(items)
            start = converted.sendable("CallModelInputFilter")
            result = await session.view.update(
                start,
                system_prompt=instructions,
                tools=tools,
                label="CallModelInputFilter",
            )
            if not session.view.compacted and start is converted.messages:
                return model_data
            rebuilt = _rebuild(result.messages, converted)
        finally:
            self._sessions.put(session)
        return ModelInputData(input=rebuilt, instructions=instructions)

    def wrap(self, model: Model) -> Model:
        """``model``, recovering from its provider's overflow errors: a call refused as
        too long for the model is sent once more with its input compacted to the size
        the refusal shows, and this filter compacts to that smaller budget from then
        on; a second refusal is a :class:`~neuron_context.errors.ContextOverflowError`.
        Streamed calls (``Runner.run_streamed``) too, when the refusal comes before the
        stream's first event, as a provider's refusal of an input's size does; the run's
        items are not edited.

        Examples:
            >>> from agents import OpenAIResponsesModel
            >>> from openai import AsyncOpenAI
            >>> client = AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9")
            >>> compacting = CallModelInputFilter(SlidingWindowStrategy(20, 8_000))
            >>> model = compacting.wrap(OpenAIResponsesModel("gpt-4.1", client))
        """
        return RecoveringModel(model, self._recover)

    async def _recover(
        self,
        items: list[Item],
        instructions: str | None,
        tools: Sequence[object],
        overflow: Overflow,
    ) -> tuple[list[Any], int]:
        """The refused call's input compacted to the size ``overflow`` showed, and that
        budget; the filter keeps the smaller strategy."""
        session = self._sessions.take(items)
        try:
            converted = session.reader(items)
            result, budget = await recover(
                self._sessions,
                session,
                overflow,
                converted.sendable("CallModelInputFilter"),
                system_prompt=instructions,
                tools=self._tools.of(tools),
                label="CallModelInputFilter",
            )
            rebuilt = _rebuild(result.messages, converted)
        finally:
            self._sessions.put(session)
        self.strategy = session.view.strategy
        return rebuilt, budget


class CompactingSession:
    """A ``Session`` whose ``get_items`` returns the compaction of what the wrapped one holds.

    Writes go to the wrapped session unchanged, so it keeps the whole history.

    Args:
        session: the session to wrap (any implementation of the SDK's protocol).
        strategy: the strategy to compact with.
    """

    def __init__(self, session: Session, strategy: ContextStrategy) -> None:
        self.session = session
        self.strategy = check_strategy("CompactingSession", strategy)
        self.session_id: str = session.session_id
        self.session_settings: SessionSettings | None = session.session_settings

    def __repr__(self) -> str:
        return f"CompactingSession({show(self.session)}, {show(self.strategy)})"

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The wrapped session's items (the newest ``limit``), compacted when needed.

        A ``limit`` can cut a function call away from its output: what comes back is
        always well formed (an output whose call was cut off is dropped).
        """
        items: list[Any] = await self.session.get_items(limit)
        converted = _reader()(items)
        start = converted.sendable("CompactingSession")
        result = await compact_step(
            self.strategy,
            start,
            counter=RequestCounter(counter_of(self.strategy)),
            label="CompactingSession",
        )
        if not result.compacted and start is converted.messages:
            return items
        return _rebuild(result.messages, converted)

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


def _rebuild(compacted: Sequence[Message], converted: Converted[Item, list[int]]) -> list[Any]:
    """The items for a compaction of ``converted.messages``.

    A message the strategy kept is its original items (the very objects of this call);
    a tool result it edited is a copy of the original ``function_call_output`` with the
    new output; anything else is converted. O(len(compacted)).
    """
    originals = converted.items
    sources = converted.sources
    out: list[Any] = []
    last = -1
    for message in compacted:
        kept = converted.index(message)
        if kept >= 0:
            out.extend(originals[i] for i in sources[kept])
            last = kept
        elif message.is_tool:
            for result in message.tool_results:
                fresh = tool_output(result)
                later = next((i for i in converted.results(result.tool_use_id) if i > last), -1)
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


def recall_tool(store: Store) -> FunctionTool:
    """The recall tool as an Agents SDK function tool (``recall``), for an ``Agent``'s
    ``tools=[...]``.

    It reads ``store`` in a worker thread (the SDK runs a sync tool there). A function
    call's output has no error flag, so an unknown key, a bad range or a failing store
    returns the error's text (``recall: no content under key ...``), never an exception.

    Examples:
        >>> from neuron_context import MemoryStore
        >>> recall_tool(MemoryStore()).name
        'recall'
    """

    read = text_reader(store)
    return function_tool(
        read,
        name_override=RECALL_TOOL_NAME,
        description_override=RECALL_DESCRIPTION,
        strict_mode=False,
    )
