"""The README's first command (install, then the CLI demo) runs as written.

The package is already installed in the test environment, so the install before ``&&``
is checked, not run: it must install this checkout with extras that exist, among them
``cli``. The command after ``&&`` is run in a subprocess exactly as written when the
``neuron-context`` script is installed beside this interpreter, else as
``python -m neuron_context`` with the same arguments (the script's entry point, which
the test checks in ``pyproject.toml``, is the same ``main``).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from cli_run import run

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
LANGCHAIN = all(importlib.util.find_spec(n) is not None for n in ("langchain", "langchain_core"))
"""The extras that add LangChain's rows to the demo (``langchain``) are installed."""
FIRST_BLOCK = re.search(r"```bash\n(.*?)```", README, re.DOTALL)


def _commands() -> list[str]:
    assert FIRST_BLOCK is not None
    return [line.split("  #")[0].strip() for line in FIRST_BLOCK.group(1).splitlines()]


class TestFirstCommand:
    """The README's first command installs the cli extra and runs the demo."""

    def test_install_part(self) -> None:
        """It installs this checkout with existing extras, including cli."""
        install, _, _ = _commands()[0].partition(" && ")
        words = shlex.split(install)
        assert words[:4] == ["python", "-m", "pip", "install"]
        (target,) = words[4:]
        match = re.fullmatch(r"\.\[([a-z,-]+)\]", target)
        assert match is not None
        extras = match.group(1).split(",")
        assert "cli" in extras
        assert set(extras) <= set(PYPROJECT["project"]["optional-dependencies"])

    def test_script_entry_point(self) -> None:
        """The neuron-context script is the same main as python -m neuron_context."""
        assert PYPROJECT["project"]["scripts"] == {"neuron-context": "neuron_context._cli:main"}

    def test_demo_runs_as_written(self) -> None:
        """The command after && prints the comparison and recommends the default stack."""
        _, _, command = _commands()[0].partition(" && ")
        words = shlex.split(command)
        assert words[:2] == ["neuron-context", "simulate"]
        script = Path(sys.executable).with_name("neuron-context")
        argv = [str(script)] if script.exists() else [sys.executable, "-m", "neuron_context"]
        env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}
        done = subprocess.run(
            [*argv, *words[1:]], capture_output=True, text=True, env=env, check=False, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert "use default:" in done.stdout
        if LANGCHAIN:
            assert "langchain trim_messages" in done.stdout
        else:  # the cli extra alone: the command names the extras that add the rows
            assert 'python -m pip install ".[langchain]" adds them' in done.stdout

    def test_second_command_runs_the_tests(self) -> None:
        """The second command installs nox and runs the tests session."""
        assert _commands()[1] == "python -m pip install nox && nox -s tests"


class TestDemo:
    """What simulate --demo shows makes the library's point."""

    def test_default_keeps_everything_within_budget(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The default stack: no call over budget or off a user message, task always kept."""
        data = run(capsys, monkeypatch, "simulate", "--demo", "--json").json()
        runs = data["runs"]
        assert isinstance(runs, list)
        by_label = {r["label"]: r["totals"] for r in runs}
        default = by_label["default"]
        assert (default["over_budget"], default["not_on_user"]) == (0, 0)
        assert default["task_kept"] == default["last_kept"] == default["calls"] == 16
        assert by_label["window:12"]["over_budget"] > 0
        assert data["recommended"] == "default"
        if not LANGCHAIN:  # the cli extra alone: LangChain's rows are named, not run
            assert list(by_label) == ["default", "window:12"]
            not_compared = data["not_compared"]
            assert isinstance(not_compared, list)
            assert len(not_compared) == 3
            return
        assert list(by_label) == [
            "default",
            "window:12",
            "langchain trim_messages",
            "langchain SummarizationMiddleware",
            "langchain ContextEditingMiddleware",
        ]
        assert by_label["langchain trim_messages"]["task_kept"] < 16
        for middleware in ("SummarizationMiddleware", "ContextEditingMiddleware"):
            assert by_label[f"langchain {middleware}"]["over_budget"] > 0
        assert data["recommended"] == "default"
        assert data["not_compared"] == []


class TestSampleOutput:
    """The README's sample output is what the command prints (it cannot drift)."""

    def test_readme_block_is_the_demo_output(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """simulate --demo, 150 columns wide, prints the README's text block exactly."""
        pytest.importorskip("langchain.agents.middleware")  # the LangChain rows
        from neuron_context.__main__ import main

        block = re.search(r"```text\n(.*?)```", README, re.DOTALL)
        assert block is not None
        monkeypatch.setenv("COLUMNS", "150")
        monkeypatch.setenv("NO_COLOR", "1")
        capsys.readouterr()
        assert main(["simulate", "--demo"]) == 0
        assert capsys.readouterr().out == block.group(1)
