"""The recall tool: its core (keys, line ranges, errors) and our agent loop recalling a
cleared result by the key its reference shows."""

from __future__ import annotations

import re
import time

import pytest
from agent_support import answer, calls
from hypothesis import given, settings
from hypothesis import strategies as st
from offload_support import FailingStore
from recall_support import FIRST_LINE, KEY, clearing, file_text, key_in

from neuron_context import (
    AgentOptions,
    CompletionRequest,
    CompletionResponse,
    ConfigurationError,
    MemoryStore,
    Message,
    TokenCounter,
    ToolResult,
    create_agent,
)
from neuron_context.stores import RECALL_INSTRUCTIONS, conversation, recall, recall_tool, search
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
        """Our Tool is named recall and takes a key, or a query (neither is required)."""
        tool = recall_tool(MemoryStore())
        assert tool.name == "recall"
        assert tool.input_schema.get("required", []) == []
        properties = tool.input_schema["properties"]
        assert isinstance(properties, dict)
        assert {"key", "query", "start_line", "end_line", "regex"} <= set(properties)

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


_NEXT = re.compile(r"start_line=(\d+)\]$")


class TestPages:
    """recall never returns more than about max_tokens, and says how to read on."""

    def test_a_long_text_comes_a_page_at_a_time(self) -> None:
        """330,000 characters come back as a bounded page naming the next one."""
        store = MemoryStore()
        text = "\n".join(f"line {n}: " + "x" * 60 for n in range(5_000))
        key = store.put(text)
        found = recall(store, key)
        assert not found.is_error
        assert TokenCounter().estimate_text(found.text) <= 2_000
        assert found.text.startswith("line 0: ")
        assert f"of 5,000 of {key}" in found.text
        assert _NEXT.search(found.text)

    @settings(max_examples=30, deadline=None)
    @given(
        lines=st.lists(st.text(min_size=0, max_size=300), min_size=1, max_size=80),
        max_tokens=st.integers(100, 600),
    )
    def test_following_the_pages_reads_everything(self, lines: list[str], max_tokens: int) -> None:
        """Every page fits its budget; reading on from each note gives back every line,
        in order (a line too long for a page is cut, and the note says so)."""
        lines = [line.replace("\n", " ").replace("\r", " ") for line in lines]
        store = MemoryStore()
        text = "\n".join(lines)
        key = store.put(text)
        counter = TokenCounter()
        read: list[str] = []
        start: int | None = None
        for _ in range(len(lines) + 1):
            found = recall(store, key, start, max_tokens=max_tokens)
            assert not found.is_error
            assert counter.estimate_text(found.text) <= max_tokens
            body, _, note = found.text.rpartition("\n")
            match = _NEXT.search(note) if note.startswith("[recall: ") else None
            if match is None:
                read.append(found.text)
                break
            read.append(body)
            start = int(match.group(1))
            if start > len(lines):
                break
        joined = "\n".join(read)
        assert all(line[:20] in joined for line in lines)

    def test_a_line_longer_than_a_page(self) -> None:
        """A 100,000-character line is cut to the page, and the note says so."""
        store = MemoryStore()
        key = store.put("a" * 100_000 + "\nnext")
        found = recall(store, key, max_tokens=500)
        assert found.text.startswith("a" * 100)
        assert "cut at" in found.text
        assert "start_line=2" in found.text
        assert TokenCounter().estimate_text(found.text) <= 500

    def test_bad_budget(self) -> None:
        """max_tokens is the caller's configuration: a bad one raises."""
        with pytest.raises(ConfigurationError, match="max_tokens"):
            recall(MemoryStore(), "0123456789abcdef", max_tokens=99)

    def test_a_huge_key_is_shown_cut(self) -> None:
        """The error for a 1 MB key shows it cut to about 80 characters."""
        found = recall(MemoryStore(), "k" * 1_000_000)
        assert found.is_error
        assert len(found.text) < 300
        assert "1,000,000 characters" in found.text

    def test_only_the_key_shape(self) -> None:
        """A string that only contains a key is not a key: no prefix or scope is escaped."""
        store = MemoryStore()
        key = store.put("a")
        assert recall(store, key.upper()).text == "a"
        for near in ("2" + key, key + "0", f"../{key}", f"x/{key}"):
            found = recall(store, near)
            assert found.is_error
            assert "is not a key" in found.text


class TestSearch:
    """search: the matching lines of the store's entries, with keys and line numbers."""

    def store(self) -> tuple[MemoryStore, str, str]:
        store = MemoryStore()
        first = store.put("alpha\nThe booking MFRB94 is confirmed\nomega")
        second = store.put([Message.user("Find HAT072"), Message.assistant("HAT072 costs 120")])
        return store, first, second

    def test_literal(self) -> None:
        """A literal matches ignoring case; each hit names its key and line number."""
        store, first, _ = self.store()
        found = search(store, "mfrb94")
        assert found.text == f"{first}:2: The booking MFRB94 is confirmed"

    def test_messages_are_searched_as_their_transcript(self) -> None:
        """Removed messages are searched as recall renders them."""
        store, _, second = self.store()
        lines = search(store, "HAT072").text.split("\n")
        assert len(lines) == 2
        assert all(line.startswith(f"{second}:") for line in lines)

    def test_regex(self) -> None:
        """A regular expression, when asked for."""
        store, first, _ = self.store()
        assert search(store, r"[A-Z]{4}\d\d", regex=True).text.startswith(f"{first}:2:")
        assert "no line" in search(store, r"[A-Z]{4}\d\d").text

    def test_within_one_key(self) -> None:
        """With a key, only that entry is searched."""
        store, first, second = self.store()
        assert "no line of" in search(store, "HAT072", key=first).text
        assert search(store, "HAT072", key=second).text.count(second) == 2

    @pytest.mark.parametrize("pattern", ["(", "[a-", "a{2,1}", "(?P<x>a)(?P<x>b)"])
    def test_invalid_patterns(self, pattern: str) -> None:
        """An invalid pattern is an error result naming the problem."""
        found = search(MemoryStore(), pattern, regex=True)
        assert found.is_error
        assert "not a valid regular expression" in found.text

    def test_catastrophic_pattern(self) -> None:
        """A pattern that backtracks for ever is stopped, as an error result."""
        store = MemoryStore()
        store.put("a" * 40 + "!")
        started = time.monotonic()
        found = search(store, r"(a+)+$", regex=True)
        assert found.is_error
        assert "ran for more than" in found.text
        assert time.monotonic() - started < 10

    def test_bounded(self) -> None:
        """Thousands of matches come back within max_tokens, saying how many there were."""
        store = MemoryStore()
        store.put("\n".join(f"match {n} " + "y" * 40 for n in range(3_000)))
        found = search(store, "match", max_tokens=300)
        assert TokenCounter().estimate_text(found.text) <= 300
        assert "of 2,000 or more matching lines" in found.text

    def test_scoped(self) -> None:
        """A search sees only its namespace."""
        store = MemoryStore()
        store.scoped("other").put("secret MFRB94")
        assert "no line" in search(store.scoped("mine"), "MFRB94").text
        with conversation("mine"):
            assert "no line" in search(store, "MFRB94").text
        assert search(store.scoped("other"), "MFRB94").text.endswith("secret MFRB94")

    def test_errors(self) -> None:
        """An empty query or a failing store is an error result."""
        assert search(MemoryStore(), "").is_error
        assert search(FailingStore(), "x").is_error

    def test_the_tool(self) -> None:
        """Our tool searches with a query, recalls with a key, and wants one of them."""
        store, first, _ = self.store()
        tool = recall_tool(store)
        by_query, by_key, neither = (
            tool.function(query="mfrb94"),
            tool.function(key=first),
            tool.function(),
        )
        assert isinstance(by_query, ToolResult)
        assert isinstance(by_key, ToolResult)
        assert isinstance(neither, ToolResult)
        assert "MFRB94" in by_query.text
        assert by_key.text.startswith("alpha")
        assert neither.is_error
