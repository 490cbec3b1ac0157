"""Shared fixtures and Hypothesis profiles."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Local runs are quick by default ("dev"); `nox -s tests` (what CI runs) sets "ci".
settings.register_profile("dev", max_examples=30, deadline=None)
settings.register_profile(
    "thorough",
    max_examples=100_000,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

if TYPE_CHECKING:
    from fake_llm_server import FakeLLMServer, Flavour


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every async test under asyncio and trio."""
    return str(request.param)


@pytest.fixture(autouse=True, scope="session")
def session_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Keep converted tokenizers in the test run's temp dir, not the user's cache."""
    path = tmp_path_factory.getbasetemp() / "neuron-context-cache"
    previous = os.environ.get("NEURON_CONTEXT_CACHE_DIR")
    os.environ["NEURON_CONTEXT_CACHE_DIR"] = str(path)
    yield path
    if previous is None:
        os.environ.pop("NEURON_CONTEXT_CACHE_DIR", None)
    else:
        os.environ["NEURON_CONTEXT_CACHE_DIR"] = previous


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    """A fake LLM server on 127.0.0.1, with no proxy or API key taken from the environment."""
    # Imported here: the module imports both SDKs, which most tests never need.
    from fake_llm_server import isolate_environment, serve

    isolate_environment(monkeypatch)
    with serve() as running:
        yield running


@pytest.fixture(params=["openai", "anthropic"])
def flavour(request: pytest.FixtureRequest) -> Flavour:
    """Each SDK provider in turn, for the tests of the provider contract."""
    from fake_llm_server import ANTHROPIC, OPENAI

    return OPENAI if request.param == "openai" else ANTHROPIC
