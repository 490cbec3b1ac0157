"""LangChain v1: a middleware for ``create_agent`` and conversion of ``langchain_core`` messages.

Install the ``langchain`` extra (``python -m pip install ".[langchain]"`` from a clone).
:class:`ContextMiddleware` runs any :class:`~neuron_context.ContextStrategy` on what each
model call receives::

    agent = create_agent(model, tools, middleware=[ContextMiddleware(strategy)])

or with no strategy, ``default_stack`` sized by the model: ``ContextMiddleware()`` budgets
80% of the input window the model's profile gives (``model.profile["max_input_tokens"]``,
as LangChain's own middlewares read it; ``fraction=`` sets the share), for whichever model
each call goes to.

By default (``persist=False``) it edits only the request (``wrap_model_call``): the
agent's state keeps the whole history, and the model is sent a compacted *view* of it.
The view is kept between calls, per conversation: each call extends it with the new
messages and compacts it again only when the view itself crosses the trigger, so a run
compacts as rarely as one that rewrites its state, the requests between two compactions
share their prefix (the provider's prompt cache serves it), and a call costs the new
messages, not the history. With ``persist=True`` the compaction is also written into the
state (``before_model``, replacing the messages as LangChain's ``SummarizationMiddleware``
does), so the history itself stops growing; the request is still checked with the
system prompt and the tools counted.

Why the view is the default: nothing is lost (the state, its checkpoints and whatever
reads them keep every message), and a view costs no more compactions than persisting.
Persist when the state's size matters more (a checkpointer storing every message of a
very long run).

The system prompt (``request.system_message``) and the tool definitions are counted
against the budget, as the model receives them; the system prompt is never edited.
Messages the strategy keeps reach the model as the very objects the agent holds; every
conversation sent is well formed. All of it goes through the one compaction step of
:mod:`neuron_context._compaction.step`: a failing strategy leaves the request as it was
(logged), it never fails the model call.

Offloading: give the strategy a ``store=`` (ours, or :class:`LangGraphStore` over the
LangGraph ``BaseStore`` the agent already uses) and add :func:`recall_tool` to the agent's
tools, so the model can read back what compaction removed.

A model call the provider refuses as too long for the model (OpenAI's
``context_length_exceeded``, Anthropic's ``prompt is too long``, ...) is compacted to the
size the refusal shows and sent once more; the smaller budget is kept for the calls after,
and a second refusal, or a window too small for the system prompt, the tools and the newest
request, is a :class:`~neuron_context.errors.ContextOverflowError` (see
:mod:`neuron_context._compaction.recovery`).

For code that trims by hand with ``trim_messages``, :func:`compact_messages` (and
:func:`acompact_messages`) take a list of LangChain messages and a strategy.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from .._compaction.step import compact_step, decide
from .._counting.request import RequestCounter
from .._errors import ConfigurationError
from .._exports import publish as _publish
from .._strategies.default import default_stack
from .._strategies.strategy import ContextStrategy, counter_of
from .._validators import require_bool
from ._budget import DEFAULT_FRACTION, Make, ModelBudgets, check_fraction
from ._core import check_strategy, missing_extra, run_sync

try:
    from langchain.agents.middleware import (
        AgentMiddleware,
        AgentState,
        ModelRequest,
        ModelResponse,
    )
    from langchain.agents.middleware.types import ExtendedModelResponse
    from langchain_core.messages import BaseMessage, RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES
    from langgraph.runtime import Runtime
    from langgraph.types import Command

    from ._langchain.fleet import ContextState, forget, written
    from ._langchain.messages import from_langchain, to_langchain
    from ._langchain.model import Call, ModelCalls, unreadable
    from ._langchain.reader import reader, rebuild
    from ._langchain.stores import LangGraphStore, recall_tool, thread_conversation
except ModuleNotFoundError as exc:  # pragma: no cover - exercised by a test in a subprocess
    raise missing_extra(__name__) from exc

__all__ = [
    "ContextMiddleware",
    "LangGraphStore",
    "acompact_messages",
    "compact_messages",
    "from_langchain",
    "recall_tool",
    "to_langchain",
]


async def acompact_messages(
    messages: Sequence[BaseMessage], strategy: ContextStrategy
) -> list[BaseMessage]:
    """Compact LangChain ``messages`` with ``strategy`` when its trigger fires.

    The replacement for ``trim_messages``: system messages are kept, tool calls stay with
    their results, and kept messages are the objects given. Returns a new list (equal to
    ``messages`` when there is nothing to do).
    """
    originals = list(messages)
    converted = reader()(originals)
    start = converted.sendable("compact_messages")
    with thread_conversation():  # inside a LangGraph thread: an unscoped store is its view
        result = await compact_step(
            strategy,
            start,
            counter=RequestCounter(counter_of(strategy)),
            label="compact_messages",
        )
    if not result.compacted and start is converted.messages:
        return originals
    return rebuild(result.messages, converted)


def compact_messages(
    messages: Sequence[BaseMessage], strategy: ContextStrategy
) -> list[BaseMessage]:
    """The sync form of :func:`acompact_messages`."""
    return run_sync(lambda: acompact_messages(messages, strategy))


class ContextMiddleware(AgentMiddleware[ContextState, Any]):
    """Compacts what each model call of a LangChain agent receives.

    Args:
        strategy: any strategy, typically ``default_stack(...)``; its own trigger
            decides when to compact (the system prompt and the tools counted). Or none:
            the budget then comes from the model each call goes to, ``fraction`` of its
            profile's ``max_input_tokens``, with ``default_stack`` of that budget; or a
            function of that budget returning the strategy to use
            (``lambda budget: default_stack(budget, store=store)``).
        persist: also write the compaction into the agent's state before each model
            call, so the history itself shrinks (default: send a compacted view, keep
            the state whole; see the module docstring for why).
        fraction: the share of the model's input window to budget when no strategy is
            given (default 0.8); a ``ConfigurationError`` beside a strategy.

    A model without a profile window makes a budgeted middleware's call fail with a
    ``ConfigurationError`` naming ``max_input_tokens``. A conversation that moves to a
    model with another window (a fallback model) is compacted for that model's budget;
    each budget keeps its own views, so moving back continues the first one.

    Examples:
        >>> middleware = ContextMiddleware(SlidingWindowStrategy(20, 8_000))
        >>> ContextMiddleware(fraction=0.5)
        ContextMiddleware(fraction=0.5, persist=False)
    """

    state_schema = ContextState

    def __new__(
        cls,
        strategy: ContextStrategy | Make | None = None,
        *,
        persist: bool = False,
        fraction: float | None = None,
    ) -> ContextMiddleware:
        # LangChain adds a graph node for every middleware whose class overrides
        # before_model, and runs it on every model call: only the persisting kind has it.
        kind = _PersistingContextMiddleware if persist is True else cls
        return super().__new__(kind)

    def __init__(
        self,
        strategy: ContextStrategy | Make | None = None,
        *,
        persist: bool = False,
        fraction: float | None = None,
    ) -> None:
        self.persist = require_bool(persist, "ContextMiddleware.persist")
        self._budgets: ModelBudgets[ModelCalls] | None = None
        self._last: tuple[ContextStrategy, ModelCalls] | None = None
        if isinstance(strategy, ContextStrategy):
            if fraction is not None:
                msg = (
                    "ContextMiddleware.fraction sizes the budget from the model's window, "
                    "and the strategy given has its own budget: give one or the other"
                )
                raise ConfigurationError(msg)
            self._last = (strategy, ModelCalls(strategy))
            return
        if strategy is not None and not callable(strategy):
            check_strategy("ContextMiddleware", strategy)  # raises, naming what was given
        share = DEFAULT_FRACTION if fraction is None else fraction
        self._budgets = ModelBudgets(
            "ContextMiddleware",
            default_stack if strategy is None else strategy,
            check_fraction("ContextMiddleware", share),
            ModelCalls,
        )

    @property
    def strategy(self) -> ContextStrategy | None:
        """The strategy given, or (given none) the one made for the budget of the model
        of the last call (``None`` before the first call)."""
        return None if self._last is None else self._last[0]

    @property
    def fraction(self) -> float | None:
        """The share of the model's input window budgeted (``None``: a strategy was given)."""
        return None if self._budgets is None else self._budgets.fraction

    def __repr__(self) -> str:
        if self._budgets is None:
            return f"ContextMiddleware({self.strategy!r}, persist={self.persist})"
        return f"ContextMiddleware(fraction={self.fraction:g}, persist={self.persist})"

    def _calls_for(self, model: object) -> ModelCalls:
        """The model calls of the strategy sized for ``model`` (or of the one given)."""
        if self._budgets is None:
            assert self._last is not None
            return self._last[1]
        self._last = built = self._budgets.of(model)
        return built[1]

    @property
    def name(self) -> str:
        """``ContextMiddleware`` (LangChain names the middleware's graph nodes with it)."""
        return "ContextMiddleware"

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        """Send the model the compacted request (refused as too long: compacted to fit
        and sent once more); a new compaction of the view goes into the state."""
        forget()
        with thread_conversation():  # an unscoped store is this thread's view
            response = self._calls_for(request.model).send(request, handler)
        return self._with_view(response)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        """Send the model the compacted request (refused as too long: compacted to fit
        and sent once more); a new compaction of the view goes into the state."""
        forget()
        calls = self._calls_for(request.model)
        await calls.load()
        with thread_conversation():  # an unscoped store is this thread's view
            response = await calls.asend(request, handler)
        return self._with_view(response)

    def _with_view(
        self, response: ModelResponse[Any]
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        """``response``, and the view the call compacted to, for the state to keep."""
        update = written()
        if update is None or self.persist:
            return response
        return ExtendedModelResponse(model_response=response, command=Command(update=update))


class _PersistingContextMiddleware(ContextMiddleware):
    """A :class:`ContextMiddleware` with ``persist=True``: it also compacts the state."""

    def _prepare_state(self, state: AgentState[Any]) -> tuple[ContextStrategy, Call] | None:
        """Read the state's messages and ask the trigger (``None``: nothing to do)."""
        if self._last is None:  # budgeted from a model not seen yet: the request is
            return None  # compacted for it in wrap_model_call
        strategy, calls = self._last
        items = state["messages"]
        system, tools = calls.overhead
        sessions = calls.sessions
        session = sessions.take(items)
        try:
            converted = session.reader(items)
            decided = decide(
                strategy,
                converted.messages,
                counter=session.view.counter,
                system_prompt=system,
                tools=tools,
            )
        except Exception as exc:
            sessions.put(session)
            unreadable(exc)
            return None
        if not decided.triggered:
            sessions.put(session)
            return None
        # Not returned to the pool: once the state is compacted, its messages are new.
        return strategy, Call(None, session, converted, decided, system, tools, repaired=False)

    async def _compact_state(self, prepared: tuple[ContextStrategy, Call]) -> dict[str, Any] | None:
        strategy, call = prepared
        result = await compact_step(
            strategy,
            call.converted.messages,
            counter=call.session.view.counter,
            system_prompt=call.system,
            tools=call.tools,
            decided=call.decided,
            label="ContextMiddleware",
        )
        if not result.compacted:
            return None
        replaced = rebuild(result.messages, call.converted)
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *replaced]}

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Replace the state's messages with their compaction, when it fires."""
        prepared = self._prepare_state(state)
        if prepared is None:
            return None
        with thread_conversation():  # an unscoped store is this thread's view
            return run_sync(lambda: self._compact_state(prepared))

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Replace the state's messages with their compaction, when it fires."""
        if self._last is not None:
            await self._last[1].load()
        prepared = self._prepare_state(state)
        if prepared is None:
            return None
        with thread_conversation():  # an unscoped store is this thread's view
            return await self._compact_state(prepared)


_publish(__name__, globals(), __all__)
