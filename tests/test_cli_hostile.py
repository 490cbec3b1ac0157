"""Whatever the input, the command line fails on one line and never damages a file.

Every failure is exactly one ``neuron-context: error:`` line on stderr and a non-zero exit
code (2 for bad input), never a traceback and never the code of an unexpected error (3);
a file the user owns is replaced only by a complete result, so ``compact f -o f`` leaves
``f`` as it was whenever it fails.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from cli_run import run

from neuron_context import Message
from neuron_context.formats import to_openai

SURROGATE = '{"messages": [{"role": "user", "content": "hi \\ud800"}, ' + (
    '{"role": "assistant", "content": "ok"}]}'
)
HUGE = "1000000"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


class TestFilesNeverDamaged:
    """A failing compact leaves its output as it was; outputs go only where they can."""

    def test_surrogate_written_over_the_input(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A lone surrogate escape is written back as the escape: the file reads the same."""
        source = _write(tmp_path / "t.json", SURROGATE)
        result = run(capsys, monkeypatch, "compact", source, "--max-tokens", HUGE, "-o", source)
        assert result.code == 0, result.err
        assert json.loads(source.read_text(encoding="utf-8")) == json.loads(SURROGATE)

    def test_failure_after_reading_keeps_the_target(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """When writing fails midway, the target keeps its old bytes and no temporary
        file is left beside it."""
        source = _write(tmp_path / "t.json", json.dumps({"messages": to_openai(_history())}))
        before = source.read_bytes()

        def broken_replace(src: object, dst: object) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "replace", broken_replace)
        result = run(capsys, monkeypatch, "compact", source, "--max-tokens", HUGE, "-o", source)
        assert result.code == 2
        assert result.err == f"neuron-context: error: -o {source}: No space left on device\n"
        assert source.read_bytes() == before
        assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]

    def test_replaced_file_keeps_its_mode(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """-o over an existing file keeps that file's permissions."""
        source = _write(tmp_path / "t.json", json.dumps({"messages": to_openai(_history())}))
        source.chmod(0o640)
        result = run(capsys, monkeypatch, "compact", source, "--max-tokens", HUGE, "-o", source)
        assert result.code == 0, result.err
        assert source.stat().st_mode & 0o777 == 0o640

    @pytest.mark.parametrize("where", ["folder", "missing"])
    @pytest.mark.parametrize("option", ["-o", "--plot"])
    def test_output_into_a_folder_or_a_missing_one(
        self,
        where: str,
        option: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """-o and --plot onto a folder or into a missing folder: one line, before any work."""
        source = _write(tmp_path / "t.json", json.dumps(to_openai(_history())))
        target = tmp_path if where == "folder" else tmp_path / "nope" / "out.x"
        command = "compact" if option == "-o" else "simulate"
        result = run(capsys, monkeypatch, command, source, "--max-tokens", "50", option, target)
        problem = "is a folder; name a file" if where == "folder" else "the folder does not exist"
        assert (result.code, result.out) == (2, "")
        assert result.err == f"neuron-context: error: {option} {target}: {problem}\n"


class TestHostileFiles:
    """Each hostile file the review found is one line naming the file."""

    @pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
    def test_named_pipe_is_refused_not_waited_on(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """count on a FIFO returns at once (it would otherwise wait for a writer)."""
        fifo = tmp_path / "pipe.json"
        os.mkfifo(fifo)
        result = run(capsys, monkeypatch, "count", fifo)
        assert (result.code, result.err) == (
            2,
            f"neuron-context: error: {fifo}: is not a regular file (a pipe, device or "
            "socket); save it to a file\n",
        )

    @pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
    def test_device_is_refused(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A device is not read (/dev/zero would fill the memory)."""
        result = run(capsys, monkeypatch, "count", "/dev/zero")
        assert result.code == 2
        assert "is not a regular file" in result.err

    @pytest.mark.parametrize(
        ("text", "problem"),
        [
            ("[" * 100_000 + "]" * 100_000, "is nested deeper than 128 levels"),
            (
                '{"messages": [{"role": "user", "content": "x", "n": ' + "9" * 5000 + "}]}",
                f"holds an integer longer than {sys.get_int_max_str_digits():,} digits",
            ),
        ],
        ids=["nested-100000", "integer-5000-digits"],
    )
    def test_parser_limits(
        self,
        text: str,
        problem: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """JSON the parser cannot take is one line, not a RecursionError or ValueError."""
        source = _write(tmp_path / "t.json", text)
        result = run(capsys, monkeypatch, "count", source)
        assert result.code == 2
        assert result.err.startswith(f"neuron-context: error: {source}: {problem}")
        assert result.err.count("\n") == 1

    @pytest.mark.parametrize("mode", ["table", "--json", "-o -"])
    def test_lone_surrogate_is_printed(
        self,
        mode: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """A lone surrogate shows as its escape in tables and stays one in JSON output."""
        source = _write(tmp_path / "t.json", SURROGATE)
        if mode == "-o -":
            result = run(capsys, monkeypatch, "compact", source, "--max-tokens", HUGE, "-o", "-")
            assert json.loads(result.out) == json.loads(SURROGATE)
        elif mode == "--json":
            result = run(capsys, monkeypatch, "count", source, "--json")
            assert result.json()["messages"] == 2
        else:
            result = run(capsys, monkeypatch, "count", source)
            assert "hi \\ud800" in result.out
        assert result.code == 0, result.err

    def test_markup_in_a_transcript_is_shown_as_text(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """rich markup inside a message or a tool name is text, not an error."""
        history = [Message.user("see [/] and [bold]this"), Message.assistant("[red]ok")]
        source = _write(tmp_path / "[x].json", json.dumps(to_openai(history)))
        result = run(capsys, monkeypatch, "count", source)
        assert result.code == 0, result.err
        assert "see [/] and [bold]this" in result.out

    def test_budget_beyond_any_count(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """--max-tokens with 32 nines names the range, not "must be >= 1"."""
        source = _write(tmp_path / "t.json", json.dumps(to_openai(_history())))
        result = run(capsys, monkeypatch, "compact", source, "--max-tokens", "9" * 32)
        assert result.code == 2
        assert result.err == (
            "neuron-context: error: --max-tokens must be a whole number from 1 to "
            f"9,007,199,254,740,992, got {'9' * 32}\n"
        )


def _history() -> list[Message]:
    return [Message.user("Hello there."), Message.assistant("Hi.")]
