"""Real agent transcripts bundled with the package, for the demo and offline tests.

Examples:
    >>> from neuron_context.data import transcript_names
    >>> "spotter-tool-heavy" in transcript_names()
    True
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from .._errors import show

__all__ = ["load_record", "transcript_names"]


def transcript_names() -> list[str]:
    """Names of the bundled transcripts (file names without ``.json``), sorted."""
    files = resources.files(__name__).iterdir()
    return sorted(f.name.removesuffix(".json") for f in files if f.name.endswith(".json"))


def load_record(name: str) -> dict[str, Any]:
    """The bundled record ``name``: its OpenAI-format ``messages`` and provenance fields."""
    from .._errors import ConfigurationError

    if name not in transcript_names():
        msg = f"transcript {show(name)} is not bundled; choose one of {transcript_names()}"
        raise ConfigurationError(msg)
    text = resources.files(__name__).joinpath(f"{name}.json").read_text(encoding="utf-8")
    record: dict[str, Any] = json.loads(text)
    return record
