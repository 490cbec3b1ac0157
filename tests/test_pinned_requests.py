"""``default_stack`` where the system messages fill the budget: the newest request kept
beside the step in progress says what it asks, at its floor, never an empty message."""

from __future__ import annotations

import anyio
import pytest
from request_support import REQUEST, SYSTEM, exchanges
from request_support import cancelling as conversation

from neuron_context import Message, Role, TokenCounter, default_stack


class TestNewestRequest:
    """The plan's pin of the newest request, where it had no room, is cut again from the
    request to its floor by the last resort."""

    @pytest.mark.parametrize("over", [200, 50, 1, 0])
    def test_never_empty_beside_a_kept_step(self, over: int) -> None:
        """With a budget at or below the system messages' cost, the step in progress is
        kept over budget and the newest request with it whole (it is under its floor),
        not as an empty user message (before: the plan pinned it to nothing and the last
        resort kept that)."""
        counter = TokenCounter()
        budget = counter.estimate_message(Message.system(SYSTEM)) - over
        output = anyio.run(default_stack(budget, counter=counter).compact, conversation())
        users = [m.text for m in output if m.role is Role.USER and not m.is_compaction]
        assert users == [REQUEST]
        assert any(m.tool_uses for m in output)


def said(text: str) -> bool:
    """Whether ``text`` holds a line that is not a cut's marker (``[... N lines ...]``)."""
    return any(line.strip() and not line.startswith("[... ") for line in text.split("\n"))


class TestBelowItsFloor:
    """Where the task has given way and the step in progress is kept, the newest request
    goes below its floor when that alone makes the output fit, still saying something."""

    @pytest.mark.parametrize("times", [3, 6, 12])
    @pytest.mark.parametrize("over", [58, 62, 67])
    def test_fits_beside_a_kept_step(self, times: int, over: int) -> None:
        """At these budgets the output fits with the step and the request's words (on
        wp-edges: 5 tokens over, the request held at its floor; with
        ``in_progress="raise"``, an error)."""
        counter = TokenCounter()
        budget = counter.estimate_message(Message.system(SYSTEM)) + over
        messages = conversation()
        messages[3] = Message.user(REQUEST * times)
        for in_progress in ("keep", "raise"):
            stack = default_stack(budget, counter=counter, in_progress=in_progress)
            output = anyio.run(stack.compact, messages)
            assert counter.estimate_messages(output) <= budget
            assert any(m.tool_uses for m in output)
            users = [m.text for m in output if m.role is Role.USER and not m.is_compaction]
            assert users
            assert all(said(text) for text in users), users


class TestTaskAndRequest:
    """Where no step is kept, the newest request goes below its floor before a task that
    would say nothing is dropped: both keep words."""

    @pytest.mark.parametrize("over", [68, 69, 75, 80])
    def test_both_keep_words(self, over: int) -> None:
        """At these budgets the task and the request are both kept, each with words (on
        wp-edges: the request at its floor left the task its marker alone, so it went),
        the task with its reservation id (its clause chosen by what it holds)."""
        counter = TokenCounter()
        budget = counter.estimate_message(Message.system(SYSTEM)) + over
        output = anyio.run(default_stack(budget, counter=counter).compact, exchanges())
        assert counter.estimate_messages(output) <= budget
        users = [m.text for m in output if m.role is Role.USER and not m.is_compaction]
        assert len(users) == 2, users
        assert all(said(text) for text in users), users
        assert "reservation is EHGLP3" in users[0], users[0]
        assert users[1].startswith("Yes, please")


class TestCutToMarkers:
    """A request holding an earlier cut's marker, cut again by the last resort, keeps
    words where they fit."""

    def test_keeps_words(self) -> None:
        """At the system's cost and 39 tokens the newest request keeps some of its words
        (on wp-edges: its marker alone, four tries by one token never leaving one cut)."""
        counter = TokenCounter()
        reference = (
            "[... 40 lines (5,000 characters, about 1,200 tokens) cut; "
            "recall: 0123456789abcdef ...]"
        )
        request = (
            f"Please fix the failing billing tests first.\n{reference}\n"
            "Then rerun the suite and report back.\n"
            + "\n".join(f"more line {i} with words" for i in range(20))
        )
        system = "You are a coding agent. " * 30
        messages = [
            Message.system(system),
            Message.user("Start with the repo layout."),
            Message.assistant("Done: src/, tests/. " * 10),
            Message.user(request),
        ]
        budget = counter.estimate_message(Message.system(system)) + 39
        output = anyio.run(default_stack(budget, counter=counter).compact, messages)
        assert counter.estimate_messages(output) <= budget
        (last,) = [m for m in output if m.role is Role.USER][-1:]
        assert said(last.text), last.text
        assert "recall: 0123456789abcdef" in last.text
