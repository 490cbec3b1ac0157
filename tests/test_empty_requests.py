"""``default_stack`` never leaves a user message with an empty text: where the budget
has no room for a request's words, nor for its cut's marker, the request is its marker
alone in the shortest form that fits; where not even that fits, the budget cannot be
met (logged, or ``BudgetExceededError`` with ``strict=True``)."""

from __future__ import annotations

from typing import Literal

import anyio
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from offload_support import step_in_progress
from request_support import exchanges
from strategies import well_formed_conversations

from neuron_context import Message, Role, Text, TokenCounter, default_stack
from neuron_context.errors import BudgetExceededError, ContextOverflowError
from neuron_context.stores import MemoryStore

COUNTER = TokenCounter()
Mode = Literal["drop", "keep", "raise"]


def compact(messages: list[Message], budget: int, **options: object) -> list[Message]:
    stack = default_stack(budget, counter=COUNTER, **options)  # type: ignore[arg-type]
    return anyio.run(stack.compact, messages)


def system_cost(messages: list[Message]) -> int:
    return COUNTER.estimate_messages([m for m in messages if m.role is Role.SYSTEM])


HEADING = COUNTER.estimate_text("[Summary of earlier conversation]\n")


def cost(messages: list[Message]) -> int:
    """What ``messages`` cost as a provider receives them (summary headings included)."""
    return COUNTER.estimate_messages(messages) + HEADING * sum(m.is_compaction for m in messages)


def blank(message: Message) -> bool:
    """Whether ``message`` is a user or assistant message that holds nothing."""
    if message.role not in (Role.USER, Role.ASSISTANT) or message.is_compaction:
        return False
    return all(isinstance(b, Text) and not b.text.strip() for b in message.content)


def new_blanks(output: list[Message], messages: list[Message]) -> list[Message]:
    """The messages of ``output`` that hold nothing and are neither input messages nor
    cuts of input messages that held nothing (a ``" "`` request cut to ``""``)."""
    was_blank = {i.role for i in messages if blank(i)}
    return [
        m
        for m in output
        if blank(m) and not any(m is i for i in messages) and m.role not in was_blank
    ]


class TestSystemFillsTheBudget:
    """A policy that leaves the newest request no room for a word."""

    @pytest.mark.parametrize("store", [False, True])
    @pytest.mark.parametrize("in_progress", ["keep", "drop", "raise"])
    @pytest.mark.parametrize("extra", range(0, 40, 3))
    def test_never_an_empty_request(self, extra: int, store: bool, in_progress: Mode) -> None:
        """No empty user message, with a store or without; within the budget wherever
        the request's shortest marker (a ``…``) fits beside the system messages."""
        messages = exchanges()
        budget = system_cost(messages) + extra
        options: dict[str, object] = {"in_progress": in_progress}
        if store:
            options["store"] = MemoryStore()
        output = compact(messages, budget, **options)
        assert not new_blanks(output, messages)
        assert output[-1].role is Role.USER
        assert output[-1].text.strip()
        if extra >= COUNTER.estimate_message(Message.user("…")):
            assert cost(output) <= budget

    def test_a_reference_never_adds_to_what_is_over(self) -> None:
        """Where not even the request's marker fits, a store's reference does not come
        on top of it (the output is the one without a store)."""
        messages = exchanges()
        budget = system_cost(messages)
        assert compact(messages, budget, store=MemoryStore()) == compact(messages, budget)

    def test_strict_raises_where_nothing_fits(self) -> None:
        """With ``strict=True`` a budget the system messages fill raises."""
        messages = exchanges()
        with pytest.raises(BudgetExceededError):
            compact(messages, system_cost(messages), strict=True)


class TestWordsBeforeMarkers:
    """Where the request's cut has no room for its marker and words, its first words."""

    @pytest.mark.parametrize("extra", range(6, 18))
    def test_the_users_first_words_where_they_fit(self, extra: int) -> None:
        """From the room of one word and a ``…``, the request keeps its first words, and
        no fewer as the room grows (a marker alone says only that it was cut)."""
        messages = exchanges()
        budget = system_cost(messages) + extra
        output = compact(messages, budget, reserve=0.0)
        assert cost(output) <= budget
        request = output[-1].text
        words = messages[-1].text.split()
        kept = request.removesuffix("…").split()
        assert kept
        assert kept == words[: len(kept)]
        fewer = compact(messages, budget - 1, reserve=0.0)[-1].text.removesuffix("…").split()
        assert len(kept) >= len(fewer)

    @pytest.mark.parametrize("strict", [False, True])
    def test_a_whole_task_gives_way_where_the_request_has_no_room(self, strict: bool) -> None:
        """A short task kept whole left the request the room of an empty message: the
        task goes and the request says its first words within the budget (no floor put
        over it, no error with ``strict``)."""
        messages = [
            Message.system("You are an agent. Follow the policy exactly. " * 200),
            Message.user("the and Please."),
            Message.assistant("HAT123 mia_li_3668 and HAT123. now flight fix."),
            Message.user("to fix.\nreservation and refund card the HAT123 and."),
        ]
        for extra in range(9, 16):
            budget = system_cost(messages) + extra
            output = compact(messages, budget, reserve=0.0, in_progress="drop", strict=strict)
            assert cost(output) <= budget
            assert not new_blanks(output, messages)
            assert output[-1].text.split()[0] in {"to", "[...", "…"}


class TestProperties:
    """Over generated conversations and budgets, tiny ones included."""

    @given(
        messages=well_formed_conversations(max_turns=10),
        extra=st.integers(0, 120),
        store=st.booleans(),
        in_progress=st.sampled_from(["drop", "keep", "raise"]),
    )
    def test_no_new_empty_message(
        self, messages: list[Message], extra: int, store: bool, in_progress: Mode
    ) -> None:
        """No output message holds nothing unless the input held it; the output fits
        wherever the system messages, the newest request's shortest marker and (unless
        dropped) the step in progress fit, or the step raises with ``"raise"``."""
        systems = system_cost(messages)
        budget = max(1, systems + extra)
        options: dict[str, object] = {"in_progress": in_progress, "reserve": 0.0}
        if store:
            options["store"] = MemoryStore()
        try:
            output = compact(messages, budget, **options)
        except ContextOverflowError:
            assert in_progress == "raise"
            return
        assert not new_blanks(output, messages)
        users = [m for m in messages if m.role is Role.USER and not m.is_compaction]
        assume(users)
        least = COUNTER.estimate_message(Message(role=Role.USER, content=(Text(text="…"),)))
        fixed = (
            systems
            + least
            + sum(
                COUNTER.estimate_message(Message(role=Role.USER, content=(b,)))
                - COUNTER.estimate_message(Message.user(""))
                for b in users[-1].content
                if not isinstance(b, Text)
            )
        )
        if in_progress != "drop":
            # The step as default_stack reads it: the last calls and their results,
            # a user's newest message after them or not.
            fixed += COUNTER.estimate_messages([messages[i] for i in step_in_progress(messages)])
        if fixed + 64 <= budget:
            assert cost(output) <= budget
