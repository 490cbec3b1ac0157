"""A user's request that already holds an earlier cut's marker (the agent loop: each
compaction sees the previous output), cut again by ``default_stack``'s last resort: the
new marker gives way in steps (its counts short, then without the earlier keys, then as
a plain cut counts) before the request's words or the budget would, so the request is
never left empty where a marker fits, and it keeps words where such a cut fits."""

from __future__ import annotations

import json

import anyio
import pytest

from neuron_context import Message, Role, TokenCounter, ToolUse, default_stack
from neuron_context.stores import MemoryStore

COUNTER = TokenCounter()
KEYED = "[... 400 lines (4,693 characters, about 1,162 tokens) cut; recall: 0123456789abcdef ...]"


def said(text: str) -> bool:
    """Whether ``text`` holds a line that is not a cut's marker (``[... N lines ...]``)."""
    return any(line.strip() and not line.startswith("[... ") for line in text.split("\n"))


def compact(messages: list[Message], budget: int) -> list[Message]:
    return anyio.run(default_stack(budget, counter=COUNTER).compact, messages)


def keyed_request() -> tuple[Message, str]:
    """A short system prompt and a long request whose tail is a keyed marker."""
    request = (
        "order flight user_id card business flight economy\n"
        + "\n".join(f"line {i} of the request text" for i in range(40))
        + f"\n{KEYED}\nplease finish"
    )
    return Message.system("You are an agent."), request


class TestNeverEmpty:
    @pytest.mark.parametrize("extra", range(15, 23))
    def test_a_marker_or_words(self, extra: int) -> None:
        """A short request around a keyed marker, at 15-22 tokens over the system's cost,
        keeps a marker or its words (before: an empty user message, the keyed marker
        costing more than the room)."""
        system = Message.system("You are an agent. " + "rules " * 40)
        messages = [system, Message.user(f"please keep going\n{KEYED}\nand finish")]
        budget = COUNTER.estimate_message(system) + extra
        output = compact(messages, budget)
        assert COUNTER.estimate_messages(output) <= budget
        (request,) = [m for m in output if m.role is Role.USER]
        assert request.text.strip()
        if extra >= 21:  # a plain cut keeps words here
            assert said(request.text), request.text


class TestKeepsWords:
    @pytest.mark.parametrize("extra", [16, 20, 25, 26, 38])
    def test_beside_a_keyed_marker(self, extra: int) -> None:
        """A long request whose tail is a keyed marker keeps a marker at 16-20 tokens over
        the system's cost and words at 25 and more (before: an empty message at 16-20,
        the keyed marker alone at 25-26)."""
        system, request = keyed_request()
        budget = COUNTER.estimate_message(system) + extra
        output = compact([system, Message.user(request)], budget)
        assert COUNTER.estimate_messages(output) <= budget
        (cut,) = [m for m in output if m.role is Role.USER]
        assert cut.text.strip()
        if extra >= 25:
            assert said(cut.text), cut.text

    @pytest.mark.parametrize("extra", [44, 45, 46])
    def test_with_a_store_the_regrow_keeps_words(self, extra: int) -> None:
        """With a store, the room a cut leaves goes back to the request only as a cut
        that keeps no fewer of its words (before: at +45 the request, cut to ``[...
        441 lines ...]\nplease finish``, grew back to its keyed marker alone)."""
        system, request = keyed_request()
        budget = COUNTER.estimate_message(system) + extra
        stack = default_stack(budget, counter=COUNTER, store=MemoryStore())
        output = anyio.run(stack.compact, [system, Message.user(request)])
        assert COUNTER.estimate_messages(output) <= budget
        cut = [m for m in output if m.role is Role.USER and not m.is_compaction]
        assert any(said(m.text) for m in cut), [m.text for m in cut]


class TestBesideAKeptStep:
    @pytest.mark.parametrize("extra", [88, 94, 100])
    def test_the_only_request_fits(self, extra: int) -> None:
        """The only request (the task) beside a kept step goes below its floor where
        that alone makes the output fit, keeping words (before: held at its floor, the
        output a few tokens over budget)."""
        request = (
            "0. src/app.py delta refund refund delta never never\n"
            "1. refund order user_id destination delta destination beta payment the alpha "
            "update the user_id\n[... 40 lines (about 757 tokens) cut ...]\n"
            "40. price item business reservation test file please bug the"
        )
        rows = [{"id": i, "price": 100 + i, "status": "available"} for i in range(200)]
        system = Message.system("You are an agent. " + "rule " * 60)
        messages = [
            system,
            Message.user(request),
            Message.assistant(
                "looking", tool_uses=(ToolUse(id="c1", name="search", input={"q": "x"}),)
            ),
            Message.tool_result("c1", json.dumps(rows)),
        ]
        budget = COUNTER.estimate_message(system) + extra
        output = compact(messages, budget)
        assert COUNTER.estimate_messages(output) <= budget
        assert any(m.tool_uses for m in output)
        (cut,) = [m for m in output if m.role is Role.USER]
        assert said(cut.text), cut.text
