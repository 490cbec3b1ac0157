"""The plan is state: the newest plan or todo call survives every compaction verbatim,
and the summary says what is done, in progress and next."""

from __future__ import annotations

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neuron_context import (
    CompletionRequest,
    ExtractiveSummarizer,
    Message,
    TokenizerCounter,
    ToolUse,
    default_stack,
)

COUNTER = TokenizerCounter.from_encoding("o200k_base")


def todos(version: int) -> list[dict[str, str]]:
    """A todo list at ``version``: the items before it done, that one in progress."""
    steps = ["Read the parser", "Port the tokenizer", "Write the tests", "Update the docs"]
    return [
        {
            "content": step,
            "status": "completed" if i < version else "in_progress" if i == version else "pending",
        }
        for i, step in enumerate(steps)
    ]


def session(turns: int, *, plan_every: int = 5) -> list[Message]:
    """An agent at work that rewrites its todo list every ``plan_every`` turns."""
    messages = [Message.system("You are a coding agent."), Message.user("Port the parser to Rust")]
    for turn in range(turns):
        if turn % plan_every == 0:
            use = ToolUse(
                id=f"t{turn}", name="write_todos", input={"todos": todos(turn // plan_every)}
            )
            messages += [Message.assistant(tool_uses=[use]), Message.tool_result(use.id, "ok")]
        use = ToolUse(id=f"c{turn}", name="read_file", input={"path": f"src/m{turn}.rs"})
        messages += [
            Message.assistant(tool_uses=[use]),
            Message.tool_result(use.id, f"fn f{turn}() -> u32 {{ {turn} }}\n" * 80),
        ]
    return messages


def newest_plan_lines(messages: list[Message]) -> list[str]:
    """The lines the newest write_todos call's plan must show, grouped by status."""
    for message in reversed(messages):
        for use in message.tool_uses:
            if use.name == "write_todos":
                items = use.input["todos"]
                assert isinstance(items, list)
                return [f"- [{item['status']}] {item['content']}" for item in items]
    raise AssertionError


def text_of(messages: list[Message]) -> str:
    return "\n".join(m.text for m in messages) + "\n".join(
        str(u.input) for m in messages for u in m.tool_uses
    )


class TestSummary:
    def test_newest_plan_verbatim_with_its_state(self) -> None:
        """The summary holds the newest plan in its <plan> block: done, in progress,
        next; an older version of the plan is not there."""
        messages = session(12)
        request = CompletionRequest(messages[1:], max_tokens=600)
        text = ExtractiveSummarizer(counter=COUNTER).summarize(request)
        start, end = text.index("<plan>\n"), text.index("\n</plan>")
        block = text[start:end]
        assert "Latest write_todos:" in block
        assert "Done:\n- [completed] Read the parser\n- [completed] Port the tokenizer" in block
        assert "In progress:\n- [in_progress] Write the tests" in block
        assert "Next:\n- [pending] Update the docs" in block
        assert "[in_progress] Port the tokenizer" not in text  # the older version is gone


class TestDefaultStack:
    @pytest.mark.anyio
    async def test_plan_survives_every_compaction(self) -> None:
        """A loop compacting before every call: the newest plan is in every request,
        each of its items with its status, however many compactions came before."""
        stack = default_stack(2_500)
        history: list[Message] = []
        full = session(30, plan_every=4)
        compactions = 0
        for message in full:
            history.append(message)
            if message.is_tool and stack.should_compact(history, stack.token_estimate(history)):
                history = await stack.compact(history)
                compactions += 1
                sent = text_of(history)
                for line in newest_plan_lines(full[: full.index(message) + 1]):
                    status, content = line[3:].split("] ", 1)
                    as_called = f"'content': '{content}', 'status': '{status}'"
                    assert line in sent or as_called in sent  # summarized, or kept as called
        assert compactions >= 5

    @settings(max_examples=20, deadline=None)
    @given(turns=st.integers(6, 30), budget=st.integers(900, 4_000))
    def test_plan_block_kept_whole_in_the_summary(self, turns: int, budget: int) -> None:
        """Whatever the budget, a summary that holds a plan holds it whole (the block is
        never cut in the middle)."""
        output = anyio.run(default_stack(budget).compact, session(turns))
        for message in output:
            if message.is_compaction and "<plan>" in message.text:
                assert "\n</plan>" in message.text
