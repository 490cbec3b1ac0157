"""What the tests of neuron_context.formats share: a conversation with every kind of
block, its media, and the check that an error names its path."""

from __future__ import annotations

import pytest

from neuron_context import (
    Compaction,
    ConfigurationError,
    Document,
    Image,
    Message,
    RedactedThinking,
    Role,
    Text,
    Thinking,
    ToolUse,
)

__all__ = ["PDF", "PNG", "SUMMARY", "assert_names", "conversation"]

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
