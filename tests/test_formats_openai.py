"""Tests of neuron_context.formats: Chat Completions messages (to_openai / from_openai)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from formats_support import PDF, PNG, SUMMARY, assert_names, conversation
from transcripts import (
    DANGLING_CALLS,
    load_record,
    load_transcript,
    requires_transcripts,
    transcript_name,
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
    ToolResult,
    ToolUse,
    repair,
    validate,
)
from neuron_context.formats import (
    from_json,
    from_openai,
    to_json,
    to_openai,
)

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
        assert tuple(unanswered) == DANGLING_CALLS.get(transcript_name(path), ())

    @pytest.mark.parametrize("path", sorted(DANGLING_CALLS), ids=str)
    def test_dangling_calls(self, path: str) -> None:
        """The two final calls without a result are the only ones validate would report."""
        (transcript,) = [p for p in transcript_paths() if transcript_name(p) == path]
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
