"""Hostile cases against the command line and the cache schedule: what ``compact -o``
writes is what was compacted (every format), ``--json`` is strict JSON whatever the
numbers, and the schedule's clock and gaps are checked where they cross in."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cli_run import run
from hypothesis import given
from hypothesis import strategies as st

from neuron_context import ConfigurationError, Message, ToolUse
from neuron_context.formats import load, to_anthropic, to_dict, to_openai
from neuron_context.strategies import CacheSchedule

SAMPLES = Path(__file__).parent / "data" / "transcripts"


def _strict(text: str) -> object:
    """``text`` read as strict JSON (no NaN, Infinity)."""

    def refuse(name: str) -> object:
        msg = f"non-standard JSON constant {name}"
        raise ValueError(msg)

    return json.loads(text, parse_constant=refuse)


def _history() -> list[Message]:
    messages = [Message.system("You fix bugs."), Message.user("Fix the parser.")]
    for i in range(6):
        use = ToolUse(id=f"call_{i}", name="read_file", input={"path": f"src/p{i}.py"})
        messages.append(Message.assistant(f"Reading part {i}.", tool_uses=[use]))
        messages.append(Message.tool_result(use.id, f"def parse_{i}(x):\n    return x\n" * 40))
    messages.append(Message.assistant("The parser is fixed: " + "details. " * 80))
    messages.append(Message.user("Now add tests."))
    return messages


def _written(tmp_path: Path, fmt: str) -> Path:
    """A transcript file of ``fmt`` (a sample from tests/data, or one we write)."""
    samples = {
        "openai-agents": "agents-sdk-items.json",
        "claude-code": "claude-code-session.jsonl",
        "codex": "codex-rollout.jsonl",
        "langchain": "langchain-dump.json",
        "pydantic-ai": "pydantic-ai-dump.json",
    }
    if fmt in samples:
        return SAMPLES / samples[fmt]
    path = tmp_path / f"{fmt}.json"
    messages = _history()
    if fmt == "openai":
        data: object = {"messages": to_openai(messages)}
    elif fmt == "anthropic":
        system, rest = to_anthropic(messages)
        data = {"system": system, "messages": rest}
    else:
        data = to_dict(messages)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


FORMATS = (
    "openai",
    "anthropic",
    "neuron-context",
    "claude-code",
    "codex",
    "langchain",
    "pydantic-ai",
    "openai-agents",
)


class TestCompactWrites:
    """``compact -o`` writes exactly what was compacted: counting the written file gives
    the report's figure, in every format."""

    @pytest.mark.parametrize("fmt", FORMATS)
    @pytest.mark.parametrize("fraction", ["0.15", "0.3", "0.6"])
    def test_written_file_counts_the_reports_figure(
        self,
        fmt: str,
        fraction: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """The report's tokens after == the written file's tokens, read back."""
        source = _written(tmp_path, fmt)
        suffix = ".jsonl" if source.suffix == ".jsonl" else ".json"
        out = tmp_path / f"out{suffix}"
        compacted = run(
            capsys, monkeypatch, "compact", source, "--fraction", fraction, "-o", out, "--json"
        )
        assert compacted.code == 0, compacted.err
        report = compacted.json()
        again = run(
            capsys, monkeypatch, "compact", out, "--format", fmt, "--max-tokens", "10000000",
            "--json",
        )  # fmt: skip
        assert again.code == 0, again.err
        diff, reread = report["diff"], again.json()["diff"]
        assert isinstance(diff, dict)
        assert isinstance(reread, dict)
        assert reread["tokens_before"] == diff["tokens_after"]
        assert reread["messages_before"] == diff["messages_after"]
        assert load(out, format=fmt) == load(out)


class TestStrictJson:
    """``--json`` never writes NaN or Infinity."""

    @pytest.mark.parametrize("gap", ["inf", "-inf", "nan", "1e308", "-5", "0"])
    def test_simulate_gap(
        self, gap: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """``simulate --json --gap X``: strict JSON, or a refusal naming the gap."""
        result = run(
            capsys, monkeypatch, "simulate", "--demo", "--json", "--gap", gap,
            "--cost-model", "anthropic", "--strategy", "window:12",
        )  # fmt: skip
        if result.code == 0:
            _strict(result.out)
        else:
            assert "gap" in result.err

    @pytest.mark.parametrize("fraction", ["nan", "inf", "-0.5", "0", "1e-300", "5"])
    def test_bad_fractions(
        self,
        fraction: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """``--fraction`` NaN, infinite, negative or zero: a one-line refusal; any other:
        strict JSON."""
        source = _written(tmp_path, "openai")
        result = run(capsys, monkeypatch, "compact", source, "--fraction", fraction, "--json")
        assert "Traceback" not in result.err
        if result.out:  # compacted (exit 1: the budget could not be met)
            _strict(result.out)
        else:
            assert "fraction" in result.err

    @pytest.mark.parametrize("budget", ["-1", "0", "1", str(10**400)])
    def test_odd_budgets(
        self,
        budget: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """``--max-tokens`` of any int: strict JSON or a one-line refusal (the number
        cut)."""
        source = _written(tmp_path, "openai")
        result = run(capsys, monkeypatch, "compact", source, "--max-tokens", budget, "--json")
        if result.code == 0:
            _strict(result.out)
        else:
            assert "Traceback" not in result.err
            assert len(result.err) < 600


class TestScheduleChecks:
    """``note_gap`` and the clock's values are checked: a ConfigurationError naming the
    value, never a raw ValueError or TypeError."""

    @given(
        value=st.one_of(
            st.text(max_size=2000),
            st.none(),
            st.binary(max_size=10),
            st.lists(st.integers(), max_size=3),
            st.just(math.nan),
            st.just(True),
            st.complex_numbers(allow_nan=False, allow_infinity=False),
        )
    )
    def test_note_gap_refuses(self, value: object) -> None:
        """A str, None, bytes, a list, NaN, a bool, a complex: refused, the message cut."""
        schedule = CacheSchedule(clock=None)
        with pytest.raises(ConfigurationError, match="note_gap") as caught:
            schedule.note_gap(value)  # type: ignore[arg-type]
        assert len(str(caught.value)) < 300

    @given(seconds=st.one_of(st.floats(allow_nan=False), st.integers(-(10**400), 10**400)))
    def test_note_gap_accepts_numbers(self, seconds: float) -> None:
        """Any number but NaN: accepted (negative: 0; infinite or huge: cold)."""
        schedule = CacheSchedule(clock=None)
        schedule.note_gap(seconds)
        assert schedule.cold() == (seconds > schedule.cost_model.cache_ttl)

    @pytest.mark.parametrize("value", ["noon", None, math.nan, math.inf, -math.inf, 10**400, []])
    def test_clock_values(self, value: object) -> None:
        """A clock returning a non-number or a non-finite one: a ConfigurationError."""
        schedule = CacheSchedule(clock=lambda: value)  # type: ignore[arg-type,return-value]
        with pytest.raises(ConfigurationError, match="clock"):
            schedule.tick()

    def test_clock_going_backwards(self) -> None:
        """A clock that goes backwards is a warm (known, not negative) gap."""
        times = iter([100.0, 50.0])
        schedule = CacheSchedule(clock=lambda: next(times))
        schedule.tick()
        schedule.tick()
        assert not schedule.cold()
