"""Automation: ``nox -s tests lint typecheck docs`` is what CI runs (see .ci/run), with the
main job (``nox -s demo``), each extra alone (``nox -t extras``) and every floor we claim
(``nox -s lowest``)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import nox
from packaging.requirements import Requirement

# uv when it is installed (CI installs it: the extras' fresh environments install in
# seconds instead of a minute), else the standard library's venv and pip.
nox.options.default_venv_backend = "uv|venv"
nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

ROOT = Path(__file__).parent
ALL_EXTRAS = ".[dev,openai,anthropic,otel,bench,cli,langchain,pydantic-ai,openai-agents,redis]"

DOCS_PAGE = "tests/test_docs_examples.py::TestDocsExamples::test_page_examples_run[{}]"
KEY_BLOCK = (
    "tests/test_docs_examples.py::TestDocsExamples::"
    "test_api_key_blocks_run_against_a_local_server[strategies/summarization.md-{}]"
)

EXTRA_CHECKS: dict[str, tuple[list[str], list[str]]] = {
    # extra: (what pytest runs: the extra's tests and its first documented example,
    #         and what else the session installs beside the extra and the test tools)
    "core": (
        [
            "tests/test_readme.py",
            "tests/test_public_api.py",
            "tests/test_exports.py",
            "tests/test_counter_bound.py",
            "tests/test_ext_imports.py::TestLazyImports",
            "tests/test_sdk_providers.py::TestSDKImports::test_import_needs_no_sdk",
            DOCS_PAGE.format("index.md"),
            DOCS_PAGE.format("quickstart.md"),
        ],
        [],
    ),
    "openai": (
        ["tests/test_openai_provider.py", "tests/test_sdk_providers.py", KEY_BLOCK.format(6)],
        [],
    ),
    "anthropic": (
        ["tests/test_anthropic_provider.py", "tests/test_sdk_providers.py", KEY_BLOCK.format(7)],
        [],
    ),
    "langchain": (
        [
            "tests/test_ext_langchain.py",
            "tests/test_ext_langchain_budget.py",
            "tests/test_ext_langchain_fleet.py",
            "tests/test_ext_sessions.py",
            "tests/test_recall_ext.py::TestLangChain",
            DOCS_PAGE.format("adapters/langchain.md"),
        ],
        [],
    ),
    "pydantic-ai": (
        [
            "tests/test_ext_pydantic_ai.py",
            "tests/test_ext_pydantic_ai_fleet.py",
            "tests/test_recall_ext.py::TestPydanticAI",
            DOCS_PAGE.format("adapters/pydantic-ai.md"),
        ],
        [],
    ),
    "openai-agents": (
        [
            "tests/test_ext_openai_agents.py",
            "tests/test_recall_ext.py::TestOpenAIAgents",
            DOCS_PAGE.format("adapters/openai-agents.md"),
        ],
        [],
    ),
    # The store contract against a real redis-server (.ci/run installs it).
    "redis": (["tests/test_stores.py"], []),
    # The command line alone: every command, LangChain's rows named instead of run.
    "cli": (["-n", "2", *sorted(str(p) for p in Path("tests").glob("test_cli_*.py"))], []),
    # Exact counting through tiktoken's encoder: the same counts as the core's tokenizer.
    "tiktoken": (
        [
            "tests/test_counter_bound.py",
            "tests/test_tokenizer_counter.py",
            "tests/test_encodings.py",
        ],
        [],
    ),
    # The tracing tests read spans with the SDK's in-memory exporter: a test dependency.
    "otel": (
        ["tests/test_tracing.py", DOCS_PAGE.format("agent/tracing.md")],
        ["opentelemetry-sdk"],
    ),
}
"""Each extra's checks when it is installed alone (``core``: no extra at all)."""

OTHER_SDK = {"openai": "anthropic", "anthropic": "openai"}
"""The provider suite runs for both SDKs; alone, an SDK's session deselects the other's."""


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite, the README example and each benchmark once (no timing)."""
    session.install("-e", ALL_EXTRAS)
    args = session.posargs or ["tests", "benches", "--benchmark-disable", "-n", "auto"]
    session.run("pytest", *args, env={"HYPOTHESIS_PROFILE": "ci"})


def _extra_session(extra: str) -> None:
    """Register ``extra-<extra>``: the extra alone, in a fresh environment of its own."""
    paths, more = EXTRA_CHECKS[extra]

    def run(session: nox.Session) -> None:
        extras = "test" if extra == "core" else f"{extra},test"
        session.install(f".[{extras}]", *more)
        args = ["-p", "no:cacheprovider", "-q", *session.posargs, *paths]
        if extra in OTHER_SDK:
            args += ["-k", f"not {OTHER_SDK[extra]}"]
        session.run("pytest", *args)

    run.__doc__ = f"The {extra!r} extra alone: its tests and its first documented example."
    if extra == "core":
        run.__doc__ = "No extra: the core's tests, the README's examples, the missing-extra hints."
    nox.session(name=f"extra-{extra}", default=False, tags=["extras"])(run)


for _extra in EXTRA_CHECKS:
    _extra_session(_extra)

LOWEST = ["openai", "anthropic", "langchain", "otel"]
"""The extras whose floor is below their newest release (pydantic-ai and openai-agents
claim their newest, which their own sessions test)."""


@nox.session(default=False)
def lowest(session: nox.Session) -> None:
    """The floors we claim, at once: every runtime dependency and every framework of
    :data:`LOWEST` at the lowest version ``pyproject.toml`` admits, with their tests."""
    floors = [f"{name}=={version}" for name, version in _floors_of(["", *LOWEST]).items()]
    floors.append(f"opentelemetry-sdk=={_floor('otel', 'opentelemetry-api')}")
    constraints = Path(session.create_tmp()) / "floors.txt"
    constraints.write_text("\n".join(floors) + "\n", encoding="utf-8")
    session.install("-c", str(constraints), f".[{','.join(LOWEST)},test]", "opentelemetry-sdk")
    show = "import importlib.metadata as m, sys\nfor n in sys.argv[1:]: print(n, m.version(n))"
    session.run("python", "-c", show, *(floor.split("==")[0] for floor in floors))
    paths = sorted({path for extra in ["core", *LOWEST] for path in EXTRA_CHECKS[extra][0]})
    session.run("pytest", "-p", "no:cacheprovider", "-q", "-n", "2", *paths)


def _floors_of(extras: list[str]) -> dict[str, str]:
    """``{package: lowest admitted version}`` of the runtime dependencies (``""``) and of
    ``extras``, from their ``>=`` specifiers."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    floors: dict[str, str] = {}
    for extra in extras:
        specs = project["dependencies"] if extra == "" else project["optional-dependencies"][extra]
        for spec in specs:
            requirement = Requirement(spec)
            for clause in requirement.specifier:
                if clause.operator == ">=":
                    floors[requirement.name] = clause.version
    return floors


def _floor(extra: str, package: str) -> str:
    """The lowest version of ``package`` that ``extra`` admits."""
    return _floors_of([extra])[package]


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

    Installs the package with the README's extras (``cli``; ``langchain`` for
    LangChain's rows), compares stacks on the bundled transcripts, then runs ``count``
    and ``compact`` on one.
    """
    session.install(".[cli,langchain]")
    args = session.posargs or ["simulate", "--demo"]
    session.run("neuron-context", *args)
    if not session.posargs:
        session.run("neuron-context", "count", "--demo")
        session.run("neuron-context", "compact", "--demo", "--max-tokens", "4000")
