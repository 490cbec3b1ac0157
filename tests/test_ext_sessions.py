"""One adapter serving many conversations: each keeps its compacted view between calls.

A web service runs one agent (one ``ContextMiddleware``) for all its users, their calls
interleaved. Each conversation must cost what it costs alone: no re-read, no
recompaction, and the request it sent last as the prefix of its next one (the provider's
prompt cache), however many conversations the process serves.
"""

from __future__ import annotations

import itertools

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langchain_support import ReadingChatModel

from neuron_context import default_stack
from neuron_context.ext.langchain import ContextMiddleware
from neuron_context.testing import RecordingStrategy


@tool
def read_file(path: str) -> str:
    """Read a file (about 400 tokens)."""
    return f"# {path}\n" + "value = compute(x)\n" * 80


def _serve(
    conversations: int, turns: int
) -> tuple[dict[str, list[list[BaseMessage]]], RecordingStrategy]:
    """One agent, ``conversations`` users taking turns in rotation, ``turns`` each: the
    requests by conversation (named by its first question), and the strategy's record."""
    model = ReadingChatModel(messages=iter(()))
    strategy = RecordingStrategy(default_stack(3_000))
    agent = create_agent(model, [read_file], middleware=[ContextMiddleware(strategy)])
    histories: list[list[AnyMessage]] = [[] for _ in range(conversations)]
    for turn in range(turns):
        for user, history in enumerate(histories):
            text = f"user {user}: task" if turn == 0 else f"user {user}: question {turn}"
            result = agent.invoke({"messages": [*history, HumanMessage(content=text)]})
            histories[user] = result["messages"]
    by_task: dict[str, list[list[BaseMessage]]] = {}
    for request in model.requests:
        task = next(m for m in request if isinstance(m, HumanMessage)).content
        by_task.setdefault(str(task), []).append(request)
    return by_task, strategy


def _extended(requests: list[list[BaseMessage]]) -> int:
    """How many requests start with the one before (the prompt cache's prefix kept)."""
    return sum(later[: len(earlier)] == earlier for earlier, later in itertools.pairwise(requests))


class TestManyConversations:
    def test_interleaved_conversations_compact_as_one(self) -> None:
        """Twelve interleaved conversations (more than any fixed handful) compact as often,
        and keep their prefixes as well, as one conversation served alone."""
        alone, alone_strategy = _serve(1, 8)
        many, many_strategy = _serve(12, 8)
        assert len(many) == 12
        one = len(alone_strategy.calls)
        assert one >= 1  # the budget is reached: the views are compacted
        assert len(many_strategy.calls) <= 12 * (one + 1)
        alone_kept = _extended(next(iter(alone.values())))
        for requests in many.values():
            assert len(requests) == 16
            assert _extended(requests) >= alone_kept - 1
