"""``default_stack``'s last resort where the task and a longer newest request share a
small budget: the task stays whole where the request still says something beside it,
goes whole where it does not (never an empty message), and a request cut again is cut
from the user's words as written, so its marker counts what is really gone."""

from __future__ import annotations

import re

import anyio
from hypothesis import given
from hypothesis import strategies as st

from neuron_context import MemoryStore, Message, Role, TokenCounter, ToolUse, default_stack

TASK = "Task: fix the CSV parser in parser.py"
LINES = 120
REQUEST = "\n".join(
    f"Requirement {i}: the function parse_{i} must handle input file data_{i}.csv correctly."
    for i in range(LINES)
)
MARKER = re.compile(r"^\[\.\.\. (\d+) lines? .*\.\.\.\]$")


def history(system: str, request: str = REQUEST) -> list[Message]:
    """A task, a read and its result, a reply and a long newest request."""
    return [
        Message.system(system),
        Message.user(TASK),
        Message.assistant("", tool_uses=[ToolUse(id="a", name="read", input={"path": "p.py"})]),
        Message.tool_result("a", "def parse(x):\n    return x\n" * 40),
        Message.assistant("Read it."),
        Message.user(request),
    ]


def compacted(messages: list[Message], budget: int, *, store: bool) -> list[Message]:
    stack = default_stack(budget, store=MemoryStore() if store else None, counter=TokenCounter())
    return anyio.run(stack.compact, messages)


def words(message: Message) -> list[str]:
    """The lines of ``message`` that are not a cut's marker."""
    return [line for line in message.text.split("\n") if line.strip() and not MARKER.match(line)]


def requests(output: list[Message]) -> list[Message]:
    return [m for m in output if m.role is Role.USER and not m.is_compaction]


class TestTaskBesideRequest:
    def test_task_whole_and_request_words_with_a_store(self) -> None:
        """80 tokens with a store: the task whole, the request's words in the rest, its
        marker counting the lines really cut (before: an empty task, the request a
        marker of '4 lines' alone, 29 tokens unused)."""
        output = compacted(history("You are a coding agent."), 80, store=True)
        task, request = requests(output)
        assert task.text == TASK
        assert words(request)
        (marker,) = [line for line in request.text.split("\n") if MARKER.match(line)]
        match = MARKER.match(marker)
        assert match is not None
        assert int(match.group(1)) >= LINES - 2
        assert TokenCounter().estimate_messages(output) >= 80 - 20

    @given(
        system=st.integers(0, 20),
        room=st.integers(50, 260),
        store=st.booleans(),
        lines=st.integers(20, 120),
    )
    def test_never_an_empty_message(self, system: int, room: int, store: bool, lines: int) -> None:
        """Whatever the budget beyond the system messages, no user message is left
        empty, the newest request says something, and a task kept is whole or says
        something."""
        messages = history(
            "You are a coding agent. " * (system + 1), "\n".join(REQUEST.split("\n")[:lines])
        )
        counter = TokenCounter()
        budget = counter.estimate_message(messages[0]) + room
        output = compacted(messages, budget, store=store)
        users = requests(output)
        assert users
        assert all(m.text.strip() for m in users)
        assert words(users[-1])
        if len(users) > 1:
            assert words(users[0])


EARLIER = "[... 119 lines (about 2,497 tokens) cut ...]"


def fragments(output: list[Message]) -> list[str]:
    """The lines of the output that are a piece of the earlier marker, not all of it."""
    return [
        line
        for message in output
        for line in message.text.split("\n")
        if len(line.strip()) >= 4 and line.strip() != EARLIER and line.strip() in EARLIER
    ]


class TestEarlierMarker:
    """A user's words holding an earlier cut's marker line are cut around that line,
    never inside it (a piece of it would read as the user's words)."""

    @given(
        after=st.integers(1, 6),
        room=st.integers(10, 120),
        store=st.booleans(),
        newest=st.booleans(),
    )
    def test_never_a_piece_of_it(self, after: int, room: int, store: bool, newest: bool) -> None:
        """Whatever the budget, with the marker at the head of the task or of the newest
        request (before: a cut inside it kept '[... 119 l' as the user's words)."""
        tail = REQUEST.split("\n")[LINES - after :]
        request = "\n".join(["", EARLIER, "e input file data_112.csv correctly.", *tail])
        base = history("You are a coding agent.", request)
        messages = (
            base if newest else [base[0], Message.user(request), *base[2:5], Message.user("Go on.")]
        )
        budget = TokenCounter().estimate_message(messages[0]) + room
        output = compacted(messages, budget, store=store)
        assert fragments(output) == []
