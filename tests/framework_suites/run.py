"""Run a framework's own test suite without our adapter and with it in every agent, and
say which tests pass without it but fail with it.

Not part of our test run (nothing here is named ``test_*``): it needs the framework's
test suite on disk and its test dependencies, and takes minutes. See README.md beside it::

    python tests/framework_suites/run.py langchain --suite /tmp/langchain-1.5.2
    python tests/framework_suites/run.py pydantic-ai --suite /tmp/pydantic-ai
    python tests/framework_suites/run.py openai-agents --suite /tmp/oa/openai_agents-0.24.0

(``run_openai_agents.py`` is the Agents SDK's entry point with its own arguments; it runs
the same code.) A suite that is not on disk is skipped with a message saying how to get
it (exit 0). Exit 1 when a test that passes without the adapter fails with it at the
default (idle) budget.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import attrs

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@attrs.frozen
class Suite:
    """Where a framework's tests are in its source tree, and how pytest runs them with
    our adapter inside."""

    paths: tuple[str, ...]
    """The test files or folders, relative to the source tree; a pattern with ``*`` is
    globbed under it."""
    options: tuple[str, ...]
    """pytest options of both runs."""
    plugins: tuple[str, ...]
    """The plugins (modules beside this file) loaded in both runs."""
    inside: tuple[str, ...]
    """The plugins loaded only in the run with our adapter."""
    budget: str
    """The environment variable the plugin reads the adapter's budget from (set only in
    the run with our adapter)."""
    idle: int
    """The default budget: never reached, so the adapter only reads and passes on."""
    fetch: str
    """How to get the suite."""
    environment: tuple[tuple[str, str], ...] = ()
    """Environment variables of both runs."""

    def files(self, suite: Path) -> list[str]:
        """The test files and folders to run, relative to ``suite`` (globbed patterns
        sorted, without duplicates)."""
        found: list[str] = []
        for path in self.paths:
            if "*" in path:
                found += sorted(p.relative_to(suite).as_posix() for p in suite.glob(path))
            else:
                found.append(path)
        return list(dict.fromkeys(found))

    def missing(self, suite: Path) -> str | None:
        """A path of the suite that is not on disk, or ``None``."""
        for path in self.paths:
            if "*" not in path and not (suite / path).exists():
                return path
        patterns = [path for path in self.paths if "*" in path]
        if patterns and not any(any(suite.glob(path)) for path in patterns):
            return patterns[0]
        return None


SUITES = {
    "langchain": Suite(
        paths=("tests/unit_tests/agents",),
        options=("-o", "addopts="),
        plugins=("neuron_plugin",),
        inside=(),
        budget="NEURON_BUDGET",
        idle=1_000_000_000,
        fetch=(
            "pip download --no-deps --no-binary :all: langchain==<installed> -d /tmp, "
            "then unpack the sdist"
        ),
        environment=(("NEURON_FRAMEWORK", "langchain"),),
    ),
    "pydantic-ai": Suite(
        paths=(
            "tests/test_agent.py",
            "tests/test_history_processor.py",
            "tests/test_tools.py",
            "tests/test_streaming.py",
            "tests/models/test_model_function.py",
            "tests/models/test_model_test.py",
            "tests/models/test_fallback.py",
            "tests/models/test_model.py",
        ),
        options=("-o", "addopts=", "-p", "no:asyncio"),
        plugins=("neuron_plugin",),
        inside=(),
        budget="NEURON_BUDGET",
        idle=1_000_000_000,
        fetch="a checkout of github.com/pydantic/pydantic-ai (its tests/ and pyproject.toml)",
        environment=(("NEURON_FRAMEWORK", "pydantic-ai"),),
    ),
    "openai-agents": Suite(
        paths=(
            "tests/test_agent*.py",
            "tests/test_run*.py",
            "tests/test_*runner*.py",
            "tests/test_*tool*.py",
            "tests/test_*session*.py",
            "tests/test_*filter*.py",
            "tests/memory/test_*.py",
        ),
        options=("--continue-on-collection-errors", "-o", "junit_family=xunit1"),
        plugins=(),
        inside=("openai_agents_inside",),
        budget="NEURON_CONTEXT_BUDGET",
        idle=1_000_000,
        fetch=(
            "pip download --no-deps --no-binary :all: openai-agents==<installed> -d /tmp/oa, "
            "then unpack the sdist"
        ),
    ),
}


@attrs.frozen
class Outcome:
    """One run's tests by outcome (their pytest node ids)."""

    passed: frozenset[str]
    failed: frozenset[str]
    skipped: frozenset[str]


def read_junit(path: Path) -> Outcome:
    """The outcome of each test case of a JUnit XML report."""
    passed: set[str] = set()
    failed: set[str] = set()
    skipped: set[str] = set()
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        tags = {child.tag for child in case}
        if tags & {"failure", "error"}:
            failed.add(name)
        elif "skipped" in tags:
            skipped.add(name)
        else:
            passed.add(name)
    return Outcome(frozenset(passed - failed), frozenset(failed), frozenset(skipped))


def run(
    framework: str,
    suite: Path,
    python: str,
    *,
    budget: int | None,
    report: Path,
    extra: list[str],
) -> Outcome:
    """One pytest run of ``framework``'s suite (``budget``: our adapter in every agent)."""
    spec = SUITES[framework]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), str(ROOT), env.get("PYTHONPATH")]))
    env.update(spec.environment)
    env.pop(spec.budget, None)
    plugins = list(spec.plugins)
    if budget is not None:
        env[spec.budget] = str(budget)
        plugins += spec.inside
    command = [python, "-m", "pytest", *spec.files(suite), "-q", "-p", "no:cacheprovider"]
    for plugin in plugins:
        command += ["-p", plugin]
    command += [*spec.options, f"--junitxml={report}", *extra]
    subprocess.run(command, cwd=suite, env=env, check=False, stdout=subprocess.DEVNULL)
    return read_junit(report)


def compare(
    framework: str,
    suite: Path,
    python: str,
    *,
    budgets: list[int],
    reports: Path,
    extra: list[str],
    baseline: Path | None = None,
) -> int:
    """Run the suite without the adapter (or read ``baseline``, a report of that run),
    then with it at each of ``budgets``; print the difference. The number of tests that
    pass without the adapter and fail with it at the first budget."""
    spec = SUITES[framework]
    print(f"{framework}: {len(spec.files(suite))} test files or folders")
    if baseline is None:
        baseline = reports / "without.xml"
        without = run(framework, suite, python, budget=None, report=baseline, extra=extra)
    else:
        without = read_junit(baseline)
    print(f"without the adapter: {len(without.passed)} passed, {len(without.failed)} failed")
    worse = 0
    for index, budget in enumerate(budgets):
        report = reports / f"with-{budget}.xml"
        with_us = run(framework, suite, python, budget=budget, report=report, extra=extra)
        lost = sorted(without.passed & with_us.failed)
        print(
            f"with default_stack({budget}) in every agent: {len(with_us.passed)} passed, "
            f"{len(with_us.failed)} failed; {len(lost)} pass without it and fail with it"
        )
        for name in lost:
            print(f"  {name}")
        if index == 0:
            worse = len(lost)
    return worse


def main(argv: list[str] | None = None) -> int:
    """Run the suite twice (three times with ``--small``) and print the difference."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("framework", choices=sorted(SUITES))
    parser.add_argument("--suite", type=Path, required=True, help="the framework's source tree")
    parser.add_argument("--python", default=sys.executable, help="a Python with its test deps")
    parser.add_argument("--budget", type=int, help="the adapter's budget (default: idle)")
    parser.add_argument("--small", type=int, help="also run at this (compacting) budget")
    parser.add_argument("-k", dest="keyword", help="only the tests pytest's -k selects")
    parser.add_argument("--reports", type=Path, help="keep the JUnit reports here")
    parser.add_argument("--baseline", type=Path, help="a report of the run without us, reused")
    parser.add_argument("pytest_args", nargs="*", help="passed on to pytest (after --)")
    args = parser.parse_args(argv)
    return suite_main(
        args.framework,
        args.suite,
        args.python,
        budgets=[args.budget or SUITES[args.framework].idle, *filter(None, [args.small])],
        keyword=args.keyword,
        reports=args.reports,
        baseline=args.baseline,
        extra=args.pytest_args,
    )


def suite_main(
    framework: str,
    suite: Path | None,
    python: str,
    *,
    budgets: list[int],
    keyword: str | None,
    reports: Path | None,
    baseline: Path | None,
    extra: list[str],
) -> int:
    """What both entry points do: skip a suite not on disk (exit 0), else compare the
    runs (exit 1 when a test passing without the adapter fails with it)."""
    spec = SUITES[framework]
    missing = "the suite's folder" if suite is None else spec.missing(suite)
    if suite is None or missing is not None:
        print(f"SKIPPED: {framework}'s suite is not on disk ({missing} is missing).")
        print(f"Get it with: {spec.fetch}.")
        return 0
    pytest_args = [*(["-k", keyword] if keyword else []), *extra]
    with tempfile.TemporaryDirectory() as scratch:
        where = reports or Path(scratch)
        where.mkdir(parents=True, exist_ok=True)
        worse = compare(
            framework,
            suite,
            python,
            budgets=budgets,
            reports=where,
            extra=pytest_args,
            baseline=baseline,
        )
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
