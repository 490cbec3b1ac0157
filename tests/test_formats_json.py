"""Tests of neuron_context.formats: our own JSON (to_dict / from_dict, to_json / from_json)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from formats_support import PDF, PNG, assert_names, conversation

from neuron_context import (
    ConfigurationError,
    Document,
    Image,
    Message,
    Role,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
)
from neuron_context.formats import (
    from_dict,
    from_json,
    to_dict,
    to_json,
)


class TestToDict:
    def test_exact_json(self) -> None:
        """Every block is written with its fields, None fields left out."""
        assert to_dict(conversation()) == {
            "format": "neuron-context",
            "version": 1,
            "messages": [
                {"role": "system", "content": [{"type": "text", "text": "You are terse."}]},
                {
                    "role": "user",
                    "content": [
                        {"type": "compaction", "content": "The user asked about the weather."}
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "What is in these?"},
                        {"type": "image", "url": "https://example.com/cat.png"},
                        {
                            "type": "image",
                            "media_type": "image/png",
                            "data": PNG,
                            "width": 2,
                            "height": 3,
                        },
                        {
                            "type": "document",
                            "media_type": "application/pdf",
                            "data": PDF,
                            "pages": 1,
                        },
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "Two lookups.", "signature": "sig-1"},
                        {"type": "redacted_thinking", "data": "opaque"},
                        {"type": "text", "text": "Checking."},
                        {
                            "type": "tool_use",
                            "id": "call_1",
                            "name": "weather",
                            "input": {"city": "Zürich"},
                        },
                        {"type": "tool_use", "id": "call_2", "name": "time", "input": {}},
                    ],
                },
                {
                    "role": "tool",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "call_1",
                            "content": [{"type": "text", "text": "sunny"}],
                            "is_error": False,
                        }
                    ],
                },
                {
                    "role": "tool",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "call_2",
                            "content": [{"type": "text", "text": "unknown zone"}],
                            "is_error": True,
                        }
                    ],
                },
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Sunny; the time is unknown."}],
                },
            ],
        }

    def test_round_trip(self) -> None:
        """from_dict reads back exactly what to_dict wrote."""
        assert from_dict(to_dict(conversation())) == conversation()

    def test_round_trip_of_rare_fields(self) -> None:
        """Documents by URL or text, empty content and images in tool results round-trip."""
        messages = [
            Message(
                role=Role.USER,
                content=(
                    Document(media_type="text/plain", text="notes", pages=2),
                    Document(media_type="application/pdf", url="https://example.com/a.pdf"),
                    Document(media_type="application/pdf", data=PDF, text="extracted"),
                ),
            ),
            Message(role=Role.ASSISTANT, content=()),
            Message(
                role=Role.ASSISTANT,
                content=(ToolUse(id="t", name="plot", input={"xs": [1, 2.5, None, True]}),),
            ),
            Message(
                role=Role.TOOL,
                content=(
                    ToolResult(
                        tool_use_id="t",
                        content=(Text(text=""), Image(media_type="image/png", data=PNG)),
                        is_error=True,
                    ),
                    ToolResult(tool_use_id="t", content=()),
                ),
            ),
        ]
        assert from_dict(to_dict(messages)) == messages
        assert from_dict(json.loads(json.dumps(to_dict(messages)))) == messages

    def test_output_does_not_share_tool_input(self) -> None:
        """Changing the written dict does not change the message."""
        message = Message.assistant(tool_uses=[ToolUse(id="t", name="n", input={"a": [1]})])
        data: Any = to_dict([message])
        data["messages"][0]["content"][0]["input"]["a"].append(2)
        assert message.tool_uses[0].input == {"a": [1]}


class TestFromDict:
    @staticmethod
    def wrap(*messages: object) -> dict[str, object]:
        """Our envelope around raw messages."""
        return {"format": "neuron-context", "version": 1, "messages": list(messages)}

    def test_defaults_may_be_left_out(self) -> None:
        """A missing signature or is_error reads as its default."""
        data = self.wrap(
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}]},
            {
                "role": "tool",
                "content": [{"type": "tool_result", "tool_use_id": "t", "content": []}],
            },
        )
        assert from_dict(data) == [
            Message(role=Role.ASSISTANT, content=(Thinking(thinking="hm"),)),
            Message(role=Role.TOOL, content=(ToolResult(tool_use_id="t"),)),
        ]

    @pytest.mark.parametrize(
        ("data", "path"),
        [
            ({"format": "openai-chat", "version": 1, "messages": []}, "format"),
            ({"format": "neuron-context", "version": 2, "messages": []}, "version"),
            ({"format": "neuron-context", "version": True, "messages": []}, "version"),
            ({"format": "neuron-context", "version": 1}, "messages"),
            ({"format": "neuron-context", "version": 1, "messages": [], "x": 1}, "x"),
        ],
    )
    def test_envelope_errors(self, data: dict[str, object], path: str) -> None:
        """A wrong format, version or envelope is rejected, naming the field."""
        with pytest.raises(ConfigurationError) as excinfo:
            from_dict(data)
        assert_names(excinfo, path)

    @pytest.mark.parametrize(
        ("message", "path"),
        [
            ("hello", "messages[0]"),
            ({"role": "robot", "content": []}, "messages[0].role"),
            ({"role": "user", "content": "hi"}, "messages[0].content"),
            ({"role": "user", "content": [], "name": "x"}, "messages[0].name"),
            ({"role": "user", "content": [{"type": "video"}]}, "messages[0].content[0].type"),
            ({"role": "user", "content": [{"text": "hi"}]}, "messages[0].content[0].type"),
            ({"role": "user", "content": [{"type": "text"}]}, "messages[0].content[0].text"),
            (
                {"role": "user", "content": [{"type": "text", "text": "a", "bold": True}]},
                "messages[0].content[0].bold",
            ),
            (
                {"role": "user", "content": [{"type": "image", "url": "u", "width": -1}]},
                "messages[0].content[0].width",
            ),
            (
                {"role": "user", "content": [{"type": "image", "url": "u", "data": "d"}]},
                "messages[0].content[0]",
            ),
            (
                {"role": "user", "content": [{"type": "document", "media_type": "text/plain"}]},
                "messages[0].content[0]",
            ),
            (
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n"}]},
                "messages[0].content[0].input",
            ),
            (
                {
                    "role": "tool",
                    "content": [{"type": "tool_result", "tool_use_id": 7, "content": []}],
                },
                "messages[0].content[0].tool_use_id",
            ),
            (
                {
                    "role": "tool",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t", "content": [], "is_error": 1}
                    ],
                },
                "messages[0].content[0].is_error",
            ),
            (
                {
                    "role": "tool",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t",
                            "content": [{"type": "compaction", "content": "x"}],
                        }
                    ],
                },
                "messages[0].content[0].content[0].type",
            ),
            (
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t", "content": []}],
                },
                "messages[0]",
            ),
            (
                {"role": "user", "content": [{"type": "redacted_thinking", "data": "x"}]},
                "messages[0]",
            ),
        ],
    )
    def test_message_errors(self, message: object, path: str) -> None:
        """A missing, unknown or invalid field is rejected, naming its path."""
        with pytest.raises(ConfigurationError) as excinfo:
            from_dict(self.wrap(message))
        assert_names(excinfo, path)

    def test_error_names_the_later_message(self) -> None:
        """The path counts messages and blocks from zero."""
        good = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
        bad = {
            "role": "tool",
            "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": []},
                {"type": "tool_result", "content": []},
            ],
        }
        with pytest.raises(ConfigurationError) as excinfo:
            from_dict(self.wrap(good, good, good, bad))
        assert_names(excinfo, "messages[3].content[1].tool_use_id")


class TestJson:
    def test_round_trip(self) -> None:
        """from_json reads back what to_json wrote, non-ASCII kept as is."""
        text = to_json(conversation())
        assert "Zürich" in text
        assert from_json(text) == conversation()
        assert from_json(text.encode()) == conversation()

    def test_indent(self) -> None:
        """indent pretty-prints."""
        assert to_json([Message.user("hi")], indent=2).startswith('{\n  "format"')

    def test_invalid_json(self) -> None:
        """Text that is not JSON is a ConfigurationError."""
        with pytest.raises(ConfigurationError, match="not valid JSON"):
            from_json("{")

    def test_not_an_object(self) -> None:
        """JSON that is not an object is a ConfigurationError."""
        with pytest.raises(ConfigurationError, match="must be an object"):
            from_json("[]")
