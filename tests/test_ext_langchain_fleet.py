"""A fleet of LangChain workers continues one conversation as one process would.

Behind a load balancer a conversation's calls land on different workers, each with its own
agent and ``ContextMiddleware``, sharing a checkpointer. The compacted view goes into the
thread's state, so whichever worker takes the next call sends what one worker would have
sent: the same compactions, the same prefixes.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import tool
from langchain_support import ReadingChatModel
from langgraph.checkpoint.memory import InMemorySaver

from neuron_context import Message, default_stack
from neuron_context.ext.langchain import ContextMiddleware, from_langchain
from neuron_context.testing import RecordingStrategy

BUDGET = 3_000


@tool
def read_file(path: str) -> str:
    """Read a file (about 500 tokens)."""
    return f"# {path}\n" + "".join(f"value_{n} = compute({n})\n" for n in range(60))


class Worker:
    """One process of the fleet: its own model, strategy and middleware."""

    def __init__(self, saver: InMemorySaver) -> None:
        self.model = ReadingChatModel(messages=iter(()))
        self.strategy = RecordingStrategy(default_stack(BUDGET))
        self.agent = create_agent(
            self.model,
            [read_file],
            middleware=[ContextMiddleware(self.strategy)],
            checkpointer=saver,
        )

    def ask(self, text: str) -> None:
        config: Any = {"configurable": {"thread_id": "conversation-1"}}
        self.agent.invoke({"messages": [HumanMessage(content=text)]}, config)


def _sent(workers: list[Worker], turns: int) -> tuple[list[list[Message]], int]:
    """The requests of ``turns`` questions taken by ``workers`` in turn (as ours, in the
    order sent), and how many compactions they made."""
    for turn in range(turns):
        workers[turn % len(workers)].ask(f"question {turn}: read the next module")
    ordered: list[tuple[int, list[BaseMessage]]] = []
    for index, worker in enumerate(workers):
        for call, request in enumerate(worker.model.requests):
            turn = (call // 2) * len(workers) + index  # two model calls a question
            ordered.append((turn * 2 + call % 2, request))
    requests = [from_langchain(request) for _, request in sorted(ordered, key=lambda x: x[0])]
    return requests, sum(len(worker.strategy.calls) for worker in workers)


class TestFleet:
    def test_two_workers_send_what_one_sends(self) -> None:
        """Two workers sharing a checkpointer, taking a thread's calls in turn, send the
        requests one worker sends, with as many compactions."""
        one, compactions = _sent([Worker(InMemorySaver())], 14)
        saver = InMemorySaver()
        two, fleet_compactions = _sent([Worker(saver), Worker(saver)], 14)
        assert compactions >= 2  # the budget is crossed, more than once
        assert len(two) == len(one) == 28
        assert two == one
        assert fleet_compactions == compactions

    def test_a_history_edited_since_is_compacted_afresh(self) -> None:
        """A kept view whose history was replaced is not used: the worker compacts anew."""
        saver = InMemorySaver()
        first = Worker(saver)
        for turn in range(10):
            first.ask(f"question {turn}")
        assert first.strategy.calls
        config: Any = {"configurable": {"thread_id": "conversation-1"}}
        checkpoint = saver.get_tuple(config)
        assert checkpoint is not None
        state = checkpoint.checkpoint["channel_values"]
        assert state["neuron_context_view"]["view"]  # kept with the thread (privately)
        edited = HumanMessage(content="an edited message", id=state["messages"][0].id)
        first.agent.update_state(config, {"messages": [edited]})  # replaced by its id
        second = Worker(saver)
        second.ask("after the edit")
        sent = from_langchain(second.model.requests[0])
        assert any(message.text == "an edited message" for message in sent)
        assert second.strategy.calls  # the kept view no longer stood for the history
