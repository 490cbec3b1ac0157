"""The ``neuron-context`` command's entry point: the exit codes, every failure on one line.

Exit codes: 0 success; 1 a compaction whose result does not fit or is not well formed
(``compact``), or a compaction error; 2 bad input or usage — a file that cannot be read
as a conversation, an output that cannot be written, an unknown stack step, a missing
extra; 3 an unexpected error (a bug). Every failure is one line on stderr, never a
traceback (``-v`` adds the traceback of a bug). The commands themselves are
:mod:`~neuron_context._cli.commands`.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator, Sequence

from .._errors import ConfigurationError, NeuronContextError
from .._log import logger
from ..formats._transcripts.storage import printable
from .args import UsageError, parser
from .commands import compact_command, count_command, simulate_command

__all__ = ["INTERNAL_ERROR", "main"]

INTERNAL_ERROR = 3
"""The exit code of an unexpected error (a bug), reported on one line like any other."""


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = printable(" ".join(super().format(record).split()))
        return f"neuron-context: {record.levelname.lower()}: {text}"


@contextlib.contextmanager
def _logging(level: int) -> Iterator[None]:
    """Show the library's log records at ``level`` and above on stderr, one line each."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    handler.setLevel(level)
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(min(level, previous) if previous else level)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``neuron-context`` with ``argv`` (default: the process's); returns the exit code."""
    try:
        args = parser().parse_args(argv)
    except UsageError as exc:
        _fail(str(exc))
        return 2
    except SystemExit as exc:  # --help or --version, printed
        return exc.code if isinstance(exc.code, int) else 2
    command = {"count": count_command, "compact": compact_command, "simulate": simulate_command}[
        args.command
    ]
    # compact shows the library's warnings (a summarizer that failed, a stack still over
    # budget); simulate would repeat them on every call, so only with --verbose.
    level = logging.INFO if args.verbose else logging.WARNING
    if args.command == "simulate" and not args.verbose:
        level = logging.CRITICAL
    try:
        with _logging(level):
            return command(args)
    except ConfigurationError as exc:
        _fail(str(exc))
        return 2
    except ImportError as exc:
        package = (exc.name or "").partition(".")[0]
        if package not in ("rich", "matplotlib"):
            raise
        _fail(f"{package} is missing: install the cli extra: python -m pip install '.[cli]'")
        return 2
    except NeuronContextError as exc:
        _fail(f"{type(exc).__name__}: {exc}")
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader of stdout went away (`| head`)
        return 1
    except Exception as exc:  # a bug: still one line, never a traceback
        if args.verbose:
            import traceback

            traceback.print_exc()
        _fail(
            f"unexpected {type(exc).__name__}: {exc} (a bug in neuron-context: please "
            "report it with the command; -v shows where it happened)"
        )
        return INTERNAL_ERROR


def _fail(message: str) -> None:
    line = printable(" ".join(message.split()))
    sys.stderr.write(f"neuron-context: error: {line}\n")
