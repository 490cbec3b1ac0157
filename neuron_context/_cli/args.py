"""The arguments of ``neuron-context``: one parser, three commands (argparse).

Every command reads transcripts the same way (files or folders, ``--demo``,
``--format``, ``--repair``, ``--tokenizer``, ``--json``); ``compact`` and ``simulate``
also take a budget (``--max-tokens`` or ``--fraction``), a summarizer (``--provider``)
and stack specs (``--strategy``, see :mod:`.spec`).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import NoReturn

from ..formats._transcripts.files import FORMATS
from .spec import KINDS

__all__ = ["UsageError", "parser", "version"]

_QUOTED = re.compile(r"'([^'\n]{81,})'")
"""A quoted value in argparse's message longer than a line's worth of characters."""

_STEPS = ", ".join(
    f"{k}" + (f":{v[0]}=N" if v and v[0] == "keep" else "") for k, v in KINDS.items()
)


def version() -> str:
    """The library's version: ``neuron_context.__version__`` when it has one, else the
    installed distribution's (``"unknown"`` when neither is there: a bare checkout)."""
    import neuron_context

    declared = getattr(neuron_context, "__version__", None)
    if isinstance(declared, str):
        return declared
    from importlib import metadata

    try:
        return metadata.version("neuron-context")
    except metadata.PackageNotFoundError:
        return "unknown"


def _clipped(message: str) -> str:
    """argparse's ``message`` with each quoted value over 80 characters cut to its first
    40 and its length: a pasted blob in a bad argument is named, not echoed."""
    return _QUOTED.sub(
        lambda m: f"'{m.group(1)[:40]}...' ({len(m.group(1)):,} characters)", message
    )


class UsageError(Exception):
    """A usage error argparse found; :func:`~neuron_context._cli.app.main` prints it on one
    line (argparse's own report is the usage block and the error)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        msg = f"{_clipped(message)} (see {self.prog} --help)"
        raise UsageError(msg)


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``neuron-context``."""
    main_parser = _Parser(
        prog="neuron-context",
        description="Count, compact and simulate agent transcripts: Claude Code and Codex "
        "sessions, LangChain, pydantic-ai and Agents SDK dumps, OpenAI Chat Completions, "
        "Anthropic Messages or neuron-context JSON/JSONL.",
        epilog="Try: neuron-context simulate --demo",
    )
    main_parser.add_argument(
        "--version", action="version", version=f"%(prog)s {version()}", help="print the version"
    )
    commands = main_parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def common(sub: argparse.ArgumentParser, *, many: bool) -> None:
        sub.add_argument(
            "files",
            nargs="*" if many else "?",
            type=Path,
            metavar="FILE...",
            help="transcript files or folders (a folder is summed like one transcript)"
            if many
            else "a transcript file",
        )
        sub.add_argument("--demo", action="store_true", help="use a bundled real transcript")
        sub.add_argument(
            "--format",
            choices=FORMATS,
            help="the input format (default: detected)",
        )
        sub.add_argument(
            "--repair",
            action="store_true",
            help="fix a history that is not well formed instead of rejecting it",
        )
        sub.add_argument(
            "--tokenizer",
            metavar="NAME|PATH",
            help="count with o200k_base (the default, exact, as default_stack counts), "
            "cl100k_base, a tokenizer.json, or heuristic (the fast bytes / 4 estimate, "
            "which count shows beside the exact column)",
        )
        sub.add_argument("--json", action="store_true", help="print JSON for machines")
        sub.add_argument(
            "-v",
            "--verbose",
            action="store_true",
            help="log what each strategy did (stderr)",
        )

    def budget(sub: argparse.ArgumentParser) -> None:
        group = sub.add_mutually_exclusive_group()
        group.add_argument("--max-tokens", type=int, metavar="N", help="the budget in tokens")
        group.add_argument(
            "--fraction",
            type=float,
            metavar="F",
            help="the budget as the system messages plus F x the rest of each transcript "
            "(simulate: 0.25 when no budget is given)",
        )
        sub.add_argument(
            "--provider",
            default="extractive",
            metavar="P",
            help="the summarizer: extractive (offline, default), openai:MODEL or anthropic:MODEL",
        )

    count = commands.add_parser("count", help="where the tokens of a transcript go")
    common(count, many=True)

    compact = commands.add_parser("compact", help="compact a transcript once and report")
    common(compact, many=False)
    budget(compact)
    compact.add_argument(
        "--strategy",
        default="default",
        metavar="SPEC",
        help=f"a stack spec or TOML file ({_STEPS})",
    )
    compact.add_argument(
        "-o", "--output", metavar="OUT", help="write the result here (- for stdout)"
    )

    simulate = commands.add_parser(
        "simulate", help="replay transcripts as an agent loop and compare stacks"
    )
    common(simulate, many=True)
    budget(simulate)
    simulate.add_argument(
        "--strategy",
        action="append",
        metavar="SPEC",
        help="a stack to compare (repeatable; default: default and window:12, with every "
        f"LangChain contender installed); steps: {_STEPS}",
    )
    simulate.add_argument(
        "--compare-langchain",
        action="store_true",
        help="add LangChain's trim_messages and middlewares as rows beside --strategy's "
        "(those installed; without --strategy they are compared anyway)",
    )
    simulate.add_argument(
        "--plot", metavar="OUT.png", type=Path, help="write a plot of tokens per call"
    )
    simulate.add_argument(
        "--cost-model",
        choices=("anthropic", "anthropic-1h", "openai"),
        help="price each call after the prompt cache's reads and writes (a provider's "
        "prices; see the cost model page of the docs)",
    )
    simulate.add_argument(
        "--gap",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="wall-clock seconds between model calls, for cache expiry (default 30)",
    )
    return main_parser
