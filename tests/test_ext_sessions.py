"""One adapter serving many conversations: each keeps its compacted view between calls.

A web service runs one agent (one ``ContextMiddleware``) for all its users, their calls
interleaved. Each conversation must cost what it costs alone: no re-read, no
recompaction, and the request it sent last as the prefix of its next one (the provider's
prompt cache), however many conversations the process serves.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from pydantic import Field

from neuron_context import default_stack
from neuron_context.ext.langchain import ContextMiddleware
from neuron_context.testing import RecordingStrategy


@tool
def read_file(path: str) -> str:
    """Read a file (about 400 tokens)."""
    return f"# {path}\n" + "value = compute(x)\n" * 80


class Model(GenericFakeChatModel):
    """Calls ``read_file`` on a question and answers a tool result; keeps every request by
    conversation (named by its first question)."""

    requests: dict[str, list[list[BaseMessage]]] = Field(default_factory=dict)
    calls: int = 0

    def bind_tools(self, tools: Any, **kwargs: Any) -> Model:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        task = next(m for m in messages if isinstance(m, HumanMessage)).content
        self.requests.setdefault(str(task), []).append(list(messages))
        self.calls += 1
        if isinstance(messages[-1], ToolMessage):
            reply = AIMessage(content="It computes x.")
        else:
            call = {"name": "read_file", "args": {"path": f"m{self.calls}.py"}}
            reply = AIMessage(content="", tool_calls=[{**call, "id": f"c{self.calls}"}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def _serve(conversations: int, turns: int) -> tuple[Model, RecordingStrategy]:
    """One agent, ``conversations`` users taking turns in rotation, ``turns`` each."""
    model = Model(messages=iter(()))
    strategy = RecordingStrategy(default_stack(3_000))
    agent = create_agent(model, [read_file], middleware=[ContextMiddleware(strategy)])
    histories: list[list[AnyMessage]] = [[] for _ in range(conversations)]
    for turn in range(turns):
        for user, history in enumerate(histories):
            text = f"user {user}: task" if turn == 0 else f"user {user}: question {turn}"
            result = agent.invoke({"messages": [*history, HumanMessage(content=text)]})
            histories[user] = result["messages"]
    return model, strategy


def _extended(requests: list[list[BaseMessage]]) -> int:
    """How many requests start with the one before (the prompt cache's prefix kept)."""
    return sum(later[: len(earlier)] == earlier for earlier, later in itertools.pairwise(requests))


class TestManyConversations:
    def test_interleaved_conversations_compact_as_one(self) -> None:
        """Twelve interleaved conversations (more than any fixed handful) compact as often,
        and keep their prefixes as well, as one conversation served alone."""
        alone, alone_strategy = _serve(1, 8)
        many, many_strategy = _serve(12, 8)
        assert len(many.requests) == 12
        one = len(alone_strategy.calls)
        assert one >= 1  # the budget is reached: the views are compacted
        assert len(many_strategy.calls) <= 12 * (one + 1)
        alone_kept = _extended(next(iter(alone.requests.values())))
        for requests in many.requests.values():
            assert len(requests) == 16
            assert _extended(requests) >= alone_kept - 1
