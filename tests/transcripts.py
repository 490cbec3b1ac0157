"""The real agent transcripts of the shared data set, for the tests that replay them.

The data is in the repository (``tests/data/agent-transcripts``, see its README.md for
its provenance and licence): 40 conversations in OpenAI Chat Completions form, 14 of
them also in their native Anthropic Messages form under ``anthropic/``, each file
compressed with gzip (about 1.9 MB in all). A checkout without it (a partial copy of the
tests) skips the tests that replay them, saying where the data is expected; under CI
(``$CI`` set) they fail instead (the ``shared_transcripts`` fixture in conftest.py).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from neuron_context import Message
from neuron_context.formats import from_anthropic, from_openai

__all__ = [
    "ANTHROPIC_DIR",
    "DANGLING_CALLS",
    "TRANSCRIPTS_DIR",
    "anthropic_transcript_paths",
    "load_record",
    "load_transcript",
    "missing_transcripts",
    "requires_transcripts",
    "transcript_name",
    "transcript_paths",
]

TRANSCRIPTS_DIR = Path(__file__).parent / "data" / "agent-transcripts"
"""The directory of the OpenAI-form transcripts (``<name>.json.gz``)."""

ANTHROPIC_DIR = TRANSCRIPTS_DIR / "anthropic"
"""The directory of the Anthropic-form copies."""

DANGLING_CALLS: dict[str, tuple[str, ...]] = {
    "openhands-ponylang__ponyc-4593.json": ("toolu_33",),
    "openhands-ponylang__ponyc-4595.json": ("toolu_23",),
}
"""The only tool calls of the data set that never got a result (README), by file name:
each is the agent's final ``finish`` call, in the conversation's last message."""

requires_transcripts = pytest.mark.usefixtures("shared_transcripts")
"""Marks a test (or class) that needs the data set: without it, the test is skipped, or
fails under CI."""


def missing_transcripts() -> str:
    """Why a test that needs the data set cannot run: where the data is expected."""
    return (
        f"the transcripts are not at {TRANSCRIPTS_DIR}: this checkout lacks the tests' "
        "data (tests/data/agent-transcripts, part of the repository)"
    )


def transcript_paths() -> list[Path]:
    """The transcript files, sorted. Without the data, the folder itself stands in for
    them, so a test parametrized by them is still collected, once, and reports the
    missing data (see :data:`requires_transcripts`)."""
    if not TRANSCRIPTS_DIR.is_dir():
        return [TRANSCRIPTS_DIR]
    return sorted(TRANSCRIPTS_DIR.glob("*.json.gz"))


def anthropic_transcript_paths() -> list[Path]:
    """The Anthropic-form transcript files, sorted (the folder itself without the data,
    as for :func:`transcript_paths`)."""
    if not ANTHROPIC_DIR.is_dir():
        return [ANTHROPIC_DIR]
    return sorted(ANTHROPIC_DIR.glob("*.json.gz"))


def transcript_name(path: Path) -> str:
    """The data set's name of a transcript file (``<name>.json``, without ``.gz``)."""
    return path.name.removesuffix(".gz")


def load_record(path: Path) -> dict[str, Any]:
    """The whole record of a transcript file: ``messages`` and its provenance fields."""
    record: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))
    return record


def load_transcript(path: Path) -> list[Message]:
    """The conversation of a transcript file, read with the matching wire format."""
    record = load_record(path)
    if record["format"] == "anthropic-messages":
        return from_anthropic(record["messages"], system=record.get("system"))
    return from_openai(record["messages"])
