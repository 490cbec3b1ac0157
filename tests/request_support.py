"""The synthetic conversations the last resort's tests share: an airline policy that
nearly fills the budget, a task holding ids, and the user's answer, with or without the
call it led to."""

from __future__ import annotations

import json

from neuron_context import Message, ToolUse

SYSTEM = "You are an airline agent. Follow the policy to the letter in every case. " * 40
CLAUSE = "My reservation is EHGLP3 and user id mia_li_3668."
TASK = f"Hi! I'm hoping to cancel a flight and get a refund. {CLAUSE} " * 4
SAID = "Yes, please, as I'm sure I purchased insurance for this flight. Thank you! "
ANSWER = SAID * 4


def exchanges(task: str = TASK, answer: str = ANSWER, *, step: bool = False) -> list[Message]:
    """A policy, a long task, two exchanges and a long newest request (and, with
    ``step``, the call it led to and its result)."""
    messages = [
        Message.system(SYSTEM),
        Message.user(task),
        Message.assistant("Sure, which reservation? I need its id and your user id please. " * 5),
        Message.user("ok"),
        Message.assistant("Let me check the policy on that. " * 8),
        Message.user(answer),
    ]
    if step:
        flights = [{"flight_number": f"HAT{100 + i}", "price": 120 + i} for i in range(12)]
        messages += [
            Message.assistant(
                "",
                tool_uses=[ToolUse(id="c9", name="get_reservation", input={"id": "EHGLP3"})],
            ),
            Message.tool_result("c9", json.dumps({"id": "EHGLP3", "flights": flights})),
        ]
    return messages


REQUEST = "Yes, please, as I'm sure I purchased insurance for this flight. Thank you!"


def cancelling() -> list[Message]:
    """A policy, a task, a question, the user's answer and the call it led to."""
    return [
        Message.system(SYSTEM),
        Message.user("Hi! I'm hoping to cancel a flight and get a refund."),
        Message.assistant("Sure, which reservation? I need its id and your user id please."),
        Message.user(REQUEST),
        Message.assistant(
            "",
            tool_uses=[
                ToolUse(id="c1", name="cancel_reservation", input={"reservation_id": "EHGLP3"})
            ],
        ),
        Message.tool_result("c1", '{"status": "cancelled"}'),
    ]
