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
from cli_run import Result, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import COUNT_REFUSES, hostile_arguments, hostile_files

from neuron_context import Message
from neuron_context.formats import to_openai

SURROGATE = '{"messages": [{"role": "user", "content": "hi \\ud800"}, ' + (
    '{"role": "assistant", "content": "ok"}]}'
)
HUGE = "1000000"


def _without(arguments: list[str], options: tuple[str, ...]) -> list[str]:
    """``arguments`` less ``options`` and the value after each."""
    out: list[str] = []
    skip = False
    for word in arguments:
        if skip:
            skip = False
        elif word in options:
            skip = True
        else:
            out.append(word)
    return out


def _one_error_line(result: Result) -> None:
    """A failure is one error line (after any warning lines), with a usage or input code;
    a compaction that does not fit (exit code 1) is a report, with any warnings."""
    assert "Traceback" not in result.err
    lines = result.err.splitlines()
    if result.code == 0 or (result.code == 1 and "fits" in result.out):
        assert all(line.startswith("neuron-context: warning: ") for line in lines)
        return
    assert result.code in (1, 2), result.err
    assert lines, "a failure says why"
    assert lines[-1].startswith("neuron-context: error: ")
    assert all(line.startswith("neuron-context: warning: ") for line in lines[:-1])


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


class TestHostileInput:
    """Hypothesis: hostile files and arguments give one error line, never a traceback."""

    @settings(
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        content=hostile_files(),
        command=st.sampled_from(("count", "compact", "simulate")),
        arguments=hostile_arguments(),
        suffix=st.sampled_from((".json", ".jsonl")),
    )
    def test_one_line_and_the_file_untouched(
        self,
        *,
        content: bytes,
        command: str,
        arguments: list[str],
        suffix: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Any file, any options: exit 0, or one error line; ``compact f -o f`` leaves
        ``f`` either as it was or a complete transcript."""
        source = tmp_path / f"hostile{suffix}"
        source.write_bytes(content)
        if command == "count":
            arguments = _without(arguments, COUNT_REFUSES)
        output = ["-o", str(source)] if command == "compact" else []
        result = run(capsys, monkeypatch, command, source, *arguments, *output)
        _one_error_line(result)
        if source.read_bytes() != content:  # written: a whole transcript, readable again
            assert result.code in (0, 1)
            assert run(capsys, monkeypatch, "count", source, "--json").code == 0


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


class TestUsageErrors:
    """argparse's usage errors are one line too, naming the option and the help."""

    def test_unknown_option(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An unknown option is one line that points at --help, exit code 2."""
        result = run(capsys, monkeypatch, "count", "--demo", "--nope")
        assert (result.code, result.out) == (2, "")
        assert result.err == (
            "neuron-context: error: unrecognized arguments: --nope (see neuron-context --help)\n"
        )

    def test_bad_number(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A budget that is not a number is one line, naming a pasted blob by its start and
        length rather than echoing it."""
        result = run(capsys, monkeypatch, "compact", "--demo", "--max-tokens", "9" * 5000)
        assert result.code == 2
        assert result.err.startswith("neuron-context: error: argument --max-tokens: invalid int")
        assert result.err.count("\n") == 1
        assert f"'{'9' * 40}...' (5,000 characters)" in result.err
        assert len(result.err) < 200

    def test_short_bad_value_is_quoted_whole(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A bad value of a line's length is echoed as typed."""
        result = run(capsys, monkeypatch, "compact", "--demo", "--max-tokens", "x" * 80)
        assert f"invalid int value: '{'x' * 80}' (see" in result.err
