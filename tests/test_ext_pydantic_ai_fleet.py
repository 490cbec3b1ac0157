"""pydantic-ai conversations across processes and within one.

pydantic-ai keeps no conversation of its own: a run's history is what the caller passes
back as ``message_history`` (from memory, or from a database a fleet of workers shares),
and the history processor's compaction is part of it. So a worker that meets a
conversation for the first time continues it exactly as the worker that compacted it
would have; one processor serving many conversations finds each by its
``conversation_id``.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from neuron_context import MemoryStore, Message, SlidingWindowStrategy, default_stack
from neuron_context.ext._pydantic_ai import reader as pydantic_reader
from neuron_context.ext._pydantic_ai.messages import read
from neuron_context.ext.pydantic_ai import HistoryProcessor, from_pydantic_ai, to_pydantic_ai
from neuron_context.testing import RecordingStrategy

BUDGET = 4_000
TURNS = 10


def _reply(
    requests: list[list[ModelMessage]],
) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    """A model that calls ``read_file`` for a question and answers a tool's return; each
    request is recorded."""

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests.append(list(messages))
        last = messages[-1]
        if isinstance(last, ModelRequest) and isinstance(last.parts[-1], ToolReturnPart):
            return ModelResponse(parts=[TextPart(f"done: {last.parts[-1].tool_call_id}")])
        turn = sum(isinstance(m, ModelResponse) for m in messages)
        call = ToolCallPart("read_file", {"path": f"f{turn}.py"}, tool_call_id=f"call_{turn}")
        return ModelResponse(parts=[call])

    return reply


def _agent(strategy: RecordingStrategy, requests: list[list[ModelMessage]]) -> Agent[None, str]:
    agent = Agent(
        FunctionModel(_reply(requests)),
        instructions="Be terse.",
        capabilities=[ProcessHistory(HistoryProcessor(strategy))],
    )

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file (about 700 tokens)."""
        return f"# {path}\n" + "value = compute(x)\n" * 150

    return agent


def _ours(requests: list[list[ModelMessage]]) -> list[list[Message]]:
    return [from_pydantic_ai(request) for request in requests]


def _converse(agents: list[Agent[None, str]], *, stored: bool) -> None:
    """One conversation of :data:`TURNS` runs, the agents taking the runs in turn; with
    ``stored``, the history goes through JSON between runs, as a database keeps it."""

    async def converse() -> None:
        history: list[ModelMessage] = []
        for turn, agent in zip(range(TURNS), itertools.cycle(agents), strict=False):
            if stored:
                history = ModelMessagesTypeAdapter.validate_json(
                    ModelMessagesTypeAdapter.dump_json(history)
                )
            result = await agent.run(
                f"question {turn}", message_history=history, conversation_id="conv"
            )
            history = result.all_messages()

    anyio.run(converse)


class TestFleet:
    def test_two_workers_send_what_one_sends(self) -> None:
        """Two agents (two processes' processors, one shared store), alternating the runs
        of one conversation whose history a database keeps, send the very requests one
        agent sends: the same compactions, the same prefixes."""
        one: list[list[ModelMessage]] = []
        alone = RecordingStrategy(default_stack(BUDGET, store=MemoryStore()))
        _converse([_agent(alone, one)], stored=False)
        two: list[list[ModelMessage]] = []
        shared = MemoryStore()
        first = RecordingStrategy(default_stack(BUDGET, store=shared))
        second = RecordingStrategy(default_stack(BUDGET, store=shared))
        _converse([_agent(first, two), _agent(second, two)], stored=True)
        assert alone.calls  # the conversation was compacted
        assert len(first.calls) + len(second.calls) == len(alone.calls)
        assert _ours(two) == _ours(one)


def _named(messages: list[Message], name: str) -> list[ModelMessage]:
    """``messages`` as pydantic-ai messages of conversation ``name``."""
    return [dataclasses.replace(m, conversation_id=name) for m in to_pydantic_ai(messages)]


class TestManyConversations:
    @pytest.mark.anyio
    async def test_found_by_conversation_id(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A conversation is found by its ``conversation_id``: another conversation that
        continues its history (``conversation_id="new"``) does not take its place, so its
        next call converts only its new messages."""
        converted: list[int] = []

        def counting(items: Sequence[ModelMessage], offset: int = 0) -> Any:
            converted.append(len(items))
            return read(items, offset)

        monkeypatch.setattr(pydantic_reader, "read", counting)
        processor = HistoryProcessor(SlidingWindowStrategy(100, 10**9))
        turns = [Message.user(f"question {n}") for n in range(4)]
        first = _named(turns[:2], "a")
        await processor(first)
        await processor([*first, *_named(turns[2:3], "b")])  # a fork, another conversation
        converted.clear()
        await processor([*first, *_named(turns[3:], "a")])
        assert converted == [1]

    def test_interleaved_conversations_compact_as_one(self) -> None:
        """One processor serving twelve interleaved conversations compacts each as often
        as it compacts one served alone, and each request starts with the one before as
        often."""

        def serve(conversations: int) -> tuple[dict[str, list[list[Message]]], int]:
            requests: list[list[ModelMessage]] = []
            strategy = RecordingStrategy(default_stack(BUDGET))
            agent = _agent(strategy, requests)
            histories: list[list[ModelMessage]] = [[] for _ in range(conversations)]

            async def run() -> None:
                for turn in range(TURNS // 2):
                    for user, history in enumerate(histories):
                        result = await agent.run(
                            f"user {user}: question {turn}",
                            message_history=history,
                            conversation_id=f"user-{user}",
                        )
                        histories[user] = result.all_messages()

            anyio.run(run)
            by_user: dict[str, list[list[Message]]] = {}
            for request in requests:
                name = next(m for m in request if m.conversation_id).conversation_id
                by_user.setdefault(str(name), []).append(from_pydantic_ai(request))
            return by_user, len(strategy.calls)

        def extended(requests: list[list[Message]]) -> int:
            return sum(
                later[: len(earlier)] == earlier for earlier, later in itertools.pairwise(requests)
            )

        alone, one = serve(1)
        many, calls = serve(12)
        assert one >= 1
        assert calls <= 12 * (one + 1)
        assert len(many) == 12
        kept = extended(next(iter(alone.values())))
        assert all(extended(requests) >= kept - 1 for requests in many.values())
