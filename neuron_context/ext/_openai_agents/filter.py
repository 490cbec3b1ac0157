"""``CallModelInputFilter``: a strategy as an Agents SDK run's ``call_model_input_filter``.

See :mod:`neuron_context.ext.openai_agents` for what it does; this module holds it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from agents.models.interface import Model
from agents.run_config import CallModelData, ModelInputData

from ..._compaction.recovery import shrunk
from ..._compaction.refusal import Overflow
from ..._compaction.step import StepResult
from ..._errors import ContextOverflowError, NeuronContextError
from ..._messages.message import Message, ToolDefinition
from ..._stores.batch import offloading
from ..._strategies.strategy import ContextStrategy, counter_of
from ...formats._responses_items import Item
from .._core import (
    Converted,
    Session,
    Sessions,
    ToolDefinitions,
    check_strategy,
    session_factory,
)
from .fleet import as_ours, keep, place, restore
from .identity import conversation_of, in_conversation, offloads, warn_unscoped
from .model import RecoveringModel
from .reader import as_given, held, items_reader, rebuild

__all__ = ["CallModelInputFilter"]


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

    __slots__ = ("_budget", "_offloads", "_place", "_sessions", "_tools", "_warned", "strategy")

    def __init__(self, strategy: ContextStrategy) -> None:
        self.strategy = check_strategy("CallModelInputFilter", strategy)
        self._warned = False  # the unscoped-store warning, given once per filter
        self._sessions: Sessions[Item, list[int]] = Sessions(
            session_factory(strategy, items_reader)
        )
        self._tools = ToolDefinitions(_definition)
        self._offloads = offloads(self.strategy)
        self._place = place(self.strategy)
        self._budget: int | None = None  # the budget a provider's refusal showed

    def __repr__(self) -> str:
        return f"CallModelInputFilter({self.strategy!r})"

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        """The model input to send: the given one, or its compacted view.

        Items are read and written back as they came; nothing is repaired. Outputs whose
        calls live on the server (a server-managed run) are passed on first, as they
        came, and only the items after them are compacted; where the server's part of
        the conversation cannot be told apart, the input goes as the SDK built it. An
        input that cannot be read, or a compaction that cannot be written back as items,
        goes as the SDK built it too, with a warning in the ``neuron_context`` log.
        """
        model_data = data.model_data
        items: list[Item] = cast("list[Item]", model_data.input)
        instructions = model_data.instructions
        tools = self._tools.of(getattr(data.agent, "tools", None) or ())
        session, key = self._take(items)
        try:
            converted = session.reader(items)
        except Exception as exc:  # the session's reader is left half-way: not kept
            as_given("CallModelInputFilter", "cannot read the input", exc)
            return model_data
        try:
            leading = held(converted)
            if leading is None:
                return model_data
            own = converted.messages
            place = self._place if key is not None and not leading else None
            # One compaction with its view's keeping: a capped store's eviction spares
            # the keys the request shows while the view is written.
            with in_conversation(), offloading():
                if place is not None and key is not None:
                    restore(session, converted, place, key, lambda b: self._learn(session, b))
                result = await session.view.update(
                    own[leading:] if leading else own,
                    system_prompt=instructions,
                    tools=tools,
                    label="CallModelInputFilter",
                )
                if place is not None and key is not None and result.compacted:
                    keep(session, place, key, items, result.messages, budget=self._budget)
            if not session.view.compacted:
                return model_data
            try:
                first = converted.sources[leading][0] if leading < len(own) else len(items)
                rebuilt = [*items[:first], *rebuild(result.messages, converted)]
            except Exception as exc:
                as_given("CallModelInputFilter", "cannot write the compaction back as items", exc)
                return model_data
        finally:
            self._sessions.put(session)
        return ModelInputData(input=rebuilt, instructions=instructions)

    def _take(self, items: list[Item]) -> tuple[Session[Item, list[int]], str | None]:
        """The session of the conversation this call belongs to, and its name: by its
        name where the SDK gives one (see :mod:`.identity`), else by its items; with a
        store to scope and no name, a warning at the filter's first such call."""
        key = conversation_of()
        if key is None and self._offloads and not self._warned:
            self._warned = True
            warn_unscoped("CallModelInputFilter")
        return self._sessions.take(items, key), key

    def wrap(self, model: Model) -> Model:
        """``model``, recovering from its provider's overflow errors: a call refused as
        too long for the model is sent once more with its input compacted to the size
        the refusal shows, and this filter compacts to that smaller budget from then
        on; a second refusal is a :class:`~neuron_context.errors.ContextOverflowError`.
        A named conversation's recompacted view, and that budget, are kept in the store
        as a compaction's view is (:mod:`.fleet`), so the next worker continues them.
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
        return RecoveringModel(
            model, self._recover, read=self._read, counter=counter_of(self.strategy)
        )

    def _read(
        self, items: list[Item], tools: Sequence[object]
    ) -> tuple[Callable[[], Sequence[Message]], tuple[ToolDefinition, ...]]:
        """What reads a call's ``items`` as ours when asked, and its tools' definitions."""

        def read() -> Sequence[Message]:
            session, _ = self._take(items)
            known = bool(session.reader.items)
            try:
                return self._reading(session, items).sendable("CallModelInputFilter")
            finally:
                if known:
                    self._sessions.put(session)

        return read, self._tools.of(tools)

    async def _recover(
        self,
        items: list[Item],
        instructions: str | None,
        tools: Sequence[object],
        overflow: Overflow,
    ) -> tuple[list[Any], int]:
        """The refused call's input compacted to the size ``overflow`` showed, and that
        budget; the filter keeps the smaller strategy."""
        session, key = self._take(items)
        # The input items the session's view stands for (the call's, before the filter
        # compacted them), when its view is to be kept for the fleet.
        given = list(session.reader.items) if session.view.started else []
        known = bool(session.reader.items)
        continues = not known or session.reader.follows(items)
        try:
            converted = session.reader(items) if continues else items_reader()(items)
            own = converted.messages
            leading = held(converted)
            if leading is None:  # outputs of the server's calls among the run's own
                msg = (
                    "the input holds outputs of calls the server keeps after other items: "
                    "it cannot be compacted to the size the provider showed"
                )
                raise ContextOverflowError(msg)
            with in_conversation(), offloading():  # as in __call__
                result, budget = await session.view.recover(
                    overflow,
                    own[leading:] if leading else converted.sendable("CallModelInputFilter"),
                    system_prompt=instructions,
                    tools=self._tools.of(tools),
                    label="CallModelInputFilter",
                )
                self._sessions.learn(session.view.strategy)
                self._budget = budget
                stands = bool(given) and not leading
                stands = stands and self._stands(session, given, items, continues, result)
                if stands and key is not None and self._place is not None:
                    keep(session, self._place, key, given, result.messages, budget=budget)
            first = converted.sources[leading][0] if leading < len(own) else len(items)
            # The outputs of the server's calls go first, as they came (as in __call__).
            rebuilt = (
                [*items[:first], *rebuild(result.messages, converted)]
                if leading
                else (rebuild(result.messages, converted))
            )
        finally:
            if known:  # a session new to these items holds nothing of the conversation
                self._sessions.put(session)
        self.strategy = session.view.strategy
        return rebuilt, budget

    @staticmethod
    def _stands(
        session: Session[Item, list[int]],
        given: list[Item],
        sent: list[Item],
        continues: bool,
        result: StepResult,
    ) -> bool:
        """Whether the session's view, recovered as ``result`` from the items ``sent``,
        stands for the input ``given`` (the SDK's items of the refused call): they were
        sent as given, or were the filter's compaction of them, whose messages then
        become the session's own, as a compaction's are, so the next call's request
        holds the SDK's own items for them."""
        if continues:
            return len(sent) == len(given)
        mine = session.reader(given).messages
        if not session.view.follows(mine):
            return False
        session.view.restore(mine, as_ours(mine, result.messages))
        return True

    @staticmethod
    def _reading(
        session: Session[Item, list[int]], items: list[Item]
    ) -> Converted[Item, list[int]]:
        """``items`` (what a model call was sent) read as ours: by the session's reader
        when they continue what it read (the call went as the SDK built it), else by a
        reader of their own (the filter's compaction of them), so that the session's
        reader keeps the conversation's history and its next call reads only what is new."""
        if not session.reader.items or session.reader.follows(items):
            return session.reader(items)
        return items_reader()(items)

    def _learn(self, session: Session[Item, list[int]], budget: int) -> None:
        """Compact to ``budget`` from now on (``session``, taken from the pool, too), as
        the worker that kept a conversation's view did after a provider's refusal showed
        it; a budget this filter learned already, or a smaller one, stays."""
        if self._budget is None or budget < self._budget:
            smaller = shrunk(self.strategy, budget, counter_of(self.strategy))
            self._budget = budget
            self._sessions.learn(smaller)
            self.strategy = smaller
        session.view.strategy = self.strategy
