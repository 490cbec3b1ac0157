"""Tests of neuron_context.formats: our JSON, Chat Completions and Anthropic Messages."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import conversations, tool_definitions, well_formed_conversations
from transcripts import (
    DANGLING_CALLS,
    anthropic_transcript_paths,
    load_record,
    load_transcript,
    requires_transcripts,
    transcript_paths,
)

from neuron_context import (
    Compaction,
    ConfigurationError,
    Document,
    Image,
    InvalidConversationError,
    Message,
    RedactedThinking,
    Role,
    Text,
    Thinking,
    ToolDefinition,
    ToolResult,
    ToolUse,
    formats,
    repair,
    validate,
)
from neuron_context.formats import (
    from_anthropic,
    from_dict,
    from_json,
    from_openai,
    to_anthropic,
    to_dict,
    to_json,
    to_openai,
    tools_from_anthropic,
    tools_from_openai,
    tools_to_anthropic,
    tools_to_openai,
)

PNG = "iVBORw0KGgoAAAANSUhEUg=="
PDF = "JVBERi0xLjQK"
SUMMARY = "[Summary of earlier conversation]\nThe user asked about the weather."


def conversation() -> list[Message]:
    """A conversation with every kind of block: parallel calls, an error, media, reasoning."""
    return [
        Message.system("You are terse."),
        Message(role=Role.USER, content=(Compaction(content="The user asked about the weather."),)),
        Message(
            role=Role.USER,
            content=(
                Text(text="What is in these?"),
                Image(url="https://example.com/cat.png"),
                Image(media_type="image/png", data=PNG, width=2, height=3),
                Document(media_type="application/pdf", data=PDF, pages=1),
            ),
        ),
        Message(
            role=Role.ASSISTANT,
            content=(
                Thinking(thinking="Two lookups.", signature="sig-1"),
                RedactedThinking(data="opaque"),
                Text(text="Checking."),
                ToolUse(id="call_1", name="weather", input={"city": "Zürich"}),
                ToolUse(id="call_2", name="time", input={}),
            ),
        ),
        Message.tool_result("call_1", "sunny"),
        Message.tool_result("call_2", "unknown zone", is_error=True),
        Message.assistant("Sunny; the time is unknown."),
    ]


def assert_names(excinfo: pytest.ExceptionInfo[ConfigurationError], path: str) -> None:
    """Assert that the error message starts with ``path`` followed by a space or colon."""
    message = str(excinfo.value)
    assert message.startswith((path + " ", path + ":")), message


class TestModule:
    def test_all_is_sorted_and_complete(self) -> None:
        """__all__ is sorted and names only attributes the module has."""
        assert formats.__all__ == sorted(formats.__all__)
        for name in formats.__all__:
            assert hasattr(formats, name)


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


OPENAI: list[dict[str, Any]] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": SUMMARY},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in these?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
            {
                "type": "file",
                "file": {
                    "file_data": f"data:application/pdf;base64,{PDF}",
                    "filename": "document.pdf",
                },
            },
        ],
    },
    {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city":"Zürich"}'},
            },
            {"id": "call_2", "type": "function", "function": {"name": "time", "arguments": "{}"}},
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    {"role": "tool", "tool_call_id": "call_2", "content": "unknown zone"},
    {"role": "assistant", "content": "Sunny; the time is unknown."},
]


class TestToOpenAI:
    def test_exact_json(self) -> None:
        """Parallel calls, an error, media, reasoning and a summary render as documented."""
        assert to_openai(conversation()) == OPENAI

    def test_system_keyword(self) -> None:
        """system= is sent first as its own system message."""
        assert to_openai([Message.user("hi")], system="Be brief.") == [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hi"},
        ]

    def test_only_tool_calls_gives_null_content(self) -> None:
        """An assistant message with only tool calls (and reasoning) has content null."""
        message = Message(
            role=Role.ASSISTANT,
            content=(Thinking(thinking="x"), ToolUse(id="a", name="f", input={"k": 1})),
        )
        assert to_openai([message]) == [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "a",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"k":1}'},
                    }
                ],
            }
        ]

    def test_empty_and_several_texts(self) -> None:
        """No blocks give "", several text blocks a list of text parts."""
        messages = [
            Message(role=Role.USER, content=()),
            Message(role=Role.ASSISTANT, content=(Text(text="a"), Text(text="b"))),
            Message(role=Role.ASSISTANT, content=(RedactedThinking(data="x"),)),
        ]
        assert to_openai(messages) == [
            {"role": "user", "content": ""},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            {"role": "assistant", "content": ""},
        ]

    def test_one_tool_message_per_result(self) -> None:
        """A tool message with several results becomes one OpenAI tool message each."""
        message = Message(
            role=Role.TOOL,
            content=(
                ToolResult(tool_use_id="a", content="1"),
                ToolResult(tool_use_id="b", content=(Text(text="x"), Text(text="y"))),
                ToolResult(tool_use_id="c", content=()),
            ),
        )
        assert to_openai([message]) == [
            {"role": "tool", "tool_call_id": "a", "content": "1"},
            {
                "role": "tool",
                "tool_call_id": "b",
                "content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}],
            },
            {"role": "tool", "tool_call_id": "c", "content": ""},
        ]

    def test_tool_result_images_follow_the_tool_messages(self) -> None:
        """Images of tool results go to one user message after the run of tool messages."""
        messages = [
            Message.assistant(
                tool_uses=[ToolUse(id="a", name="plot"), ToolUse(id="b", name="photo")]
            ),
            Message.tool_result("a", [Text(text="chart"), Image(media_type="image/png", data=PNG)]),
            Message.tool_result("b", [Image(url="https://example.com/p.jpg")]),
            Message.assistant("Done."),
        ]
        assert to_openai(messages)[1:] == [
            {"role": "tool", "tool_call_id": "a", "content": "chart"},
            {"role": "tool", "tool_call_id": "b", "content": ""},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "[Images returned by tool call a]"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                    {"type": "text", "text": "[Images returned by tool call b]"},
                    {"type": "image_url", "image_url": {"url": "https://example.com/p.jpg"}},
                ],
            },
            {"role": "assistant", "content": "Done."},
        ]

    def test_text_document_is_a_text_part(self) -> None:
        """A document given by text only is sent as a text part."""
        message = Message(
            role=Role.USER,
            content=(Text(text="Read:"), Document(media_type="text/plain", text="notes")),
        )
        assert to_openai([message])[0]["content"] == [
            {"type": "text", "text": "Read:"},
            {"type": "text", "text": "notes"},
        ]

    def test_raw_arguments_are_sent_verbatim(self) -> None:
        """Arguments kept under "_raw" go back as the original string."""
        use = ToolUse(id="a", name="f", input={"_raw": '{"x": 1'})
        rendered: Any = to_openai([Message.assistant(tool_uses=[use])])
        assert rendered[0]["tool_calls"][0]["function"]["arguments"] == '{"x": 1'

    def test_a_real_raw_argument_is_json(self) -> None:
        """A "_raw" argument that holds a JSON object is an ordinary argument."""
        use = ToolUse(id="a", name="f", input={"_raw": "{}"})
        rendered: Any = to_openai([Message.assistant(tool_uses=[use])])
        assert rendered[0]["tool_calls"][0]["function"]["arguments"] == '{"_raw":"{}"}'

    def test_document_by_url_is_an_error(self) -> None:
        """A document given only by URL cannot be sent; the error names it."""
        document = Document(media_type="application/pdf", url="https://example.com/a.pdf")
        messages = [Message.user("hi"), Message(role=Role.USER, content=(Text(text="x"), document))]
        with pytest.raises(ConfigurationError) as excinfo:
            to_openai(messages)
        assert_names(excinfo, "messages[1].content[1]")

    def test_image_data_without_media_type_is_an_error(self) -> None:
        """Inline image data needs a media type; the error names the item."""
        result = ToolResult(tool_use_id="a", content=(Image(data=PNG),))
        with pytest.raises(ConfigurationError) as excinfo:
            to_openai([Message(role=Role.TOOL, content=(result,))])
        assert_names(excinfo, "messages[0].content[0].content[0].media_type")

    def test_does_not_mutate(self) -> None:
        """The messages are left as they were."""
        messages = conversation()
        to_openai(messages)
        assert messages == conversation()


class TestFromOpenAI:
    def test_reads_what_to_openai_writes(self) -> None:
        """Everything Chat Completions holds comes back; reasoning, sizes and is_error do not."""
        expected = conversation()
        expected[2] = Message(
            role=Role.USER,
            content=(
                Text(text="What is in these?"),
                Image(url="https://example.com/cat.png"),
                Image(media_type="image/png", data=PNG),
                Document(media_type="application/pdf", data=PDF),
            ),
        )
        expected[3] = Message.assistant(
            "Checking.",
            tool_uses=[
                ToolUse(id="call_1", name="weather", input={"city": "Zürich"}),
                ToolUse(id="call_2", name="time", input={}),
            ],
        )
        expected[5] = Message.tool_result("call_2", "unknown zone")
        assert from_openai(OPENAI) == expected

    def test_exact_round_trip_of_representable_messages(self) -> None:
        """Messages within what Chat Completions holds come back equal."""
        messages = [
            Message.system("s"),
            Message(role=Role.USER, content=(Text(text="a"), Compaction(content="old"))),
            Message(role=Role.USER, content=(Image(url="https://example.com/x.png"),)),
            Message.assistant("t", tool_uses=[ToolUse(id="a", name="f", input={"_raw": "{"})]),
            Message.tool_result("a", [Text(text="x"), Text(text="y")]),
            Message(role=Role.ASSISTANT, content=(Text(text="a"), Text(text="b"))),
            Message.assistant(""),
            Message.user(""),
        ]
        assert from_openai(to_openai(messages)) == messages

    def test_tool_result_images_come_back(self) -> None:
        """Images sent after the tool messages go back into their results."""
        messages = [
            Message.assistant(
                tool_uses=[ToolUse(id="a", name="plot"), ToolUse(id="b", name="photo")]
            ),
            Message.tool_result("a", [Text(text="chart"), Image(media_type="image/png", data=PNG)]),
            Message.tool_result("b", [Image(url="https://example.com/p.jpg")]),
            Message.assistant("Done."),
        ]
        assert from_openai(to_openai(messages)) == messages

    def test_several_results_in_one_message_come_back_one_per_message(self) -> None:
        """Several results in one message come back one per message; no content as ""."""
        both = Message(
            role=Role.TOOL,
            content=(ToolResult(tool_use_id="a", content="1"), ToolResult(tool_use_id="b")),
        )
        assert from_openai(to_openai([both])) == [
            Message.tool_result("a", "1"),
            Message.tool_result("b", ""),
        ]

    def test_other_user_message_after_tools_stays(self) -> None:
        """A user message after tool messages that is not their images stays a user message."""
        raw: list[dict[str, Any]] = [
            {"role": "assistant", "content": None, "tool_calls": [_call("a", "f", "{}")]},
            {"role": "tool", "tool_call_id": "a", "content": "ok"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "[Images returned by tool call zzz]"},
                    {"type": "image_url", "image_url": {"url": "https://example.com/p.jpg"}},
                ],
            },
        ]
        messages = from_openai(raw)
        assert messages[1] == Message.tool_result("a", "ok")
        assert messages[2].role is Role.USER
        assert len(messages[2].content) == 2

    def test_shapes_seen_in_the_wild(self) -> None:
        """developer, refusal parts, tool names, list tool content and odd arguments are read."""
        raw: list[dict[str, Any]] = [
            {"role": "developer", "content": [{"type": "text", "text": "rules"}]},
            {"role": "user", "content": "hi", "name": "ann"},
            {
                "role": "assistant",
                "content": [{"type": "refusal", "refusal": "no"}],
                "refusal": "no",
                "tool_calls": [
                    _call("a", "f", ""),
                    _call("b", "g", "[1, 2]"),
                    _call("c", "h", "{not json"),
                    {"id": "d", "function": {"name": "k", "arguments": {"x": 1}}},
                ],
            },
            {"role": "tool", "tool_call_id": "a", "name": "f", "content": None},
            {"role": "tool", "tool_call_id": "b", "content": [{"type": "text", "text": "2"}]},
        ]
        assert from_openai(raw) == [
            Message.system("rules"),
            Message.user("hi"),
            Message.assistant(
                "no",
                tool_uses=[
                    ToolUse(id="a", name="f", input={}),
                    ToolUse(id="b", name="g", input={"_raw": "[1, 2]"}),
                    ToolUse(id="c", name="h", input={"_raw": "{not json"}),
                    ToolUse(id="d", name="k", input={"x": 1}),
                ],
            ),
            Message(role=Role.TOOL, content=(ToolResult(tool_use_id="a", content=()),)),
            Message.tool_result("b", "2"),
        ]

    def test_data_urls(self) -> None:
        """Base64 data URLs become data; other URLs, and a file without a data URL, are kept."""
        raw: list[dict[str, Any]] = [
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "data:image/gif;base64,R0lG"}},
                    {"type": "image_url", "image_url": "data:image/svg+xml,<svg/>"},
                    {"type": "file", "file": {"file_data": PDF, "filename": "a.pdf"}},
                ],
            }
        ]
        assert from_openai(raw)[0].content == (
            Image(media_type="image/gif", data="R0lG"),
            Image(url="data:image/svg+xml,<svg/>"),
            Document(media_type="application/pdf", data=PDF),
        )

    def test_summary_text_becomes_compaction(self) -> None:
        """Text that starts with the summary heading reads as a Compaction."""
        assert from_openai([{"role": "user", "content": SUMMARY}]) == [
            Message(
                role=Role.USER, content=(Compaction(content="The user asked about the weather."),)
            )
        ]

    @pytest.mark.parametrize(
        ("message", "path"),
        [
            ({"role": "function", "name": "f", "content": "x"}, "messages[1].role"),
            ({"content": "x"}, "messages[1].role"),
            ({"role": "tool", "content": "x"}, "messages[1].tool_call_id"),
            ({"role": "user", "content": 3}, "messages[1].content"),
            ({"role": "user", "content": [{"type": "input_audio"}]}, "messages[1].content[0].type"),
            (
                {"role": "user", "content": [{"type": "image_url", "image_url": {}}]},
                "messages[1].content[0].image_url.url",
            ),
            (
                {"role": "user", "content": [{"type": "file", "file": {"file_id": "f"}}]},
                "messages[1].content[0].file.file_id",
            ),
            (
                {"role": "assistant", "content": None, "tool_calls": [{"type": "function"}]},
                "messages[1].tool_calls[0].id",
            ),
            (
                {"role": "assistant", "tool_calls": [{"id": "a", "type": "custom"}]},
                "messages[1].tool_calls[0].type",
            ),
            (
                {"role": "assistant", "tool_calls": [{"id": "", "function": {"name": "f"}}]},
                "messages[1].tool_calls[0]",
            ),
            (
                {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": 1}}]},
                "messages[1].tool_calls[0].function.name",
            ),
            (
                {"role": "assistant", "function_call": {"name": "f", "arguments": "{}"}},
                "messages[1].function_call",
            ),
            (
                {"role": "tool", "tool_call_id": "a", "content": [{"type": "image_url"}]},
                "messages[1].content[0].type",
            ),
        ],
    )
    def test_errors_name_the_path(self, message: dict[str, object], path: str) -> None:
        """Input that is not Chat Completions is rejected, naming its path."""
        with pytest.raises(ConfigurationError) as excinfo:
            from_openai([{"role": "user", "content": "hi"}, message])
        assert_names(excinfo, path)


def _call(call_id: str, name: str, arguments: str) -> dict[str, object]:
    """A Chat Completions tool call."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _normalized_arguments(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A copy with every tool call's arguments parsed (the documented normalisation)."""
    result = copy.deepcopy(messages)
    for message in result:
        for call in message.get("tool_calls") or ():
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    return result


@requires_transcripts
class TestOpenAITranscripts:
    def test_all_files_are_there(self) -> None:
        """The data set holds the 40 transcripts its README lists."""
        assert len(transcript_paths()) == 40

    @pytest.mark.parametrize("path", transcript_paths(), ids=lambda p: p.name)
    def test_reads_every_transcript(self, path: Path) -> None:
        """Every OpenAI message becomes one message, and the conversation is well formed."""
        raw = load_record(path)["messages"]
        messages = load_transcript(path)
        assert len(messages) == len(raw)
        assert [m.role.value for m in messages] == [m["role"] for m in raw]
        validate(messages)
        assert repair(messages) == messages
        last = messages[-1]
        unanswered = [u.id for u in last.tool_uses] if last.role is Role.ASSISTANT else []
        assert tuple(unanswered) == DANGLING_CALLS.get(path.name, ())

    @pytest.mark.parametrize("path", sorted(DANGLING_CALLS), ids=str)
    def test_dangling_calls(self, path: str) -> None:
        """The two final calls without a result are the only ones validate would report."""
        (transcript,) = [p for p in transcript_paths() if p.name == path]
        messages = [*load_transcript(transcript), Message.user("next")]
        with pytest.raises(InvalidConversationError) as excinfo:
            validate(messages)
        assert excinfo.value.ids == DANGLING_CALLS[path]
        validate(repair(messages))

    @pytest.mark.parametrize("path", transcript_paths(), ids=lambda p: p.name)
    def test_round_trip(self, path: Path) -> None:
        """to_openai gives the file back, up to the spacing of the arguments JSON."""
        raw = load_record(path)["messages"]
        back = to_openai(from_openai(raw))
        assert _normalized_arguments(back) == _normalized_arguments(raw)
        for original, rendered in zip(raw, back, strict=True):
            if "tool_calls" not in original:
                assert rendered == original

    @pytest.mark.parametrize("path", transcript_paths(), ids=lambda p: p.name)
    def test_our_format_round_trip(self, path: Path) -> None:
        """Our JSON keeps a real transcript exactly."""
        messages = load_transcript(path)
        assert from_json(to_json(messages)) == messages


def _normalized_anthropic(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The documented normalisations of to_anthropic(from_anthropic(x)), applied to x."""
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else []
        for raw in [] if isinstance(content, str) else content:
            block = dict(raw)
            block.pop("caller", None)
            if block.get("is_error") is False:
                del block["is_error"]
            if isinstance(block.get("content"), str) and block["content"]:
                block["content"] = [{"type": "text", "text": block["content"]}]
            blocks.append(block)
        blocks = [b for b in blocks if b != {"type": "text", "text": ""}]
        if not blocks:
            continue
        if out and out[-1]["role"] == message["role"]:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": message["role"], "content": blocks})
    for message in out:
        if message["role"] == "user":
            content = message["content"]
            message["content"] = [b for b in content if b["type"] == "tool_result"] + [
                b for b in content if b["type"] != "tool_result"
            ]
    return out


ANTHROPIC_SYSTEM = "You are terse."
ANTHROPIC: list[dict[str, Any]] = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": SUMMARY},
            {"type": "text", "text": "What is in these?"},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
            },
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "Two lookups.", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Zürich"}},
            {"type": "tool_use", "id": "call_2", "name": "time", "input": {}},
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "call_1",
                "content": [{"type": "text", "text": "sunny"}],
            },
            {
                "type": "tool_result",
                "tool_use_id": "call_2",
                "content": [{"type": "text", "text": "unknown zone"}],
                "is_error": True,
            },
        ],
    },
    {"role": "assistant", "content": [{"type": "text", "text": "Sunny; the time is unknown."}]},
]


class TestToAnthropic:
    def test_exact_json(self) -> None:
        """Parallel calls, an error, media, reasoning and a summary render as documented."""
        assert to_anthropic(conversation()) == (ANTHROPIC_SYSTEM, ANTHROPIC)

    def test_no_system(self) -> None:
        """Without system messages the system prompt is None."""
        assert to_anthropic([Message.user("hi")]) == (
            None,
            [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        )

    def test_system_keyword_and_leading_system_messages(self) -> None:
        """system= and the leading system messages are joined with a blank line."""
        messages = [
            Message.system("a"),
            Message(role=Role.SYSTEM, content=(Text(text="b"), Compaction(content="c"))),
            Message.user("hi"),
        ]
        system, _ = to_anthropic(messages, system="first")
        assert system == "first\n\na\n\nb\n[Summary of earlier conversation]\nc"

    def test_later_system_message_stays_in_place(self) -> None:
        """A system message after the conversation started is user text where it was."""
        messages = [
            Message.user("hi"),
            Message.assistant("hello"),
            Message.system("be brief"),
            Message.user("why?"),
        ]
        assert to_anthropic(messages) == (
            None,
            [
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "text",
                            "text": "<system-reminder>\nbe brief\n</system-reminder>",
                        },
                        {"type": "text", "text": "why?"},
                    ],
                },
            ],
        )

    def test_tool_results_merge_first(self) -> None:
        """Tool messages and a following user message form one turn, results first."""
        messages = [
            Message.assistant(tool_uses=[ToolUse(id="a", name="f"), ToolUse(id="b", name="g")]),
            Message.tool_result("a", "1"),
            Message(role=Role.TOOL, content=(ToolResult(tool_use_id="b", content=""),)),
            Message.user("stop"),
        ]
        assert to_anthropic(messages)[1][1:] == [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "a",
                        "content": [{"type": "text", "text": "1"}],
                    },
                    {"type": "tool_result", "tool_use_id": "b", "content": ""},
                    {"type": "text", "text": "stop"},
                ],
            }
        ]

    def test_media_in_tool_results_and_documents(self) -> None:
        """Tool-result images, URL and text documents use their Anthropic sources."""
        messages = [
            Message(
                role=Role.USER,
                content=(
                    Document(media_type="application/pdf", url="https://example.com/a.pdf"),
                    Document(media_type="text/markdown", text="# notes"),
                ),
            ),
            Message.assistant(tool_uses=[ToolUse(id="a", name="f")]),
            Message.tool_result("a", [Text(text="x"), Image(url="https://example.com/i.png")]),
        ]
        assert to_anthropic(messages)[1] == [
            {
                "role": "user",
                "content": [
                    {
                        "type": "document",
                        "source": {"type": "url", "url": "https://example.com/a.pdf"},
                    },
                    {
                        "type": "document",
                        "source": {"type": "text", "media_type": "text/plain", "data": "# notes"},
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "a",
                        "content": [
                            {"type": "text", "text": "x"},
                            {
                                "type": "image",
                                "source": {"type": "url", "url": "https://example.com/i.png"},
                            },
                        ],
                    }
                ],
            },
        ]

    def test_empty_text_and_empty_messages_are_not_sent(self) -> None:
        """Empty text blocks and the turns they leave empty are dropped."""
        messages = [
            Message.user("hi"),
            Message(role=Role.ASSISTANT, content=(Text(text=""),)),
            Message.user(""),
            Message.user("again"),
        ]
        assert to_anthropic(messages)[1] == [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "again"}],
            }
        ]

    def test_output_does_not_share_tool_input(self) -> None:
        """Changing the rendered dict does not change the message."""
        message = Message.assistant(tool_uses=[ToolUse(id="t", name="n", input={"a": [1]})])
        rendered: Any = to_anthropic([message])[1]
        rendered[0]["content"][0]["input"]["a"].append(2)
        assert message.tool_uses[0].input == {"a": [1]}

    def test_image_in_system_message_is_an_error(self) -> None:
        """A system prompt holds text only; the error names the block."""
        message = Message(role=Role.SYSTEM, content=(Image(url="https://example.com/i.png"),))
        with pytest.raises(ConfigurationError) as excinfo:
            to_anthropic([message])
        assert_names(excinfo, "messages[0].content[0]")

    def test_image_data_without_media_type_is_an_error(self) -> None:
        """Inline image data needs a media type; the error names the block."""
        with pytest.raises(ConfigurationError) as excinfo:
            to_anthropic([Message(role=Role.USER, content=(Image(data=PNG),))])
        assert_names(excinfo, "messages[0].content[0].media_type")


class TestFromAnthropic:
    def test_reads_what_to_anthropic_writes(self) -> None:
        """Everything comes back but sizes and the split of merged turns."""
        system, messages = to_anthropic(conversation())
        assert from_anthropic(messages, system=system) == [
            Message.system("You are terse."),
            Message(
                role=Role.USER,
                content=(
                    Compaction(content="The user asked about the weather."),
                    Text(text="What is in these?"),
                    Image(url="https://example.com/cat.png"),
                    Image(media_type="image/png", data=PNG),
                    Document(media_type="application/pdf", data=PDF),
                ),
            ),
            conversation()[3],
            Message(
                role=Role.TOOL,
                content=(
                    ToolResult(tool_use_id="call_1", content="sunny"),
                    ToolResult(tool_use_id="call_2", content="unknown zone", is_error=True),
                ),
            ),
            conversation()[6],
        ]

    def test_exact_round_trip_of_representable_messages(self) -> None:
        """Alternating messages within what the API holds come back equal."""
        messages = [
            Message.system("s"),
            Message.user("q"),
            Message(
                role=Role.ASSISTANT,
                content=(
                    Thinking(thinking="t", signature=""),
                    Text(text="a"),
                    ToolUse(id="x", name="f", input={"n": [1, {"k": None}]}),
                    Text(text="b"),
                ),
            ),
            Message(
                role=Role.TOOL,
                content=(
                    ToolResult(
                        tool_use_id="x",
                        content=(Image(url="https://example.com/i.png"), Text(text="c")),
                        is_error=True,
                    ),
                ),
            ),
            Message(
                role=Role.USER,
                content=(
                    Text(text="more"),
                    Document(media_type="text/plain", text="doc"),
                    Document(media_type="application/pdf", url="https://example.com/a.pdf"),
                ),
            ),
        ]
        system, rendered = to_anthropic(messages)
        assert from_anthropic(rendered, system=system) == messages

    def test_tool_results_with_text_split_into_tool_and_user(self) -> None:
        """A user turn with tool results and text is a tool message, then a user message."""
        raw: list[dict[str, Any]] = [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "[Request interrupted by user]"},
                    {"type": "tool_result", "tool_use_id": "a", "content": "x", "is_error": False},
                    {"type": "tool_result", "tool_use_id": "b"},
                ],
            }
        ]
        assert from_anthropic(raw) == [
            Message(
                role=Role.TOOL,
                content=(
                    ToolResult(tool_use_id="a", content="x"),
                    ToolResult(tool_use_id="b", content=()),
                ),
            ),
            Message.user("[Request interrupted by user]"),
        ]

    def test_shapes_seen_in_the_wild(self) -> None:
        """String content, extra keys and a list system prompt are read."""
        raw: list[dict[str, Any]] = [
            {"role": "user", "content": SUMMARY},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "\n\n", "citations": None},
                    {"type": "thinking", "thinking": "t", "signature": "s"},
                    {
                        "type": "tool_use",
                        "id": "a",
                        "name": "f",
                        "input": {},
                        "caller": {"type": "direct"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "a",
                        "content": [{"type": "text", "text": "1"}, {"type": "text", "text": "2"}],
                        "cache_control": {"type": "ephemeral"},
                    }
                ],
            },
        ]
        system = [{"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}}]
        assert from_anthropic(raw, system=system) == [
            Message.system("rules"),
            Message(
                role=Role.USER, content=(Compaction(content="The user asked about the weather."),)
            ),
            Message(
                role=Role.ASSISTANT,
                content=(
                    Text(text="\n\n"),
                    Thinking(thinking="t", signature="s"),
                    ToolUse(id="a", name="f", input={}),
                ),
            ),
            Message.tool_result("a", [Text(text="1"), Text(text="2")]),
        ]

    @pytest.mark.parametrize(
        ("message", "path"),
        [
            ({"role": "system", "content": "x"}, "messages[1].role"),
            ({"role": "user"}, "messages[1].content"),
            (
                {"role": "user", "content": [{"type": "server_tool_use"}]},
                "messages[1].content[0].type",
            ),
            (
                {"role": "user", "content": [{"type": "image", "source": {"type": "file"}}]},
                "messages[1].content[0].source.type",
            ),
            (
                {"role": "user", "content": [{"type": "document", "source": {"type": "content"}}]},
                "messages[1].content[0].source.type",
            ),
            (
                {"role": "user", "content": [{"type": "image", "source": {"type": "base64"}}]},
                "messages[1].content[0].source.media_type",
            ),
            (
                {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f"}]},
                "messages[1].content[0].input",
            ),
            (
                {"role": "user", "content": [{"type": "tool_result", "content": "x"}]},
                "messages[1].content[0].tool_use_id",
            ),
            (
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "a", "is_error": "yes"}],
                },
                "messages[1].content[0].is_error",
            ),
            (
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "a",
                            "content": [{"type": "document"}],
                        }
                    ],
                },
                "messages[1].content[0].content[0].type",
            ),
            (
                {
                    "role": "user",
                    "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}],
                },
                "messages[1]",
            ),
            (
                {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "a"}]},
                "messages[1]",
            ),
        ],
    )
    def test_errors_name_the_path(self, message: dict[str, object], path: str) -> None:
        """Input that is not Messages API messages is rejected, naming its path."""
        with pytest.raises(ConfigurationError) as excinfo:
            from_anthropic([{"role": "user", "content": "hi"}, message])
        assert_names(excinfo, path)

    def test_system_block_must_be_text(self) -> None:
        """A system prompt block that is not text is rejected, naming it."""
        with pytest.raises(ConfigurationError) as excinfo:
            from_anthropic([], system=[{"type": "image"}])
        assert_names(excinfo, "system[0].type")


@requires_transcripts
class TestAnthropicTranscripts:
    def test_all_files_are_there(self) -> None:
        """The data set holds the 14 Anthropic copies its README lists."""
        assert len(anthropic_transcript_paths()) == 14

    @pytest.mark.parametrize("path", anthropic_transcript_paths(), ids=lambda p: p.name)
    def test_reads_every_transcript(self, path: Path) -> None:
        """Every API message becomes one message (two when it mixes results and text)."""
        raw = load_record(path)["messages"]
        mixed = sum(
            1
            for m in raw
            if m["role"] == "user"
            and not isinstance(m["content"], str)
            and {b["type"] for b in m["content"]} - {"tool_result"}
            and any(b["type"] == "tool_result" for b in m["content"])
        )
        messages = load_transcript(path)
        assert len(messages) == len(raw) + mixed
        validate(messages)
        assert repair(messages) == messages
        signatures = [
            b["signature"]
            for m in raw
            if not isinstance(m["content"], str)
            for b in m["content"]
            if b["type"] == "thinking"
        ]
        thinking = [b for m in messages for b in m.content if isinstance(b, Thinking)]
        assert [t.signature for t in thinking] == signatures

    @pytest.mark.parametrize("path", anthropic_transcript_paths(), ids=lambda p: p.name)
    def test_round_trip(self, path: Path) -> None:
        """to_anthropic gives the file back, up to the documented normalisations."""
        record = load_record(path)
        system, rendered = to_anthropic(from_anthropic(record["messages"]))
        assert system is None
        assert rendered == _normalized_anthropic(record["messages"])

    @pytest.mark.parametrize("path", anthropic_transcript_paths(), ids=lambda p: p.name)
    def test_same_calls_as_the_openai_copy(self, path: Path) -> None:
        """Both copies of a conversation read as the same tool calls and results, in order."""
        native = load_transcript(path)
        converted = load_transcript(path.parent.parent / path.name)
        for attribute in ("tool_uses", "tool_results"):
            ours = [b for m in native for b in getattr(m, attribute)]
            theirs = [b for m in converted for b in getattr(m, attribute)]
            if attribute == "tool_uses":
                assert ours == theirs
            else:
                assert [r.tool_use_id for r in ours] == [r.tool_use_id for r in theirs]
                assert [r.text for r in ours] == [r.text for r in theirs]


def _openai_cannot_send(messages: list[Message]) -> bool:
    """Whether a block is one that to_openai rejects (URL-only document, untyped data)."""
    for message in messages:
        for block in message.content:
            items = block.content if isinstance(block, ToolResult) else (block,)
            for item in items:
                if isinstance(item, Document) and item.data is None and item.text is None:
                    return True
                if isinstance(item, Image) and item.data is not None and item.media_type is None:
                    return True
    return False


def _anthropic_cannot_send(messages: list[Message]) -> bool:
    """Whether a block is one that to_anthropic rejects (an image of untyped data)."""
    return any(
        isinstance(item, Image) and item.data is not None and item.media_type is None
        for message in messages
        for block in message.content
        for item in (block.content if isinstance(block, ToolResult) else (block,))
    )


def _calls(messages: list[Message]) -> tuple[list[ToolUse], list[str]]:
    """The tool uses and the ids of the tool results, in order."""
    uses = [use for message in messages for use in message.tool_uses]
    results = [result.tool_use_id for message in messages for result in message.tool_results]
    return uses, results


class TestProperties:
    @given(conversations())
    def test_our_format_round_trips(self, messages: list[Message]) -> None:
        """from_dict(to_dict(x)) == x, also through a JSON string."""
        assert from_dict(to_dict(messages)) == messages
        assert from_json(to_json(messages)) == messages

    @given(conversations())
    def test_openai_rendering_is_stable(self, messages: list[Message]) -> None:
        """Reading a rendering back and rendering it again gives the same messages."""
        if _openai_cannot_send(messages):
            with pytest.raises(ConfigurationError):
                to_openai(messages)
            return
        rendered = to_openai(messages)
        assert to_openai(from_openai(rendered)) == rendered
        assert _calls(from_openai(rendered)) == _calls(messages)

    @given(conversations())
    def test_anthropic_rendering_is_stable(self, messages: list[Message]) -> None:
        """Reading a rendering back and rendering it again gives the same turns."""
        if _anthropic_cannot_send(messages):
            with pytest.raises(ConfigurationError):
                to_anthropic(messages)
            return
        system, rendered = to_anthropic(messages)
        back = from_anthropic(rendered, system=system)
        assert to_anthropic(back) == (system, rendered)
        assert _calls(back) == _calls(messages)
        roles = [turn["role"] for turn in rendered]
        assert all(a != b for a, b in itertools.pairwise(roles))

    @given(well_formed_conversations())
    def test_openai_keeps_conversations_well_formed(self, messages: list[Message]) -> None:
        """A well-formed conversation read back from Chat Completions is well formed."""
        if not _openai_cannot_send(messages):
            validate(from_openai(to_openai(messages)))

    @given(well_formed_conversations(running=False))
    def test_anthropic_keeps_conversations_well_formed(self, messages: list[Message]) -> None:
        """A well-formed conversation read back from the Messages API is well formed."""
        # No calls still running: a system message after them would become user text.
        if not _anthropic_cannot_send(messages):
            system, rendered = to_anthropic(messages)
            validate(from_anthropic(rendered, system=system))


WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)


class TestToolDefinitions:
    """tools_to_openai / tools_from_openai and tools_to_anthropic / tools_from_anthropic."""

    def test_openai_shape(self) -> None:
        """A tool is a Chat Completions function tool."""
        assert tools_to_openai([WEATHER]) == [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Current weather for a city.",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            }
        ]

    def test_anthropic_shape(self) -> None:
        """A tool is a Messages API client tool."""
        assert tools_to_anthropic([WEATHER]) == [
            {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            }
        ]

    def test_schema_is_a_copy(self) -> None:
        """Changing a rendered schema leaves the definition as it was."""
        rendered = tools_to_anthropic([WEATHER])[0]["input_schema"]
        assert isinstance(rendered, dict)
        rendered["properties"] = {}
        assert WEATHER.input_schema["properties"] == {"city": {"type": "string"}}

    @given(tools=st.lists(tool_definitions(), max_size=4))
    def test_round_trips(self, tools: list[ToolDefinition]) -> None:
        """Both readers give back exactly what the writers wrote."""
        assert tools_from_openai(tools_to_openai(tools)) == tools
        assert tools_from_anthropic(tools_to_anthropic(tools)) == tools

    def test_missing_description_and_schema(self) -> None:
        """A missing description reads as "" and a missing schema as the empty object schema."""
        assert tools_from_openai([{"type": "function", "function": {"name": "now"}}]) == [
            ToolDefinition(name="now")
        ]
        assert tools_from_anthropic([{"name": "now", "cache_control": {}}]) == [
            ToolDefinition(name="now")
        ]

    @pytest.mark.parametrize(
        ("read", "tools", "path"),
        [
            (tools_from_openai, [{"type": "custom", "custom": {}}], "tools[0].type"),
            (tools_from_openai, [{"function": {"name": 5}}], "tools[0].function.name"),
            (
                tools_from_openai,
                [{"function": {"name": "a", "parameters": []}}],
                "tools[0].function.parameters",
            ),
            (tools_from_openai, ["get_time"], "tools[0]"),
            (tools_from_anthropic, [{"type": "web_search_20250305"}], "tools[0].type"),
            (tools_from_anthropic, [{"name": "a", "description": 3}], "tools[0].description"),
            (tools_from_anthropic, {"name": "a"}, "tools"),
        ],
    )
    def test_bad_input_names_the_path(self, read: Any, tools: object, path: str) -> None:
        """A tool list that is not the API's names the path of what is wrong."""
        with pytest.raises(ConfigurationError) as info:
            read(tools)
        assert_names(info, path)

    @pytest.mark.parametrize("write", [tools_to_openai, tools_to_anthropic])
    @pytest.mark.parametrize("tools", [None, WEATHER, [{"name": "x"}], "get_weather"])
    def test_writers_take_definitions(self, write: Any, tools: object) -> None:
        """The writers take a list of ToolDefinition and nothing else."""
        with pytest.raises(ConfigurationError, match="ToolDefinition"):
            write(tools)


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


class TestDepthLimit:
    """Free-form JSON read from the wire nests at most formats.MAX_DEPTH levels."""

    def test_limit(self) -> None:
        """The documented limit is 100, and a value at the limit is read."""
        assert formats.MAX_DEPTH == 100
        deepest = {"x": _nested(formats.MAX_DEPTH - 1)}
        block = {"type": "tool_use", "id": "a", "name": "n", "input": deepest}
        (message,) = from_anthropic([{"role": "assistant", "content": [block]}])
        assert message.tool_uses[0].input == deepest

    @pytest.mark.parametrize("depth", [101, 1_000, 50_000])
    def test_anthropic_input(self, depth: int) -> None:
        """A tool input nested too deeply is a ConfigurationError naming its path."""
        block = {"type": "tool_use", "id": "a", "name": "n", "input": {"x": _nested(depth)}}
        with pytest.raises(ConfigurationError, match="nested deeper than 100") as info:
            from_anthropic([{"role": "assistant", "content": [block]}])
        assert_names(info, "messages[0].content[0].input")

    @pytest.mark.parametrize("depth", [101, 1_000, 100_000])
    def test_openai_arguments(self, depth: int) -> None:
        """Arguments nested too deeply, as text or as an object, name their path."""
        text = '{"x": ' + "[" * depth + "]" * depth + "}"
        for arguments in (text, {"x": _nested(depth)}):
            function = {"name": "n", "arguments": arguments}
            call = {"id": "a", "type": "function", "function": function}
            with pytest.raises(ConfigurationError, match="nested deeper") as info:
                from_openai([{"role": "assistant", "content": None, "tool_calls": [call]}])
            assert_names(info, "messages[0].tool_calls[0].function.arguments")

    def test_raw_arguments_nested_too_deeply_are_written_verbatim(self) -> None:
        """A `_raw` string too deep to parse is still sent back as it is."""
        raw = "[" * 5_000 + "]" * 5_000
        use = ToolUse(id="a", name="n", input={formats.RAW_ARGUMENTS: raw})
        (rendered,) = to_openai([Message.assistant(tool_uses=[use])])
        assert json.dumps(rendered["tool_calls"]) == json.dumps(
            [{"id": "a", "type": "function", "function": {"name": "n", "arguments": raw}}]
        )

    @pytest.mark.parametrize("depth", [101, 100_000])
    def test_our_json(self, depth: int) -> None:
        """from_json and from_dict refuse deep input with a ConfigurationError."""
        use = {"type": "tool_use", "id": "a", "name": "n", "input": {"x": _nested(depth)}}
        data = {
            "format": "neuron-context",
            "version": 1,
            "messages": [{"role": "assistant", "content": [use]}],
        }
        if depth < 500:
            with pytest.raises(ConfigurationError, match="nested deeper") as info:
                from_dict(data)
            assert_names(info, "messages[0].content[0].input")
            with pytest.raises(ConfigurationError, match="nested deeper"):
                from_json(json.dumps(data))
        else:
            text = '{"format": "neuron-context", "version": 1, "messages": '
            with pytest.raises(ConfigurationError, match="nested deeper"):
                from_json(text + "[" * depth + "]" * depth + "}")

    def test_cyclic_input(self) -> None:
        """A cyclic tool input (only Python can build one) is refused, not looped over."""
        cyclic: dict[str, object] = {}
        cyclic["self"] = cyclic
        block = {"type": "tool_use", "id": "a", "name": "n", "input": cyclic}
        with pytest.raises(ConfigurationError, match="nested deeper"):
            from_anthropic([{"role": "assistant", "content": [block]}])


class TestEntryPointTypes:
    """Wrong types given to a reader or writer are ConfigurationErrors naming the argument."""

    @pytest.mark.parametrize("write", [to_openai, to_anthropic])
    @pytest.mark.parametrize("system", [5, b"x", ["x"], {"text": "x"}])
    def test_system_must_be_a_str(self, write: Any, system: object) -> None:
        """``system=5`` is refused, not sent as ``{"content": 5}``."""
        with pytest.raises(ConfigurationError, match="system must be a str"):
            write([Message.user("hi")], system=system)

    @pytest.mark.parametrize("write", [to_openai, to_anthropic, to_dict, to_json])
    @pytest.mark.parametrize("messages", [None, 5, "hi", Message.user("hi"), {"role": "user"}])
    def test_writers_take_a_list_of_messages(self, write: Any, messages: object) -> None:
        """A writer names its messages argument when it is not a list of Message."""
        with pytest.raises(ConfigurationError, match="messages must be a list of Message"):
            write(messages)

    @pytest.mark.parametrize("write", [to_openai, to_anthropic, to_dict])
    def test_wire_dicts_point_to_the_readers(self, write: Any) -> None:
        """An OpenAI-style dict among the messages is named, with the reader to use."""
        with pytest.raises(ConfigurationError, match=r"formats\.from_openai") as info:
            write([Message.user("hi"), {"role": "user", "content": "x"}])
        assert_names(info, "messages[1]")

    @pytest.mark.parametrize("read", [from_openai, from_anthropic])
    @pytest.mark.parametrize("messages", [None, 5, "hi", b"hi", {"role": "user"}])
    def test_readers_take_a_list(self, read: Any, messages: object) -> None:
        """A reader names its messages argument when it is not a list."""
        with pytest.raises(ConfigurationError, match="messages must be a list"):
            read(messages)

    @pytest.mark.parametrize("text", [None, 5, ["{}"], {"format": "neuron-context"}])
    def test_from_json_takes_text(self, text: object) -> None:
        """from_json takes a str or bytes."""
        with pytest.raises(ConfigurationError, match="text must be a str or bytes"):
            from_json(text)  # type: ignore[arg-type]

    @pytest.mark.parametrize("indent", [-1, "2", 2.0, True])
    def test_to_json_indent(self, indent: object) -> None:
        """to_json's indent is an int >= 0 or None."""
        with pytest.raises(ConfigurationError, match="indent"):
            to_json([], indent=indent)  # type: ignore[arg-type]

    def test_anthropic_system_of_a_wrong_type(self) -> None:
        """from_anthropic names a system prompt that is neither a str nor a list of blocks."""
        with pytest.raises(ConfigurationError, match="system must be a list"):
            from_anthropic([], system=5)  # type: ignore[arg-type]


class TestOpenAISystemInsideAnExchange:
    """A system message between a tool call and its result, written for Chat Completions."""

    def test_it_follows_the_results(self) -> None:
        """The tool messages follow their call at once, as OpenAI requires; the system
        message comes after them, before the next turn."""
        use = ToolUse(id="1", name="f", input={})
        messages = [
            Message.system("s0"),
            Message.user("q"),
            Message.assistant(tool_uses=[use]),
            Message.system("mid"),
            Message.tool_result("1", "r"),
            Message.user("next"),
        ]
        roles = [item["role"] for item in to_openai(messages)]
        assert roles == ["system", "user", "assistant", "tool", "system", "user"]
        validate(from_openai(to_openai(messages)))
