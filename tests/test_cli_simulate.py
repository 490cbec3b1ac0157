"""``neuron-context simulate``: the replay's figures, several stacks, folders and the plot."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import matplotlib.figure
import numpy as np
import pytest
from cli_run import run

from neuron_context import Message, TokenizerCounter
from neuron_context.formats import to_openai

# Seven messages of 13 heuristic tokens each (4 overhead + 36 characters / 4).
SMALL = [
    Message.system("s" * 36),
    Message.user("u" * 36),  # the task
    Message.assistant("a" * 36),
    Message.user("v" * 36),
    Message.assistant("b" * 36),
    Message.user("w" * 36),
    Message.assistant("c" * 36),
]


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """The small transcript as an OpenAI file."""
    path = tmp_path / "small.json"
    path.write_text(json.dumps({"messages": to_openai(SMALL)}), encoding="utf-8")
    return path


def _totals(data: dict[str, object], row: int = 0) -> dict[str, object]:
    runs = data["runs"]
    assert isinstance(runs, list)
    totals = runs[row]["totals"]
    assert isinstance(totals, dict)
    return totals


class TestCounter:
    """What the replay counts with: exact o200k by default, as default_stack does."""

    @pytest.mark.parametrize(
        ("given", "named"),
        [((), "o200k_base"), (("--tokenizer", "heuristic"), "heuristic")],
    )
    def test_default_is_exact(
        self,
        small: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
        given: tuple[str, ...],
        named: str,
    ) -> None:
        """A budget means real tokens unless the heuristic is asked for."""
        result = run(capsys, monkeypatch, "simulate", small, "--max-tokens", "40", *given, "--json")
        assert result.code == 0, result.err
        assert result.json()["counter"] == named


class TestFigures:
    """The figures of a replay, checked against a small transcript computed by hand."""

    def test_window_of_two(
        self, small: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """window:2 at 40 tokens: each call computed by hand.

        Call 1 gets [s, u1] = 26 tokens, no compaction. Call 2: [s, u1, a1, u2] = 52 > 40,
        the window keeps [s, a1, u2], and the compaction step (as the agent loop runs it)
        sends it starting on a user message: [s, u2] = 26; it lost the task; 13 tokens
        (the system message) are shared with call 1. Call 3: [s, u2, a2, u3] = 52 > 40
        becomes [s, u3] = 26, the same again. Input 78 tokens, 26 cached, cost
        78 - 0.9 x 26 = 54.6.
        """
        result = run(
            capsys, monkeypatch, "simulate", small, "--max-tokens", "40",
            "--tokenizer", "heuristic", "--strategy", "window:2", "--json",
        )  # fmt: skip
        assert result.code == 0, result.err
        data = result.json()
        assert _totals(data) == {
            "calls": 3,
            "compactions": 2,
            "failed": 0,
            "peak": 26,
            "final": 26,
            "over_budget": 0,
            "not_on_user": 0,
            "task_kept": 1,
            "last_kept": 3,
            "input_tokens": 78,
            "cached_tokens": 26,
            "input_cost": 54.6,
            "served_tokens": 0,
            "net_input_cost": 0.0,
            "compaction_cost": 0.0,
            "cache_hit_rate": 0.0,
            "net_cost": 0.0,
        }
        calls = data["runs"][0]["calls"]  # type: ignore[index]
        assert [c["tokens"] for c in calls] == [26, 26, 26]
        assert [c["compacted"] for c in calls] == [False, True, True]

    @pytest.mark.parametrize(
        ("gap", "served", "net"),
        [
            # 26 tokens written (x1.25); then 13 read (x0.1) and 13 written, twice.
            ("30", 26, 32.5 + 2 * (1.3 + 16.25)),
            # the entries expire between calls: everything is written again.
            ("600", 0, 78 * 1.25),
        ],
    )
    def test_net_cost_under_a_cost_model(
        self,
        small: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
        *,
        gap: str,
        served: int,
        net: float,
    ) -> None:
        """--cost-model anthropic prices each call's reads and writes, and a gap longer
        than the cache's lifetime makes every call a miss."""
        result = run(
            capsys, monkeypatch, "simulate", small, "--max-tokens", "40",
            "--tokenizer", "heuristic", "--strategy", "window:2", "--json",
            "--cost-model", "anthropic", "--gap", gap,
        )  # fmt: skip
        assert result.code == 0, result.err
        data = result.json()
        totals = _totals(data)
        assert totals["served_tokens"] == served
        assert totals["net_input_cost"] == pytest.approx(net)
        assert totals["cache_hit_rate"] == pytest.approx(served / 78)
        assert totals["compaction_cost"] == 0.0
        assert data["cost_model"]["cache_write"] == 1.25  # type: ignore[index]

    def test_net_cost_in_the_table(
        self, small: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The table shows the cache hit rate and the net cost rows with a cost model."""
        result = run(
            capsys, monkeypatch, "simulate", small, "--max-tokens", "40",
            "--strategy", "window:2", "--strategy", "default:schedule=openai",
            "--cost-model", "openai",
        )  # fmt: skip
        assert result.code == 0, result.err
        assert "cache hit rate" in result.out
        assert "net cost" in result.out
        assert "prices (openai" in result.out

    def test_a_bad_gap_is_one_line(
        self, small: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A negative --gap is a usage error, not a traceback."""
        result = run(
            capsys, monkeypatch, "simulate", small, "--max-tokens", "40",
            "--cost-model", "openai", "--gap", "-1",
        )  # fmt: skip
        assert result.code != 0
        assert "--gap" in result.err

    def test_json_with_an_infinite_gap_is_standard(
        self, small: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """--gap inf is allowed (no call is ever cached) and --json still writes standard
        JSON: the gap is null, never Infinity, which strict readers refuse."""
        result = run(
            capsys, monkeypatch, "simulate", small, "--max-tokens", "40", "--strategy",
            "window:2", "--cost-model", "anthropic", "--gap", "inf", "--json",
        )  # fmt: skip
        assert result.code == 0, result.err

        def refuse(constant: str) -> object:
            msg = f"non-standard JSON: {constant}"
            raise AssertionError(msg)

        data = json.loads(result.out, parse_constant=refuse)
        assert data["gap"] is None
        assert _totals(data)["cache_hit_rate"] == 0

    def test_start_on_user_window(
        self, small: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A window that starts on a user message never sends a call not on user.

        It keeps the user message of its first turn too: [s, u1, a1, u2] and
        [s, u2, a2, u3], 52 tokens each, over the budget of 40.
        """
        result = run(
            capsys, monkeypatch, "simulate", small, "--max-tokens", "40",
            "--tokenizer", "heuristic", "--strategy", "window:2,start-on-user=true", "--json",
        )  # fmt: skip
        assert result.code == 0, result.err
        totals = _totals(result.json())
        assert totals["not_on_user"] == 0
        assert (totals["over_budget"], totals["peak"], totals["task_kept"]) == (2, 52, 2)

    def test_within_budget_nothing_compacts(
        self, small: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With room for everything, every call reuses the previous request as its prefix."""
        result = run(
            capsys, monkeypatch, "simulate", small, "--max-tokens", "1000",
            "--tokenizer", "heuristic", "--strategy", "window:2", "--json",
        )  # fmt: skip
        totals = _totals(result.json())
        assert totals["compactions"] == 0
        assert totals["input_tokens"] == 26 + 52 + 78
        assert totals["cached_tokens"] == 26 + 52
        assert totals["task_kept"] == totals["last_kept"] == 3

    def test_folder_is_summed_like_one(
        self,
        small: Path,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Two copies in a folder give twice the calls, tokens and cost of one."""
        (tmp_path / "copy.json").write_text(small.read_text(encoding="utf-8"), encoding="utf-8")
        result = run(
            capsys, monkeypatch, "simulate", tmp_path, "--max-tokens", "40",
            "--tokenizer", "heuristic", "--strategy", "window:2", "--json",
        )  # fmt: skip
        totals = _totals(result.json())
        assert (totals["calls"], totals["input_tokens"], totals["input_cost"]) == (6, 156, 109.2)
        assert totals["peak"] == 26


class TestComparison:
    """Several stacks are rows of one table, with a verdict."""

    def test_table_and_verdict(
        self, small: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Through the compaction step every stack starts on a user message; the one that
        stays within budget is recommended, and what each lost is said."""
        result = run(
            capsys, monkeypatch, "simulate", small, "--max-tokens", "40",
            "--strategy", "window:2", "--strategy", "window:2,start-on-user=true",
        )  # fmt: skip
        assert result.code == 0, result.err
        lines = result.out.splitlines()
        assert any(line.startswith("calls not starting on user") for line in lines)
        assert "best of these: window:2, but: lost the task in 2 calls" in result.out
        assert (
            "  window:2,start-on-user=true: 2 of 3 calls over budget; lost the task in 1 call"
            in result.out
        )

    def test_langchain_row(
        self, small: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """--compare-langchain adds LangChain's trim_messages and its two context
        middlewares as rows (langchain is installed)."""
        pytest.importorskip("langchain.agents", reason="the langchain extra is not installed")
        result = run(
            capsys, monkeypatch, "simulate", small, "--max-tokens", "40",
            "--strategy", "window:2", "--compare-langchain", "--json",
        )  # fmt: skip
        runs = result.json()["runs"]
        assert isinstance(runs, list)
        labels = [r["label"] for r in runs]
        assert labels == [
            "window:2",
            "langchain trim_messages",
            "langchain SummarizationMiddleware",
            "langchain ContextEditingMiddleware",
        ]
        totals = _totals(result.json(), 1)
        assert totals["calls"] == 3
        assert totals["not_on_user"] == 0

    def test_compares_by_default(
        self, small: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """simulate FILE with no stack and no budget compares our default, a window and
        every LangChain contender installed, at the system messages plus a quarter of
        the rest, and says so; the verdict names what each other contender got wrong."""
        pytest.importorskip("langchain.agents", reason="the langchain extra is not installed")
        data = run(capsys, monkeypatch, "simulate", small, "--json").json()
        runs = data["runs"]
        assert isinstance(runs, list)
        assert [r["label"] for r in runs] == [
            "default",
            "window:12",
            "langchain trim_messages",
            "langchain SummarizationMiddleware",
            "langchain ContextEditingMiddleware",
        ]
        assert data["not_compared"] == []
        counter = TokenizerCounter.from_encoding("o200k_base")
        system = counter.estimate_message(SMALL[0])
        expected = system + int((counter.estimate_messages(SMALL) - system) * 0.25)
        assert data["budgets"] == [expected]
        text = run(capsys, monkeypatch, "simulate", small)
        assert text.code == 0, text.err
        assert "25% of the rest of each transcript (the default; --max-tokens" in text.out
        first, *others = text.out.split("\n\n")[-1].splitlines()
        labels = [str(r["label"]) for r in runs]
        named = [next(label for label in labels if line == f"  {label}: " + line.split(": ", 1)[1])
                 for line in others]  # fmt: skip
        assert len(named) == len(labels) - 1
        (chosen,) = set(labels) - set(named)
        assert chosen in first

    def test_bad_spec_is_one_line(
        self, small: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An unknown step names the spec and the steps there are."""
        result = run(
            capsys, monkeypatch, "simulate", small, "--max-tokens", "40", "--strategy", "widow:3"
        )
        assert result.code == 2
        assert result.err == (
            "neuron-context: error: --strategy 'widow:3': unknown step 'widow'; choose from"
            " default, window, clear-tools, summarize, strip-tools\n"
        )


class TestPlot:
    """--plot writes a PNG of tokens per call with a budget line and compactions."""

    def test_png_with_expected_series(
        self,
        small: Path,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """One line per stack with the tokens of each call, the budget, the markers."""
        saved: list[matplotlib.figure.Figure] = []
        original = matplotlib.figure.Figure.savefig

        def spy(fig: matplotlib.figure.Figure, *args: object, **kwargs: object) -> None:
            saved.append(fig)
            original(fig, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(matplotlib.figure.Figure, "savefig", spy)
        out = tmp_path / "plot.png"
        result = run(
            capsys, monkeypatch, "simulate", small, "--max-tokens", "40",
            "--tokenizer", "heuristic", "--strategy", "window:2", "--strategy", "window:4",
            "--plot", out,
        )  # fmt: skip
        assert result.code == 0, result.err
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        (fig,) = saved
        (axes,) = fig.axes
        series = {
            line.get_label(): np.asarray(line.get_ydata()).tolist() for line in axes.get_lines()
        }
        assert series["window:2"] == [26, 26, 26]
        assert series["budget"] == [40, 40, 40]
        assert "window:4" in series
        markers = [line for line in axes.get_lines() if line.get_marker() == "v"]
        assert np.asarray(markers[0].get_ydata()).tolist() == [26, 26]
        assert [text.get_text() for text in axes.texts] == ["small.json"]

    def test_each_transcript_is_labelled(
        self,
        small: Path,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Transcripts summed in one plot are each labelled with their name."""
        saved: list[matplotlib.figure.Figure] = []
        monkeypatch.setattr(
            matplotlib.figure.Figure, "savefig", lambda fig, *a, **k: saved.append(fig)
        )
        other = tmp_path / "second.json"
        other.write_bytes(small.read_bytes())
        result = run(
            capsys, monkeypatch, "simulate", small, other, "--max-tokens", "40",
            "--strategy", "window:2", "--plot", tmp_path / "plot.png",
        )  # fmt: skip
        assert result.code == 0, result.err
        (axes,) = saved[0].axes
        assert [text.get_text() for text in axes.texts] == ["small.json", "second.json"]

    def test_ten_transcripts_labels_do_not_overlap(
        self,
        small: Path,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """With ten transcripts, short ones side by side, no two labels overlap and the
        figure names every transcript."""
        saved: list[matplotlib.figure.Figure] = []
        monkeypatch.setattr(
            matplotlib.figure.Figure, "savefig", lambda fig, *a, **k: saved.append(fig)
        )
        names = [f"transcript-number-{n}-of-the-long-run.json" for n in range(10)]
        long = [*SMALL, *(Message.user("x" * 36), Message.assistant("y" * 36)) * 80]
        for n, name in enumerate(names):
            turns = long if n == 0 else SMALL[:3]  # one long run, nine of one call each
            document = {"messages": to_openai(turns)}
            (tmp_path / name).write_text(json.dumps(document), encoding="utf-8")
        result = run(
            capsys, monkeypatch, "simulate", *(tmp_path / name for name in names),
            "--max-tokens", "40", "--strategy", "window:2", "--plot", tmp_path / "plot.png",
        )  # fmt: skip
        assert result.code == 0, result.err
        (fig,) = saved
        (axes,) = fig.axes
        fig.draw_without_rendering()
        shown = [t for t in axes.texts if t.get_visible()]
        boxes = sorted((t.get_window_extent() for t in shown), key=lambda b: b.x0)
        assert len(boxes) >= 2
        for left, right in itertools.pairwise(boxes):
            assert left.x1 <= right.x0, (left, right)
        written = " ".join([axes.get_title(), *(t.get_text() for t in axes.texts)])
        for name in names:
            assert name[:27] in written


class TestProgress:
    """A long replay shows a progress bar on a terminal, and none elsewhere."""

    @pytest.mark.parametrize("terminal", [True, False])
    def test_progress_bar(
        self,
        terminal: bool,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """With 250 model calls the bar shows on stderr when it is a terminal."""
        messages = [Message.user("go")]
        for n in range(250):
            messages += [Message.assistant(f"step {n}"), Message.user(f"next {n}")]
        path = tmp_path / "long.json"
        path.write_text(json.dumps(to_openai(messages)), encoding="utf-8")
        if terminal:
            monkeypatch.setenv("TTY_COMPATIBLE", "1")
            monkeypatch.setenv("TTY_INTERACTIVE", "1")
        else:
            monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
        result = run(
            capsys, monkeypatch, "simulate", path, "--max-tokens", "200",
            "--strategy", "window:10", "--json",
        )  # fmt: skip
        assert result.code == 0
        assert ("replaying" in result.err) is terminal
        assert result.json()["runs"][0]["totals"]["calls"] == 250  # type: ignore[index]


class TestContenders:
    """LangChain's context managers run as LangChain runs them; without the extra that
    installs one, the report says which extra adds it."""

    def test_demo_without_langchain_names_the_extras(self) -> None:
        """With LangChain not installed, the demo compares our stacks and names the
        extras that add the LangChain rows."""
        script = """
import sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"langchain", "langchain_core", "langgraph"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Block())
from neuron_context.__main__ import main
sys.exit(main(["simulate", "--demo"]))
"""
        env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
        )
        assert done.returncode == 0, done.stderr
        assert "langchain" not in done.stdout.split("budget:")[0]
        assert (
            "not compared, not installed: LangChain's trim_messages (the langchain extra); "
            "LangChain's SummarizationMiddleware (the langchain extra); LangChain's "
            "ContextEditingMiddleware (the langchain extra); "
            'python -m pip install ".[langchain]" adds them'
        ) in " ".join(done.stdout.split())


class TestSummarizerCost:
    """The compaction calls' own cost: what an LLM summarizer read and wrote."""

    def test_priced_from_the_reported_usage(
        self,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Each summarizer call costs its reported input at the input price and its
        output at the output price (11 and 3 tokens: 11 + 3 x 8 under openai)."""
        pytest.importorskip("openai", reason="the openai extra is not installed")
        pytest.importorskip("anthropic", reason="the anthropic extra is not installed")
        from fake_llm_server import isolate_environment, serve

        isolate_environment(monkeypatch)
        turns = [Message.user("Fix the bug.")]
        for turn in range(12):
            turns += [Message.assistant(f"step {turn} " + "a" * 400), Message.user("b" * 400)]
        path = tmp_path / "long.json"
        path.write_text(json.dumps({"messages": to_openai(turns)}), encoding="utf-8")
        with serve() as server:
            monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
            monkeypatch.setenv("OPENAI_API_KEY", "test-key")
            result = run(
                capsys, monkeypatch, "simulate", path, "--max-tokens", "700",
                "--strategy", "default", "--provider", "openai:gpt-test", "--json",
                "--cost-model", "openai",
            )  # fmt: skip
            calls = len(server.requests)
        assert result.code == 0, result.err
        assert calls > 0
        assert _totals(result.json())["compaction_cost"] == pytest.approx(calls * (11 + 3 * 8))
