"""The recall tool: its core (keys, line ranges, errors) and our agent loop recalling a
cleared result by the key its reference shows."""

from __future__ import annotations

import pytest
from agent_support import answer, calls
from offload_support import FailingStore
from recall_support import FIRST_LINE, KEY, clearing, file_text, key_in

from neuron_context import (
    AgentOptions,
    CompletionRequest,
    CompletionResponse,
    MemoryStore,
    Message,
    ToolResult,
    create_agent,
)
from neuron_context.stores import RECALL_INSTRUCTIONS, recall, recall_tool
from neuron_context.testing import FunctionProvider


class TestRecall:
    """recall(store, key, start_line, end_line)."""

    def test_text_and_lines(self) -> None:
        """A text comes back whole, or the lines asked for (1-based, inclusive)."""
        store = MemoryStore()
        key = store.put("one\ntwo\nthree\nfour")
        assert recall(store, key).text == "one\ntwo\nthree\nfour"
        assert recall(store, key, 2, 3).text == "two\nthree"
        assert recall(store, key, start_line=3).text == "three\nfour"
        assert recall(store, key, end_line=1).text == "one"
        assert recall(store, f"  {key}\n").text.startswith("one")

    def test_messages_as_a_transcript(self) -> None:
        """Messages come back as the summarizer's transcript."""
        store = MemoryStore()
        key = store.put([Message.user("Fix it"), Message.assistant("Done.")])
        assert recall(store, key).text == "user:\n  Fix it\nassistant:\n  Done."

    @pytest.mark.parametrize(
        ("key", "lines", "error"),
        [
            ("0123456789abcdef", (None, None), "no content under key"),
            ("", (None, None), "key must be a non-empty string"),
            ("KEY", (3, 2), "outside 1..2"),
            ("KEY", (9, None), "outside 1..2"),
            ("KEY", (0, 1), "outside 1..2"),
        ],
    )
    def test_errors(self, key: str, lines: tuple[int | None, int | None], error: str) -> None:
        """An unknown key or a bad range is an error result, never an exception."""
        store = MemoryStore()
        real = store.put("a\nb")
        found = recall(store, real if key == "KEY" else key, *lines)
        assert found.is_error
        assert error in found.text

    def test_failing_store(self) -> None:
        """A store that raises on get is an error result too."""
        found = recall(FailingStore(), "0123456789abcdef")
        assert found.is_error
        assert "ConnectionError: the store is down" in found.text

    def test_tool(self) -> None:
        """Our Tool is named recall and needs only the key."""
        tool = recall_tool(MemoryStore())
        assert tool.name == "recall"
        assert tool.input_schema["required"] == ["key"]

    def test_instructions(self) -> None:
        """The system-prompt sentence names the tool and the reference's form."""
        assert "recall tool" in RECALL_INSTRUCTIONS
        assert "'recall: <key>'" in RECALL_INSTRUCTIONS


def _tool_texts(request: CompletionRequest) -> list[str]:
    return [
        block.text
        for message in request.messages
        for block in message.content
        if isinstance(block, ToolResult)
    ]


class TestAgentLoop:
    """Our Agent with a store and the recall tool."""

    def test_recalls_a_cleared_result(self) -> None:
        """The model reads two files, finds a.py cleared with a reference, recalls it by
        that key, and answers with what it says; an unknown key is an error result."""
        store = MemoryStore()
        seen: list[CompletionRequest] = []

        def reply(request: CompletionRequest) -> CompletionResponse:
            seen.append(request)
            texts = _tool_texts(request)
            if len(seen) == 1:
                return calls(("read_file", {"path": "a.py"}))
            if len(seen) == 2:
                return calls(("read_file", {"path": "b.py"}))
            if len(seen) == 3:
                key = key_in(texts)
                assert key == KEY
                return calls(("recall", {"key": key}), ("recall", {"key": "0123456789abcdef"}))
            assert texts[-2].startswith(FIRST_LINE)
            assert "no content under key" in texts[-1]
            return answer(texts[-2].split("\n", 1)[0])

        def read_file(path: str) -> str:
            """Read a file."""
            return file_text(path)

        agent = create_agent(
            FunctionProvider(reply),
            [read_file, recall_tool(store)],
            AgentOptions(system_prompt=RECALL_INSTRUCTIONS, context=clearing(store)),
        )
        result = agent.run_sync("What does a.py say?")
        assert result.text == FIRST_LINE
        errors = [
            block
            for message in result.messages
            for block in message.content
            if isinstance(block, ToolResult) and block.is_error
        ]
        assert len(errors) == 1
