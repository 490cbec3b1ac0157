"""The command line reads the transcripts users have: Claude Code sessions, Codex CLI
rollouts, LangChain, pydantic-ai and Agents SDK dumps — detected, each with ``--format`` —
and writes each back in its own format without losing what it did not change.

The samples in ``tests/data/transcripts`` are written by ``make_samples.py`` there: the
framework dumps by the frameworks themselves, the Claude Code and Codex rows in the shapes
those tools write.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_run import run

from neuron_context import TokenCounter
from neuron_context.formats import load

DATA = Path(__file__).parent / "data" / "transcripts"
HUGE = "100000000"
SAMPLES = {
    # file: (format, messages read, tool uses read)
    "claude-code-session.jsonl": ("claude-code", 17, 8),
    "claude-code-agent-a1b2c3d.jsonl": ("claude-code", 4, 1),
    "codex-rollout.jsonl": ("codex", 10, 3),
    "langchain-dump.json": ("langchain", 9, 2),
    "pydantic-ai-dump.json": ("pydantic-ai", 7, 2),
    "agents-sdk-items.json": ("openai-agents", 6, 2),
}


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    target.write_bytes((DATA / name).read_bytes())
    return target


class TestRead:
    """Each format is detected and read with the right number of messages."""

    @pytest.mark.parametrize("name", sorted(SAMPLES))
    @pytest.mark.parametrize("forced", [False, True])
    def test_detected_and_counted(
        self,
        name: str,
        forced: bool,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """count reads the sample (detected, or with --format) as its messages."""
        fmt, messages, _ = SAMPLES[name]
        options = ("--format", fmt) if forced else ()
        result = run(capsys, monkeypatch, "count", DATA / name, "--json", *options)
        assert result.code == 0, result.err
        assert result.json()["messages"] == messages

    @pytest.mark.parametrize("name", sorted(SAMPLES))
    def test_the_format_is_named(
        self,
        name: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """compact says which format it read and wrote."""
        fmt = SAMPLES[name][0]
        out = tmp_path / name
        result = run(capsys, monkeypatch, "compact", DATA / name, "--max-tokens", HUGE, "-o", out)
        assert result.code == 0, result.err
        assert f"({fmt})" in result.out

    def test_wrong_format_names_it(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A file read with the wrong --format says what it was read as."""
        result = run(
            capsys, monkeypatch, "count", DATA / "langchain-dump.json", "--format", "openai"
        )
        assert result.code == 2
        assert "(read as OpenAI Chat Completions, as --format says)" in result.err

    def test_unknown_file_says_what_was_tried(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A list of objects no format recognises: the error names the formats tried."""
        source = tmp_path / "odd.json"
        source.write_text('[{"speaker": "me", "said": "hi"}]', encoding="utf-8")
        result = run(capsys, monkeypatch, "count", source)
        assert result.code == 2
        assert result.err == (
            f"neuron-context: error: {source}: messages[0].role is missing (read as OpenAI "
            "Chat Completions; also tried Anthropic Messages; --format chooses another)\n"
        )


class TestFrameworksAgree:
    """The dumps are read without the frameworks, exactly as the adapters read them:
    by formats.load, and so by the command line."""

    def _count(self, path: Path, capsys: Any, monkeypatch: Any) -> dict[str, object]:
        result = run(capsys, monkeypatch, "count", path, "--json", "--tokenizer", "heuristic")
        assert result.code == 0, result.err
        return result.json()

    def test_langchain(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The dump counts as from_langchain(messages_from_dict(dump)) does."""
        messages_from_dict = pytest.importorskip("langchain_core.messages").messages_from_dict
        from neuron_context.ext.langchain import from_langchain

        path = DATA / "langchain-dump.json"
        ours = from_langchain(messages_from_dict(json.loads(path.read_text(encoding="utf-8"))))
        assert load(path) == ours
        counted = self._count(path, capsys, monkeypatch)
        assert counted["total"] == [TokenCounter().estimate_messages(ours)]

    def test_pydantic_ai(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The dump counts as from_pydantic_ai(ModelMessagesTypeAdapter...) does."""
        adapter = pytest.importorskip("pydantic_ai.messages").ModelMessagesTypeAdapter
        from neuron_context.ext.pydantic_ai import from_pydantic_ai

        path = DATA / "pydantic-ai-dump.json"
        ours = from_pydantic_ai(adapter.validate_json(path.read_bytes()))
        assert load(path) == ours
        counted = self._count(path, capsys, monkeypatch)
        assert counted["total"] == [TokenCounter().estimate_messages(ours)]

    def test_agents_sdk(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The items count as from_responses_items(items) does."""
        pytest.importorskip("agents", reason="the openai-agents extra is not installed")
        from neuron_context.ext.openai_agents import from_responses_items

        path = DATA / "agents-sdk-items.json"
        ours = from_responses_items(json.loads(path.read_text(encoding="utf-8")))
        assert load(path) == ours
        counted = self._count(path, capsys, monkeypatch)
        assert counted["total"] == [TokenCounter().estimate_messages(ours)]


class TestWriteBack:
    """Every format comes back byte for byte when nothing changed, and a compaction keeps
    what it did not change."""

    @pytest.mark.parametrize("name", sorted(SAMPLES))
    def test_unchanged_is_byte_for_byte(
        self,
        name: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """compact within budget writes the input file."""
        out = tmp_path / f"out-{name}"
        result = run(capsys, monkeypatch, "compact", DATA / name, "--max-tokens", HUGE, "-o", out)
        assert result.code == 0, result.err
        assert out.read_bytes() == (DATA / name).read_bytes()

    @pytest.mark.parametrize("name", sorted(SAMPLES))
    @pytest.mark.parametrize("spec", ["clear-tools:keep=0", "default", "strip-tools"])
    def test_compacted_reads_back_well_formed(
        self,
        name: str,
        spec: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """A compacted file is read again as the compacted conversation, well formed."""
        out = tmp_path / f"out-{name}"
        result = run(
            capsys, monkeypatch, "compact", DATA / name, "--max-tokens", "150",
            "--strategy", spec, "-o", out, "--json",
        )  # fmt: skip
        assert result.code in (0, 1), result.err
        after = result.json()["diff"]["messages_after"]  # type: ignore[index]
        again = run(capsys, monkeypatch, "count", out, "--json")
        assert again.code == 0, again.err
        assert again.json()["messages"] == after

    def test_claude_code_rows_keep_their_fields_and_chain(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Cleared results keep their row (uuid, toolUseResult); rows the summary replaced
        are gone and the kept rows link to the row before them; the session's other rows
        (title, snapshots, the sub-agent's) stay."""
        source = DATA / "claude-code-session.jsonl"
        out = tmp_path / "out.jsonl"
        result = run(capsys, monkeypatch, "compact", source, "--max-tokens", "300", "-o", out)
        assert result.code == 0, result.err
        before, after = _rows(source), _rows(out)
        assert [r["type"] for r in after[:2]] == ["summary", "file-history-snapshot"]
        uuids: set[str] = set()
        for row in after:
            if row.get("type") in ("user", "assistant") and not row.get("isSidechain"):
                assert row["parentUuid"] is None or row["parentUuid"] in uuids
                assert row["sessionId"] == before[3]["sessionId"]
            uuids.add(row.get("uuid", ""))
        cleared = tmp_path / "cleared.jsonl"
        run(
            capsys, monkeypatch, "compact", source, "--max-tokens", "150",
            "--strategy", "clear-tools:keep=0", "-o", cleared,
        )  # fmt: skip
        changed = [
            (old, new) for old, new in zip(before, _rows(cleared), strict=True) if old != new
        ]
        assert changed
        for old, new in changed:
            assert {k: v for k, v in new.items() if k != "message"} == {
                k: v for k, v in old.items() if k != "message"
            }
            (block,) = new["message"]["content"]
            assert block["content"] == "[tool result cleared]"

    def test_codex_items_keep_their_shape(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A cleared apply_patch output stays a custom_tool_call_output, an output given
        as an object stays one, and every line keeps its timestamp."""
        out = tmp_path / "out.jsonl"
        result = run(
            capsys, monkeypatch, "compact", DATA / "codex-rollout.jsonl", "--max-tokens", "150",
            "--strategy", "clear-tools:keep=0", "-o", out,
        )  # fmt: skip
        assert result.code in (0, 1), result.err
        items = [r["payload"] for r in _rows(out) if r["type"] == "response_item"]
        kinds = {(item.get("call_id"), item["type"]) for item in items}
        assert {
            ("call_patch", "custom_tool_call"),
            ("call_patch", "custom_tool_call_output"),
        } <= kinds
        outputs = {item["call_id"]: item for item in items if item["type"].endswith("_output")}
        assert outputs["call_patch"]["output"] == "[tool result cleared]"
        assert outputs["call_test"]["output"] == {
            "content": "[tool result cleared]",
            "success": True,
        }
        assert all("timestamp" in row for row in _rows(out))

    @pytest.mark.parametrize(
        ("name", "load"),
        [
            ("langchain-dump.json", "langchain"),
            ("pydantic-ai-dump.json", "pydantic-ai"),
        ],
    )
    def test_framework_loads_the_compacted_dump(
        self,
        name: str,
        load: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """The framework reads the compacted dump back, as many messages as we wrote."""
        out = tmp_path / name
        result = run(
            capsys, monkeypatch, "compact", DATA / name, "--max-tokens", "150", "-o", out,
            "--json",
        )  # fmt: skip
        assert result.code in (0, 1), result.err
        data = out.read_bytes()
        if load == "langchain":
            messages_from_dict = pytest.importorskip("langchain_core.messages").messages_from_dict
            from neuron_context.ext.langchain import from_langchain

            ours = from_langchain(messages_from_dict(json.loads(data)))
        else:
            adapter = pytest.importorskip("pydantic_ai.messages").ModelMessagesTypeAdapter
            from neuron_context.ext.pydantic_ai import from_pydantic_ai

            ours = from_pydantic_ai(adapter.validate_json(data))
        assert len(ours) == result.json()["diff"]["messages_after"]  # type: ignore[index]


class TestWithoutFrameworks:
    """With only the cli extra (no LangChain, pydantic-ai, Agents SDK or provider SDK),
    every sample is read and compacted."""

    def test_every_sample_without_frameworks(self, tmp_path: Path) -> None:
        """A subprocess that cannot import any framework counts and compacts each sample."""
        script = f"""
import sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {{"langchain", "langchain_core", "langgraph", "pydantic_ai",
                                  "agents", "openai", "anthropic", "httpx"}}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Block())
from neuron_context.__main__ import main
for name in {sorted(SAMPLES)!r}:
    source = {str(DATA)!r} + "/" + name
    assert main(["count", source, "--json"]) == 0, name
    out = {str(tmp_path)!r} + "/" + name
    assert main(["compact", source, "--max-tokens", "150", "-o", out, "--json"]) in (0, 1)
print("ok")
"""
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip().endswith("ok")
