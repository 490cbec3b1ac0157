"""Tests of neuron_context.formats: Anthropic Messages (to_anthropic / from_anthropic)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from formats_support import PDF, PNG, SUMMARY, assert_names, conversation
from transcripts import (
    anthropic_transcript_paths,
    load_record,
    load_transcript,
    requires_transcripts,
)

from neuron_context import (
    Compaction,
    ConfigurationError,
    Document,
    Image,
    Message,
    Role,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
    repair,
    validate,
)
from neuron_context.formats import (
    from_anthropic,
    to_anthropic,
)


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
