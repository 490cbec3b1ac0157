"""Hostile cases against the adapters: a user's strategy that fails in its trigger or its
compaction never costs the model call (each adapter, sync and async), and an idle
adapter sends whatever the framework built, however odd."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, cast

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuron_context import ContextStrategy, Message, default_stack

pytest.importorskip("langchain")
pytest.importorskip("pydantic_ai")
pytest.importorskip("agents")

from agents.run import CallModelData, ModelInputData
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langchain_support import FunctionChatModel, ScriptedChatModel
from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from strategies import refusal_numbers

from neuron_context.errors import ContextOverflowError
from neuron_context.ext.langchain import ContextMiddleware
from neuron_context.ext.openai_agents import CallModelInputFilter
from neuron_context.ext.pydantic_ai import HistoryProcessor

IDLE = 1_000_000_000


class _Failing(ContextStrategy):
    """A user's strategy failing where it is told to: ``"trigger"`` or ``"compact"``."""

    def __init__(self, where: str) -> None:
        self.where = where

    def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
        if self.where == "trigger":
            raise RuntimeError(self.where)
        return True

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        raise RuntimeError(self.where)

    def token_estimate(self, messages: Sequence[Message]) -> int:
        return 1


WHERE = ["trigger", "compact"]


class TestFailingStrategy:
    """The model call goes out as the framework built it, with a warning."""

    @pytest.mark.parametrize("where", WHERE)
    @pytest.mark.parametrize("persist", [False, True])
    def test_langchain(self, where: str, persist: bool, caplog: pytest.LogCaptureFixture) -> None:
        """LangChain's agent answers; the model got the messages as LangChain built them."""
        model = ScriptedChatModel(messages=iter([AIMessage("done")]))
        middleware = ContextMiddleware(_Failing(where), persist=persist)
        agent = create_agent(model, [], middleware=[middleware])
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            result = agent.invoke({"messages": [HumanMessage("go")]})
        assert result["messages"][-1].content == "done"
        assert [m.content for m in model.requests[-1]] == ["go"]
        assert where in caplog.text

    @pytest.mark.parametrize("where", WHERE)
    def test_langchain_async(self, where: str) -> None:
        """The same through ``ainvoke``."""
        model = ScriptedChatModel(messages=iter([AIMessage("done")]))
        agent = create_agent(model, [], middleware=[ContextMiddleware(_Failing(where))])

        async def main() -> Any:
            return await agent.ainvoke({"messages": [HumanMessage("go")]})

        assert anyio.run(main)["messages"][-1].content == "done"

    @pytest.mark.parametrize("where", WHERE)
    def test_pydantic_ai(self, where: str) -> None:
        """pydantic-ai's agent answers (run on a fresh event loop: ``run_sync`` leaves
        its loop open)."""
        agent = Agent(TestModel(), capabilities=[ProcessHistory(HistoryProcessor(_Failing(where)))])
        assert anyio.run(agent.run, "hi").output

    @pytest.mark.parametrize("where", WHERE)
    def test_openai_agents_filter(self, where: str, caplog: pytest.LogCaptureFixture) -> None:
        """The Agents SDK's filter returns the input it was given."""
        items: list[Any] = [{"role": "user", "content": "hi"}]
        data = CallModelData(
            model_data=ModelInputData(input=list(items), instructions="be brief"),
            agent=None,  # type: ignore[arg-type]
            context=None,
        )
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            result = _filtered(CallModelInputFilter(_Failing(where)), data)
        assert result.input == items
        assert result.instructions == "be brief"
        assert where in caplog.text


def _filtered(flt: CallModelInputFilter, data: CallModelData[Any]) -> ModelInputData:
    result = flt(data)
    if hasattr(result, "__await__"):

        async def wait() -> ModelInputData:
            return await result

        return anyio.run(wait)
    return result  # type: ignore[return-value]


_ids = st.one_of(st.just(""), st.text(max_size=8))
_item = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "system", "developer"]), "content": st.text(max_size=20)}
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("function_call"),
            "call_id": _ids,
            "name": st.text(min_size=1, max_size=8),
            "arguments": st.one_of(st.just("{}"), st.text(max_size=12)),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("function_call_output"), "call_id": _ids, "output": st.text(max_size=12)}
    ),
    st.fixed_dictionaries(
        {"type": st.just("reasoning"), "id": st.text(max_size=6), "summary": st.just([])}
    ),
    st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=3),
)


class TestIdleSendsAsBuilt:
    """An idle adapter sends whatever the framework built, however odd."""

    @given(items=st.lists(_item, max_size=8))
    def test_openai_agents_any_items(self, items: list[dict[str, Any]]) -> None:
        """Any items (orphan outputs of server-managed runs, reasoning between calls and
        outputs, empty ids, unknown shapes): returned as given, never an exception."""
        data = CallModelData(
            model_data=ModelInputData(input=list(items), instructions=None),  # type: ignore[arg-type]
            agent=None,  # type: ignore[arg-type]
            context=None,
        )
        result = _filtered(CallModelInputFilter(default_stack(IDLE)), data)
        assert result.input == items

    @given(ids=st.lists(_ids, min_size=1, max_size=3, unique=True))
    def test_langchain_any_ids(self, ids: list[str]) -> None:
        """Tool calls with any ids (the empty one too), answered: the model gets them as
        LangChain built them."""
        calls = [{"name": "t", "args": {}, "id": i, "type": "tool_call"} for i in ids]
        history: list[AnyMessage] = [
            HumanMessage("go"),
            AIMessage("", tool_calls=calls),
            *[ToolMessage("ok", tool_call_id=i) for i in ids],
        ]
        model = ScriptedChatModel(messages=iter([AIMessage("done")]))
        agent = create_agent(model, [], middleware=[ContextMiddleware(default_stack(IDLE))])
        agent.invoke(cast("Any", {"messages": history}))
        sent = model.requests[-1]
        assert [getattr(m, "tool_call_id", None) for m in sent] == [None, None, *ids]


class TestRefusalsThroughAdapters:
    """A refusal claiming any window, through LangChain's middleware and pydantic-ai's
    processor: the retry holds the newest request, or ContextOverflowError is raised
    and the framework's history is as it was."""

    @given(tokens=refusal_numbers(), limit=refusal_numbers())
    def test_langchain(self, tokens: str, limit: str) -> None:
        """Every request the model gets holds the newest request; the state is never
        replaced by a request without it."""
        seen: list[list[Any]] = []

        def reply(messages: list[Any]) -> AIMessage:
            seen.append(list(messages))
            if len(seen) == 1:
                msg = f"prompt is too long: {tokens} tokens > {limit} maximum"
                raise ValueError(msg)
            return AIMessage("done")

        history: list[AnyMessage] = [HumanMessage("the task: " + "details " * 300)]
        for i in range(6):
            history += [AIMessage(f"step {i} " + "words " * 300), HumanMessage(f"continue {i}")]
        history.append(HumanMessage("the new request"))
        agent = create_agent(
            FunctionChatModel(reply=reply), [], middleware=[ContextMiddleware(default_stack(IDLE))]
        )
        try:
            state = agent.invoke(cast("Any", {"messages": list(history)}))
        except ContextOverflowError:
            assert len(seen) == 1
        else:
            assert [m.content for m in state["messages"][: len(history)]] == [
                m.content for m in history
            ]
        for request in seen:
            assert request[-1].content == "the new request"

    @given(limit=st.integers(0, 30))
    def test_pydantic_ai_tiny_window(self, limit: int) -> None:
        """A window nothing fits: ContextOverflowError, one model call."""
        calls: list[int] = []

        def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            calls.append(len(messages))
            msg = f"prompt is too long: 100000 tokens > {limit} maximum"
            raise ValueError(msg)

        processor = HistoryProcessor(default_stack(IDLE))
        wrapped = processor.wrap(FunctionModel(model))
        agent = Agent(wrapped, capabilities=[ProcessHistory(processor)])
        with pytest.raises(ContextOverflowError):
            anyio.run(agent.run, "the new request")
        assert calls == [1]
