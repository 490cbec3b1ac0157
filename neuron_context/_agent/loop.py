"""The agent loop: call the model, run the tools it asks for, repeat until it answers.

One turn is one model call::

    count what the provider receives ── compact the history if AgentOptions.context says so
    before_model* ── wrap_model_call* ── provider.complete ── after_model*
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
from typing import Literal

import anyio
import attrs

from .._counting.base import BaseCounter, TokenCounter
from .._counting.calibrated import CalibratedCounter
from .._errors import ConfigurationError, InvalidConversationError
from .._log import logger
from .._messages.content import JSON, ToolResult, ToolUse
from .._messages.conversation import INTERRUPTED, repair, validate
from .._messages.message import Message, Role, ToolDefinition
from .._strategies.base import ContextStrategy
from .._validators import instance_of, one_of, optional, positive_int
from ..providers._base import CompletionRequest, Provider, StopReason, TokenUsage
from .chain import MiddlewareChain
from .context import compact_history, count_request, start_on_user
from .errors import AgentError, MaxTurnsExceededError
from .events import AgentEvent, LimitReached, ModelCalled, RunFinished, ToolCalled, TurnStarted
from .middleware import AgentMiddleware, ModelRequest, ModelResponse, ToolCallRequest
from .run import RunContext
from .schema import validate_arguments
from .state import AgentState
from .tools import Tool, result_of

__all__ = ["Agent", "AgentOptions", "AgentResult", "create_agent"]


def _to_middleware(value: Iterable[AgentMiddleware]) -> tuple[AgentMiddleware, ...]:
    return MiddlewareChain(value).middlewares


@attrs.frozen(kw_only=True)
class AgentOptions:
    """How an agent runs. Every field is keyword-only.

    Examples:
        >>> from neuron_context import SlidingWindowStrategy
        >>> window = SlidingWindowStrategy(20, 8_000)
        >>> options = AgentOptions(system_prompt="Be brief.", context=window)
    """

    middleware: tuple[AgentMiddleware, ...] = attrs.field(default=(), converter=_to_middleware)
    """The middlewares, outermost first."""
    system_prompt: str | None = attrs.field(
        default=None, validator=optional(instance_of(str, "a str"))
    )
    """Sent with every model call (middlewares may extend it per call)."""
    max_turns: int = attrs.field(default=50, validator=positive_int())
    """The most model calls one run may make; one more raises
    :class:`MaxTurnsExceededError`."""
    model: str | None = attrs.field(default=None, validator=optional(instance_of(str, "a str")))
    """The model to ask; ``None`` means the provider's default."""
    context: ContextStrategy | None = attrs.field(
        default=None, validator=optional(instance_of(ContextStrategy, "a ContextStrategy"))
    )
    """Run at the top of every turn on the whole request's count; its result replaces
    the history (see :mod:`neuron_context._agent.context`)."""
    counter: BaseCounter | None = attrs.field(
        default=None, validator=optional(instance_of(BaseCounter, "a counter"))
    )
    """Measures requests; default: the ``context`` strategy's counter, else a
    :class:`~neuron_context.TokenCounter`. A :class:`~neuron_context.CalibratedCounter`
    learns from every reported usage."""
    context_errors: Literal["continue", "raise"] = attrs.field(
        default="continue", validator=one_of(("continue", "raise"))
    )
    """What a failed compaction does: keep the history and go on, or raise."""
    max_tokens: int | None = attrs.field(default=None, validator=optional(positive_int()))
    """The ``max_tokens`` of every model call."""
    temperature: float | None = attrs.field(default=None)
    """The ``temperature`` of every model call."""
    on_event: Callable[[AgentEvent], object] | None = attrs.field(default=None)
    """Called with every event as it happens (from the run's task)."""


@attrs.frozen
class AgentResult:
    """What a run returns."""

    messages: list[Message]
    """The whole history: earlier runs, the input, model replies and tool results."""
    events: tuple[AgentEvent, ...] = attrs.field(factory=tuple, repr=False)
    """The run's events, in order."""
    turns: int = 0
    """Model turns this run took."""
    usage: TokenUsage | None = None
    """The provider-reported tokens of this run's calls, summed (``None``: none reported)."""

    @property
    def message(self) -> Message:
        """The final reply (the last assistant message)."""
        for message in reversed(self.messages):
            if message.role is Role.ASSISTANT:
                return message
        msg = "AgentResult.message: the history holds no assistant message"
        raise AgentError(msg)

    @property
    def text(self) -> str:
        """The final reply's text."""
        return self.message.text


def _to_input(value: object) -> list[Message]:
    if isinstance(value, str):
        return [Message.user(value)]
    if isinstance(value, Message):
        return [value]
    if not isinstance(value, Iterable):
        msg = f"Agent.run: messages must be a str or a list of messages, got {value!r:.60}"
        raise ConfigurationError(msg)
    messages = list(value)
    for message in messages:
        if not isinstance(message, Message):
            msg = f"Agent.run: messages must hold Message instances, got {type(message).__name__}"
            raise ConfigurationError(msg)
    return messages


def _close_calls(messages: list[Message], results: Mapping[str, ToolResult]) -> list[Message]:
    """``messages`` with the trailing call answered: given results, else interrupted."""
    if not messages or messages[-1].role is not Role.ASSISTANT:
        return messages
    uses = messages[-1].tool_uses
    if not uses:
        return messages
    blocks = tuple(
        results.get(use.id) or ToolResult(tool_use_id=use.id, content=INTERRUPTED, is_error=True)
        for use in uses
    )
    return [*messages, Message(role=Role.TOOL, content=blocks)]


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
        given: list[Tool | Callable[..., object]] = [tools] if isinstance(tools, Tool) else [*tools]
        for middleware in options.middleware:
            given.extend(middleware.tools)
        for item in given:
            tool = item if isinstance(item, Tool) else Tool.from_function(item)
            if tool.name in chosen:
                msg = f"create_agent: two tools are named {tool.name!r}"
                raise ConfigurationError(msg)
            chosen[tool.name] = tool
        self.tools: Mapping[str, Tool] = chosen
        """Its tools by name, the middlewares' included."""
        self._definitions = tuple(tool.definition for tool in chosen.values())
        counter = options.counter
        if counter is None:
            strategy_counter = getattr(options.context, "counter", None)
            counter = strategy_counter if isinstance(strategy_counter, BaseCounter) else None
        self.counter: BaseCounter = counter if counter is not None else TokenCounter()
        """What it measures requests with."""
        self._running = False

    def __repr__(self) -> str:
        return f"Agent({self.provider!r}, tools={list(self.tools)!r})"

    @property
    def definitions(self) -> tuple[ToolDefinition, ...]:
        """The tool definitions sent with every call."""
        return self._definitions

    def count_request(self, messages: Sequence[Message]) -> int:
        """What a request with ``messages`` costs: system prompt and tools included."""
        return count_request(self.counter, messages, self.options.system_prompt, self._definitions)

    def load_state(self, data: Mapping[str, JSON]) -> None:
        """Continue from a state saved with ``agent.state.to_dict()`` (another worker's)."""
        self.state = AgentState.from_dict(data)

    def run_sync(
        self, messages: str | Iterable[Message], *, backend: str = "asyncio"
    ) -> AgentResult:
        """:meth:`run` in a new event loop (``anyio.run``)."""
        return anyio.run(functools.partial(self.run, messages), backend=backend)

    async def run(self, messages: str | Iterable[Message]) -> AgentResult:
        """Append ``messages`` (or a user string) to the history and run to a final reply.

        Raises:
            MaxTurnsExceededError: the run needed more than ``max_turns`` model calls.
            AgentError: a middleware stopped the run (a limit), or the agent is running.
            NeuronContextError: the provider failed (and no fallback answered), or a
                compaction failed with ``context_errors="raise"``.
        """
        given = _to_input(messages)
        if self._running:
            msg = "Agent.run: this agent is already running (one run at a time)"
            raise AgentError(msg)
        self._running = True
        events: list[AgentEvent] = []
        on_event = self.options.on_event

        def record(event: AgentEvent) -> None:
            events.append(event)
            if on_event is not None:
                on_event(event)

        state = self.state
        state.start_run()
        context = RunContext(state=state, counter=self.counter, sink=record)
        try:
            state.messages = list(await self.chain.before_agent([*state.messages, *given]))
            await self._turns(context)
            state.messages = list(await self.chain.after_agent(state.messages))
        finally:
            state.messages = _close_calls(state.messages, {})
            self._running = False
        usage = [e for e in events if isinstance(e, ModelCalled) and e.input_tokens is not None]
        total = (
            TokenUsage(
                sum(e.input_tokens or 0 for e in usage), sum(e.output_tokens or 0 for e in usage)
            )
            if usage
            else None
        )
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
            tokens = self.count_request(state.messages)
            context.emit(TurnStarted(context.turn, len(state.messages), tokens))
            if options.context is not None:
                await compact_history(
                    context,
                    options.context,
                    tokens,
                    system_prompt=options.system_prompt,
                    tools=self._definitions,
                    raise_errors=options.context_errors == "raise",
                )
            request = ModelRequest(
                list(state.messages),
                tools=self._definitions,
                system_prompt=options.system_prompt,
                model=options.model,
                context=context,
            )
            state.count_model_call()
            response = await self.chain.model_turn(request, self._call_model)
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
            await self._run_tools(context, uses)

    # -- the innermost handlers -------------------------------------------------------

    async def _call_model(self, request: ModelRequest) -> ModelResponse:
        context = request.context
        provider = request.provider if request.provider is not None else self.provider
        messages = start_on_user(request.messages, context.state.messages)
        try:
            validate(messages)
        except InvalidConversationError as exc:
            logger.warning("a middleware broke the request; sending it repaired: %s", exc)
            messages = repair(messages)
        tools = request.tools
        completion = CompletionRequest(
            messages,
            system=request.system_prompt,
            tools=tools,
            model=request.model,
            max_tokens=self.options.max_tokens,
            temperature=self.options.temperature,
        )
        estimated = count_request(context.counter, messages, request.system_prompt, tools)
        started = time.perf_counter()
        response = await provider.complete(completion)
        duration = time.perf_counter() - started
        usage = response.usage
        counter = context.counter
        if isinstance(counter, CalibratedCounter) and usage is not None:
            system = request.system_prompt
            sent = [Message.system(system), *messages] if system else messages
            counter.observe(sent, usage.input_tokens, tools=tools)
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
            )
        )
        return ModelResponse.of(response, provider)

    async def _execute_tool(self, request: ToolCallRequest) -> ToolResult:
        use, tool = request.tool_use, request.tool
        if tool is None:
            known = ", ".join(sorted(self.tools)) or "none"
            text = f"unknown tool {use.name!r}; the available tools are: {known}"
            return ToolResult(tool_use_id=use.id, content=text, is_error=True)
        problems = validate_arguments(use.input, tool.input_schema)
        if problems:
            text = f"invalid arguments for {tool.name}: " + "; ".join(problems)
            return ToolResult(tool_use_id=use.id, content=text, is_error=True)
        value = await tool.invoke(use.input, request.context)
        return result_of(use.id, value)

    # -- tools --------------------------------------------------------------------------

    async def _run_tools(self, context: RunContext, uses: Sequence[ToolUse]) -> None:
        state = context.state
        requests: list[ToolCallRequest] = []
        for use in uses:
            number, for_tool = state.count_tool_call(use.name)
            requests.append(
                ToolCallRequest(
                    use,
                    self.tools.get(use.name),
                    context=context,
                    number=number,
                    number_for_tool=for_tool,
                )
            )
        results: dict[str, ToolResult] = {}
        stops: list[AgentError] = []
        try:
            async with anyio.create_task_group() as group:
                for request in requests:
                    group.start_soon(self._one_tool, request, results, stops, group.cancel_scope)
        finally:
            state.messages = _close_calls(state.messages, results)
        if stops:
            raise stops[0]

    async def _one_tool(
        self,
        request: ToolCallRequest,
        results: dict[str, ToolResult],
        stops: list[AgentError],
        scope: anyio.CancelScope,
    ) -> None:
        context, use = request.context, request.tool_use
        started = time.perf_counter()
        try:
            result = await self.chain.call_tool(request, self._execute_tool)
        except AgentError as exc:
            stops.append(exc)
            scope.cancel()
            context.emit(ToolCalled(context.turn, use.name, use.id, "cancelled", str(exc), 0.0))
            return
        except anyio.get_cancelled_exc_class():
            duration = time.perf_counter() - started
            context.emit(ToolCalled(context.turn, use.name, use.id, "cancelled", None, duration))
            raise
        except Exception as exc:
            result = ToolResult(
                tool_use_id=use.id, content=f"{type(exc).__name__}: {exc}", is_error=True
            )
        if result.tool_use_id != use.id:
            result = attrs.evolve(result, tool_use_id=use.id)
        results[use.id] = result
        error = result.text if result.is_error else None
        outcome: Literal["success", "error"] = "error" if result.is_error else "success"
        context.emit(
            ToolCalled(
                context.turn, use.name, use.id, outcome, error, time.perf_counter() - started
            )
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
