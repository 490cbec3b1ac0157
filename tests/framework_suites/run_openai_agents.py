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
Without the suite on disk it says so and exits 0. The same as
``run.py openai-agents --suite SUITE`` (the code both run is in ``run.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import SUITES, suite_main


def main(argv: list[str] | None = None) -> int:
    """The Agents SDK's suite without our filter and with it (see the module)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suite", nargs="?", default=os.environ.get("OPENAI_AGENTS_SUITE"))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("-k", dest="keyword", default=None)
    idle = SUITES["openai-agents"].idle
    parser.add_argument("--budget", type=int, default=idle, help="ours: idle by default")
    parser.add_argument("--reports", help="where to keep the JUnit reports (default: a temp dir)")
    parser.add_argument("--baseline", help="a JUnit report of the run without us, to reuse")
    args = parser.parse_args(argv)
    return suite_main(
        "openai-agents",
        Path(args.suite) if args.suite else None,
        args.python,
        budgets=[args.budget],
        keyword=args.keyword,
        reports=Path(args.reports) if args.reports else None,
        baseline=Path(args.baseline) if args.baseline else None,
        extra=[],
    )


if __name__ == "__main__":
    sys.exit(main())
