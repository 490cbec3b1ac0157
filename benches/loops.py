"""The agent loops users run, scripted and prefilled: LangChain's ``create_agent``, the OpenAI
Agents SDK's ``Runner.run``, pydantic-ai's ``Agent`` and ours, for ``test_bench_loops.py``.

Each :class:`Loop` is one user's conversation. It starts from the first ``size`` messages
of the transcripts workload (converted to the framework's messages once per session,
outside any timing), and each :meth:`Loop.turn` is one call of the framework's entry point
as a user's loop makes it: a new question goes in with the history the previous call
returned, the scripted model calls ``read_file``, the tool's result goes back, the model
answers, and the history the framework returns is kept for the next turn. So a history
grows by four messages a turn, the same four in every contender of a benchmark (each loop
numbers its own tool calls), and whatever a middleware remembers between calls is used as
in a real loop.

The models never talk HTTP. Each records the last request it received (a reference, not a
copy) so that a benchmark can check, outside the timing, what the model was sent.
"""

from __future__ import annotations

import abc
import asyncio
import functools
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

from agents import (
    Agent as OpenAIAgent,
)
from agents import (
    ModelResponse as OpenAIModelResponse,
)
from agents import (
    RunConfig,
    Runner,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from agents.models.interface import Model
from langchain.agents import create_agent as create_langchain_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool as langchain_tool
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from pydantic import Field
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from workloads import expected_total, to_langchain, workload

from neuron_context import (
    AgentOptions,
    CompletionRequest,
    CompletionResponse,
    ContextStrategy,
    Message,
    ToolUse,
    create_agent,
    default_stack,
)
from neuron_context.ext.langchain import ContextMiddleware, from_langchain
from neuron_context.ext.openai_agents import (
    CallModelInputFilter,
    from_responses_items,
    to_responses_items,
)
from neuron_context.ext.pydantic_ai import HistoryProcessor, from_pydantic_ai, to_pydantic_ai
from neuron_context.stores import conversation
from neuron_context.testing import FunctionProvider

__all__ = [
    "FIRING_BUDGET",
    "IDLE_BUDGET",
    "LangChainLoop",
    "LangChainUsers",
    "Loop",
    "OpenAIAgentsLoop",
    "OurLoop",
    "PydanticAILoop",
    "firing",
    "idle",
    "question",
    "read_file",
    "realistic_turn",
]

IDLE_BUDGET = 10**9
"""A budget no workload reaches: the stack is consulted at every call and never compacts."""
FIRING_BUDGET = 100_000
"""The budget of the firing contenders (a 128k-token model with room for the reply), or
half the history's tokens when that is less (see :func:`firing`)."""
ANSWER = "Done: the handler computes its values."
"""The scripted model's answer once the tool's result is in."""

_LINES = "".join(
    f"    value_{line} = compute(request, line={line}, flag=True)  # checked\n"
    for line in range(20)
)


def idle() -> ContextStrategy:
    """The recommended stack with a budget never reached."""
    return default_stack(IDLE_BUDGET)


def firing(size: int) -> ContextStrategy:
    """The recommended stack with a budget the prefilled history of ``size`` is over."""
    return default_stack(firing_budget(size))


def firing_budget(size: int) -> int:
    """The budget of :func:`firing` for ``size`` messages."""
    return min(FIRING_BUDGET, expected_total("transcripts", size) // 2)


def question(turn: int) -> str:
    """The user's message at ``turn`` (new text each turn)."""
    return f"turn {turn:06d}: please continue with the next step of the task"


def read_file(path: str) -> str:
    """Read a file of the repository.

    Args:
        path: The file's path, from the repository's root.
    """
    return f"# {path}\ndef handler(request):\n{_LINES}    return value_0\n"


def realistic_turn(turn: int) -> tuple[list[Message], list[BaseMessage]]:
    """One agent turn as fresh objects, ours and LangChain's: the user's question, a call of
    ``read_file``, its result (about 1,300 characters), the answer."""
    path = f"src/module_{turn}.py"
    call = ToolUse(id=f"call_turn_{turn}", name="read_file", input={"path": path})
    ours = [
        Message.user(question(turn)),
        Message.assistant("Reading it.", tool_uses=[call]),
        Message.tool_result(call.id, read_file(path)),
        Message.assistant(ANSWER),
    ]
    return ours, list(to_langchain(ours))


@functools.cache
def _system_prompt(size: int) -> str:
    system, *_ = workload("transcripts", size).messages
    return system.text


class Loop(abc.ABC):
    """One user's conversation with one framework's agent, turn after turn."""

    def __init__(self, size: int, strategy: ContextStrategy | None) -> None:
        self.size = size
        self.strategy = strategy
        self.turns = 0
        self.start = 0
        """The history's length before the first turn."""
        self._calls = itertools.count()

    def _call_id(self) -> str:
        """A tool-call id: the same sequence in every loop, so their histories match."""
        return f"call_bench_{next(self._calls)}"

    def turn(self) -> object:
        """One call of the framework's entry point; the history it returns is kept."""
        self.turns += 1
        return self._invoke(question(self.turns))

    @abc.abstractmethod
    def _invoke(self, text: str) -> object:
        """Send ``text`` after the history, keep the history returned, return the result."""

    @abc.abstractmethod
    def history_length(self) -> int:
        """How many of the framework's messages (or items) the history holds."""

    @abc.abstractmethod
    def last_request(self) -> list[Message]:
        """What the model received at its last call, as our messages (system included)."""


# -- LangChain -----------------------------------------------------------------------


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model, scripted: a question gets a ``read_file`` call, a tool
    result the answer. It takes tools (and ignores them) and keeps its last request."""

    last: list[BaseMessage] = Field(default_factory=list)
    ids: Iterator[str] = Field(default_factory=lambda: iter(()))

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        """Tools change nothing: the replies are scripted."""
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.last = messages
        if isinstance(messages[-1], ToolMessage):
            reply = AIMessage(content=ANSWER)
        else:
            call_id = next(self.ids)
            call = {"name": "read_file", "args": {"path": f"src/{call_id}.py"}, "id": call_id}
            reply = AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


class LangChainLoop(Loop):
    """``langchain.agents.create_agent(model, [read_file], system_prompt=...)``, invoked with
    ``{"messages": history + [question]}``; with a strategy, ``middleware=[ContextMiddleware
    (strategy)]`` (its defaults: the agent's state keeps the whole history)."""

    def __init__(self, size: int, strategy: ContextStrategy | None) -> None:
        super().__init__(size, strategy)
        self.model = ScriptedChatModel(messages=iter(()), ids=iter(self._call_id, None))
        self.agent = create_langchain_agent(
            self.model,
            [langchain_tool(read_file)],
            system_prompt=_system_prompt(size),
            middleware=[] if strategy is None else [ContextMiddleware(strategy)],
        )
        prefilled = workload("transcripts", size).peer[1:]
        self.history: list[AnyMessage] = cast("list[AnyMessage]", list(prefilled))
        self.start = len(self.history)

    def _invoke(self, text: str) -> object:
        result = self.agent.invoke({"messages": [*self.history, HumanMessage(content=text)]})
        self.history = result["messages"]
        return result

    def history_length(self) -> int:
        """Messages in the agent's state."""
        return len(self.history)

    def last_request(self) -> list[Message]:
        """The model's last request (its system message included)."""
        return from_langchain(self.model.last)


class LangChainUsers(Loop):
    """One ``create_agent`` (one ``ContextMiddleware``) serving ``users`` conversations, as
    a web service's one agent serves all its users: each :meth:`turn` is the next user's
    call, in rotation, with that user's history. Each conversation is the prefilled
    history with its first question naming its user (so no two share a prefix)."""

    def __init__(self, size: int, strategy: ContextStrategy | None, users: int) -> None:
        super().__init__(size, strategy)
        self.model = ScriptedChatModel(messages=iter(()), ids=iter(self._call_id, None))
        self.agent = create_langchain_agent(
            self.model,
            [langchain_tool(read_file)],
            system_prompt=_system_prompt(size),
            middleware=[] if strategy is None else [ContextMiddleware(strategy)],
        )
        first, *rest = workload("transcripts", size).peer[1:]
        self.histories: list[list[AnyMessage]] = [
            [HumanMessage(content=f"[user {user}] {first.text}"), *cast("list[AnyMessage]", rest)]
            for user in range(users)
        ]
        self.requests: list[list[list[BaseMessage]]] = [[] for _ in range(users)]
        """What the model received at the last model call of each turn, by user."""
        self.start = len(self.histories[0])
        self._next = 0

    def _invoke(self, text: str) -> object:
        user = self._next % len(self.histories)
        self._next += 1
        result = self.agent.invoke(
            {"messages": [*self.histories[user], HumanMessage(content=text)]}
        )
        self.histories[user] = result["messages"]
        self.requests[user].append(self.model.last)  # the call answering the tool's result
        return result

    def history_length(self) -> int:
        """Messages in the first user's state."""
        return len(self.histories[0])

    def last_request(self) -> list[Message]:
        """The model's last request (its system message included)."""
        return from_langchain(self.model.last)


# -- the OpenAI Agents SDK -------------------------------------------------------------


class ScriptedModel(Model):
    """An Agents SDK ``Model`` that answers with a function (as the SDK's own tests fake
    one, without HTTP); streaming is not scripted."""

    def __init__(self, respond: Callable[[list[Any]], OpenAIModelResponse]) -> None:
        self.respond = respond

    async def get_response(  # noqa: PLR0917 - the SDK's signature
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
    ) -> OpenAIModelResponse:
        """The function's reply to the input items."""
        return self.respond(
            [{"role": "user", "content": input}] if isinstance(input, str) else input
        )

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        """Streaming is not scripted."""
        raise NotImplementedError


@functools.cache
def _responses_items(size: int) -> tuple[Any, ...]:
    """The prefilled history as Responses input items (the system prompt: instructions)."""
    return tuple(to_responses_items(workload("transcripts", size).messages[1:]))


class OpenAIAgentsLoop(Loop):
    """``Runner.run(agent, history + [question], run_config=...)`` for an ``Agent`` whose
    ``instructions`` are the system prompt; with a strategy,
    ``RunConfig(call_model_input_filter=CallModelInputFilter(strategy))``. The history kept
    is the run's ``to_input_list()``. Each run is awaited on ``event_loop``
    (``run_until_complete``), as an async application awaits it; tracing is off."""

    def __init__(
        self, size: int, strategy: ContextStrategy | None, event_loop: asyncio.AbstractEventLoop
    ) -> None:
        super().__init__(size, strategy)
        set_tracing_disabled(True)
        self.event_loop = event_loop
        self.instructions = _system_prompt(size)
        self.agent = OpenAIAgent(
            name="coder",
            instructions=self.instructions,
            model=ScriptedModel(self._respond),
            tools=[function_tool(read_file)],
        )
        self.config = RunConfig(
            tracing_disabled=True,
            call_model_input_filter=None if strategy is None else CallModelInputFilter(strategy),
        )
        self.history: list[Any] = list(_responses_items(size))
        self.start = len(self.history)
        self.last: list[Any] = []

    def _respond(self, items: list[Any]) -> OpenAIModelResponse:
        self.last = items
        output: list[Any]
        if _kind(items[-1]) == "function_call_output":
            text = ResponseOutputText(type="output_text", text=ANSWER, annotations=[])
            output = [
                ResponseOutputMessage(
                    id=f"msg_{self.turns}",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[text],
                )
            ]
        else:
            call_id = self._call_id()
            output = [
                ResponseFunctionToolCall(
                    type="function_call",
                    call_id=call_id,
                    name="read_file",
                    arguments=f'{{"path": "src/{call_id}.py"}}',
                    id=f"fc_{call_id}",
                    status="completed",
                )
            ]
        return OpenAIModelResponse(output=output, usage=Usage(), response_id=None)

    def _invoke(self, text: str) -> object:
        given = [*self.history, {"role": "user", "content": text}]
        run = Runner.run(self.agent, given, run_config=self.config)
        result = self.event_loop.run_until_complete(run)
        self.history = result.to_input_list()
        return result

    def history_length(self) -> int:
        """Input items the last run returned."""
        return len(self.history)

    def last_request(self) -> list[Message]:
        """The model's last input, behind the instructions."""
        return [Message.system(self.instructions), *from_responses_items(self.last)]


class OpenAIAgentsUsers(OpenAIAgentsLoop):
    """One ``RunConfig`` (one ``CallModelInputFilter``) serving ``users`` conversations, as a
    web service's one filter serves all its users: each :meth:`turn` is the next user's
    run, in rotation, with that user's history. Each conversation is the prefilled history
    with its first question naming its user (so no two share a prefix). With ``named``,
    each run goes inside ``neuron_context.stores.conversation(f"user-{n}")`` (the filter
    keys the conversation by that name); without, the filter finds it by its items."""

    def __init__(
        self,
        size: int,
        strategy: ContextStrategy | None,
        users: int,
        event_loop: asyncio.AbstractEventLoop,
        *,
        named: bool = False,
    ) -> None:
        super().__init__(size, strategy, event_loop)
        first, *rest = _responses_items(size)
        self.histories: list[list[Any]] = [
            [{**first, "content": f"[user {user}] {_text(first)}"}, *rest] for user in range(users)
        ]
        self.requests: list[list[list[Any]]] = [[] for _ in range(users)]
        """What the model received at the last model call of each turn, by user."""
        self.start = len(self.histories[0])
        self.named = named
        self._next = 0

    def _invoke(self, text: str) -> object:
        user = self._next % len(self.histories)
        self._next += 1
        given = [*self.histories[user], {"role": "user", "content": text}]
        run = Runner.run(self.agent, given, run_config=self.config)
        with conversation(f"user-{user}" if self.named else None):
            result = self.event_loop.run_until_complete(run)
        self.histories[user] = result.to_input_list()
        self.requests[user].append(self.last)  # the call answering the tool's result
        return result

    def history_length(self) -> int:
        """Input items in the first user's history."""
        return len(self.histories[0])


def _text(item: Any) -> str:
    """The text of a user message item (a string, or its parts' texts)."""
    content = item["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def _kind(item: Any) -> object:
    return item.get("type") if isinstance(item, dict) else getattr(item, "type", None)


# -- pydantic-ai -----------------------------------------------------------------------


@functools.cache
def _pydantic_ai_messages(size: int) -> tuple[ModelMessage, ...]:
    """The prefilled history as pydantic-ai messages (the system prompt a part of the first)."""
    return tuple(to_pydantic_ai(workload("transcripts", size).messages))


class _PydanticAIAgent(Loop):
    """One ``pydantic_ai.Agent(FunctionModel(...), tools=[read_file])`` awaited on
    ``event_loop``; with a strategy,
    ``capabilities=[ProcessHistory(HistoryProcessor(strategy))]``. Its model calls the tool
    once, then answers the tool's result; :attr:`last` is what it received last."""

    def __init__(
        self, size: int, strategy: ContextStrategy | None, event_loop: asyncio.AbstractEventLoop
    ) -> None:
        super().__init__(size, strategy)
        self.event_loop = event_loop
        self.last: list[ModelMessage] = []
        capabilities = [] if strategy is None else [ProcessHistory(HistoryProcessor(strategy))]
        self.agent: PydanticAgent[None, str] = PydanticAgent(
            FunctionModel(self._reply), tools=[read_file], capabilities=capabilities
        )

    def _reply(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.last = messages
        request = messages[-1]
        if isinstance(request, ModelRequest) and isinstance(request.parts[-1], ToolReturnPart):
            return ModelResponse(parts=[TextPart(ANSWER)])
        call_id = self._call_id()
        call = ToolCallPart("read_file", {"path": f"src/{call_id}.py"}, tool_call_id=call_id)
        return ModelResponse(parts=[call])


class PydanticAILoop(_PydanticAIAgent):
    """The agent called with ``run(question, message_history=history)`` (what ``run_sync``
    does on a loop of its own, which it leaves open), the history kept its
    ``all_messages()``. pydantic-ai keeps what a processor returns as the run's history, so
    there a compaction persists in the loop."""

    def __init__(
        self, size: int, strategy: ContextStrategy | None, event_loop: asyncio.AbstractEventLoop
    ) -> None:
        super().__init__(size, strategy, event_loop)
        self.history: list[ModelMessage] = list(_pydantic_ai_messages(size))
        self.start = len(self.history)

    def _invoke(self, text: str) -> object:
        run = self.agent.run(text, message_history=self.history)
        result = self.event_loop.run_until_complete(run)
        self.history = result.all_messages()
        return result

    def history_length(self) -> int:
        """Messages (requests and responses) the last run returned."""
        return len(self.history)

    def last_request(self) -> list[Message]:
        """The model's last request (the system prompt is a part of its first message)."""
        return from_pydantic_ai(self.last)


class PydanticAIUsers(_PydanticAIAgent):
    """One ``pydantic_ai.Agent`` (one ``HistoryProcessor``) serving ``users`` conversations,
    as a web service's one agent serves all its users: each :meth:`turn` is the next user's
    run, in rotation, with that user's history (each run names its conversation,
    ``conversation_id=f"user-{n}"``). Each conversation is the prefilled history with its
    first question naming its user (so no two share a prefix)."""

    def __init__(
        self,
        size: int,
        strategy: ContextStrategy | None,
        users: int,
        event_loop: asyncio.AbstractEventLoop,
    ) -> None:
        super().__init__(size, strategy, event_loop)
        first, *rest = workload("transcripts", size).messages
        self.histories: list[list[ModelMessage]] = [
            to_pydantic_ai([Message.system(f"[user {user}] {first.text}"), *rest])
            for user in range(users)
        ]
        self.requests: list[list[list[ModelMessage]]] = [[] for _ in range(users)]
        """What the model received at the last model call of each run, by user."""
        self.start = len(self.histories[0])
        self._next = 0

    def _invoke(self, text: str) -> object:
        user = self._next % len(self.histories)
        self._next += 1
        run = self.agent.run(
            text, message_history=self.histories[user], conversation_id=f"user-{user}"
        )
        result = self.event_loop.run_until_complete(run)
        self.histories[user] = result.all_messages()
        self.requests[user].append(self.last)  # the call answering the tool's result
        return result

    def history_length(self) -> int:
        """Messages (requests and responses) of the first user's history."""
        return len(self.histories[0])

    def last_request(self) -> list[Message]:
        """The model's last request (the system prompt is a part of its first message)."""
        return from_pydantic_ai(self.last)


# -- ours ------------------------------------------------------------------------------


class OurLoop(Loop):
    """``neuron_context.create_agent(FunctionProvider(model), [read_file],
    AgentOptions(system_prompt=..., context=strategy))``; the history is the agent's own
    state (``agent.state.messages``, set to the prefilled history), so a turn is
    ``agent.run_sync(question)`` or, given ``event_loop``, ``await agent.run(question)``
    on that loop. The scripted model is an async function (no worker thread)."""

    def __init__(
        self,
        size: int,
        strategy: ContextStrategy | None,
        event_loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(size, strategy)
        self.system_prompt = _system_prompt(size)
        self.event_loop = event_loop
        self.last: Sequence[Message] = ()
        self.provider = FunctionProvider(self._model)
        options = AgentOptions(system_prompt=self.system_prompt, context=strategy)
        self.agent = create_agent(self.provider, [read_file], options)
        self.agent.state.messages = list(workload("transcripts", size).messages[1:])
        self.start = len(self.agent.state.messages)

    async def _model(self, request: CompletionRequest) -> CompletionResponse | str:
        self.last = request.messages
        if request.messages[-1].is_tool:
            return ANSWER
        call_id = self._call_id()
        call = ToolUse(id=call_id, name="read_file", input={"path": f"src/{call_id}.py"})
        return CompletionResponse(Message.assistant(tool_uses=[call]), stop_reason="tool_use")

    def _invoke(self, text: str) -> object:
        self.provider.requests.clear()  # the test double keeps every request; a loop does not
        if self.event_loop is None:
            return self.agent.run_sync(text)
        return self.event_loop.run_until_complete(self.agent.run(text))

    def history_length(self) -> int:
        """Messages in the agent's state."""
        return len(self.agent.state.messages)

    def last_request(self) -> list[Message]:
        """The provider's last request, behind the system prompt."""
        return [Message.system(self.system_prompt), *self.last]
