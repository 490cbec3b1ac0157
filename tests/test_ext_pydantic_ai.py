"""neuron_context.ext.pydantic_ai: conversion and HistoryProcessor in real agent runs."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import anyio
import attrs
import pytest
from ext_support import compaction, one_result_per_message, stack, well_formed
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic_ai import Agent, PydanticAIDeprecationWarning
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    BinaryContent,
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.run import AgentRunResult
from strategies import Case, cases, strategy_stacks, well_formed_conversations
from transcripts import load_transcript, requires_transcripts, transcript_paths

from neuron_context import (
    Compaction,
    CompositeStrategy,
    ConfigurationError,
    ContentBlock,
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
    ToolResult,
    ToolResultClearingStrategy,
    ToolUse,
    default_stack,
)
from neuron_context.ext.pydantic_ai import HistoryProcessor, from_pydantic_ai, to_pydantic_ai
from neuron_context.formats import RAW_ARGUMENTS

STACKS = pytest.mark.parametrize("make", [stack, default_stack], ids=["composite", "default_stack"])
"""The long runs run both the hand-built composite and the recommended stack."""

COUNTER = TokenCounter()
BUDGET = 3_000


def _b64(data: str) -> str:
    return base64.b64encode(data.encode()).decode()


def _media(block: Image | Document | Text) -> Image | Document | Text:
    """What pydantic-ai can hold of a block (the documented losses), with valid base64."""
    if isinstance(block, Image):
        if block.data is not None:
            return Image(media_type=block.media_type or "image/png", data=_b64(block.data))
        return Image(url=block.url, media_type=block.media_type)
    if isinstance(block, Document) and (block.data is not None or block.url is not None):
        data = None if block.data is None else _b64(block.data)
        return Document(media_type=block.media_type, data=data, url=block.url)
    return block


def _expressible_block(block: ContentBlock) -> ContentBlock:
    if isinstance(block, Image | Document):
        return _media(block)
    if isinstance(block, ToolResult):
        items = tuple(_media(item) for item in block.content)
        return attrs.evolve(block, content=items)
    return block


def expressible(messages: list[Message]) -> list[Message]:
    """``messages`` as pydantic-ai can hold them."""
    return [
        Message(role=m.role, content=tuple(_expressible_block(b) for b in m.content))
        for m in messages
    ]


class TestConversion:
    """from_pydantic_ai and to_pydantic_ai."""

    @given(well_formed_conversations().map(expressible))
    def test_round_trip(self, messages: list[Message]) -> None:
        """Our messages survive pydantic-ai unchanged, one tool result per message."""
        assert from_pydantic_ai(to_pydantic_ai(messages)) == one_result_per_message(messages)

    @pytest.mark.parametrize("path", transcript_paths(), ids=lambda p: p.name)
    @requires_transcripts
    def test_transcripts_round_trip(self, path: Path) -> None:
        """Each shared transcript converts to pydantic-ai messages and back unchanged."""
        messages = expressible(load_transcript(path))
        assert from_pydantic_ai(to_pydantic_ai(messages)) == one_result_per_message(messages)

    def test_shapes(self) -> None:
        """Runs of non-assistant messages share a ModelRequest; replies are ModelResponses."""
        messages = [
            Message.system("be brief"),
            Message.user("hi"),
            Message.assistant(tool_uses=[ToolUse(id="c1", name="ls", input={"d": "."})]),
            Message.tool_result("c1", "a.py", is_error=True),
            Message.user("and?"),
        ]
        request, response, follow_up = to_pydantic_ai(messages)
        assert isinstance(request, ModelRequest)
        assert [type(p) for p in request.parts] == [SystemPromptPart, UserPromptPart]
        assert isinstance(response, ModelResponse)
        assert response.parts == [ToolCallPart(tool_name="ls", args={"d": "."}, tool_call_id="c1")]
        assert isinstance(follow_up, ModelRequest)
        tool_return, user = follow_up.parts
        assert isinstance(tool_return, ToolReturnPart)
        assert (tool_return.tool_name, tool_return.outcome) == ("ls", "failed")
        assert isinstance(user, UserPromptPart)

    def test_summary_is_a_compaction_part(self) -> None:
        """Our summary is pydantic-ai's application-written CompactionPart."""
        summary = Message(role=Role.USER, content=(Compaction(content="so far"),))
        (request,) = to_pydantic_ai([summary])
        assert isinstance(request, ModelRequest)
        assert request.parts == [CompactionPart(content="so far")]
        assert from_pydantic_ai([request]) == [summary]

    def test_thinking(self) -> None:
        """Signed, unsigned and redacted thinking map to ThinkingPart and back."""
        message = Message(
            role=Role.ASSISTANT,
            content=(
                Thinking(thinking="plain"),
                Thinking(thinking="signed", signature="sig"),
                RedactedThinking(data="opaque"),
                Text(text="ok"),
            ),
        )
        (response,) = to_pydantic_ai([message])
        assert isinstance(response, ModelResponse)
        redacted = response.parts[2]
        assert isinstance(redacted, ThinkingPart)
        assert (redacted.id, redacted.signature) == ("redacted_thinking", "opaque")
        assert from_pydantic_ai([response]) == [message]

    def test_an_assistant_image_has_no_form(self) -> None:
        """An image in an assistant message is a ConfigurationError, not dropped."""
        message = Message(role=Role.ASSISTANT, content=(Image(url="https://x.test/a.png"),))
        with pytest.raises(ConfigurationError, match="Image block"):
            to_pydantic_ai([message])

    def test_structured_tool_return(self) -> None:
        """A tool return that is data reads as the JSON text pydantic-ai sends."""
        response = ModelResponse(parts=[ToolCallPart("f", {}, tool_call_id="c1")])
        request = ModelRequest(parts=[ToolReturnPart("f", {"a": 1}, tool_call_id="c1")])
        tool_message = from_pydantic_ai([response, request])[1]
        assert tool_message.tool_results[0].text == '{"a":1}'

    def test_invalid_arguments(self) -> None:
        """Arguments that are not JSON are kept raw, and go back raw."""
        response = ModelResponse(parts=[ToolCallPart("f", "{oops", tool_call_id="c1")])
        (assistant,) = from_pydantic_ai([response])
        assert assistant.tool_uses[0].input == {RAW_ARGUMENTS: "{oops"}
        (again,) = to_pydantic_ai([assistant])
        assert isinstance(again, ModelResponse)
        assert again.parts == response.parts

    def test_legacy_retry_prompt(self) -> None:
        """A legacy RetryPromptPart answering a call is an error result."""
        with pytest.warns(PydanticAIDeprecationWarning):
            retry = RetryPromptPart("bad args", tool_name="f", tool_call_id="c1")
        response = ModelResponse(parts=[ToolCallPart("f", {}, tool_call_id="c1")])
        tool_message = from_pydantic_ai([response, ModelRequest(parts=[retry])])[1]
        (result,) = tool_message.tool_results
        assert result.is_error
        assert "bad args" in result.text

    def test_binary_image(self) -> None:
        """Binary images and documents are our base64 Image and Document blocks."""
        part = UserPromptPart(
            [
                "look",
                BinaryContent(b"png", media_type="image/png"),
                BinaryContent(b"%PDF", media_type="application/pdf"),
            ]
        )
        (user,) = from_pydantic_ai([ModelRequest(parts=[part])])
        assert user.content == (
            Text(text="look"),
            Image(media_type="image/png", data=_b64("png")),
            Document(media_type="application/pdf", data=_b64("%PDF")),
        )

    def test_bad_base64(self) -> None:
        """Base64 data that does not decode is a ConfigurationError naming its path."""
        message = Message(role=Role.USER, content=(Image(media_type="image/png", data="@@"),))
        with pytest.raises(ConfigurationError, match=r"messages\[0\]\.content\[0\]\.data"):
            to_pydantic_ai([message])


def _scripted(calls: int, requests: list[list[ModelMessage]]) -> FunctionModel:
    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests.append(list(messages))
        turn = len(requests)
        if turn <= calls:
            call = ToolCallPart("read_file", {"path": f"f{turn}.py"}, tool_call_id=f"call_{turn}")
            return ModelResponse(parts=[TextPart(f"reading f{turn}.py"), call])
        return ModelResponse(parts=[TextPart("done")])

    return FunctionModel(reply)


def _run(agent: Agent[None, str]) -> AgentRunResult[str]:
    """Run on a fresh event loop (``run_sync`` leaves its loop open for the next call)."""
    return anyio.run(agent.run, "go")


def _agent(model: FunctionModel | TestModel, processor: HistoryProcessor) -> Agent[None, str]:
    agent = Agent(model, instructions="Be terse.", capabilities=[ProcessHistory(processor)])

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file (a large one: 1,000 tokens)."""
        return f"# {path}\n" + "x" * 4_000

    return agent


class TestHistoryProcessor:
    """HistoryProcessor in pydantic-ai's ProcessHistory capability."""

    @STACKS
    def test_long_run_stays_within_budget(self, make: Callable[[int], ContextStrategy]) -> None:
        """Twenty large tool returns later, every request fits and is well formed."""
        requests: list[list[ModelMessage]] = []
        strategy = make(BUDGET)
        result = _run(_agent(_scripted(20, requests), HistoryProcessor(strategy)))
        assert result.output == "done"
        assert len(requests) == 21
        for request in requests:
            ours = from_pydantic_ai(request)
            assert well_formed(ours)
            assert strategy.token_estimate(ours) <= BUDGET  # as the strategy counts

    def test_test_model_run(self) -> None:
        """pydantic-ai's TestModel runs through the processor to its final output."""
        result = _run(_agent(TestModel(), HistoryProcessor(SlidingWindowStrategy(2, 0))))
        assert well_formed(from_pydantic_ai(result.all_messages()))

    def test_kept_messages_are_the_originals(self) -> None:
        """Responses the strategy keeps are pydantic-ai's own objects; instructions stay."""
        requests: list[list[ModelMessage]] = []
        _run(_agent(_scripted(6, requests), HistoryProcessor(stack(BUDGET))))
        first, last = requests[-2], requests[-1]
        previous = {id(message) for message in first}
        responses = [m for m in last[:-2] if isinstance(m, ModelResponse)]
        assert responses
        assert all(id(m) in previous for m in responses)
        cleared = [
            part
            for m in last
            if isinstance(m, ModelRequest)
            for part in m.parts
            if isinstance(part, ToolReturnPart) and part.content == "[tool result cleared]"
        ]
        assert cleared
        assert all(part.tool_name == "read_file" for part in cleared)
        assert isinstance(last[-1], ModelRequest)
        assert last[-1].instructions == "Be terse."

    @given(cases(strategy_stacks, well_formed_conversations().map(expressible)))
    @example(  # the task put back inside an exchange whose call the clearing edited
        Case(
            strategy=CompositeStrategy(
                [
                    SlidingWindowStrategy(2, 0),
                    ToolResultClearingStrategy(0, 0, clear_tool_inputs=True),
                ],
                0,
            ),
            messages=[
                Message.user("Fix the build."),
                Message.assistant(tool_uses=[ToolUse(id="c1", name="f", input={"path": "a"})]),
                Message.system("Be brief."),
                Message.tool_result("c1", "x = 1\n" * 100),
            ],
            counter=COUNTER,
        )
    )
    def test_returns_the_strategys_compaction(self, case: Case[ContextStrategy]) -> None:
        """What it returns reads as exactly what the strategy makes of the history."""
        messages = to_pydantic_ai(case.messages)
        ours = from_pydantic_ai(messages)
        strategy = case.strategy
        expected = (
            compaction(strategy, ours)
            if strategy.should_compact(ours, strategy.token_estimate(ours))
            else ours
        )
        assert from_pydantic_ai(anyio.run(HistoryProcessor(strategy), messages)) == expected

    @pytest.mark.anyio
    async def test_nothing_to_do(self) -> None:
        """Under budget the processor returns the very list it was given."""
        messages = to_pydantic_ai([Message.user("hi")])
        processor = HistoryProcessor(SlidingWindowStrategy(10, 1_000))
        assert await processor(messages) is messages

    @pytest.mark.anyio
    async def test_plain_processor(self) -> None:
        """Called directly (as a history_processors entry), it compacts and keeps pairs."""
        messages = to_pydantic_ai(
            [
                Message.user("go"),
                Message.assistant(tool_uses=[ToolUse(id="c1", name="f", input={})]),
                Message.tool_result("c1", "x" * 400),
                Message.assistant("done"),
            ]
        )
        compacted = await HistoryProcessor(SlidingWindowStrategy(2, 0))(messages)
        # The window alone would begin on the assistant: the request is put back first.
        assert from_pydantic_ai(compacted) == [Message.user("go"), Message.assistant("done")]

    @pytest.mark.anyio
    async def test_an_edited_message_is_read_again(self) -> None:
        """A message whose parts were replaced since the last call is converted again."""
        processor = HistoryProcessor(ToolResultClearingStrategy(0, BUDGET))
        use = ToolUse(id="c1", name="f", input={})
        history = [Message.user("go"), Message.assistant(tool_uses=[use])]
        messages = to_pydantic_ai([*history, Message.tool_result("c1", "x" * 400)])
        assert await processor(messages) is messages
        request = messages[-1]
        assert isinstance(request, ModelRequest)
        request.parts = [ToolReturnPart("f", "z" * 40_000, tool_call_id="c1")]
        compacted = await processor(messages)
        assert from_pydantic_ai(compacted)[-1] == Message.tool_result("c1", "[tool result cleared]")

    def test_rejects_a_non_strategy(self) -> None:
        """The strategy must be a ContextStrategy."""
        with pytest.raises(ConfigurationError, match=r"HistoryProcessor\.strategy"):
            HistoryProcessor("window")  # type: ignore[arg-type]

    @given(st.integers(2, 6))
    def test_window_keeps_pairs(self, window: int) -> None:
        """Any window over a tool-heavy run sends no call without its return."""
        requests: list[list[ModelMessage]] = []
        processor = HistoryProcessor(SlidingWindowStrategy(window, 0))
        _run(_agent(_scripted(4, requests), processor))
        assert all(well_formed(from_pydantic_ai(r)) for r in requests)
