"""The agent loop: call the model, run the tools it asks for, repeat until it answers.

One turn is one model call::

    count what the provider receives ── compact the history if AgentOptions.context says so
    before_model* ── wrap_model_call* ── provider.complete ── after_model*
    (refused as too long: the recovery step of _compaction/recovery.py recompacts the
    history to the size the refusal shows and sends once more; the history is replaced
    only when that call is answered)
    record the reply; if it calls tools: run them concurrently (wrap_tool_call* each)
    record their results in one tool message; next turn

Guarantees, whatever happens (a tool raises, a limit stops the run, the run is
cancelled mid-tool, mid-model-call or mid-compaction): the agent's history
(``agent.state.messages``) stays well formed and complete. Calls that got no result are
closed as :func:`~neuron_context.repair` closes them. Every request sent is well formed
and starts on a user message when the history does.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence

import anyio

from .. import _tracing as tracing
from .._blocking import run_blocking
from .._compaction.calibration import Calibration
from .._compaction.recovery import Attempt, Recompacted, observe, resend
from .._compaction.refusal import Overflow
from .._compaction.reporting import compact_history, recompact_history
from .._counting.calibrated import CalibratedCounter
from .._counting.counter import BaseCounter
from .._counting.heuristic import TokenCounter
from .._counting.request import RequestCounter
from .._errors import (
    AgentError,
    ConfigurationError,
    InvalidConversationError,
    MaxTurnsExceededError,
    MiddlewareError,
    NeuronContextError,
    ProviderError,
    described,
    show,
)
from .._log import logger
from .._messages.checks import check_messages
from .._messages.content import JSON
from .._messages.conversation import first_is_user
from .._messages.message import Message, ToolDefinition
from .._messages.wellformed import (
    repair,
    start_on_user,
    validate,
)
from .._middleware.chain import MiddlewareChain
from .._middleware.types import ModelRequest, ModelResponse
from .._run.events import AgentEvent, LimitReached, ModelCalled, RunFinished, TurnStarted
from .._run.run import RunContext
from .._run.state import AgentState
from .._run.tools import Tool
from .._stores.scope import conversation
from .._strategies.strategy import ContextStrategy, counter_of
from ..providers._base import (
    CompletionRequest,
    CompletionResponse,
    Provider,
    StopReason,
    TokenUsage,
)
from .boundary import checked, same, tell, to_input, tools_of
from .boundary import joined as joined_input
from .calls import close_calls, run_tool_calls
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

    # -- the innermost handlers -------------------------------------------------------

    def _check_request(self, messages: list[Message]) -> None:
        """The request's messages as the wrappers left them (the ``before_model`` hooks'
        are checked by the chain): messages, or a :class:`MiddlewareError`."""
        try:
            check_messages(messages, "ModelRequest.messages")
        except ConfigurationError as exc:
            names = ", ".join(m.name for m in self.chain.middlewares) or "a middleware"
            msg = f"{exc} (left by {names})"
            raise MiddlewareError(msg, middleware=names, hook="wrap_model_call") from None

    async def _call_model(self, request: ModelRequest) -> ModelResponse:
        context = request.context
        provider = request.provider if request.provider is not None else self.provider
        history = context.state.messages
        messages = request.messages  # the request's own list
        if not first_is_user(messages):
            messages = start_on_user(messages, history)
        # The history is well formed by construction (checked when a run starts and after
        # every compaction); only a request a middleware changed needs the O(n) check.
        unchanged = same(messages, history)
        if not unchanged:
            self._check_request(messages)
            try:
                validate(messages)
            except InvalidConversationError as exc:
                logger.warning("a middleware broke the request; sending it repaired: %s", exc)
                messages = repair(messages)
        tools = request.tools
        completion = CompletionRequest._of_messages(
            messages,
            system=request.system_prompt,
            tools=tools,
            model=request.model,
            max_tokens=self.options.max_output_tokens,
            temperature=self.options.temperature,
        )
        estimated = context.count_request(messages, request.system_prompt, tools)
        started = time.perf_counter()
        calibration: Calibration | None = None
        try:
            with tracing.model_call(provider, completion, estimated) as span:
                completed = await provider.complete(completion)
                if isinstance(completed, CompletionResponse):  # else refused just below
                    span.reply(completed)
                    calibration = _calibrate(context, request, messages, completed, span)
        except (NeuronContextError, anyio.get_cancelled_exc_class()):
            raise
        except Exception as exc:
            # A provider of the user's (or a FunctionProvider) raised something of its own:
            # callers and middlewares see one kind of failure, the cause chained.
            msg = f"{type(provider).__name__}.complete failed: {described(exc)}"
            raise ProviderError(msg) from exc
        duration = time.perf_counter() - started
        # The provider's reply crosses in here: a CompletionResponse or a ProviderError
        # naming the provider; its calls get distinct ids (ModelResponse checks it).
        response = ModelResponse.of(completed, provider)
        usage = response.usage
        context.emit(
            ModelCalled(
                context.turn,
                type(provider).__name__,
                request.model,
                estimated,
                usage.input_tokens if usage is not None else None,
                usage.output_tokens if usage is not None else None,
                StopReason(response.stop_reason).value,
                len(response.tool_uses),
                duration,
                calibration.factor if calibration is not None else None,
            )
        )
        return response


def _calibrate(
    context: RunContext,
    request: ModelRequest,
    messages: Sequence[Message],
    completed: CompletionResponse,
    span: tracing.Span,
) -> Calibration | None:
    """The reply's reported input tokens fed to the run's counter through the recovery
    step's calibration, as every adapter's are, and recorded on the model call's span."""
    if completed.usage is None or not isinstance(context.counter, CalibratedCounter):
        return None
    sent = Attempt(
        request, read=lambda: messages, system_prompt=request.system_prompt, tools=request.tools
    )
    return observe(context.counter, sent, completed.usage.input_tokens, label="Agent", span=span)


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
