"""ExtractiveSummarizer reads what can reach the summary, not the whole history (issue 18)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from typing import TypeAlias

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import texts, well_formed_conversations
from suite import FULL

from neuron_context import (
    CompletionRequest,
    ContentBlock,
    ExtractiveSummarizer,
    Message,
    Role,
    SummarizationStrategy,
    Text,
    TokenCounter,
    ToolResult,
    ToolUse,
)

# -- helpers ----------------------------------------------------------------------------

_CONTENT = Message.__dict__["content"]  # the slot that holds a message's blocks
_READ: set[int] = set()  # the ids of the watched messages whose content was read


class Watched(Message):
    """A message that notes every time its content is read (its role is not watched:
    finding the user's messages by role is allowed to look at every message)."""

    __slots__ = ()

    @property
    def content(self) -> tuple[ContentBlock, ...]:
        _READ.add(id(self))
        return _CONTENT.__get__(self, Message)  # type: ignore[no-any-return]

    @content.setter
    def content(self, value: tuple[ContentBlock, ...]) -> None:
        _CONTENT.__set__(self, value)


def watched(message: Message) -> Watched:
    """``message`` as a :class:`Watched` message."""
    return Watched(role=message.role, content=_CONTENT.__get__(message, Message))


def read_indices(messages: Sequence[Message]) -> list[int]:
    """The indices of the messages whose content was read since the last call."""
    found = [i for i, message in enumerate(messages) if id(message) in _READ]
    _READ.clear()
    return found


def session(size: int, *, paths: bool = True) -> list[Message]:
    """A long agent session of about ``size`` messages: the task first, a new request
    every 100 messages, each step a call and a 1,000-character result.

    The messages are built as :class:`Watched` ones directly, with the cyclic garbage
    collector paused: they hold no cycles, and a session of 100,000 messages (some
    700,000 objects) would otherwise be walked by it again and again as it grows.
    """
    user, assistant, tool = Role.USER, Role.ASSISTANT, Role.TOOL
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        task = Text(text="TASK: port the parser to Rust.")
        messages: list[Message] = [Watched(role=user, content=(task,))]
        step = 0
        while len(messages) < size - 1:
            if step % 33 == 32:
                request = Text(text=f"request {step:06d}: keep going")
                messages.append(Watched(role=user, content=(request,)))
            argument = {"path": f"src/module_{step:06d}.rs"} if paths else {"topic": "why"}
            use = ToolUse(id=f"c{step}", name="read_file", input=argument)
            content = (Text(text=f"Step {step:06d}."), use)
            messages.append(Watched(role=assistant, content=content))
            output = f"line of module {step:06d} without a single name in it\n" * 20
            result = ToolResult(tool_use_id=f"c{step}", content=output)
            messages.append(Watched(role=tool, content=(result,)))
            step += 1
        newest = Text(text="NEWEST: now write the tests.")
        messages.append(Watched(role=user, content=(newest,)))
    finally:
        if gc_was_enabled:
            gc.enable()
    return messages


def quote(text: str) -> str:
    """A request as the summary quotes it."""
    return f"<user_request>\n{text}\n</user_request>"


def rendered(messages: list[Message], budget: int) -> CompletionRequest:
    """The request SummarizationStrategy sends for ``messages``."""
    strategy = SummarizationStrategy(ExtractiveSummarizer(), 0, max_summary_tokens=budget)
    request = strategy.summary_request(messages)
    assert request is not None
    return request


def plain(messages: list[Message], budget: int) -> CompletionRequest:
    """A request holding the messages themselves."""
    return CompletionRequest(list(messages), max_tokens=budget)


Make: TypeAlias = Callable[[list[Message], int], CompletionRequest]
requests: st.SearchStrategy[Make] = st.sampled_from([plain, rendered])
"""Both ways a summarizer is asked: the messages themselves, or a rendered transcript."""

# -- properties -------------------------------------------------------------------------


class TestProperties:
    """What holds for any conversation and budget, either way it is given."""

    @given(
        messages=well_formed_conversations(max_turns=12),
        budget=st.integers(1, 600),
        make=requests,
    )
    def test_fits_and_is_deterministic(
        self, messages: list[Message], budget: int, make: Make
    ) -> None:
        """The summary fits ``max_tokens`` and is the same every time."""
        if not any(m.role is not Role.SYSTEM and not m.is_compaction for m in messages):
            return
        request = make(messages, budget)
        text = ExtractiveSummarizer().summarize(request)
        assert TokenCounter().estimate_text(text) <= budget
        assert ExtractiveSummarizer().summarize(request) == text

    @given(
        messages=well_formed_conversations(max_turns=10, summaries=False, running=False),
        task=texts(max_size=60),
        newest=texts(max_size=60),
        make=requests,
    )
    def test_keeps_the_first_and_the_newest_request(
        self, messages: list[Message], task: str, newest: str, make: Make
    ) -> None:
        """The first request and the newest are quoted verbatim when they fit."""
        task, newest = f"TASK {task}".strip(), f"NEWEST {newest}".strip()
        history = [Message.user(task), *messages, Message.user(newest)]
        counter = TokenCounter()
        budget = 4 * (counter.estimate_text(quote(task)) + counter.estimate_text(quote(newest)))
        request = make(history, budget + 400)
        text = ExtractiveSummarizer().summarize(request)
        assert quote(task) in text
        assert quote(newest) in text

    def test_keeps_the_newest_request_beside_costly_decisions(self) -> None:
        """The property above, on the case a CI-profile run found: long emoji-only
        assistant texts and an emoji path crowd out the newest request."""
        empty = Message.user("")
        uses = [ToolUse(id=i, name="get_time", input={}) for i in ("a", "b", "c")]
        uses.append(ToolUse(id="d", name="get_time", input={"path": "\U0001f642" * 74}))
        results = tuple(ToolResult(tool_use_id=use.id, content="") for use in uses)
        history = [
            Message.user("TASK"),
            empty,
            Message.assistant(tool_uses=uses),
            Message(role=Role.TOOL, content=results),
            empty,
            Message.assistant("\U0001f642" * 129),
            Message.assistant("\U0001f642" * 224),
            Message.user("NEWEST"),
        ]
        counter = TokenCounter()
        budget = 4 * (counter.estimate_text(quote("TASK")) + counter.estimate_text(quote("NEWEST")))
        text = ExtractiveSummarizer().summarize(plain(history, budget + 400))
        assert quote("TASK") in text
        assert quote("NEWEST") in text


# -- bounded work -----------------------------------------------------------------------


class TestBoundedWork:
    """Only the newest messages (and the user's) are read, however long the history."""

    @pytest.mark.parametrize("paths", [True, False], ids=["paths", "no-paths"])
    def test_reads_only_the_newest_messages(self, paths: bool) -> None:
        """Of 100,000 messages (30,000 outside CI's full run), the content of at most the
        last 1,000 non-user messages is read, about as many as of 10,000; with or without
        anything to find in them."""
        reads = {}
        sizes = (10_000, 100_000 if FULL else 30_000)
        for size in sizes:
            messages = session(size, paths=paths)
            _READ.clear()
            text = ExtractiveSummarizer(max_mentions=400).summarize(plain(messages, 2000))
            read = read_indices(messages)
            others = [i for i in read if messages[i].role is not Role.USER]
            assert others
            assert min(others) >= size - 1_000
            reads[size] = len(others)
            assert quote("TASK: port the parser to Rust.") in text
            assert quote("NEWEST: now write the tests.") in text
        assert abs(reads[sizes[0]] - reads[sizes[1]]) <= 10  # where the requests fall differs

    def test_read_grows_with_the_budget(self) -> None:
        """A bigger budget reads further back (read_per_token characters per token)."""
        messages = session(20_000)
        spans = []
        for budget in (4_000, 8_000):
            _READ.clear()
            ExtractiveSummarizer().summarize(plain(messages, budget))
            others = [i for i in read_indices(messages) if messages[i].role is not Role.USER]
            spans.append(len(messages) - min(others))
        assert spans[0] < spans[1] <= 2 * spans[0] + 10

    def test_stops_once_the_sections_are_full(self) -> None:
        """With a small budget every section fills up long before the reading bound."""
        messages = session(20_000)
        for index in range(len(messages) - 400, len(messages), 2):  # errors near the end
            if messages[index].role is Role.TOOL:
                use_id = messages[index].tool_results[0].tool_use_id
                text = f"boom: E{index:05d} in parse_{index}"  # with facts to note
                messages[index] = watched(Message.tool_result(use_id, text, is_error=True))
        _READ.clear()
        ExtractiveSummarizer(max_mentions=5, read_per_token=10_000).summarize(plain(messages, 300))
        others = [i for i in read_indices(messages) if messages[i].role is not Role.USER]
        assert min(others) >= len(messages) - 400


# -- what the newest-first reading shows ------------------------------------------------


def call(use_id: str, name: str, **arguments: str) -> Message:
    """An assistant message calling ``name`` once."""
    return Message.assistant(tool_uses=[ToolUse(id=use_id, name=name, input=arguments)])


class TestNewestFirst:
    """The index and the mentions list the newest first."""

    def test_index_newest_first(self) -> None:
        """An artifact is listed by its latest call, with its tools, the latest last."""
        history = [
            Message.user("Refactor the reader."),
            call("c1", "read_file", path="src/a.py"),
            Message.tool_result("c1", "..."),
            call("c2", "read_file", path="src/b.py"),
            Message.tool_result("c2", "..."),
            call("c3", "edit_file", path="src/b.py"),
            Message.tool_result("c3", "ok"),
        ]
        text = ExtractiveSummarizer().summarize(plain(history, 1000))
        artifacts = text.split("## Artifacts\n")[1].split("\n\n")[0].split("\n")
        assert artifacts[:2] == [
            "- src/b.py: read_file, edit_file (latest)",
            "- src/a.py: read_file",
        ]

    def test_commands_that_name_a_file_come_first(self) -> None:
        """When space is short, a command naming a file beats a newer one naming none."""
        history = [
            Message.user("Fix the bug."),
            call("c1", "bash", command="python reproduce_bug.py"),
            Message.tool_result("c1", "..."),
            *[
                m
                for k in range(2, 30)
                for m in (
                    call(f"c{k}", "edit", command=f"edit {k}:{k + 1}"),
                    Message.tool_result(f"c{k}", "ok"),
                )
            ],
        ]
        text = ExtractiveSummarizer().summarize(plain(history, 120))
        assert "command=python reproduce_bug.py: bash" in text

    def test_mentions_newest_first(self) -> None:
        """Paths said in the conversation are listed newest first, then those in output,
        a few to a line."""
        history = [
            Message.user("Look at docs/old.md and then docs/new.md"),
            call("c1", "bash", command="ls"),
            Message.tool_result("c1", "build/out.log"),
            Message.assistant("Now docs/newest.md"),
        ]
        text = ExtractiveSummarizer().summarize(plain(history, 1000))
        mentions = [line for line in text.split("\n") if line.startswith("- Mentioned: ")]
        assert mentions == [
            "- Mentioned: docs/newest.md · docs/old.md · docs/new.md · build/out.log"
        ]
