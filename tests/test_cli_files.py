"""The command line reads and writes OpenAI, Anthropic and our JSON (and JSONL), and
rejects a malformed file with one line naming it, exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import run
from hypothesis import HealthCheck, given, settings
from strategies import well_formed_conversations

from neuron_context import Message, ToolUse
from neuron_context.data import load_record
from neuron_context.formats import (
    from_anthropic,
    from_dict,
    from_openai,
    to_anthropic,
    to_dict,
    to_openai,
)

CALL = ToolUse(id="call_1", name="read_file", input={"path": "a.py"})
HISTORY = [
    Message.system("You are careful."),
    Message.user("Read a.py."),
    Message.assistant("Reading.", tool_uses=[CALL]),
    Message.tool_result("call_1", "x = 1\n"),
    Message.assistant("It sets x."),
]
HUGE = "1000000"


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _openai_object(messages: list[Message]) -> object:
    return {"messages": to_openai(messages)}


def _openai_list(messages: list[Message]) -> object:
    return to_openai(messages)


def _anthropic(messages: list[Message]) -> object:
    system, rendered = to_anthropic(messages)
    return {"system": system, "messages": rendered}


def _ours(messages: list[Message]) -> object:
    return to_dict(messages)


def _read_back(data: object) -> list[Message]:
    if isinstance(data, list):
        return from_openai(data)
    assert isinstance(data, dict)
    if data.get("format") == "neuron-context":
        return from_dict(data)
    if "system" in data:
        return from_anthropic(data["messages"], system=data["system"])
    return from_openai(data["messages"])


class TestRoundTrip:
    """compact writes its result in the input's format and layout."""

    @pytest.mark.parametrize("render", [_openai_object, _openai_list, _anthropic, _ours])
    def test_unchanged_history_comes_back_in_its_format(
        self,
        render: object,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """A history within budget is written back as it was read, in the same layout."""
        assert callable(render)
        data = render(HISTORY)
        source = _write(tmp_path / "in.json", data)
        result = run(capsys, monkeypatch, "compact", source, "--max-tokens", HUGE, "-o", "-")
        assert result.code == 0, result.err
        written = json.loads(result.out)
        assert written == data
        assert _read_back(written) == HISTORY

    def test_jsonl_of_messages(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """JSONL with one message per line is read as one conversation and written back so."""
        lines = "".join(json.dumps(m) + "\n" for m in to_openai(HISTORY))
        source = tmp_path / "in.jsonl"
        source.write_text(lines, encoding="utf-8")
        result = run(capsys, monkeypatch, "compact", source, "--max-tokens", HUGE, "-o", "-")
        assert result.code == 0, result.err
        assert result.out == lines

    def test_jsonl_of_records_counts_every_transcript(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """JSONL with one record per line holds several conversations, counted together."""
        source = tmp_path / "runs.jsonl"
        records = [json.dumps(_openai_object(HISTORY)), json.dumps(_anthropic(HISTORY))]
        source.write_text("\n".join(records) + "\n", encoding="utf-8")
        result = run(capsys, monkeypatch, "count", source, "--json")
        assert result.code == 0, result.err
        data = result.json()
        assert data["messages"] == 2 * len(HISTORY)
        assert data["transcripts"] == [f"{source}:1", f"{source}:2"]

    def test_shared_transcript_records_load(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Records that declare "format": "openai-chat" or "anthropic-messages" are read."""
        record = load_record("spotter-tool-heavy")
        messages = from_openai(record["messages"])
        system, rendered = to_anthropic(messages)
        anthropic = {**record, "format": "anthropic-messages", "system": system}
        anthropic["messages"] = rendered
        expected = {"openai": len(messages), "anthropic": len(from_anthropic(rendered))}
        for name, data in (("openai", record), ("anthropic", anthropic)):
            source = _write(tmp_path / f"{name}.json", data)
            result = run(capsys, monkeypatch, "count", source, "--json")
            assert result.code == 0, result.err
            assert result.json()["messages"] == expected[name]

    def test_format_override(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """--format reads a file as the format given, whatever detection would say."""
        source = _write(tmp_path / "in.json", _anthropic(HISTORY))
        result = run(capsys, monkeypatch, "count", source, "--format", "openai")
        assert result.code == 2
        assert "in.json" in result.err

    @settings(
        max_examples=20,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(messages=well_formed_conversations(max_turns=5))
    def test_our_format_round_trips_any_conversation(
        self,
        messages: list[Message],
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Any well-formed conversation in our JSON comes back equal through compact -o."""
        source = _write(tmp_path / "any.json", to_dict(messages))
        result = run(capsys, monkeypatch, "compact", source, "--max-tokens", HUGE, "-o", "-")
        assert result.code == 0, result.err
        assert from_dict(json.loads(result.out)) == messages


MALFORMED = {
    "truncated.json": '{"messages": [{"role": "user", "content": "hi"}, {"role": "assis',
    "role.json": '{"messages": [{"role": "user", "content": "hi"}, {"role": "robot"}]}',
    "orphan.json": '[{"role": "user", "content": "hi"},'
    ' {"role": "tool", "tool_call_id": "c9", "content": "x"}]',
    "types.json": '{"messages": [{"role": "user", "content": 5}]}',
    "anthropic-types.json": '{"system": "s", "messages": [{"role": "user", "content":'
    ' [{"type": "tool_result", "tool_use_id": 3, "content": "x"}]}]}',
    "not-a-list.json": '{"messages": "hello"}',
    "empty.json": "   \n",
    "bad-line.jsonl": '{"role": "user", "content": "hi"}\n{"role": \n',
}
WHERE = {
    "truncated.json": "truncated",
    "role.json": "messages[1].role",
    "orphan.json": "c9 (message 1)",
    "types.json": "messages[0].content",
    "anthropic-types.json": "messages[0].content[0].tool_use_id",
    "not-a-list.json": "messages",
    "empty.json": "empty",
    "bad-line.jsonl": "line 2",
}


class TestMalformed:
    """A file that is not a well-formed conversation is one error line and exit code 2."""

    @pytest.mark.parametrize("name", sorted(MALFORMED))
    @pytest.mark.parametrize("command", ["count", "compact", "simulate"])
    def test_one_line_naming_file_and_field(
        self,
        name: str,
        command: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """The error names the file and the message index or field; no traceback."""
        source = tmp_path / name
        source.write_text(MALFORMED[name], encoding="utf-8")
        budget = () if command == "count" else ("--max-tokens", "100")
        result = run(capsys, monkeypatch, command, source, *budget)
        assert result.code == 2
        assert result.out == ""
        assert result.err.count("\n") == 1
        assert result.err.startswith(f"neuron-context: error: {source}: ")
        assert WHERE[name] in result.err

    def test_binary_file(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A binary file is named as such."""
        source = tmp_path / "model.bin"
        source.write_bytes(bytes(range(256)) * 4)
        result = run(capsys, monkeypatch, "count", source)
        assert (result.code, result.err) == (
            2,
            f"neuron-context: error: {source}: is a binary file, not JSON or JSONL\n",
        )

    def test_missing_file(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A missing file is one line too."""
        result = run(capsys, monkeypatch, "count", tmp_path / "nope.json")
        assert (result.code, result.err) == (
            2,
            f"neuron-context: error: {tmp_path / 'nope.json'}: no such file\n",
        )

    def test_repair_accepts_an_orphan(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """--repair drops the orphan result instead of rejecting the file."""
        source = tmp_path / "orphan.json"
        source.write_text(MALFORMED["orphan.json"], encoding="utf-8")
        result = run(capsys, monkeypatch, "count", source, "--repair", "--json")
        assert result.code == 0
        assert result.json()["messages"] == 1
