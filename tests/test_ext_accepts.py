"""What LangChain and pydantic-ai accept, their adapters accept: read, and written back as
it came; what an adapter cannot read or write goes out as the framework built it."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any, cast

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langchain_support import ScriptedChatModel
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.messages import (
    ModelRequest as AIModelRequest,
)
from pydantic_ai.messages import (
    ModelResponse as AIModelResponse,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_core import PydanticSerializationError

from neuron_context import (
    ContextStrategy,
    Message,
    SlidingWindowStrategy,
    TokenCounter,
    ToolResultClearingStrategy,
    default_stack,
)
from neuron_context.ext.langchain import ContextMiddleware, from_langchain, to_langchain
from neuron_context.ext.pydantic_ai import HistoryProcessor, from_pydantic_ai, to_pydantic_ai

IDLE = 1_000_000_000
"""A budget no test reaches: the adapter only reads and passes the request on."""


class Copies(ContextStrategy):
    """Always compacts, returning equal copies of its input: every message of the request
    is written back from ours (none is an original object)."""

    def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
        return True

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        return [Message(role=message.role, content=message.content) for message in messages]

    def token_estimate(self, messages: Sequence[Message]) -> int:
        return 0


@tool
def send_email(to: str) -> str:
    """Send an email (a receipt of about 100 tokens: more than a placeholder)."""
    return f"sent to {to}: " + "receipt " * 50


def _calls(*ids: str) -> AIMessage:
    """A reply calling ``send_email`` once per id."""
    calls = [
        {"type": "tool_call", "name": "send_email", "args": {"to": f"a{i}"}, "id": call_id}
        for i, call_id in enumerate(ids)
    ]
    return AIMessage("", tool_calls=calls)


def _ids(messages: Sequence[BaseMessage]) -> list[str | None]:
    """Every tool-call id of ``messages``, in order (calls and results)."""
    out: list[str | None] = []
    for message in messages:
        if isinstance(message, AIMessage):
            out.extend(call["id"] for call in message.tool_calls)
            out.extend(call["id"] for call in message.invalid_tool_calls)
        elif isinstance(message, ToolMessage):
            out.append(message.tool_call_id)
    return out


class TestLangChainIds:
    """A tool call's id as LangChain holds it, the empty string included."""

    @given(st.lists(st.text(max_size=6), min_size=1, max_size=3, unique=True))
    def test_every_id_is_written_back_as_it_came(self, ids: list[str]) -> None:
        """Any ids (empty, or looking like the empty id's stand-in) read and write back
        unchanged."""
        history: list[BaseMessage] = [HumanMessage("go"), _calls(*ids)]
        history += [ToolMessage("ok", tool_call_id=call_id) for call_id in ids]
        assert _ids(to_langchain(from_langchain(history))) == _ids(history)

    @pytest.mark.parametrize("strategy", [default_stack(IDLE), Copies()], ids=["idle", "copies"])
    def test_an_agent_whose_call_has_an_empty_id(self, strategy: ContextStrategy) -> None:
        """A call whose id is the empty string reaches the model with its result, as
        LangChain built them: idle, and when every message is written back from ours."""
        model = ScriptedChatModel(messages=iter([_calls("e1", ""), AIMessage("done")]))
        agent = create_agent(model, [send_email], middleware=[ContextMiddleware(strategy)])
        result = agent.invoke({"messages": [HumanMessage("go")]})
        assert result["messages"][-1].content == "done"
        assert _ids(model.requests[-1]) == ["e1", "", "e1", ""]

    def test_an_invalid_call_with_an_empty_id_is_answered(self) -> None:
        """LangChain answers an invalid call that has an id (the empty one too): the
        model receives that answer."""
        invalid = AIMessage(
            "",
            invalid_tool_calls=[
                {"name": "send_email", "args": '{"to":', "id": "", "error": "Invalid JSON"}
            ],
        )
        model = ScriptedChatModel(messages=iter([AIMessage("done")]))
        middleware = ContextMiddleware(default_stack(IDLE))
        agent = create_agent(model, [send_email], middleware=[middleware])
        agent.invoke({"messages": [HumanMessage("go"), invalid]})
        last = model.requests[-1][-1]
        assert isinstance(last, ToolMessage)
        assert last.tool_call_id == ""

    def test_a_cleared_result_keeps_its_empty_id(self) -> None:
        """A result the strategy clears is written back with the id it came with."""
        model = ScriptedChatModel(messages=iter([_calls(""), _calls("b"), AIMessage("done")]))
        strategy = ToolResultClearingStrategy(0, 1, placeholder="[cleared]")
        agent = create_agent(model, [send_email], middleware=[ContextMiddleware(strategy)])
        agent.invoke({"messages": [HumanMessage("go")]})
        cleared = [m for m in model.requests[-1] if isinstance(m, ToolMessage)]
        pairs = [(m.tool_call_id, m.content) for m in cleared]
        assert pairs == [("", "[cleared]"), ("b", "[cleared]")]


class TestLangChainUnreadable:
    """A request the adapter cannot read goes out as LangChain built it."""

    @staticmethod
    def request() -> ModelRequest[Any]:
        messages = [HumanMessage("hi"), ChatMessage(content="x", role="critic")]
        model = ScriptedChatModel(messages=iter([]))
        return ModelRequest(model=model, messages=cast("list[AnyMessage]", messages))

    @pytest.mark.parametrize("persist", [False, True])
    def test_sent_as_built_with_a_warning(
        self, persist: bool, caplog: pytest.LogCaptureFixture
    ) -> None:
        """The model call is made with the request as it was; the log says why (a log
        line, not a Python warning: the suite turns those into errors)."""
        middleware = ContextMiddleware(default_stack(IDLE), persist=persist)
        request = self.request()
        sent: list[ModelRequest[Any]] = []

        def handler(given: ModelRequest[Any]) -> ModelResponse[Any]:
            sent.append(given)
            return ModelResponse(result=[AIMessage("ok")])

        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            middleware.wrap_model_call(request, handler)
        assert sent == [request]
        assert "cannot be read" in caplog.text
        assert "as LangChain built it" in caplog.text

    def test_async_sent_as_built(self) -> None:
        """The same from ``awrap_model_call``."""
        middleware = ContextMiddleware(default_stack(IDLE))
        request = self.request()
        sent: list[ModelRequest[Any]] = []

        async def handler(given: ModelRequest[Any]) -> ModelResponse[Any]:
            sent.append(given)
            return ModelResponse(result=[AIMessage("ok")])

        anyio.run(middleware.awrap_model_call, request, handler)
        assert sent == [request]

    def test_the_state_is_left_as_it_is(self) -> None:
        """With ``persist=True``, an unreadable state is not compacted."""
        middleware = ContextMiddleware(Copies(), persist=True)
        state = {"messages": self.request().messages}
        assert middleware.before_model(state, cast("Any", None)) is None  # type: ignore[arg-type]


def _history_processor(budget: int = IDLE) -> ProcessHistory[Any]:
    return ProcessHistory(HistoryProcessor(default_stack(budget)))


class TestPydanticAI:
    """pydantic-ai's own errors and ids, with the history processor in the agent."""

    def test_an_unserializable_tool_return_is_pydantic_s_error(self) -> None:
        """A tool return pydantic cannot serialize fails the run with pydantic's own
        error, as it does without the processor."""
        agent = Agent(TestModel(), capabilities=[_history_processor()])

        class Unknown:
            """A return value pydantic has no serializer for."""

        def unknown() -> Any:
            return Unknown()

        agent.tool_plain(unknown)
        with pytest.raises(PydanticSerializationError, match="Unable to serialize unknown type"):
            anyio.run(agent.run, "go")

    @pytest.mark.parametrize("budget", [IDLE, 60], ids=["idle", "compacting"])
    def test_an_empty_tool_call_id(self, budget: int) -> None:
        """A call whose id is the empty string reaches the model with its return."""
        seen: list[list[ModelMessage]] = []

        def reply(messages: list[ModelMessage], info: AgentInfo) -> AIModelResponse:
            seen.append(messages)
            if len(seen) == 1:
                call = ToolCallPart(tool_name="look", args={}, tool_call_id="")
                return AIModelResponse(parts=[call])
            return AIModelResponse(parts=[TextPart("done")])

        agent = Agent(FunctionModel(reply), capabilities=[_history_processor(budget)])

        @agent.tool_plain
        def look() -> str:
            return "y" * 400

        assert anyio.run(agent.run, "go").output == "done"
        parts = [part for message in seen[-1] for part in message.parts]
        returns = [part for part in parts if isinstance(part, ToolReturnPart)]
        calls = [part for part in parts if isinstance(part, ToolCallPart)]
        assert [part.tool_call_id for part in [*calls, *returns]] == ["", ""]

    def test_ids_round_trip(self) -> None:
        """The empty id and its look-alikes are written back as they came."""
        ids = ["", "\u2205", "\u2205\u2205x", "c"]
        history: list[ModelMessage] = [AIModelRequest(parts=[UserPromptPart("go")])]
        history.append(
            AIModelResponse(
                parts=[ToolCallPart(tool_name="f", args={}, tool_call_id=i) for i in ids]
            )
        )
        history.append(
            AIModelRequest(
                parts=[ToolReturnPart(tool_name="f", content="r", tool_call_id=i) for i in ids]
            )
        )
        back = to_pydantic_ai(from_pydantic_ai(history))
        written = [getattr(part, "tool_call_id", None) for m in back for part in m.parts]
        assert [i for i in written if i is not None] == ids + ids


IN_MAIN: list[bool] = []
"""Whether each text :class:`ThreadNoting` counted was counted in the main thread."""


class ThreadNoting(TokenCounter):
    """The heuristic counter, noting in :data:`IN_MAIN` where each text was counted."""

    def estimate_text(self, text: str) -> int:
        IN_MAIN.append(threading.current_thread() is threading.main_thread())
        return super().estimate_text(text)


class TestFirstCount:
    """An async hook's first count (where a tokenizer loads) is made off the event loop."""

    def test_pydantic_ai(self) -> None:
        """The history processor's first count runs in a worker thread."""
        counter = ThreadNoting()
        IN_MAIN.clear()
        processor = HistoryProcessor(SlidingWindowStrategy(10, IDLE, counter=counter))
        history: list[ModelMessage] = [AIModelRequest(parts=[UserPromptPart("go")])]
        anyio.run(processor, history)
        assert IN_MAIN[0] is False

    def test_langchain(self) -> None:
        """The middleware's first count in ``awrap_model_call`` runs in a worker thread."""
        counter = ThreadNoting()
        IN_MAIN.clear()
        middleware = ContextMiddleware(SlidingWindowStrategy(10, IDLE, counter=counter))
        model = ScriptedChatModel(messages=iter([]))
        request = ModelRequest(model=model, messages=[HumanMessage("go")])

        async def handler(given: ModelRequest[Any]) -> ModelResponse[Any]:
            return ModelResponse(result=[AIMessage("ok")])

        anyio.run(middleware.awrap_model_call, request, handler)
        assert IN_MAIN[0] is False
