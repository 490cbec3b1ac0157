"""Stack specs for ``--strategy``: readable strings and TOML files."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest
from cli_run import run
from hypothesis import given, settings
from hypothesis import strategies as st

from neuron_context.__main__ import main

EXAMPLE = Path(__file__).parents[1] / "examples" / "stack.toml"


class TestSpecs:
    """Specs name stacks; mistakes are one error line."""

    def test_toml_file_is_the_same_stack_as_its_spec(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """examples/stack.toml compacts exactly as the spec it spells out."""
        from_file = run(
            capsys, monkeypatch, "compact", "--demo", "--max-tokens", "3000",
            "--strategy", EXAMPLE, "--json",
        ).json()  # fmt: skip
        from_text = run(
            capsys, monkeypatch, "compact", "--demo", "--max-tokens", "3000",
            "--strategy", "clear-tools:keep=3,summarize:keep=10,window:20", "--json",
        ).json()  # fmt: skip
        assert from_file["stack"] == "clear, summarize, then a window"
        assert from_file["diff"] == from_text["diff"]

    def test_default_options(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """default:target=0.5 compacts further below the budget than the default target."""
        low = run(
            capsys, monkeypatch, "compact", "--demo", "--max-tokens", "6000",
            "--strategy", "default:target=0.5", "--json",
        ).json()  # fmt: skip
        usual = run(
            capsys, monkeypatch, "compact", "--demo", "--max-tokens", "6000", "--json"
        ).json()
        assert low["fits"]
        assert usual["fits"]
        assert low["diff"]["tokens_after"] < usual["diff"]["tokens_after"]  # type: ignore[index]

    @pytest.mark.parametrize(
        ("spec", "problem"),
        [
            ("window:ten", "window: keep must be a whole number >= 0, got 'ten'"),
            ("window:keep=3,size=4", "window has no option 'size' (options: keep, start-on-user)"),
            ("strip-tools:3", "strip-tools takes no value, got '3'"),
            ("window:3,,", "empty step"),
            ("default:target=2", "default: target must be a number in (0, 1], got 2"),
        ],
    )
    def test_mistakes(
        self,
        spec: str,
        problem: str,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Each mistake names the spec and what is wrong, exit code 2."""
        result = run(
            capsys, monkeypatch, "compact", "--demo", "--max-tokens", "3000", "--strategy", spec
        )
        assert result.code == 2
        assert result.err.count("\n") == 1
        assert problem in result.err

    def test_bad_toml(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A TOML file without steps is named in the error."""
        path = tmp_path / "empty.toml"
        path.write_text('name = "nothing"\n', encoding="utf-8")
        result = run(
            capsys, monkeypatch, "compact", "--demo", "--max-tokens", "3000", "--strategy", path
        )
        assert (result.code, result.err) == (
            2,
            f"neuron-context: error: {path}: needs a 'stack' string or a list of [[steps]]\n",
        )

    @settings(max_examples=15, deadline=None)
    @given(keep=st.integers(0, 40), budget=st.integers(1, 20_000))
    def test_any_window_is_well_formed(self, keep: int, budget: int) -> None:
        """Whatever the window and budget, compact's output is well formed."""
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(
                ["compact", "--demo", "--max-tokens", str(budget), "--strategy",
                 f"window:{keep}", "--json"]
            )  # fmt: skip
        data = json.loads(out.getvalue())
        assert data["well_formed"] is True
        assert code == (0 if data["fits"] else 1)
