"""The agent loop: call the model, run the tools it asks for, repeat until it answers.

One turn is one model call::

    count what the provider receives ── compact the history if AgentOptions.context says so
    before_model* ── wrap_model_call* ── provider.complete ── after_model*
    (refused as too long: the recovery step of _compaction/recovery.py recompacts the
    history to the size the refusal shows and sends once more; the history is replaced
    only when that call is answered)
    record the reply; if it calls tools: run them concurrently (wrap_tool_call* each)
    record their results in one tool message; next turn

The innermost handler, the call of ``provider.complete`` itself, is
:func:`~neuron_context._agent.model_call.call_model`.

Guarantees, whatever happens (a tool raises, a limit stops the run, the run is
cancelled mid-tool, mid-model-call or mid-compaction): the agent's history
(``agent.state.messages``) stays well formed and complete. Calls that got no result are
closed as :func:`~neuron_context.repair` closes them. Every request sent is well formed
and starts on a user message when the history does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence

from .. import _tracing as tracing
from .._blocking import run_blocking
from .._compaction.recovery import Attempt, Recompacted, resend
from .._compaction.refusal import Overflow
from .._compaction.reporting import compact_history, recompact_history
from .._counting.counter import BaseCounter
from .._counting.heuristic import TokenCounter
from .._counting.request import RequestCounter
from .._errors import AgentError, ConfigurationError, MaxTurnsExceededError, show
from .._messages.content import JSON
from .._messages.message import Message, ToolDefinition
from .._middleware.chain import MiddlewareChain
from .._middleware.types import ModelRequest, ModelResponse
from .._run.events import AgentEvent, LimitReached, ModelCalled, RunFinished, TurnStarted
from .._run.run import RunContext
from .._run.state import AgentState
from .._run.tools import Tool
from .._stores.scope import conversation
from .._strategies.strategy import ContextStrategy, counter_of
from ..providers._base import Provider, TokenUsage
from .boundary import checked, tell, to_input, tools_of
from .boundary import joined as joined_input
from .calls import close_calls, run_tool_calls
from .model_call import call_model
from .options import AgentOptions, AgentResult

__all__ = ["Agent", "AgentOptions", "AgentResult", "create_agent"]


class Agent:
    """A model, its tools and middlewares, and the history it keeps between runs.

    Build it with :func:`create_agent`. Each :meth:`run` appends its input to
    :attr:`state`'s history and continues from there; one agent runs one run at a time
    (many agents may share providers, strategies, counters and middlewares).
    """

    def __init__(
        self,
        provider: Provider,
        tools: Iterable[Tool | Callable[..., object]] = (),
        options: AgentOptions | None = None,
    ) -> None:
        if not isinstance(provider, Provider):
            msg = f"create_agent: provider must be a Provider, got {type(provider).__name__}"
            raise ConfigurationError(msg)
        if options is None:
            options = AgentOptions()
        if not isinstance(options, AgentOptions):
            msg = f"create_agent: options must be AgentOptions, got {type(options).__name__}"
            raise ConfigurationError(msg)
        self.provider = provider
        """The provider every model call goes to (unless a middleware picks another)."""
        self.options = options
        """How it runs."""
        self.state = AgentState()
        """Its history, counters and middleware data (see :meth:`load_state`)."""
        self.chain = MiddlewareChain(options.middleware)
        """Its middlewares."""
        chosen: dict[str, Tool] = {}
        given = [*tools_of(tools, "create_agent: tools")]
        for middleware in options.middleware:
            given.extend(tools_of(middleware.tools, f"{middleware.name}.tools"))
        for item in given:
            tool = item if isinstance(item, Tool) else Tool.from_function(item)
            if tool.name in chosen:
                msg = f"create_agent: two tools are named {show(tool.name)}"
                raise ConfigurationError(msg)
            chosen[tool.name] = tool
        self.tools: Mapping[str, Tool] = chosen
        """Its tools by name, the middlewares' included."""
        self._definitions = tuple(tool.definition for tool in chosen.values())
        counter = options.counter
        if counter is None:
            counter = counter_of(options.context) if options.context is not None else None
        self.counter: BaseCounter = counter if counter is not None else TokenCounter()
        """What it measures requests with."""
        self._running = False
        self._requests = RequestCounter(self.counter)
        self._learned: ContextStrategy | None = None
        """The context strategy sized to the window a provider's overflow error showed."""

    def _learn(self, strategy: ContextStrategy) -> None:
        self._learned = strategy

    def __repr__(self) -> str:
        return f"Agent({self.provider!r}, tools={list(self.tools)!r})"

    @property
    def definitions(self) -> tuple[ToolDefinition, ...]:
        """The tool definitions sent with every call."""
        return self._definitions

    def count_request(self, messages: Sequence[Message]) -> int:
        """What a request with ``messages`` costs: system prompt and tools included."""
        return self._requests.count(messages, self.options.system_prompt, self._definitions)

    def load_state(self, data: Mapping[str, JSON]) -> None:
        """Continue from a state saved with ``agent.state.to_dict()`` (another worker's)."""
        self.state = AgentState.from_dict(data)

    def run_sync(
        self, messages: str | Iterable[Message], *, backend: str = "asyncio"
    ) -> AgentResult:
        """:meth:`run` in a new event loop (``anyio.run``)."""
        return run_blocking(functools.partial(self.run, messages), backend=backend)

    async def run(self, messages: str | Iterable[Message]) -> AgentResult:
        """Append ``messages`` (or a user string) to the history and run to a final reply.

        Raises:
            InvalidConversationError: the history with ``messages`` appended (or as a
                ``before_agent`` hook left it) is not well formed.
            MaxTurnsExceededError: the run needed more than ``max_turns`` model calls.
            AgentError: a middleware stopped the run (a limit), or the agent is running.
            NeuronContextError: the provider failed (and no fallback answered), or a
                compaction failed with ``context_errors="raise"``.
        """
        given = to_input(messages)
        if self._running:
            msg = "Agent.run: this agent is already running (one run at a time)"
            raise AgentError(msg)
        state = self.state
        joined = joined_input(state.messages, given)
        self._running = True
        events: list[AgentEvent] = []
        on_event = self.options.on_event

        def record(event: AgentEvent) -> None:
            events.append(event)
            if on_event is not None:
                tell(on_event, event)

        # The input is part of the history from here on, whatever happens next (a hook
        # that raises, a cancellation, a provider that fails): a failed run never loses
        # it, and ``run([])`` continues from it.
        state.messages = joined
        state.start_run()
        context = RunContext(
            state=state, counter=self.counter, requests=self._requests, sink=record
        )
        hooked = self.chain.wraps_agent  # without agent hooks, no copies for them
        # Every store used in the run (compaction, recall) is this conversation's view.
        with (
            tracing.agent_run(self.provider, self.options.model) as span,
            conversation(state.conversation),
        ):
            try:
                if hooked:
                    state.messages = checked(joined, await self.chain.before_agent(list(joined)))
                await self._turns(context)
                if hooked:
                    finished = await self.chain.after_agent(list(state.messages))
                    state.messages = checked(state.messages, finished)
            finally:
                close_calls(state.messages, {})
                self._running = False
            total = _usage(events)
            span.usage(total)
        return AgentResult(list(state.messages), tuple(events), context.turn, total)

    async def _turns(self, context: RunContext) -> None:
        state = context.state
        options = self.options
        while True:
            if context.turn >= options.max_turns:
                context.emit(LimitReached(context.turn, "turns", options.max_turns))
                msg = f"the run needed more than max_turns={options.max_turns} model turns"
                raise MaxTurnsExceededError(
                    msg, limit=options.max_turns, count=options.max_turns + 1
                )
            context.turn += 1
            state.turns += 1
            # The history grew since the last count: only its new messages are counted.
            tokens = context.count_request(state.messages, options.system_prompt, self._definitions)
            context.emit(TurnStarted(context.turn, len(state.messages), tokens))
            strategy = self._learned or options.context
            if strategy is not None:
                await compact_history(
                    context,
                    strategy,
                    tokens,
                    system_prompt=options.system_prompt,
                    tools=self._definitions,
                    raise_errors=options.context_errors == "raise",
                )
            request = ModelRequest._of_history(
                state.messages,  # copied: the request's list is its own
                tools=self._definitions,
                system_prompt=options.system_prompt,
                model=options.model,
                context=context,
            )
            state.count_model_call()
            response = await self._model_turn(context, request, strategy)
            state.messages.append(response.message)
            uses = response.message.tool_uses
            if not uses:
                context.emit(
                    RunFinished(
                        context.turn,
                        state.run_model_calls,
                        sum(state.run_tool_calls.values()),
                        len(state.messages),
                    )
                )
                return
            await run_tool_calls(self.chain, self.tools, context, uses)

    async def _model_turn(
        self, context: RunContext, request: ModelRequest, strategy: ContextStrategy | None
    ) -> ModelResponse:
        """The middleware chain's model call through the recovery step: refused as too
        long, the history is recompacted (the learned strategy kept for the turns after)
        and sent once more; the history becomes the recompacted one only when that call
        is answered."""
        state = context.state
        options = self.options
        recovered: list[Recompacted] = []

        async def recover(overflow: Overflow, _: Attempt[ModelRequest]) -> Attempt[ModelRequest]:
            done = await recompact_history(
                context,
                strategy,
                overflow,
                system_prompt=options.system_prompt,
                tools=self._definitions,
            )
            self._learn(done.strategy)
            recovered.append(done)
            retry = ModelRequest._of_history(
                list(done.result.messages),
                tools=self._definitions,
                system_prompt=options.system_prompt,
                model=options.model,
                context=context,
            )
            state.count_model_call()
            return Attempt(retry, budget=done.budget)

        turn = functools.partial(self.chain.model_turn, handler=self._call_model)
        response = await resend(turn, Attempt(request), recover, label="overflow")
        if recovered:
            state.messages = list(recovered[0].result.messages)
        return response

    async def _call_model(self, request: ModelRequest) -> ModelResponse:
        """The innermost handler (:func:`~neuron_context._agent.model_call.call_model`)
        with this agent's provider, options and middlewares."""
        return await call_model(
            request, provider=self.provider, options=self.options, chain=self.chain
        )


def create_agent(
    provider: Provider,
    tools: Iterable[Tool | Callable[..., object]] = (),
    options: AgentOptions | None = None,
) -> Agent:
    """An :class:`Agent` answering with ``provider``, calling ``tools`` (plain functions
    are turned into tools with :meth:`Tool.from_function`).

    Examples:
        >>> from neuron_context.testing import FunctionProvider
        >>> agent = create_agent(FunctionProvider(lambda request: "Hello!"))
        >>> agent.run_sync("Hi").text
        'Hello!'
    """
    return Agent(provider, tools, options)


def _usage(events: Sequence[AgentEvent]) -> TokenUsage | None:
    """The run's usage: the sums of what the provider reported (``None`` if it never did)."""
    usage = [e for e in events if isinstance(e, ModelCalled) and e.input_tokens is not None]
    if not usage:
        return None
    return TokenUsage(
        sum(e.input_tokens or 0 for e in usage), sum(e.output_tokens or 0 for e in usage)
    )
