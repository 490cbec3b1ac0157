"""neuron_context.ext.langchain: conversion, ContextMiddleware in create_agent, compact_messages."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
from ext_support import compaction, one_result_per_message, stack, well_formed
from hypothesis import given
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_support import ScriptedChatModel, read_file, script
from strategies import Case, cases, strategy_stacks, well_formed_conversations
from transcripts import load_transcript, requires_transcripts, transcript_paths

from neuron_context import (
    Compaction,
    ConfigurationError,
    ContextStrategy,
    Document,
    Image,
    Message,
    RedactedThinking,
    Role,
    SlidingWindowStrategy,
    Text,
    Thinking,
    TokenCounter,
    ToolResultClearingStrategy,
    ToolUse,
    default_stack,
)
from neuron_context.ext.langchain import (
    ContextMiddleware,
    acompact_messages,
    compact_messages,
    from_langchain,
    to_langchain,
)
from neuron_context.formats import RAW_ARGUMENTS
from neuron_context.testing import RecordingStrategy

STACKS = pytest.mark.parametrize("make", [stack, default_stack], ids=["composite", "default_stack"])
"""The long runs run both the hand-built composite and the recommended stack."""

COUNTER = TokenCounter()
BUDGET = 3_000
SYSTEM_PROMPT = "You are a careful agent. Read files when asked."


def _agent(model: ScriptedChatModel, middleware: ContextMiddleware) -> Any:
    return create_agent(model, [read_file], system_prompt=SYSTEM_PROMPT, middleware=[middleware])


def _question() -> dict[str, object]:
    return {"messages": [{"role": "user", "content": "read the 20 files"}]}


class TestConversion:
    """from_langchain and to_langchain."""

    @given(well_formed_conversations())
    def test_round_trip(self, messages: list[Message]) -> None:
        """Our messages survive LangChain unchanged, one tool result per message."""
        assert from_langchain(to_langchain(messages)) == one_result_per_message(messages)

    @pytest.mark.parametrize("path", transcript_paths(), ids=lambda p: p.name)
    @requires_transcripts
    def test_transcripts_round_trip(self, path: Path) -> None:
        """Each shared transcript converts to LangChain messages and back unchanged."""
        messages = load_transcript(path)
        assert from_langchain(to_langchain(messages)) == one_result_per_message(messages)

    def test_langchain_round_trip(self) -> None:
        """LangChain messages in our written form come back equal."""
        messages: list[BaseMessage] = [
            SystemMessage("be brief"),
            HumanMessage("hi"),
            AIMessage(
                content="let me look",
                tool_calls=[{"type": "tool_call", "id": "c1", "name": "ls", "args": {"d": "."}}],
            ),
            ToolMessage("a.py", tool_call_id="c1", name="ls", status="success"),
            AIMessage("done"),
        ]
        assert to_langchain(from_langchain(messages)) == messages

    def test_tool_calls_and_results(self) -> None:
        """Tool calls become ToolUse blocks, ToolMessages tool results with their status."""
        ai = AIMessage(
            content="",
            tool_calls=[{"type": "tool_call", "id": "c1", "name": "ls", "args": {"d": "."}}],
        )
        result = ToolMessage("boom", tool_call_id="c1", status="error")
        assistant, tool_message = from_langchain([ai, result])
        assert assistant.tool_uses == (ToolUse(id="c1", name="ls", input={"d": "."}),)
        assert tool_message.tool_results[0].is_error
        assert tool_message.tool_results[0].text == "boom"

    def test_provider_shaped_content(self) -> None:
        """Anthropic-shaped thinking and OpenAI-shaped images read as our blocks."""
        ai = AIMessage(
            content=[
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": "ok"},
            ]
        )
        human = HumanMessage(
            content=[{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]
        )
        assistant, user = from_langchain([ai, human])
        assert assistant.content == (
            Thinking(thinking="hmm", signature="sig"),
            RedactedThinking(data="opaque"),
            Text(text="ok"),
        )
        assert user.content == (Image(media_type="image/png", data="AAAA"),)

    def test_invalid_tool_call_round_trips(self) -> None:
        """An invalid tool call is a ToolUse with the raw arguments, and goes back invalid."""
        use = ToolUse(id="c1", name="ls", input={RAW_ARGUMENTS: "{not json"})
        (ai,) = to_langchain([Message.assistant(tool_uses=[use])])
        assert isinstance(ai, AIMessage)
        assert ai.tool_calls == []
        assert ai.invalid_tool_calls[0]["args"] == "{not json"
        assert from_langchain([ai])[0].tool_uses == (use,)

    def test_media_and_summary(self) -> None:
        """Documents, images with a size and a summary survive the round trip."""
        message = Message(
            role=Role.USER,
            content=(
                Compaction(content="earlier: files read"),
                Image(url="https://example.com/a.png", width=10, height=20),
                Document(media_type="application/pdf", data="JVBERi0=", pages=3),
                Document(media_type="text/markdown", text="# notes"),
            ),
        )
        assert from_langchain(to_langchain([message])) == [message]

    def test_tool_name_from_its_call(self) -> None:
        """A ToolMessage is named after the call it answers."""
        messages = [
            Message.assistant(tool_uses=[ToolUse(id="c1", name="ls", input={})]),
            Message.tool_result("c1", "a.py"),
        ]
        tool_message = to_langchain(messages)[1]
        assert isinstance(tool_message, ToolMessage)
        assert tool_message.name == "ls"

    def test_unknown_message_kind(self) -> None:
        """A message with no role of ours is a ConfigurationError naming its path."""
        with pytest.raises(ConfigurationError, match=r"messages\[1\]"):
            from_langchain([HumanMessage("hi"), ChatMessage(content="x", role="critic")])

    def test_tool_call_without_id(self) -> None:
        """A tool call without an id is a ConfigurationError naming its path."""
        ai = AIMessage(
            content="", tool_calls=[{"type": "tool_call", "id": None, "name": "ls", "args": {}}]
        )
        with pytest.raises(ConfigurationError, match=r"messages\[0\]\.tool_calls\[0\]\.id"):
            from_langchain([ai])


def _assert_requests_fit(
    requests: Sequence[Sequence[BaseMessage]], budget: int, strategy: ContextStrategy | None = None
) -> None:
    """Every request is well formed and fits ``budget`` as ``strategy`` counts it."""
    strategy = strategy if strategy is not None else stack(budget)
    assert requests
    for request in requests:
        ours = from_langchain(request)
        assert well_formed(ours)
        assert strategy.token_estimate(ours) <= budget


class TestContextMiddleware:
    """ContextMiddleware inside langchain.agents.create_agent."""

    @pytest.fixture
    def anyio_backend(self) -> str:
        """LangGraph runs on asyncio only."""
        return "asyncio"

    @STACKS
    def test_long_run_stays_within_budget(self, make: Callable[[int], ContextStrategy]) -> None:
        """Twenty large tool results later, every request fits and is well formed."""
        model = ScriptedChatModel(messages=script(20))
        strategy = make(BUDGET)
        result = _agent(model, ContextMiddleware(strategy)).invoke(_question())
        _assert_requests_fit(model.requests, BUDGET, strategy)
        assert len(result["messages"]) == 42  # the state keeps everything
        assert COUNTER.estimate_messages(from_langchain(result["messages"])) > 20_000

    @pytest.mark.anyio
    async def test_long_run_async(self) -> None:
        """The async hooks keep every request within budget too."""
        model = ScriptedChatModel(messages=script(20))
        await _agent(model, ContextMiddleware(stack(BUDGET))).ainvoke(_question())
        _assert_requests_fit(model.requests, BUDGET)

    @pytest.mark.parametrize("use_async", [False, True])
    def test_persist_shrinks_the_state(self, use_async: bool) -> None:
        """With persist=True the state itself holds the compaction."""
        model = ScriptedChatModel(messages=script(20))
        agent = _agent(model, ContextMiddleware(stack(BUDGET), persist=True))
        if use_async:
            import asyncio

            result = asyncio.run(agent.ainvoke(_question()))
        else:
            result = agent.invoke(_question())
        state = from_langchain(result["messages"])
        assert well_formed(state)
        assert COUNTER.estimate_messages(state) < BUDGET + 100
        _assert_requests_fit(model.requests, BUDGET)

    def test_kept_messages_are_the_originals(self) -> None:
        """Messages the strategy keeps reach the model as the agent's own objects."""
        model = ScriptedChatModel(messages=script(6))
        result = _agent(model, ContextMiddleware(stack(BUDGET))).invoke(_question())
        last = model.requests[-1]
        state_ids = {id(message) for message in result["messages"]}
        kept = [message for message in last[1:] if id(message) in state_ids]
        assert len(kept) >= len(last) - 1 - 6  # only cleared tool results are copies
        cleared = [m for m in last if isinstance(m, ToolMessage) and id(m) not in state_ids]
        assert cleared
        assert all(m.id and m.name == "read_file" for m in cleared)

    def test_system_prompt_is_kept(self) -> None:
        """The system prompt is counted but never edited, even by a tight window."""
        model = ScriptedChatModel(messages=script(4))
        _agent(model, ContextMiddleware(SlidingWindowStrategy(1, 0))).invoke(_question())
        for request in model.requests:
            assert isinstance(request[0], SystemMessage)
            assert request[0].content == SYSTEM_PROMPT
            assert sum(isinstance(m, SystemMessage) for m in request) == 1

    def test_no_compaction_no_change(self) -> None:
        """Under budget the request is passed through as it is."""
        recording = RecordingStrategy(SlidingWindowStrategy(10, 1_000_000))
        model = ScriptedChatModel(messages=script(2))
        _agent(model, ContextMiddleware(recording)).invoke(_question())
        assert [len(r) for r in model.requests] == [2, 4, 6]
        assert recording.calls == []

    def test_identity_strategy_changes_nothing(self) -> None:
        """A strategy that returns what it is given leaves every request as it was."""
        recording = RecordingStrategy()  # always compacts, returns a copy of its input
        model = ScriptedChatModel(messages=script(2))
        result = _agent(model, ContextMiddleware(recording)).invoke(_question())
        assert len(recording.calls) == 3
        state_ids = {id(message) for message in result["messages"]}
        assert all(id(m) in state_ids for r in model.requests for m in r[1:])

    @pytest.mark.anyio
    async def test_a_replaced_message_is_read_again(self) -> None:
        """A message replaced since the last call (LangGraph's reducers replace a message
        by its id, with a new object) is converted again."""
        middleware = ContextMiddleware(ToolResultClearingStrategy(0, BUDGET))
        messages = _history(1)
        sent: list[list[AnyMessage]] = []

        async def handler(request: ModelRequest[Any]) -> ModelResponse[Any]:
            sent.append(request.messages)
            return ModelResponse(result=[AIMessage("ok")])

        model = ScriptedChatModel(messages=script(0))
        request = ModelRequest(model=model, messages=cast("list[AnyMessage]", list(messages)))
        await middleware.awrap_model_call(request, handler)
        assert sent[-1][-1] is messages[-1]  # under budget: as it was
        replaced = messages[-1].model_copy(update={"content": "z" * 40_000})
        request = request.override(messages=[*request.messages[:-1], replaced])
        await middleware.awrap_model_call(request, handler)
        assert sent[-1][-1].content == "[tool result cleared]"

    @pytest.mark.anyio
    async def test_an_edited_message_is_read_again(self) -> None:
        """A newest message whose content was replaced in place since the last call is
        converted again."""
        middleware = ContextMiddleware(ToolResultClearingStrategy(0, BUDGET))
        messages = _history(1)
        sent: list[list[AnyMessage]] = []

        async def handler(request: ModelRequest[Any]) -> ModelResponse[Any]:
            sent.append(request.messages)
            return ModelResponse(result=[AIMessage("ok")])

        model = ScriptedChatModel(messages=script(0))
        request = ModelRequest(model=model, messages=cast("list[AnyMessage]", list(messages)))
        await middleware.awrap_model_call(request, handler)
        assert sent[-1][-1] is messages[-1]  # under budget: as it was
        messages[-1].content = "z" * 40_000
        await middleware.awrap_model_call(request, handler)
        assert sent[-1][-1].content == "[tool result cleared]"

    def test_only_the_persisting_middleware_adds_a_before_model_node(self) -> None:
        """LangChain runs a graph node on every model call for each middleware that
        overrides before_model: the view (the default) has none; persist=True has one."""
        plain = ContextMiddleware(stack(BUDGET))
        persisting = ContextMiddleware(stack(BUDGET), persist=True)
        assert isinstance(persisting, ContextMiddleware)
        assert plain.name == persisting.name == "ContextMiddleware"
        assert repr(persisting).endswith("persist=True)")
        model = ScriptedChatModel(messages=script(0))
        assert "ContextMiddleware.before_model" not in _agent(model, plain).get_graph().nodes
        assert "ContextMiddleware.before_model" in _agent(model, persisting).get_graph().nodes

    def test_rejects_a_non_strategy(self) -> None:
        """The strategy must be a ContextStrategy."""
        with pytest.raises(ConfigurationError, match=r"ContextMiddleware\.strategy"):
            ContextMiddleware("window")  # type: ignore[arg-type]

    def test_rejects_a_non_bool_persist(self) -> None:
        """persist must be a bool."""
        with pytest.raises(ConfigurationError, match=r"ContextMiddleware\.persist"):
            ContextMiddleware(stack(BUDGET), persist="yes")  # type: ignore[arg-type]


def _history(turns: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage("be brief"), HumanMessage("go")]
    for turn in range(turns):
        call = {"type": "tool_call", "id": f"c{turn}", "name": "read_file", "args": {}}
        messages.append(AIMessage(content="", tool_calls=[call]))
        messages.append(ToolMessage("y" * 4_000, tool_call_id=f"c{turn}"))
    return messages


class DropFirstCall(ContextStrategy):
    """A broken strategy: drops the first assistant message with tool uses, not its result."""

    def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
        """Always."""
        return True

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Drop the first message that calls tools."""
        first = next(i for i, m in enumerate(messages) if m.tool_uses)
        return [m for i, m in enumerate(messages) if i != first]

    def token_estimate(self, messages: Sequence[Message]) -> int:
        """The default counter's estimate."""
        return COUNTER.estimate_messages(messages)


class TestCompactMessages:
    """compact_messages and acompact_messages, the trim_messages replacement."""

    def test_compacts_within_budget(self) -> None:
        """A long history comes back within budget, well formed, system message first."""
        history = _history(10)
        compacted = compact_messages(history, stack(BUDGET))
        ours = from_langchain(compacted)
        assert well_formed(ours)
        assert COUNTER.estimate_messages(ours) <= BUDGET
        assert compacted[0] is history[0]

    def test_starts_on_a_user_message(self) -> None:
        """A window that would begin on an assistant message comes back starting on a user
        message, as the agent loop guarantees (Anthropic rejects anything else)."""
        history = [
            HumanMessage("Fix the build."),
            AIMessage("Looking."),
            HumanMessage("It fails on CI."),
            AIMessage("Found it."),
            AIMessage("Fixed."),
        ]
        compacted = compact_messages(history, SlidingWindowStrategy(2, 0))
        assert [type(m).__name__ for m in compacted] == ["HumanMessage", "AIMessage", "AIMessage"]
        assert compacted[0] is history[2]

    @pytest.mark.anyio
    async def test_async_form(self) -> None:
        """The async form gives what the sync form gives."""
        history = _history(10)
        assert await acompact_messages(history, stack(BUDGET)) == compact_messages(
            history, stack(BUDGET)
        )

    @given(cases(strategy_stacks))
    def test_returns_the_strategys_compaction(self, case: Case[ContextStrategy]) -> None:
        """What comes back reads as exactly what the strategy makes of the messages."""
        messages = to_langchain(case.messages)
        ours = from_langchain(messages)
        strategy = case.strategy
        expected = (
            compaction(strategy, ours)
            if strategy.should_compact(ours, strategy.token_estimate(ours))
            else ours
        )
        assert from_langchain(compact_messages(messages, strategy)) == expected

    def test_a_broken_compaction_keeps_the_messages(self, caplog: pytest.LogCaptureFixture) -> None:
        """A strategy that orphans a tool result of a well-formed history failed: the
        messages come back as they were, with a warning (the one policy of every caller)."""
        history = _history(3)
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            compacted = compact_messages(history, DropFirstCall())
        assert compacted == history
        assert all(a is b for a, b in zip(compacted, history, strict=True))
        assert "compaction by DropFirstCall failed, input kept" in caplog.text
        assert "a malformed conversation" in caplog.text

    def test_nothing_to_do(self) -> None:
        """Under budget the messages come back as they are."""
        history = _history(1)
        assert compact_messages(history, stack(100_000)) == history

    @pytest.mark.anyio
    async def test_sync_form_inside_an_event_loop(self) -> None:
        """The sync form also works from code already running in an event loop."""
        compacted = compact_messages(_history(10), stack(BUDGET))
        assert COUNTER.estimate_messages(from_langchain(compacted)) <= BUDGET
