"""Running ``neuron-context`` in-process for the CLI tests (fast: no interpreter start-up).

``neuron_context.__main__.main`` is what the ``neuron-context`` console script and
``python -m neuron_context`` call. Output is plain text, 100 columns wide, no colour.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from neuron_context.__main__ import main


@attrs.frozen
class Result:
    """What a run printed and returned."""

    code: int
    out: str
    err: str

    def json(self) -> dict[str, object]:
        """Stdout read as a JSON object."""
        data = json.loads(self.out)
        assert isinstance(data, dict)
        return data


def run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str | Path
) -> Result:
    """Run ``neuron-context *argv`` and capture what it printed."""
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    capsys.readouterr()
    code = main([str(arg) for arg in argv])
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)
