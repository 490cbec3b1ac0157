"""Run a framework's own test suite without our adapter and with it in every agent, and
say which tests pass without it but fail with it.

Not part of our test run (nothing here is named ``test_*``): it needs the framework's
test suite on disk and its test dependencies, and takes minutes. See README.md beside it::

    python tests/framework_suites/run.py langchain --suite /tmp/langchain-1.5.2
    python tests/framework_suites/run.py pydantic-ai --suite /tmp/pydantic-ai

A suite that is not on disk is skipped with a message saying how to get it (exit 0).
Exit 1 when a test that passes without the adapter fails with it.
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
    """Where a framework's tests are in its source tree, and how pytest runs them."""

    paths: tuple[str, ...]
    options: tuple[str, ...]
    fetch: str


SUITES = {
    "langchain": Suite(
        paths=("tests/unit_tests/agents",),
        options=("-o", "addopts="),
        fetch=(
            "pip download --no-deps --no-binary :all: langchain==<installed> -d /tmp, "
            "then unpack the sdist"
        ),
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
        fetch="a checkout of github.com/pydantic/pydantic-ai (its tests/ and pyproject.toml)",
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
    return Outcome(frozenset(passed), frozenset(failed - passed), frozenset(skipped))


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
    env["NEURON_FRAMEWORK"] = framework
    env.pop("NEURON_BUDGET", None)
    if budget is not None:
        env["NEURON_BUDGET"] = str(budget)
    command = [
        python,
        "-m",
        "pytest",
        *spec.paths,
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "neuron_plugin",
        *spec.options,
        f"--junitxml={report}",
        *extra,
    ]
    subprocess.run(command, cwd=suite, env=env, check=False, stdout=subprocess.DEVNULL)
    return read_junit(report)


def main(argv: list[str] | None = None) -> int:
    """Run the suite twice (three times with ``--small``) and print the difference."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("framework", choices=sorted(SUITES))
    parser.add_argument("--suite", type=Path, required=True, help="the framework's source tree")
    parser.add_argument("--python", default=sys.executable, help="a Python with its test deps")
    parser.add_argument("--budget", type=int, default=1_000_000_000, help="idle: never reached")
    parser.add_argument("--small", type=int, help="also run at this (compacting) budget")
    parser.add_argument("pytest_args", nargs="*", help="passed on to pytest (after --)")
    args = parser.parse_args(argv)
    spec = SUITES[args.framework]
    missing = [p for p in spec.paths if not (args.suite / p).exists()]
    if missing:
        print(f"SKIPPED: {args.framework}'s suite is not on disk ({args.suite / missing[0]}).")
        print(f"Get it with: {spec.fetch}.")
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        where = Path(scratch)
        without = run(
            args.framework,
            args.suite,
            args.python,
            budget=None,
            report=where / "without.xml",
            extra=args.pytest_args,
        )
        print(f"without the adapter: {len(without.passed)} passed, {len(without.failed)} failed")
        budgets = [args.budget] if args.small is None else [args.budget, args.small]
        worse = 0
        for budget in budgets:
            report = where / f"with-{budget}.xml"
            with_us = run(
                args.framework,
                args.suite,
                args.python,
                budget=budget,
                report=report,
                extra=args.pytest_args,
            )
            lost = sorted(without.passed & with_us.failed)
            print(
                f"with default_stack({budget}) in every agent: {len(with_us.passed)} passed, "
                f"{len(with_us.failed)} failed; {len(lost)} pass without it and fail with it"
            )
            for name in lost:
                print(f"  {name}")
            if budget == args.budget:
                worse = len(lost)
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
