"""A summary the last resort cuts to its head alone closes the quote (and the code
block) the head leaves open before the cut's marker: the rest never reads as the
user's words or as code."""

from __future__ import annotations

import anyio
from hypothesis import given
from hypothesis import strategies as st

from neuron_context import Compaction, Message, Role, TokenCounter, default_stack

OPEN, CLOSE = "<user_request>", "</user_request>"
QUOTED = (
    "… with no line terminators … "
    "./eps1.9_zer0-day_b7604a922c8feef666a957933751a074.avi:         ASCII text, …"
)
REST = (
    "## Decisions\n- Assistant: Try to locate the current directory ``` pwd ```\n"
    "- Assistant: Let's check the files provided ``` file ~/ctf_files/* ```\n\n"
    "## Artifacts\n- Mentioned: ./eps1.1_ones-and-zer0es_c4368e65e1883044f3917485ec928173.mpeg"
)


def summary(lines: int, fence: str) -> str:
    body = "\n".join([QUOTED] * lines)
    quoted = f"{fence}\n{body}\n{fence}" if fence else body
    return f"## Goal and constraints\n{OPEN}\n{quoted}\n{CLOSE}\n\n{REST}"


def balanced(text: str) -> bool:
    """Whether every quote and fence ``text`` opens on a line of its own is closed."""
    lines = text.split("\n")
    fences = sum(1 for line in lines if line.strip() in ("```", "~~~"))
    return lines.count(OPEN) == lines.count(CLOSE) and fences % 2 == 0


@given(
    lines=st.integers(1, 4),
    fence=st.sampled_from(["", "```", "~~~"]),
    room=st.integers(20, 200),
)
def test_a_head_cut_closes_its_quote(lines: int, fence: str, room: int) -> None:
    """Whatever the room, a summary kept in the output has its quote and its code
    block closed (before: a cut keeping the head alone left '<user_request>' open)."""
    messages = [
        Message(role=Role.USER, content=(Compaction(content=summary(lines, fence)),)),
        Message.assistant("Looked at the files."),
        Message.user("Go on."),
    ]
    output = anyio.run(default_stack(room, counter=TokenCounter()).compact, messages)
    for message in output:
        if message.is_compaction:
            assert balanced(message.text), message.text
