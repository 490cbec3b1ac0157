"""Run the OpenAI Agents SDK's own tests without and with our filter in every run.

Not part of our test run (pytest collects ``test_*.py`` only). Usage, from the root of
this repository::

    python tests/framework_suites/run_openai_agents.py [SUITE] [--python PY] [-k EXPR]

``SUITE`` is the unpacked sdist of the installed ``openai-agents`` (default:
``$OPENAI_AGENTS_SUITE``)::

    pip download --no-deps --no-binary :all: openai-agents==<installed> -d /tmp/oa
    tar xzf /tmp/oa/openai_agents-<installed>.tar.gz -C /tmp/oa

``PY`` is a Python with ``openai-agents``, this library's dependencies, and the suite's
own test dependencies (``pytest-asyncio``, ``pytest-mock``, ``inline-snapshot``): keep
them in their own environment, since ``pytest-asyncio`` would load into ours. The runner,
agent, tool, session and filter tests run twice, the second time with
``openai_agents_inside`` (the plugin beside this file) putting our
``CallModelInputFilter`` into every run; the script prints how many pass without us, with
us, and every test that passes without us and fails with us (exit status 1 if any).
Without the suite on disk it says so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SELECTION = (
    "test_agent*.py",
    "test_run*.py",
    "test_*runner*.py",
    "test_*tool*.py",
    "test_*session*.py",
    "test_*filter*.py",
    "memory/test_*.py",
)
"""The runner, agent, tool, session and filter tests, relative to the suite's tests/."""


def selection(suite: Path) -> list[str]:
    """The test files to run, relative to ``suite``."""
    tests = suite / "tests"
    found = {p.relative_to(suite).as_posix() for g in SELECTION for p in tests.glob(g)}
    return sorted(found)


def outcomes(report: Path) -> dict[str, str]:
    """Each test's outcome (passed, failed, skipped) from a JUnit XML report."""
    out: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        tags = {child.tag for child in case}
        failed = bool(tags & {"failure", "error"})
        out[name] = "failed" if failed else "skipped" if "skipped" in tags else "passed"
    return out


def run(
    suite: Path, python: str, files: list[str], extra: list[str], report: Path, *, ours: int | None
) -> Path:
    """Run ``files`` of ``suite`` into the JUnit ``report``; ``ours``: with our plugin,
    at this budget."""
    env = dict(os.environ)
    if ours is not None:
        env["NEURON_CONTEXT_BUDGET"] = str(ours)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), str(HERE), env.get("PYTHONPATH")]))
    plugin = ["-p", "openai_agents_inside"] if ours is not None else []
    command = [python, "-m", "pytest", *files, *plugin, *extra]
    command += ["-q", "-p", "no:cacheprovider", "--continue-on-collection-errors"]
    command += [f"--junitxml={report}", "-o", "junit_family=xunit1"]
    subprocess.run(command, cwd=suite, env=env, check=False, stdout=subprocess.DEVNULL)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", nargs="?", default=os.environ.get("OPENAI_AGENTS_SUITE"))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("-k", dest="keyword", default=None)
    parser.add_argument("--budget", type=int, default=1_000_000, help="ours: idle by default")
    parser.add_argument("--reports", help="where to keep the JUnit reports (default: a temp dir)")
    parser.add_argument("--baseline", help="a JUnit report of the run without us, to reuse")
    args = parser.parse_args(argv)
    suite = Path(args.suite) if args.suite else None
    if suite is None or not (suite / "tests" / "conftest.py").is_file():
        print(
            "skipped: the Agents SDK's test suite is not on disk; unpack the sdist of the "
            "installed openai-agents and pass its folder (or set OPENAI_AGENTS_SUITE)"
        )
        return 0
    files = selection(suite)
    extra = ["-k", args.keyword] if args.keyword else []
    reports = Path(args.reports or tempfile.mkdtemp())
    reports.mkdir(parents=True, exist_ok=True)
    baseline = Path(args.baseline) if args.baseline else None
    if baseline is None:
        baseline = run(suite, args.python, files, extra, reports / "without.xml", ours=None)
    without = outcomes(baseline)
    with_us = outcomes(
        run(suite, args.python, files, extra, reports / "with.xml", ours=args.budget)
    )
    passed = {name for name, outcome in without.items() if outcome == "passed"}
    ours = {name for name, outcome in with_us.items() if outcome == "passed"}
    broken = sorted(name for name in passed if with_us.get(name) == "failed")
    print(f"{len(files)} files, {len(without)} tests")
    print(f"passing without us: {len(passed)}")
    print(f"passing with us:    {len(ours)}  (default_stack({args.budget}) in every run)")
    print(f"pass without us, fail with us: {len(broken)}")
    for name in broken:
        print(f"  {name}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
