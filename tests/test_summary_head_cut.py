"""A summary the last resort cuts keeps every quote (and code block) it shows closed,
whether the cut keeps its head alone, its tail alone or both: the rest never reads as
the user's words or as code; and it keeps no piece of an earlier cut's marker."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from neuron_context import Compaction, Message, Role, TokenCounter, default_stack

OPEN, CLOSE = "<user_request>", "</user_request>"
QUOTED = (
    "… with no line terminators … "
    "./eps1.9_zer0-day_b7604a922c8feef666a957933751a074.avi:         ASCII text, …"
)
MARKER = (
    "[... 120 lines (2,400 characters, about 2,494 tokens) cut, naming 5: data_0.csv · "
    "data_1.csv · parse_3 · HAT235 · YAX4DR ...]"
)
REST = (
    "## Decisions\n- Assistant: Try to locate the current directory ``` pwd ```\n"
    "- Assistant: Let's check the files provided ``` file ~/ctf_files/* ```\n\n"
    "## Artifacts\n- Mentioned: ./eps1.1_ones-and-zer0es_c4368e65e1883044f3917485ec928173.mpeg"
)


def summary(lines: int, fence: str, *, quote_last: bool) -> str:
    """A summary quoting ``lines`` lines of a request (in a ``fence`` block when given),
    before the rest of it or, with ``quote_last``, after it."""
    body = "\n".join([QUOTED] * lines)
    quoted = f"{fence}\n{body}\n{fence}" if fence else body
    quote = f"## Goal and constraints\n{OPEN}\n{quoted}\n{CLOSE}"
    return f"{REST}\n\n{quote}" if quote_last else f"{quote}\n\n{REST}"


def balanced(text: str) -> bool:
    """Whether ``text`` is not empty, and every quote and fence it opens on a line of its
    own is closed, no quote closed before it is opened (an empty summary kept in the
    output says nothing: it goes)."""
    if not text:
        return False
    depth = 0
    for line in text.split("\n"):
        depth += (line == OPEN) - (line == CLOSE)
        if depth not in (0, 1):
            return False
    fences = sum(1 for line in text.split("\n") if line.strip() in ("```", "~~~"))
    return depth == 0 and fences % 2 == 0


class TestSummaryCut:
    """The last resort's cut of a summary leaves no block open."""

    @given(
        lines=st.integers(1, 4),
        fence=st.sampled_from(["", "```", "~~~"]),
        room=st.integers(20, 200),
        quote_last=st.booleans(),
    )
    @example(lines=1, fence="", room=51, quote_last=False)
    def test_closes_its_quote(self, lines: int, fence: str, room: int, quote_last: bool) -> None:
        """Whatever the room, a summary kept in the output has its quotes and code blocks
        closed (before: a cut keeping the head alone left '<user_request>' open)."""
        messages = [
            Message(
                role=Role.USER,
                content=(Compaction(content=summary(lines, fence, quote_last=quote_last)),),
            ),
            Message.assistant("Looked at the files."),
            Message.user("Go on."),
        ]
        counter = TokenCounter()
        output = anyio.run(default_stack(room, counter=counter).compact, messages)
        for message in output:
            if message.is_compaction:
                assert balanced(message.text), message.text

    def test_a_head_alone(self) -> None:
        """At 51 tokens the summary's cut keeps a head alone that ends in its quote: the
        quote is closed before the marker, or the cut ends before it opens (the case the
        review found: the head kept '<user_request>' open to the end)."""
        messages = [
            Message(
                role=Role.USER, content=(Compaction(content=summary(1, "", quote_last=False)),)
            ),
            Message.assistant("Looked at the files."),
            Message.user("Go on."),
        ]
        output = anyio.run(default_stack(51, counter=TokenCounter()).compact, messages)
        (kept,) = [m for m in output if m.is_compaction]
        assert balanced(kept.text), kept.text

    @pytest.mark.parametrize("room", [50, 55, 144])
    def test_shorter_than_its_last_cut(self, room: int) -> None:
        """Where closing its blocks costs more than the room, each try is shorter than
        the last cut (a cut is the same for several goals in a row): the summary keeps a
        closed cut, not an empty message (on wp-edges: ``''`` at these rooms, four
        one-token tries never leaving one cut)."""
        code = "\n".join(
            f"    x_{i} = compute(value_{i}, other_{i})  # step {i}" for i in range(40)
        )
        facts = "\n".join(f"- fact {i} about thing_{i}" for i in range(30))
        quote = f"{OPEN}\nPlease fix it.\n```\n{code}\n```\nThanks.\n{CLOSE}"
        text = f"## Goal\n{quote}\n\n## Facts\n{facts}"
        messages = [
            Message(role=Role.USER, content=(Compaction(content=text),)),
            Message.assistant("Looked at the files."),
            Message.user("Go on."),
        ]
        counter = TokenCounter()
        output = anyio.run(default_stack(room, counter=counter).compact, messages)
        assert counter.estimate_messages(output) <= room
        (kept,) = [m for m in output if m.is_compaction]
        assert balanced(kept.text), kept.text
        if room == 144:
            assert "Please fix it." in kept.text

    @given(room=st.integers(20, 300))
    @example(room=80)  # kept '[... 120 lines (2,400 characters, about 2,494'
    def test_no_piece_of_a_marker(self, room: int) -> None:
        """A summary quoting a request an earlier compaction cut shows that cut's marker
        whole or not at all, whatever the room (before: a piece of it, read as the
        user's words)."""
        rows = "\n".join(f"- order_{i}=#W{i}00 total={i}.5" for i in range(30))
        text = (
            f"## Goal and constraints\n{OPEN}\nRequirement 0: parse data_0.csv.\n{MARKER}\n"
            f"parse_119 must handle data_119.csv.\n{CLOSE}\n\n## Facts\n{rows}"
        )
        messages = [
            Message(role=Role.USER, content=(Compaction(content=text),)),
            Message.assistant("Looked at the files."),
            Message.user("Go on."),
        ]
        output = anyio.run(default_stack(room, counter=TokenCounter()).compact, messages)
        for message in output:
            for line in message.text.split("\n"):
                assert not line or line == MARKER or not MARKER.startswith(line), line
                assert not line or line == MARKER or not MARKER.endswith(line), line
