"""``neuron-context count``: where a transcript's tokens go."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import run

from neuron_context import Message, TokenCounter, TokenizerCounter, ToolDefinition
from neuron_context.data import load_record
from neuron_context.formats import (
    from_anthropic,
    from_openai,
    to_anthropic,
    to_openai,
    tools_to_anthropic,
    tools_to_openai,
)

GOLDEN = """\
demo:sweagent-pydicom__pydicom-1458: 27 messages, 14,263 (o200k_base), 14,524 (heuristic) tokens

By role
role      ┃ count ┃ tokens (o200k_base) ┃ tokens (heuristic) ┃ share
━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━╇━━━━━━
user      │     2 │               5,898 │              6,003 │   41%
tool      │    12 │               5,732 │              5,648 │   40%
assistant │    12 │               1,515 │              1,649 │   11%
system    │     1 │               1,118 │              1,224 │    8%

By tool (calls and their results)
tool      ┃ calls ┃ tokens (o200k_base) ┃ tokens (heuristic) ┃ share
━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━╇━━━━━━
edit      │     5 │               4,244 │              4,291 │   66%
open      │     1 │               1,349 │              1,284 │   21%
bash      │     3 │                 483 │                441 │    7%
submit    │     1 │                 220 │                209 │    3%
find_file │     1 │                 119 │                 96 │    2%
create    │     1 │                  62 │                 51 │    1%
"""


class TestCount:
    """count on the bundled transcript."""

    def test_golden_text(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The text report's first tables, at 100 columns and no colour."""
        result = run(capsys, monkeypatch, "count", "--demo")
        assert result.code == 0, result.err
        lines = [line.rstrip() for line in result.out.splitlines()]
        assert "\n".join(lines).startswith(GOLDEN)
        assert "Largest messages" in result.out

    def test_json_sums_to_the_total(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Roles and block kinds each add up to each counter's total for the transcript:
        o200k_base first (the default), the heuristic beside it."""
        result = run(capsys, monkeypatch, "count", "--demo", "--json")
        data = result.json()
        assert data["counters"] == ["o200k_base", "heuristic"]
        messages = from_openai(load_record("sweagent-pydicom__pydicom-1458")["messages"])
        totals = [
            TokenizerCounter.from_encoding("o200k_base").estimate_messages(messages),
            TokenCounter().estimate_messages(messages),
        ]
        assert data["total"] == totals
        for key in ("by_role", "by_kind"):
            rows = data[key]
            assert isinstance(rows, list)
            for column, total in enumerate(totals):
                assert sum(row["tokens"][column] for row in rows) == total
        largest = data["largest"]
        assert isinstance(largest, list)
        assert len(largest) == 10
        assert largest[0]["tokens"][1] == 4851

    def test_exact_counter_column(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """--tokenizer chooses the exact column, shown first with the heuristic beside
        it; --tokenizer heuristic shows the heuristic alone."""
        result = run(capsys, monkeypatch, "count", "--demo", "--tokenizer", "cl100k_base", "--json")
        assert result.code == 0, result.err
        data = result.json()
        assert data["counters"] == ["cl100k_base", "heuristic"]
        total = data["total"]
        assert isinstance(total, list)
        assert total[1] == 14524
        assert 0 < total[0] < 14524 * 2
        alone = run(capsys, monkeypatch, "count", "--demo", "--tokenizer", "heuristic", "--json")
        assert (alone.json()["counters"], alone.json()["total"]) == (["heuristic"], [14524])

    def test_count_agrees_with_compact(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """count and compact give one figure for one file: both count o200k_base by default
        (an uncompacted file's tokens before and after are its count)."""
        counted = run(capsys, monkeypatch, "count", "--demo", "--json").json()
        compacted = run(
            capsys, monkeypatch, "compact", "--demo", "--max-tokens", "1000000", "--json"
        ).json()
        diff = compacted["diff"]
        assert isinstance(diff, dict)
        assert isinstance(counted["total"], list)
        assert compacted["counter"] == counted["counters"][0] == "o200k_base"  # type: ignore[index]
        assert diff["tokens_before"] == diff["tokens_after"] == counted["total"][0]

    def test_unknown_tokenizer(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A tokenizer that cannot be loaded is one error line, exit code 2."""
        result = run(capsys, monkeypatch, "count", "--demo", "--tokenizer", "/nope/tok.json")
        assert result.code == 2
        assert result.err.startswith("neuron-context: error: --tokenizer /nope/tok.json: ")
        assert result.err.count("\n") == 1

    def test_no_file(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without a file or --demo, the error says what to give."""
        result = run(capsys, monkeypatch, "count")
        assert (result.code, result.err) == (
            2,
            "neuron-context: error: give a transcript file (or --demo for a bundled one)\n",
        )

    def test_missing_extra(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without rich, the error says to install the cli extra; --json still works."""
        for name in [m for m in sys.modules if m.partition(".")[0] == "rich"] + ["rich"]:
            monkeypatch.setitem(sys.modules, name, None)
        result = run(capsys, monkeypatch, "count", "--demo")
        assert (result.code, result.err) == (
            2,
            "neuron-context: error: rich is missing: install the cli extra:"
            " python -m pip install '.[cli]'\n",
        )
        assert run(capsys, monkeypatch, "count", "--demo", "--json").code == 0


class TestImport:
    """The command line's libraries load only when it runs."""

    def test_import_does_not_load_rich_or_matplotlib(self) -> None:
        """import neuron_context imports neither rich nor matplotlib."""
        code = "import sys, neuron_context; print(sorted({m.split('.')[0] for m in sys.modules}))"
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert "'rich'" not in done.stdout
        assert "'matplotlib'" not in done.stdout


class TestToolDefinitions:
    """The tool definitions a request sends count, as the agent loop counts them."""

    @pytest.mark.parametrize("fmt", ["openai", "anthropic"])
    def test_tools_are_counted(
        self,
        fmt: str,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """A record's tools are a kind of their own and in the total."""
        tool = ToolDefinition(
            name="read_file",
            description="Read a file of the repository.",
            input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
        )
        history = [Message.user("Read a.py."), Message.assistant("Done.")]
        data: dict[str, object]
        if fmt == "openai":
            data = {"messages": to_openai(history), "tools": tools_to_openai([tool])}
        else:
            _, turns = to_anthropic(history)
            data = {"system": "Be brief.", "messages": turns, "tools": tools_to_anthropic([tool])}
        source = tmp_path / "request.json"
        source.write_text(json.dumps(data), encoding="utf-8")
        result = run(capsys, monkeypatch, "count", source, "--json", "--tokenizer", "heuristic")
        assert result.code == 0, result.err
        counted = result.json()
        tools = TokenCounter().estimate_tools([tool])
        by_kind = counted["by_kind"]
        assert isinstance(by_kind, list)
        kinds = {row["label"]: row for row in by_kind}
        assert kinds["tool definitions"]["count"] == 1
        assert kinds["tool definitions"]["tokens"] == [tools]
        messages = from_anthropic(turns, system="Be brief.") if fmt == "anthropic" else history
        assert counted["total"] == [TokenCounter().estimate_messages(messages) + tools]


class TestVersion:
    """--version prints the library's version."""

    def test_version(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """neuron-context --version is the package's version, exit code 0."""
        from importlib import metadata

        import neuron_context

        expected = getattr(neuron_context, "__version__", None) or metadata.version(
            "neuron-context"
        )
        result = run(capsys, monkeypatch, "--version")
        assert (result.code, result.out) == (0, f"neuron-context {expected}\n")
