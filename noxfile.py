"""Automation: ``nox -s tests lint typecheck docs`` is what CI runs (see .ci/run)."""

from __future__ import annotations

import os

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

ALL_EXTRAS = ".[dev,openai,anthropic,bench,cli,langchain,pydantic-ai,openai-agents]"


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite, the README example and each benchmark once (no timing)."""
    session.install("-e", ALL_EXTRAS)
    args = session.posargs or ["tests", "benches", "--benchmark-disable", "-n", "auto"]
    session.run("pytest", *args, env={"HYPOTHESIS_PROFILE": "ci"})


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff: lint and formatting."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the package, tests, benchmarks and examples."""
    session.install("-e", ALL_EXTRAS)
    session.run("mypy")


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Run the benchmarks beside the peers and write benchmark.json.

    The benchmarks run at the sizes their targets name (histories up to 100k messages,
    the per-turn ones at 20k and 100k too, the agent loops at 1k and 10k) unless
    ``BENCH_SIZES``, ``BENCH_TURN_SIZES`` or ``BENCH_LOOP_SIZES`` say otherwise; the test
    session keeps their small defaults (it checks each benchmark's result once).
    """
    session.install("-e", ALL_EXTRAS)
    args = session.posargs or ["--benchmark-json=benchmark.json"]
    sizes = {
        name: os.environ.get(name, default)
        for name, default in (
            ("BENCH_SIZES", "1000,10000,100000"),
            ("BENCH_TURN_SIZES", "1000,10000,20000,100000"),
            ("BENCH_LOOP_SIZES", "1000,10000"),
        )
    }
    session.run("pytest", "benches", "--benchmark-only", *args, env=sizes)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site with mkdocs in strict mode."""
    session.install("-e", ".[docs]")
    session.run("mkdocs", "build", "--strict", "--site-dir", "site")


@nox.session(default=False)
def demo(session: nox.Session) -> None:
    """The main job, as the README's first command runs it: the CLI demo, offline, no key.

    Installs the package with the ``cli`` extra (and ``bench``, for the LangChain row),
    compares stacks on the bundled transcripts, then runs ``count`` and ``compact`` on one.
    """
    session.install(".[cli,bench]")
    args = session.posargs or ["simulate", "--demo"]
    session.run("neuron-context", *args)
    if not session.posargs:
        session.run("neuron-context", "count", "--demo")
        session.run("neuron-context", "compact", "--demo", "--max-tokens", "4000")
