"""``neuron-context compact``: the before/after report, counted against the input."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

import pytest
from cli_run import run
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import well_formed_conversations

from neuron_context import Message, ToolUse, validate
from neuron_context.__main__ import main
from neuron_context.formats import from_openai, to_dict, to_openai


def _exchange(n: int) -> list[Message]:
    call = ToolUse(id=f"c{n}", name="read_file", input={"path": f"m{n}.py"})
    return [
        Message.assistant(f"Reading m{n}.", tool_uses=[call]),
        Message.tool_result(call.id, f"line {n}\n" * 200),
    ]


HISTORY = [
    Message.system("You are careful."),
    Message.user("Read the three modules."),
    *_exchange(1),
    *_exchange(2),
    *_exchange(3),
    Message.assistant("All three read."),
    Message.user("Now sum them up."),
    Message.assistant("They define lines."),
]


@pytest.fixture
def history(tmp_path: Path) -> Path:
    """HISTORY as an OpenAI file."""
    path = tmp_path / "history.json"
    path.write_text(json.dumps({"messages": to_openai(HISTORY)}), encoding="utf-8")
    return path


def _changes(data: dict[str, object]) -> dict[str, int]:
    diff = data["diff"]
    assert isinstance(diff, dict)
    return {c["kind"]: c["messages"] for c in diff["changes"]}


class TestReport:
    """What each kind of change did, counted against the input."""

    def test_cleared_then_dropped_counts_as_removed(
        self, history: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Results that clearing emptied and the window then dropped count as removed (and
        the assistant message the window began on, since what is sent starts on a user
        message)."""
        result = run(
            capsys, monkeypatch, "compact", history, "--max-tokens", "60",
            "--strategy", "clear-tools:keep=1,window:3", "--json",
        )  # fmt: skip
        data = result.json()
        assert _changes(data) == {"removed": 8}
        assert data["diff"]["kept"] == 3  # type: ignore[index]
        assert (data["fits"], data["well_formed"], result.code) == (True, True, 0)

    def test_clearing_alone(
        self, history: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Clearing two of three results: two cleared, nothing removed."""
        result = run(
            capsys, monkeypatch, "compact", history, "--max-tokens", "900",
            "--tokenizer", "heuristic", "--strategy", "clear-tools:keep=1", "--json",
        )  # fmt: skip
        data = result.json()
        assert _changes(data) == {"cleared": 2}
        diff = data["diff"]
        assert isinstance(diff, dict)
        assert diff["changes"][0]["tokens_after"] == 2 * (4 + 6)  # "[tool result cleared]"

    def test_summary(
        self, history: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A summary replaced the older messages: they count as summarized."""
        result = run(
            capsys, monkeypatch, "compact", history, "--max-tokens", "500",
            "--strategy", "summarize:keep=2", "--json",
        )  # fmt: skip
        data = result.json()
        assert _changes(data) == {"summarized": 8}
        assert data["summarizer"] == "extractive"
        assert len(data["diff"]["summaries"]) == 1  # type: ignore[index]

    def test_does_not_fit_says_why(
        self, history: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A stack that cannot reach the budget exits 1 and says plainly why."""
        result = run(
            capsys, monkeypatch, "compact", history, "--max-tokens", "60",
            "--strategy", "clear-tools:keep=0",
        )  # fmt: skip
        assert result.code == 1
        assert "fits the budget: no — " in result.out
        assert "could remove no more" in result.out
        assert "well formed: yes" in result.out

    def test_text_report(
        self, history: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The text report names the stack and budget and shows before and after."""
        result = run(
            capsys, monkeypatch, "compact", history, "--max-tokens", "60",
            "--strategy", "clear-tools:keep=1,window:3",
        )  # fmt: skip
        lines = [line.rstrip() for line in result.out.splitlines()]
        assert lines[1] == "stack: clear-tools:keep=1,window:3   budget: 60 tokens"
        assert "fits the budget: yes" in lines


class TestOutput:
    """-o writes the compacted history in the input's format."""

    def test_written_file_is_well_formed_openai(
        self,
        history: Path,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """The output reads back as a well-formed OpenAI conversation of the kept messages,
        starting on a user message (the window's first message, an assistant's, goes)."""
        out = tmp_path / "out.json"
        result = run(
            capsys, monkeypatch, "compact", history, "--max-tokens", "60",
            "--strategy", "clear-tools:keep=1,window:3", "-o", out,
        )  # fmt: skip
        assert result.code == 0, result.err
        messages = from_openai(json.loads(out.read_text(encoding="utf-8"))["messages"])
        validate(messages)
        assert messages == [HISTORY[0], *HISTORY[-2:]]
        assert f"written: {out} (openai)" in result.out

    def test_one_transcript_only(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A JSONL file of several records is refused by compact."""
        record = json.dumps({"messages": to_openai(HISTORY)})
        source = tmp_path / "two.jsonl"
        source.write_text(record + "\n" + record + "\n", encoding="utf-8")
        result = run(capsys, monkeypatch, "compact", source, "--max-tokens", "60")
        assert result.code == 2
        assert (
            result.err
            == f"neuron-context: error: {source} holds 2 transcripts; compact takes one\n"
        )


class TestAccounting:
    """Every input message is accounted for exactly once."""

    @settings(max_examples=40, deadline=None)
    @given(
        messages=well_formed_conversations(min_turns=1, max_turns=8),
        spec=st.sampled_from(
            [
                "default",
                "window:3",
                "clear-tools:keep=1,window:4",
                "summarize:keep=2",
                "clear-tools:keep=0,summarize:keep=3,window:2",
                "strip-tools",
                "summarize:keep=2,strip-tools",
            ]
        ),
        budget=st.integers(1, 400),
    )
    def test_changes_add_up(self, messages: list[Message], spec: str, budget: int) -> None:
        """Kept plus every change is the input's messages; kept, changed and new summaries
        are the output's; a compaction error is one line and exit code 1."""
        with tempfile.TemporaryDirectory() as folder:
            source = Path(folder) / "in.json"
            source.write_text(json.dumps(to_dict(messages)), encoding="utf-8")
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(
                    ["compact", str(source), "--max-tokens", str(budget), "--strategy", spec,
                     "--json"]
                )  # fmt: skip
        if not out.getvalue():  # the strategy raised (an empty summary): one line, exit 1
            assert code == 1
            assert err.getvalue().startswith("neuron-context: error: SummarizationError: ")
            return
        data = json.loads(out.getvalue())
        diff = data["diff"]
        changes = {c["kind"]: c["messages"] for c in diff["changes"]}
        assert diff["kept"] + sum(changes.values()) == len(messages)
        dropped = changes.get("removed", 0) + changes.get("summarized", 0)
        summaries = len(diff["summaries"])
        assert diff["messages_after"] == len(messages) - dropped + summaries
        assert data["well_formed"] is True
        assert code == (0 if data["fits"] else 1)


class TestLogging:
    """The library's log records reach stderr, one line each."""

    def test_verbose_shows_each_strategy(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """-v logs what each strategy did; without it, nothing is logged."""
        quiet = run(capsys, monkeypatch, "compact", "--demo")
        assert quiet.err == ""
        loud = run(capsys, monkeypatch, "compact", "--demo", "-v")
        lines = loud.err.splitlines()
        assert lines
        assert all(line.startswith("neuron-context: info: ") for line in lines)
        assert any("DefaultStack: 27 -> " in line for line in lines)
