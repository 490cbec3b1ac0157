"""Where framework messages cross into the adapters: odd values are named by their path,
malformed conversations are sent repaired, and content kinds are read, not dropped."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
import pytest
from agents import Agent
from agents.run_config import CallModelData, ModelInputData
from langchain.agents.middleware import ModelRequest as LangChainRequest
from langchain.agents.middleware import ModelResponse as LangChainResponse
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from pydantic_ai.messages import (
    BinaryContent,
    FilePart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from neuron_context import (
    ConfigurationError,
    ContextStrategy,
    Document,
    Image,
    SlidingWindowStrategy,
    StripToolCallsStrategy,
    Thinking,
    ToolResultClearingStrategy,
    default_stack,
    validate,
)
from neuron_context.ext.langchain import (
    ContextMiddleware,
    compact_messages,
    from_langchain,
    to_langchain,
)
from neuron_context.ext.openai_agents import (
    CallModelInputFilter,
    from_responses_items,
)
from neuron_context.ext.pydantic_ai import HistoryProcessor, from_pydantic_ai, to_pydantic_ai

NEVER = SlidingWindowStrategy(100, 10**9)
"""A strategy whose trigger does not fire on these small conversations."""


def deep(levels: int) -> object:
    """A list nested ``levels`` deep."""
    value: list[object] = []
    for _ in range(levels):
        value = [value]
    return value


class Unserializable:
    """An object pydantic cannot serialize."""


class TestResponsesItems:
    """The Agents SDK reader names the path of an odd item."""

    @pytest.mark.parametrize(
        ("item", "error"),
        [
            (
                {"type": "function_call", "call_id": "c", "name": "f", "arguments": {"a": 1}},
                r"^items\[0\]\.arguments must be a string",
            ),
            (
                {"type": "function_call_output", "call_id": "c", "output": 42},
                r"^items\[0\]\.output must be a list, got int",
            ),
            ({"type": "message", "role": "user", "content": 5}, r"^items\[0\]\.content must be"),
            (
                {"type": "message", "role": "assistant", "content": 5},
                r"^items\[0\]\.content must be",
            ),
            ({"type": "reasoning", "summary": 5}, r"^items\[0\]\.summary must be a list"),
            (
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": 5}]},
                r"^items\[0\]\.content\[0\]\.text must be a string",
            ),
            (
                {"type": "function_call_output", "call_id": "c", "output": [7]},
                r"^items\[0\]\.output\[0\] must be an object",
            ),
            (
                {"type": "function_call", "call_id": "", "name": "f", "arguments": "{}"},
                r"^items\[0\]: ToolUse\.id must not be empty",
            ),
        ],
    )
    def test_odd_items(self, item: dict[str, Any], error: str) -> None:
        """A value of the wrong kind is a ConfigurationError naming its path."""
        with pytest.raises(ConfigurationError, match=error):
            from_responses_items([item])

    def test_the_filter_names_it_too(self, caplog: pytest.LogCaptureFixture) -> None:
        """CallModelInputFilter names the same path in its warning, and sends the input as
        the SDK built it (a reading failure never costs the model call)."""
        items: list[Any] = [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": {"a": 1}},
        ]
        data = CallModelData(
            model_data=ModelInputData(input=items, instructions=None),
            agent=Agent(name="a"),
            context=None,
        )
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            sent = anyio.run(CallModelInputFilter(NEVER), data)
        assert sent.input is items
        assert "items[1].arguments" in caplog.text

    def test_a_string_reasoning_summary(self) -> None:
        """A reasoning summary given as one string is its text, not dropped."""
        (message,) = from_responses_items([{"type": "reasoning", "summary": "Thought hard."}])
        assert message.content == (Thinking(thinking="Thought hard."),)

    def test_a_malformed_input_is_sent_as_it_came(self) -> None:
        """An output whose call is not in the input goes as it came, even when the
        strategy does not fire: its call may live on the server (a server-managed run),
        and the SDK, not the filter, decides what the model is sent."""
        items: list[Any] = [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "function_call_output", "call_id": "gone", "output": "orphan"},
            {"type": "message", "role": "user", "content": "again"},
        ]
        data = CallModelData(
            model_data=ModelInputData(input=items, instructions=None),
            agent=Agent(name="a"),
            context=None,
        )
        sent = anyio.run(CallModelInputFilter(NEVER), data)
        assert sent.input is items


class TestPydanticAI:
    """The pydantic-ai reader names the path of a part it cannot read."""

    @staticmethod
    def history(content: object) -> list[ModelMessage]:
        """A call and a return holding ``content``."""
        return [
            ModelRequest(parts=[UserPromptPart("go")]),
            ModelResponse(parts=[ToolCallPart(tool_name="f", args={}, tool_call_id="c")]),
            ModelRequest(parts=[ToolReturnPart(tool_name="f", content=content, tool_call_id="c")]),
        ]

    @pytest.mark.parametrize("content", [Unserializable(), {"a": deep(900)}])
    def test_a_tool_return_it_cannot_serialize(
        self, content: object, caplog: pytest.LogCaptureFixture
    ) -> None:
        """Content pydantic cannot serialize, or nested 900 deep, is a ConfigurationError
        naming the part in the reader; the history processor hands the history back as
        given, with a warning naming the part (pydantic-ai then raises its own error)."""
        history = self.history(content)
        with pytest.raises(ConfigurationError, match=r"^messages\[2\]\.parts\[0\] cannot be read"):
            from_pydantic_ai(history)
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            assert anyio.run(HistoryProcessor(NEVER), history) is history
        assert "messages[2].parts[0]" in caplog.text

    def test_a_file_part_is_read(self) -> None:
        """A file the model made is an image of the assistant message, and goes back as a
        FilePart."""
        png = BinaryContent(data=b"\x89PNG", media_type="image/png")
        response = ModelResponse(parts=[TextPart("Here it is."), FilePart(content=png)])
        (message,) = from_pydantic_ai([response])
        assert message.content[1] == Image(media_type="image/png", data="iVBORw==")
        (again,) = to_pydantic_ai([message])
        assert isinstance(again, ModelResponse)
        assert isinstance(again.parts[1], FilePart)
        assert again.parts[1].content.data == b"\x89PNG"
        assert from_pydantic_ai([again]) == [message]

    def test_a_malformed_history_is_returned_repaired(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A call the conversation moved on from is closed, even when the strategy does
        not fire: pydantic-ai is never handed back a malformed history."""
        history: list[ModelMessage] = [
            ModelRequest(parts=[UserPromptPart("go")]),
            ModelResponse(parts=[ToolCallPart(tool_name="f", args={}, tool_call_id="c")]),
            ModelRequest(parts=[UserPromptPart("never mind")]),
        ]
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            sent = anyio.run(HistoryProcessor(NEVER), history)
        validate(from_pydantic_ai(sent))
        assert sent[1] is history[1]
        assert "not well formed" in caplog.text


class TestLangChain:
    """The LangChain reader names the path of an odd block and reads more kinds."""

    @pytest.mark.parametrize(
        ("message", "error"),
        [
            (
                HumanMessage(content=[{"type": "image", "url": "https://x/a.png", "extras": 5}]),
                r"^messages\[0\]: a content block's extras must be an object",
            ),
            (
                AIMessage(content=[{"type": "reasoning", "reasoning": "x", "extras": 5}]),
                r"^messages\[0\]: a content block's extras must be an object",
            ),
            (
                HumanMessage(
                    content=[
                        {"type": "image", "url": "https://x/a.png", "extras": {"width": "big"}}
                    ]
                ),
                r"^messages\[0\]: Image\.width must be an int",
            ),
            (
                AIMessage(
                    content="", tool_calls=[{"id": "c", "name": "f", "args": {"a": deep(500)}}]
                ),
                r"^messages\[0\]: ToolUse\.input\['a'\]",
            ),
        ],
    )
    def test_odd_blocks(self, message: AnyMessage, error: str) -> None:
        """A block we cannot read is a ConfigurationError naming the message."""
        with pytest.raises(ConfigurationError, match=error):
            from_langchain([message])

    def test_a_string_image_url(self) -> None:
        """OpenAI's image_url part with a plain string is an image, not dropped."""
        message = HumanMessage(content=[{"type": "image_url", "image_url": "https://x/a.png"}])
        (ours,) = from_langchain([message])
        assert ours.content == (Image(url="https://x/a.png"),)

    @pytest.mark.parametrize(
        "block",
        [
            {"type": "audio", "base64": "AAAA", "mime_type": "audio/wav"},
            {"type": "video", "url": "https://x/v.mp4", "mime_type": "video/mp4"},
        ],
    )
    def test_audio_and_video(self, block: Mapping[str, Any]) -> None:
        """Audio and video are read as a Document of their media type (counted) and go
        back as the same kind of block."""
        (ours,) = from_langchain([HumanMessage(content=[dict(block)])])
        (document,) = ours.content
        assert isinstance(document, Document)
        assert document.media_type == block["mime_type"]
        (again,) = to_langchain([ours])
        assert again.content == [dict(block)]

    def test_a_string_reasoning_summary(self) -> None:
        """A reasoning block holding only a summary string is its text."""
        message = AIMessage(content=[{"type": "reasoning", "summary": "Thought hard."}])
        (ours,) = from_langchain([message])
        assert ours.content == (Thinking(thinking="Thought hard."),)

    def test_compact_messages_repairs(self, caplog: pytest.LogCaptureFixture) -> None:
        """compact_messages returns a malformed history repaired even when the strategy
        does not fire (an orphan ToolMessage left by a bad trim is dropped)."""
        history = [
            ToolMessage("orphan", tool_call_id="gone"),
            HumanMessage("go"),
            AIMessage("ok"),
        ]
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            compacted = compact_messages(history, NEVER)
        assert compacted == history[1:]
        assert compacted[0] is history[1]
        assert "not well formed" in caplog.text

    @pytest.mark.anyio
    async def test_the_middleware_sends_it_repaired(self) -> None:
        """ContextMiddleware sends the model a repaired request when the strategy does
        not fire; a well-formed request is passed as it is."""
        sent: list[list[AnyMessage]] = []

        async def handler(request: LangChainRequest[Any]) -> LangChainResponse[Any]:
            sent.append(request.messages)
            return LangChainResponse(result=[AIMessage("ok")])

        middleware = ContextMiddleware(NEVER)
        model = GenericFakeChatModel(messages=iter([]))
        call = {"type": "tool_call", "id": "c", "name": "f", "args": {}}
        broken: list[AnyMessage] = [
            HumanMessage("go"),
            AIMessage("", tool_calls=[call]),
            HumanMessage("stop"),
        ]
        request = LangChainRequest(model=model, messages=broken)
        await middleware.awrap_model_call(request, handler)
        repaired = from_langchain(sent[-1])
        validate(repaired)
        assert [m.role for m in repaired] == ["user", "assistant", "tool", "user"]
        assert sent[-1][1] is broken[1]
        fine: list[AnyMessage] = [HumanMessage("hello")]
        request = LangChainRequest(model=model, messages=fine)
        await middleware.awrap_model_call(request, handler)
        assert sent[-1] is fine


class TestPendingCalls:
    """A call still awaiting its result (a long-running tool, an approval) is never
    compacted while it is pending."""

    @staticmethod
    def history() -> list[AnyMessage]:
        """A finished call, then a reply whose second call awaits its result."""
        waiting = [
            {"type": "tool_call", "id": "c2", "name": "deploy", "args": {}},
            {"type": "tool_call", "id": "c3", "name": "ls", "args": {}},
        ]
        return [
            HumanMessage("go " * 100),
            AIMessage("", tool_calls=[{"type": "tool_call", "id": "c1", "name": "ls", "args": {}}]),
            ToolMessage("r" * 800, tool_call_id="c1"),
            AIMessage("Deploying.", tool_calls=waiting),
            ToolMessage("z" * 600, tool_call_id="c3"),
        ]

    @pytest.mark.parametrize(
        "strategy",
        [
            SlidingWindowStrategy(1),
            StripToolCallsStrategy(),
            ToolResultClearingStrategy(0, 0),
            default_stack(60),
        ],
        ids=lambda strategy: type(strategy).__name__,
    )
    def test_the_pending_exchange_is_kept_as_it_was(self, strategy: ContextStrategy) -> None:
        """Whatever the strategy does to the rest, the pending exchange comes back as the
        very messages it was, so the result that arrives later still has its call."""
        history = self.history()
        compacted = compact_messages(history, strategy)
        assert compacted[-2] is history[-2]
        assert compacted[-1] is history[-1]
        validate(from_langchain(compacted))

    def test_a_deferred_call_in_pydantic_ai(self) -> None:
        """pydantic-ai's deferred (approval-required) call at the end of the history is
        kept by the history processor while it waits."""
        history: list[ModelMessage] = [
            ModelRequest(parts=[UserPromptPart("go " * 200)]),
            ModelResponse(parts=[TextPart("x " * 400)]),
            ModelRequest(parts=[UserPromptPart("now deploy")]),
            ModelResponse(parts=[ToolCallPart(tool_name="deploy", args={}, tool_call_id="d1")]),
        ]
        sent = anyio.run(HistoryProcessor(SlidingWindowStrategy(1)), history)
        assert sent[-1] is history[-1]
        assert any(isinstance(m, ModelRequest) for m in sent)
