"""compact writes a file back in its own format without losing what it did not change.

An unchanged conversation comes back byte for byte; a compacted one keeps every field the
compaction did not change — ``cache_control`` breakpoints above all — and reads back as
exactly the conversation the stack returned.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_run import run
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import well_formed_conversations

from neuron_context import ConfigurationError, Message
from neuron_context.data import load_record
from neuron_context.formats import (
    from_anthropic,
    from_dict,
    from_openai,
    to_anthropic,
    to_dict,
    to_openai,
)

HUGE = "1000000"
SPECS = (
    "default",
    "clear-tools:keep=1",
    "clear-tools:keep=0,window:4",
    "strip-tools",
    "summarize:keep=2",
    "window:3,start-on-user=true",
)
EPHEMERAL = {"type": "ephemeral"}


def _anthropic_request() -> dict[str, Any]:
    """A request as an application sends it: cache breakpoints on the system block and on
    a tool result, string content, fields the library does not model."""
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": [{"type": "text", "text": "You are careful.", "cache_control": EPHEMERAL}],
        "messages": [
            {"role": "user", "content": "Read a.py and b.py."},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading a.py."},
                    {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"p": "a"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": "x = 1\n" * 300,
                        "cache_control": EPHEMERAL,
                    }
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"p": "b"}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_2",
                        "content": [{"type": "text", "text": "y = 2\n" * 300, "citations": None}],
                        "is_error": False,
                    },
                    {"type": "text", "text": "Then stop.", "cache_control": EPHEMERAL},
                ],
            },
            {"role": "assistant", "content": "They set x and y."},
        ],
    }


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


class TestAnthropic:
    """The review's case: a request with cache breakpoints and string content."""

    def test_unchanged_request_is_written_byte_for_byte(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Nothing changed: the output file is the input file."""
        source = _write(tmp_path / "in.json", json.dumps(_anthropic_request(), indent=2))
        out = tmp_path / "out.json"
        result = run(capsys, monkeypatch, "compact", source, "--max-tokens", HUGE, "-o", out)
        assert result.code == 0, result.err
        assert "nothing changed" in result.out
        assert out.read_bytes() == source.read_bytes()

    def test_cleared_results_keep_their_breakpoints(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Clearing rewrites only the results' content: cache_control, citations, the
        is_error flag, the system blocks and every other turn stay as they were."""
        request = _anthropic_request()
        source = _write(tmp_path / "in.json", json.dumps(request))
        out = tmp_path / "out.json"
        result = run(
            capsys, monkeypatch, "compact", source, "--max-tokens", "300",
            "--strategy", "clear-tools:keep=0", "-o", out,
        )  # fmt: skip
        assert result.code == 0, result.err
        written = json.loads(out.read_text(encoding="utf-8"))
        assert {k: v for k, v in written.items() if k != "messages"} == {
            k: v for k, v in request.items() if k != "messages"
        }
        before, after = request["messages"], written["messages"]
        assert [after[i] for i in (0, 1, 3, 5)] == [before[i] for i in (0, 1, 3, 5)]
        assert after[2]["content"][0] == {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "content": "[tool result cleared]",
            "cache_control": EPHEMERAL,
        }
        assert after[4]["content"] == [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "content": [{"type": "text", "text": "[tool result cleared]", "citations": None}],
                "is_error": False,
            },
            {"type": "text", "text": "Then stop.", "cache_control": EPHEMERAL},
        ]

    def test_compacted_request_keeps_system_blocks_and_breakpoints(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The default stack at a 60% target drops the exchanges: the system block list keeps its
        breakpoint, and the text that shared a turn with a dropped result keeps its own."""
        request = _anthropic_request()
        source = _write(tmp_path / "in.json", json.dumps(request))
        out = tmp_path / "out.json"
        result = run(
            capsys,
            monkeypatch,
            "compact",
            source,
            "--max-tokens",
            "150",
            "-o",
            out,
            "--strategy",
            "default:target=0.6",
        )
        assert result.code == 0, result.err
        written = json.loads(out.read_text(encoding="utf-8"))
        assert written["system"] == request["system"]
        assert written["messages"] == [
            request["messages"][0],
            {
                "role": "user",
                "content": [{"type": "text", "text": "Then stop.", "cache_control": EPHEMERAL}],
            },
            request["messages"][-1],
        ]


class TestOpenAI:
    """Keys Chat Completions readers ignore stay on the messages they belong to."""

    def test_cleared_tool_message_keeps_its_name(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A cleared result keeps its tool message's name; untouched messages stay whole."""
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": "Read a.py.", "name": "alice"},
            {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"p": "a"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "name": "read", "content": "x\n" * 900},
            {"role": "assistant", "content": "Done.", "annotations": []},
        ]
        source = _write(tmp_path / "in.json", json.dumps({"messages": messages, "n": 1}))
        out = tmp_path / "out.json"
        result = run(
            capsys, monkeypatch, "compact", source, "--max-tokens", "60",
            "--strategy", "clear-tools:keep=0", "-o", out,
        )  # fmt: skip
        assert result.code == 0, result.err
        written = json.loads(out.read_text(encoding="utf-8"))
        assert written["n"] == 1
        assert written["messages"][:2] == messages[:2]
        assert written["messages"][3] == messages[3]
        assert written["messages"][2] == {**messages[2], "content": "[tool result cleared]"}


class TestAgentsItems:
    """An Agents SDK items file is written as exactly what was compacted."""

    def test_a_truncated_reply_is_written_once(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A cut assistant message holds the cut text alone (not the original beside it),
        keeps its id and status, and the written file counts what the report says."""
        part = {"type": "output_text", "text": "The file says many things. " * 200}
        items: list[dict[str, Any]] = [
            {"role": "user", "content": "Explain it."},
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "h"}]},
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{**part, "annotations": [], "logprobs": []}],
            },
            {"role": "user", "content": "And now?"},
        ]
        source = _write(tmp_path / "in.json", json.dumps(items))
        out = tmp_path / "out.json"
        result = run(
            capsys, monkeypatch, "compact", source, "--max-tokens", "300", "--json", "-o", out
        )
        assert result.code == 0, result.err
        after = json.loads(result.out)["diff"]["tokens_after"]
        written = json.loads(out.read_text(encoding="utf-8"))
        # The reply called no tools: its reasoning goes whole before its words are cut.
        assert [item.get("type") for item in written] == [None, "message", None]
        (content,) = written[1]["content"]
        assert written[1]["id"] == "msg_1"
        assert written[1]["status"] == "completed"
        assert content["logprobs"] == []
        assert len(content["text"]) < len(part["text"])
        counted = run(capsys, monkeypatch, "count", out, "--tokenizer", "o200k_base", "--json")
        assert counted.code == 0, counted.err
        report = json.loads(counted.out)
        assert report["total"][report["counters"].index("o200k_base")] == after


def _openai_object(messages: list[Message]) -> str:
    return json.dumps({"messages": to_openai(messages), "source": "test"})


def _openai_lines(messages: list[Message]) -> str:
    return "".join(json.dumps(m) + "\n" for m in to_openai(messages))


def _anthropic(messages: list[Message]) -> str:
    system, turns = to_anthropic(messages)
    return json.dumps({"system": system, "messages": turns, "model": "m"}, indent=2)


def _read_openai_object(text: str) -> list[Message]:
    return from_openai(json.loads(text)["messages"])


def _read_openai_lines(text: str) -> list[Message]:
    return from_openai([json.loads(line) for line in text.splitlines() if line.strip()])


def _read_anthropic(text: str) -> list[Message]:
    data = json.loads(text)
    return from_anthropic(data["messages"], system=data["system"])


FORMATS: dict[str, tuple[str, Callable[[list[Message]], str], Callable[[str], list[Message]]]] = {
    "openai": (".json", _openai_object, _read_openai_object),
    "openai-lines": (".jsonl", _openai_lines, _read_openai_lines),
    "anthropic": (".json", _anthropic, _read_anthropic),
}


class TestEveryFormat:
    """Property: for each format, any conversation, any stack, any budget."""

    @settings(
        deadline=None,
        max_examples=25,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        messages=well_formed_conversations(max_turns=6, running=False),
        spec=st.sampled_from(SPECS),
        budget=st.integers(20, 3000),
        name=st.sampled_from(sorted(FORMATS)),
    )
    def test_written_file_reads_back_as_the_compaction(
        self,
        *,
        messages: list[Message],
        spec: str,
        budget: int,
        name: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Unchanged, the file comes back byte for byte; compacted, it reads back as the
        same conversation that the stack writes in our own format (as far as the format
        can hold it: Anthropic turns have no empty text)."""
        suffix, render, read = FORMATS[name]
        try:
            text = render(messages)
        except ConfigurationError:
            assume(False)  # a conversation the format cannot hold (an image without type)
        assume(text.strip())  # an empty JSONL file is refused as empty
        source = _write(tmp_path / f"in{suffix}", text)
        as_read = read(text)
        native = _write(tmp_path / "in.nc.json", json.dumps(to_dict(as_read)))
        out, native_out = tmp_path / f"out{suffix}", tmp_path / "out.nc.json"
        failed = []
        for path, target in ((source, out), (native, native_out)):
            target.unlink(missing_ok=True)  # tmp_path is shared by the examples
            result = run(
                capsys, monkeypatch, "compact", path, "--max-tokens", str(budget),
                "--strategy", spec, "-o", target, "--json",
            )  # fmt: skip
            assert result.code in (0, 1), result.err
            failed.append(not target.exists())
        if any(failed):  # the stack failed (a summary with no room is an error): no file
            assert all(failed)
            return
        compacted = from_dict(json.loads(native_out.read_text(encoding="utf-8")))
        written = read(out.read_text(encoding="utf-8"))
        if written != compacted:  # only what the format cannot hold (an empty text) differs
            assert read(render(written)) == read(render(compacted))
        if compacted == as_read:
            assert out.read_bytes() == source.read_bytes()


_SEVEN = {
    "agents-sdk-items.json": "openai-agents",
    "claude-code-session.jsonl": "claude-code",
    "codex-rollout.jsonl": "codex",
    "langchain-dump.json": "langchain",
    "pydantic-ai-dump.json": "pydantic-ai",
    "openai.json": "openai",
    "anthropic.json": "anthropic",
}


def _seven_formats(folder: Path) -> dict[str, Path]:
    """A transcript in each of the seven formats: the framework samples, and the bundled
    demo transcript as a Chat Completions and as a Messages API file."""
    samples = Path(__file__).parent / "data" / "transcripts"
    files = {name: samples / name for name in _SEVEN if (samples / name).exists()}
    messages = from_openai(load_record("sweagent-pydicom__pydicom-1458")["messages"])
    system, turns = to_anthropic(messages)
    files["openai.json"] = folder / "openai.json"
    files["openai.json"].write_text(json.dumps({"messages": to_openai(messages)}), "utf-8")
    files["anthropic.json"] = folder / "anthropic.json"
    files["anthropic.json"].write_text(json.dumps({"system": system, "messages": turns}), "utf-8")
    return files


class TestWrittenIsWhatWasCompacted:
    """The file compact writes holds exactly what the report says: counting it gives the
    report's figure, in each of the seven formats."""

    @pytest.mark.parametrize("name", sorted(_SEVEN))
    @pytest.mark.parametrize("fraction", ["0.1", "0.25"])
    def test_count_of_the_output_is_the_report_s(
        self,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path,
        name: str,
        fraction: str,
    ) -> None:
        """compact at a tight budget, then count the written file: the same tokens (the
        messages plus the tool definitions) and the same number of messages."""
        source = _seven_formats(tmp_path)[name]
        target = tmp_path / f"out{''.join(source.suffixes)}"
        result = run(
            capsys, monkeypatch, "compact", source, "--fraction", fraction, "-o", target, "--json"
        )
        assert result.code == 0, result.err
        report = result.json()
        diff, tools = report["diff"], report["tool_definitions"]
        assert isinstance(diff, dict)
        assert isinstance(tools, dict)
        assert diff["tokens_after"] < diff["tokens_before"]  # it did compact
        counted = run(capsys, monkeypatch, "count", target, "--json", "--format", _SEVEN[name])
        assert counted.code == 0, counted.err
        data = counted.json()
        assert data["counters"] == [report["counter"], "heuristic"]
        assert data["total"][0] == diff["tokens_after"] + tools["tokens"]  # type: ignore[index]
        assert data["messages"] == diff["messages_after"]
