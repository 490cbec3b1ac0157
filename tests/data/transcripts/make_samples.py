"""Write the sample transcripts the command-line tests read, one per format.

Run from the repository's top folder with every extra installed::

    python tests/data/transcripts/make_samples.py

The LangChain, pydantic-ai and Agents SDK samples are written by the frameworks
themselves (``messages_to_dict``, ``ModelMessagesTypeAdapter``, ``to_input_list()`` of a
real run against a scripted model), so they are exactly what a user's dump holds. The
Claude Code and Codex samples are rows of the shapes those tools write (field by field as
in their session files), made up for a small bug-fixing session: no real user's data.
Timestamps and ids are fixed, so running this again writes the same files.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
TASK = "The test test_parse_date fails on 2024-02-29. Find out why and fix it."
SOURCE = (
    "def parse_date(text):\n    year, month, day = map(int, text.split('-'))\n"
    "    if day > 28 and month == 2:\n        raise ValueError('bad day')\n"
    "    return date(year, month, day)\n"
) * 8


def _dump(name: str, data: object) -> None:
    (HERE / name).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", "utf-8")


def _lines(name: str, rows: list[dict[str, Any]]) -> None:
    text = "".join(
        json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n" for row in rows
    )
    (HERE / name).write_text(text, "utf-8")


# -- LangChain: messages_to_dict ------------------------------------------------------


def langchain() -> None:
    from langchain_core.messages import (
        AIMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
        messages_to_dict,
    )

    messages = [
        SystemMessage("You fix bugs in small, tested steps."),
        HumanMessage(TASK, id="h1"),
        AIMessage(
            content=[
                {"type": "text", "text": "I'll read the parser first."},
                {
                    "type": "tool_use",
                    "id": "call_read",
                    "name": "read_file",
                    "input": {"path": "dates.py"},
                },
            ],
            tool_calls=[{"name": "read_file", "args": {"path": "dates.py"}, "id": "call_read"}],
            id="a1",
            response_metadata={"model_name": "claude-sonnet-4-5", "stop_reason": "tool_use"},
            usage_metadata={"input_tokens": 812, "output_tokens": 41, "total_tokens": 853},
        ),
        ToolMessage(SOURCE, tool_call_id="call_read", name="read_file", artifact={"lines": 40}),
        AIMessage(
            "The check rejects every February 29th. Running the test to confirm.",
            tool_calls=[
                {"name": "run_tests", "args": {"select": "test_parse_date"}, "id": "call_test"}
            ],
            id="a2",
        ),
        ToolMessage(
            "FAILED test_dates.py::test_parse_date - ValueError: bad day",
            tool_call_id="call_test",
            status="error",
        ),
        AIMessage("Fixed: leap days are now checked with calendar.isleap.", id="a3"),
        HumanMessage("Thanks. Also add a test for 2023-02-29.", id="h2"),
        AIMessage("Added test_parse_date_not_leap; it passes.", id="a4"),
    ]
    _dump("langchain-dump.json", messages_to_dict(messages))


# -- pydantic-ai: ModelMessagesTypeAdapter ---------------------------------------------


def _fixed(value: object, counter: Iterator[int]) -> object:
    """``value`` with timestamps and run ids made stable."""
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, item in value.items():
            if key == "timestamp":
                out[key] = f"2026-01-15T10:00:{next(counter):02d}Z"
            elif key in ("run_id", "conversation_id"):
                out[key] = f"{key}-0001"
            else:
                out[key] = _fixed(item, counter)
        return out
    if isinstance(value, list):
        return [_fixed(item, counter) for item in value]
    return value


def pydantic_ai() -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelMessagesTypeAdapter,
        ModelResponse,
        TextPart,
        ThinkingPart,
        ToolCallPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    replies = iter(
        [
            [
                ThinkingPart("The failure is about a leap day.", signature="sig-1"),
                TextPart("Reading the parser."),
                ToolCallPart("read_file", {"path": "dates.py"}, tool_call_id="call_read"),
            ],
            [ToolCallPart("run_tests", {"select": "test_parse_date"}, tool_call_id="call_test")],
            [TextPart("Fixed: leap days are now checked with calendar.isleap.")],
        ]
    )

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        parts: Any = next(replies)
        return ModelResponse(parts=parts)

    agent = Agent(FunctionModel(model), system_prompt="You fix bugs in small, tested steps.")

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file."""
        return SOURCE

    @agent.tool_plain
    def run_tests(select: str) -> dict[str, object]:
        """Run tests."""
        return {"failed": 1, "output": "ValueError: bad day"}

    result = agent.run_sync(TASK)
    dumped = json.loads(ModelMessagesTypeAdapter.dump_json(result.all_messages()))
    _dump("pydantic-ai-dump.json", _fixed(dumped, iter(range(60))))


# -- OpenAI Agents SDK: to_input_list() -------------------------------------------------


def openai_agents() -> None:
    from agents import Agent, Runner, function_tool
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
        ResponseReasoningItem,
    )
    from openai.types.responses.response_reasoning_item import Summary

    def text(message_id: str, value: str) -> ResponseOutputMessage:
        return ResponseOutputMessage(
            id=message_id,
            role="assistant",
            status="completed",
            type="message",
            content=[ResponseOutputText(type="output_text", text=value, annotations=[])],
        )

    def call(call_id: str, name: str, arguments: str) -> ResponseFunctionToolCall:
        return ResponseFunctionToolCall(
            id=f"fc_{call_id}",
            call_id=call_id,
            name=name,
            arguments=arguments,
            type="function_call",
            status="completed",
        )

    replies = iter(
        [
            [
                ResponseReasoningItem(
                    id="rs_1",
                    type="reasoning",
                    summary=[Summary(type="summary_text", text="A leap-day bug.")],
                    encrypted_content="gAAAA-opaque",
                ),
                text("msg_1", "Reading the parser."),
                call("call_read", "read_file", '{"path": "dates.py"}'),
            ],
            [call("call_test", "run_tests", '{"select": "test_parse_date"}')],
            [text("msg_3", "Fixed: leap days are now checked with calendar.isleap.")],
        ]
    )

    class Scripted(Model):
        async def get_response(self, *args: object, **kwargs: object) -> ModelResponse:
            output: Any = next(replies)
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: object, **kwargs: object) -> Any:
            raise NotImplementedError

    @function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        return SOURCE

    @function_tool
    def run_tests(select: str) -> str:
        """Run tests."""
        return "FAILED test_dates.py::test_parse_date - ValueError: bad day"

    agent = Agent(
        name="fixer",
        instructions="You fix bugs in small, tested steps.",
        model=Scripted(),
        tools=[read_file, run_tests],
    )
    result = asyncio.run(Runner.run(agent, TASK))
    _dump("agents-sdk-items.json", result.to_input_list())


# -- Claude Code: ~/.claude/projects/<project>/<session>.jsonl --------------------------

SESSION = "5b0f3f2e-9d7a-4c1e-8a52-0c6f7e1d2a90"
ENVELOPE = {
    "isSidechain": False,
    "userType": "external",
    "cwd": "/home/dev/dates",
    "sessionId": SESSION,
    "version": "2.1.39",
    "gitBranch": "main",
}


class _Session:
    """Rows of a Claude Code session, linked as Claude Code links them."""

    def __init__(self, **envelope: object) -> None:
        self.rows: list[dict[str, Any]] = []
        self.envelope = {**ENVELOPE, **envelope}
        self.count = 0

    def _uuid(self) -> str:
        self.count += 1
        return f"00000000-0000-4000-8000-{self.count:012d}"

    def _stamp(self) -> str:
        return f"2026-01-15T10:{self.count // 60:02d}:{self.count % 60:02d}.000Z"

    def row(self, parent: str | None, **fields: object) -> str:
        uuid = self._uuid()
        self.rows.append(
            {
                "parentUuid": parent,
                **self.envelope,
                **fields,
                "uuid": uuid,
                "timestamp": self._stamp(),
            }
        )
        return uuid

    def user(self, parent: str | None, content: object, **fields: object) -> str:
        return self.row(parent, type="user", message={"role": "user", "content": content}, **fields)

    def assistant(self, parent: str | None, reply: str, block: dict[str, Any]) -> str:
        message = {
            "model": "claude-opus-4-6",
            "id": reply,
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "cache_read_input_tokens": 17842, "output_tokens": 27},
        }
        return self.row(parent, type="assistant", message=message, requestId=f"req_{reply}")

    def result(self, parent: str, call: str, content: object, **extra: object) -> str:
        block = {"tool_use_id": call, "type": "tool_result", "content": content, **extra}
        return self.user(parent, [block], toolUseResult={"stdout": str(content)[:40]})

    def other(self, **fields: object) -> None:
        self.rows.append(fields)


def claude_code() -> None:
    s = _Session()
    s.other(type="summary", summary="Fix the leap-day parser bug", leafUuid="(set below)")
    s.other(
        type="file-history-snapshot",
        messageId="m1",
        snapshot={"trackedFileBackups": {}},
        isSnapshotUpdate=False,
    )
    hook = s.row(None, type="progress", data={"type": "hook_progress", "hookEvent": "SessionStart"})
    task = s.user(hook, TASK, thinkingMetadata={"maxThinkingTokens": 31999}, todos=[])
    a = s.assistant(
        task, "msg_A", {"type": "thinking", "thinking": "A leap-day bug.", "signature": "sig-A"}
    )
    a = s.assistant(a, "msg_A", {"type": "text", "text": "Reading the parser and its test."})
    read = s.assistant(
        a,
        "msg_A",
        {
            "type": "tool_use",
            "id": "toolu_read",
            "name": "Read",
            "input": {"file_path": "/home/dev/dates/dates.py"},
        },
    )
    grep = s.assistant(
        read,
        "msg_A",
        {
            "type": "tool_use",
            "id": "toolu_grep",
            "name": "Grep",
            "input": {"pattern": "parse_date"},
        },
    )
    s.row(
        read,
        type="progress",
        data={"type": "hook_progress", "hookEvent": "PreToolUse"},
        toolUseID="toolu_read",
    )
    # Parallel calls: each result links to its own call, not to the row before it.
    s.result(read, "toolu_read", SOURCE)
    last = s.result(grep, "toolu_grep", "dates.py:1:def parse_date(text):\ntest_dates.py:3")
    edit = s.assistant(
        last,
        "msg_B",
        {
            "type": "tool_use",
            "id": "toolu_edit",
            "name": "Edit",
            "input": {"old_string": "day > 28", "new_string": "x"},
        },
    )
    last = s.result(edit, "toolu_edit", "The file dates.py has been updated.")
    # A sub-agent's rows in the main file (older Claude Code): kept, not read.
    task_call = s.assistant(
        last,
        "msg_C",
        {
            "type": "tool_use",
            "id": "toolu_task",
            "name": "Task",
            "input": {"prompt": "Find other date parsers."},
        },
    )
    side = _Session(isSidechain=True)
    side.count = 100
    sub = side.user(None, "Find other date parsers.")
    side.assistant(sub, "msg_S", {"type": "text", "text": "Only dates.py parses dates."})
    s.rows.extend(side.rows)
    last = s.result(task_call, "toolu_task", [{"type": "text", "text": "Only dates.py."}])
    run = s.assistant(
        last,
        "msg_D",
        {
            "type": "tool_use",
            "id": "toolu_run",
            "name": "Bash",
            "input": {"command": "pytest -q test_dates.py"},
        },
    )
    last = s.result(run, "toolu_run", "1 passed in 0.02s", is_error=False)
    last = s.assistant(last, "msg_E", {"type": "text", "text": "Fixed; the test passes."})
    s.row(last, type="system", subtype="turn_duration", durationMs=48211, isMeta=False)
    s.other(
        type="queue-operation",
        operation="enqueue",
        timestamp="2026-01-15T10:09:00.000Z",
        sessionId=SESSION,
        content="/compact",
    )
    # Claude Code's own compaction: a boundary, then its summary as a user message.
    boundary = s.row(
        None,
        type="system",
        subtype="compact_boundary",
        content="Conversation compacted",
        logicalParentUuid=last,
        compactMetadata={"trigger": "manual", "preTokens": 16250},
    )
    last = s.user(
        boundary,
        "This session is being continued from a previous conversation. "
        "Summary: the leap-day bug in parse_date is fixed.",
        isCompactSummary=True,
        isVisibleInTranscriptOnly=True,
    )
    last = s.user(last, "Now add a test for 2023-02-29.")
    # The user rewound this request (Esc Esc) and asked again: an abandoned branch.
    s.user(last, "Actually, add tests for every month.")
    write = s.assistant(
        last,
        "msg_F",
        {
            "type": "tool_use",
            "id": "toolu_write",
            "name": "Edit",
            "input": {"old_string": "", "new_string": "def test"},
        },
    )
    done = s.result(write, "toolu_write", "The file test_dates.py has been updated.")
    # Claude Code runs a tool while the reply streams: a row of the same reply after it.
    run = s.assistant(
        write,
        "msg_F",
        {"type": "tool_use", "id": "toolu_run2", "name": "Bash", "input": {"command": "pytest -q"}},
    )
    last = s.result(run, "toolu_run2", "2 passed in 0.03s")
    last = s.assistant(last, "msg_G", {"type": "text", "text": "Added the test; both pass."})
    s.rows[0]["leafUuid"] = last
    _ = done
    _lines("claude-code-session.jsonl", s.rows)

    agent = _Session(isSidechain=True, agentId="a1b2c3d")
    prompt = agent.user(None, "Find other date parsers.")
    call = agent.assistant(
        prompt,
        "msg_X",
        {
            "type": "tool_use",
            "id": "toolu_g",
            "name": "Grep",
            "input": {"pattern": "strptime|split\\('-'\\)"},
        },
    )
    found = agent.result(call, "toolu_g", "dates.py:2")
    agent.assistant(found, "msg_Y", {"type": "text", "text": "Only dates.py parses dates."})
    _lines("claude-code-agent-a1b2c3d.jsonl", agent.rows)


# -- Codex CLI: ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl -------------------


def codex() -> None:
    stamps = (f"2026-01-15T10:00:{n:02d}.000Z" for n in range(60))
    rows: list[dict[str, Any]] = []

    def line(kind: str, payload: dict[str, Any]) -> None:
        rows.append({"timestamp": next(stamps), "type": kind, "payload": payload})

    def message(role: str, text: str) -> None:
        part = "output_text" if role == "assistant" else "input_text"
        line(
            "response_item",
            {"type": "message", "role": role, "content": [{"type": part, "text": text}]},
        )

    line(
        "session_meta",
        {
            "id": "0199a7c2-5e1b-7f20-9c3d-4b8e2f6a1d00",
            "timestamp": "2026-01-15T10:00:00.000Z",
            "cwd": "/home/dev/dates",
            "originator": "codex_cli_rs",
            "cli_version": "0.58.0",
            "source": "cli",
            "model_provider": "openai",
        },
    )
    message("developer", "<permissions instructions>Workspace write.</permissions instructions>")
    message("user", "<environment_context>\n  <cwd>/home/dev/dates</cwd>\n</environment_context>")
    line(
        "turn_context",
        {
            "cwd": "/home/dev/dates",
            "approval_policy": "on-request",
            "model": "gpt-5-codex",
            "summary": "auto",
        },
    )
    message("user", TASK)
    line("event_msg", {"type": "user_message", "message": TASK, "images": []})
    line(
        "response_item",
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "**Reading the parser**"}],
            "content": None,
            "encrypted_content": "gAAAA-opaque",
        },
    )
    line(
        "response_item",
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command":["bash","-lc","cat dates.py"]}',
            "call_id": "call_cat",
        },
    )
    line(
        "response_item",
        {
            "type": "function_call_output",
            "call_id": "call_cat",
            "output": json.dumps({"output": SOURCE, "metadata": {"exit_code": 0}}),
        },
    )
    line(
        "response_item",
        {
            "type": "custom_tool_call",
            "status": "completed",
            "call_id": "call_patch",
            "name": "apply_patch",
            "input": "*** Begin Patch\n*** Update File: dates.py\n-x\n+y\n*** End Patch\n",
        },
    )
    line(
        "response_item",
        {
            "type": "custom_tool_call_output",
            "call_id": "call_patch",
            "output": "Success. Updated the following files:\nM dates.py\n",
        },
    )
    line(
        "response_item",
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command":["bash","-lc","pytest -q"]}',
            "call_id": "call_test",
        },
    )
    log = "".join(f"test_dates.py::test_case_{n} PASSED\n" for n in range(12)) + "12 passed"
    line(
        "response_item",
        {
            "type": "function_call_output",
            "call_id": "call_test",
            "output": {"content": log, "success": True},
        },
    )
    line("event_msg", {"type": "token_count", "info": None})
    message("assistant", "Fixed: leap days are now checked with calendar.isleap.")
    line("event_msg", {"type": "agent_message", "message": "Fixed."})
    _lines("codex-rollout.jsonl", rows)


if __name__ == "__main__":
    langchain()
    pydantic_ai()
    openai_agents()
    claude_code()
    codex()
