"""``default_stack`` with a store where the system messages fill most of the budget: the
room kept for the index never takes the only request's words."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuron_context import MemoryStore, Message, Role, TokenCounter, ToolUse, default_stack

SYSTEM = "You are a helpful airline agent. Follow the policy strictly. "
REQUEST = (
    "Please change my reservation YAX4DR to flight HAT235 on 2024-05-18 and pay with "
    "credit_card_4421. "
)
REPLY = "Let me look that up for you, one moment please while I check everything. "


def conversation(system: int, request: int, reply: int) -> list[Message]:
    """The system prompt, one request (the task and the newest request alike) and a
    reply, each its piece repeated so many times."""
    return [
        Message.system(SYSTEM * system),
        Message.user(REQUEST * request),
        Message.assistant(REPLY * reply),
    ]


def compacted(system: int, request: int, reply: int, room: int) -> tuple[list[Message], int]:
    """One request (the task and the newest request alike) and a reply, compacted with a
    store to the system prompt's cost plus ``room``: the output and the budget."""
    messages = conversation(system, request, reply)
    counter = default_stack(1_000).counter
    budget = counter.estimate_message(messages[0]) + room
    stack = default_stack(budget, store=MemoryStore())
    return anyio.run(stack.compact, messages), budget


def words_of_request(output: list[Message]) -> list[str]:
    """The lines of the output's request that are the user's words (not a cut's marker)."""
    (request,) = [m for m in output if m.role is Role.USER and not m.is_compaction]
    return [line for line in request.text.split("\n") if line.strip() and "cut" not in line]


class TestTheOnlyRequest:
    """The index's room leaves the only request its words."""

    def test_keeps_its_words_beside_the_index(self) -> None:
        """Where the system messages take about a third of the budget, the request keeps
        its first words and the output still shows a key to what was offloaded."""
        for room in range(110, 230, 10):
            output, budget = compacted(3, 4, 3, room)
            counter = default_stack(budget).counter
            assert counter.estimate_messages(output) <= budget
            assert words_of_request(output), room
            # A compaction that would cost more than the input keeps the input whole.
            whole = [m.text for m in output] == [m.text for m in conversation(3, 4, 3)]
            assert whole or any(m.is_compaction and "recall" in m.text for m in output)

    @given(
        system=st.integers(1, 8),
        request=st.integers(2, 12),
        reply=st.integers(1, 4),
        room=st.integers(140, 300),
    )
    def test_never_only_a_marker(self, system: int, request: int, reply: int, room: int) -> None:
        """Whatever the system prompt and the request cost, with 140 tokens or more beyond
        the system messages the request is never cut to its marker alone."""
        output, budget = compacted(system, request, reply, room)
        assert default_stack(budget).counter.estimate_messages(output) <= budget
        assert words_of_request(output)


@pytest.mark.parametrize("store", [False, True])
@pytest.mark.parametrize("budget", range(40, 140, 3))
def test_a_task_cut_to_no_words_goes_whole(budget: int, store: bool) -> None:
    """A task the last resort would cut to none of its words (an empty message, or its
    marker alone) goes whole, its room to the newest request: no message of the output
    stands for the task without saying anything of it."""
    rows = "\n".join(
        f"Requirement {i}: parse_{i} must read data_{i}.csv correctly." for i in range(120)
    )
    task = "Task: fix the CSV parser in parser.py"
    messages = [
        Message.system("You are a coding agent."),
        Message.user(task),
        Message.assistant("", tool_uses=[ToolUse(id="a", name="read", input={"path": "p.py"})]),
        Message.tool_result("a", "def parse(x):\n    return x\n" * 40),
        Message.assistant("Read it."),
        Message.user(rows),
    ]
    counter = TokenCounter()
    stack = default_stack(budget, counter=counter, store=MemoryStore() if store else None)
    output = anyio.run(stack.compact, messages)
    words = [m.text for m in output if m.role is Role.USER and not m.is_compaction]
    assert all(text.strip() for text in words[:-1]), words
    assert task in words or not any(text.startswith("Task") for text in words)
