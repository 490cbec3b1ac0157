"""Thinking where a compaction must cut a message: a signed block is kept whole or left
out, never cut; the thinking beside the calls in progress is kept; an answered
proposal's thinking goes before its words are cut."""

from __future__ import annotations

import anyio
from hypothesis import given
from hypothesis import strategies as st
from strategies import well_formed_conversations

from neuron_context import (
    Message,
    RedactedThinking,
    Role,
    Text,
    Thinking,
    TokenCounter,
    ToolUse,
    default_stack,
)

COUNTER = TokenCounter()
PROPOSAL = (
    "I can move reservation YAX4DR to HAT235 on 2024-05-18 and HAT298 on 2024-05-19, "
    "paid with credit_card_4421. Shall I proceed?"
)


def compact(messages: list[Message], budget: int) -> list[Message]:
    return anyio.run(default_stack(budget, counter=COUNTER).compact, messages)


def thinking_of(message: Message) -> list[Thinking | RedactedThinking]:
    return [b for b in message.content if isinstance(b, Thinking | RedactedThinking)]


def history(proposal: Message) -> list[Message]:
    """A lookup, then ``proposal``, then the user's answer to it."""
    details = '{"reservation_id": "YAX4DR", "flights": ["HAT235"], "payment": "credit_card_4421"}'
    return [
        Message.system("You are an airline agent."),
        Message.user("Change reservation YAX4DR for user mia_li_3668."),
        Message.assistant(
            tool_uses=[ToolUse(id="c1", name="get_reservation", input={"id": "YAX4DR"})]
        ),
        Message.tool_result("c1", details * 4),
        proposal,
        Message.user("Yes, please proceed."),
    ]


class TestAnsweredProposal:
    """The assistant's words the newest request answers, beside a long thinking block."""

    THINKING = "Let me weigh every option against the policy once more. " * 120

    def test_thinking_goes_before_the_words(self) -> None:
        """Where the proposal cannot be kept whole with its thinking, the thinking goes
        whole and the proposal's words stay as they are."""
        for block in (
            Thinking(thinking=self.THINKING, signature="sig"),
            Thinking(thinking=self.THINKING),
        ):
            proposal = Message(role=Role.ASSISTANT, content=(block, Text(text=PROPOSAL)))
            messages = history(proposal)
            output = compact(messages, 600)
            assert COUNTER.estimate_messages(output) <= 600
            kept = [m for m in output if m.role is Role.ASSISTANT and m.text == PROPOSAL]
            assert len(kept) == 1
            assert thinking_of(kept[0]) == []
            assert output[-1] == messages[-1]

    def test_redacted_thinking_goes_whole(self) -> None:
        """Redacted thinking goes whole the same way."""
        block = RedactedThinking(data="EqQBCgIYAhIM" * 400)
        proposal = Message(role=Role.ASSISTANT, content=(block, Text(text=PROPOSAL)))
        output = compact(history(proposal), 600)
        assert any(m.role is Role.ASSISTANT and m.text == PROPOSAL for m in output)


class TestStepInProgress:
    """The thinking beside the calls in progress is kept whole."""

    def test_kept_whole_beside_its_calls(self) -> None:
        """A step cut to fit keeps its assistant message's signed thinking as it was."""
        thinking = Thinking(thinking="I should read the whole log first. " * 30, signature="s")
        call = Message(
            role=Role.ASSISTANT,
            content=(thinking, ToolUse(id="c9", name="read_log", input={"path": "app.log"})),
        )
        messages = [
            Message.system("You are a coding agent."),
            Message.user("Find why the service crashed."),
            call,
            Message.tool_result("c9", "\n".join(f"line {i}: ok" for i in range(600))),
        ]
        output = compact(messages, 700)
        (kept,) = [m for m in output if m.tool_uses]
        assert thinking_of(kept) == [thinking]


@given(
    messages=well_formed_conversations(max_turns=8, summaries=False),
    share=st.floats(min_value=0.05, max_value=0.9),
)
def test_thinking_is_never_cut(messages: list[Message], share: float) -> None:
    """Every thinking block of the output is one of the input's, whole; an assistant
    message with calls keeps its thinking."""
    budget = max(1, int(COUNTER.estimate_messages(messages) * share))
    output = compact(messages, budget)
    given_blocks = [b for m in messages for b in thinking_of(m)]
    assert all(b in given_blocks for m in output for b in thinking_of(m))
    for message in output:
        if message.tool_uses:
            sources = [m for m in messages if m.tool_uses == message.tool_uses]
            assert any(thinking_of(m) == thinking_of(message) for m in sources)
