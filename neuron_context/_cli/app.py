"""The ``neuron-context`` command: arguments, the three commands, and exit codes.

Exit codes: 0 success; 1 a compaction whose result does not fit or is not well formed
(``compact``), or a compaction error; 2 bad input or usage — a file that cannot be read
as a conversation, an unknown stack step, a missing extra — always as one line on
stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import attrs

from .._counting.base import BaseCounter, TokenCounter
from .._errors import ConfigurationError, NeuronContextError
from .._messages.conversation import validate
from .._messages.message import Message, Role
from .._strategies.base import ContextStrategy
from ..data import load_record, transcript_names
from ..providers._base import Provider
from .files import Format, Transcript, dumps, expand, parse_document, read_file
from .simulate import LangChainTrim, Replayer, Run, StackReplayer, fraction_budget, replay
from .spec import KINDS, StackSpec, parse_spec

__all__ = ["DEMO_FRACTION", "DEMO_STACKS", "DEMO_TRANSCRIPT", "main", "parser"]

DEMO_TRANSCRIPT = "sweagent-pydicom__pydicom-1458"
"""The bundled transcript that ``count --demo`` and ``compact --demo`` use."""
DEMO_FRACTION = 0.25
"""The demo's budget: the system messages plus this share of the rest."""
DEMO_STACKS = ("default", "window:12")
"""What ``simulate --demo`` compares (with LangChain's ``trim_messages`` when installed)."""

_STEPS = ", ".join(
    f"{k}" + (f":{v[0]}=N" if v and v[0] == "keep" else "") for k, v in KINDS.items()
)


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``neuron-context``."""
    main_parser = argparse.ArgumentParser(
        prog="neuron-context",
        description="Count, compact and simulate agent transcripts "
        "(OpenAI Chat Completions, Anthropic Messages or neuron-context JSON/JSONL).",
        epilog="Try: neuron-context simulate --demo",
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
            choices=[f.value for f in Format],
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
            help="count exactly: o200k_base, cl100k_base or a tokenizer.json "
            "(default: the fast heuristic)",
        )
        sub.add_argument("--json", action="store_true", help="print JSON for machines")

    def budget(sub: argparse.ArgumentParser) -> None:
        group = sub.add_mutually_exclusive_group()
        group.add_argument("--max-tokens", type=int, metavar="N", help="the budget in tokens")
        group.add_argument(
            "--fraction",
            type=float,
            metavar="F",
            help="the budget as the system messages plus F x the rest of each transcript",
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
        help=f"a stack to compare (repeatable; default: default); steps: {_STEPS}",
    )
    simulate.add_argument(
        "--compare-langchain",
        action="store_true",
        help="add LangChain's trim_messages as a row (needs langchain-core)",
    )
    simulate.add_argument(
        "--plot", metavar="OUT.png", type=Path, help="write a plot of tokens per call"
    )
    return main_parser


# -- inputs -----------------------------------------------------------------------------


def _demo(name: str, *, fmt: Format | None, fix: bool) -> Transcript:
    return parse_document(load_record(name), f"demo:{name}", fmt=fmt, fix=fix)


def _transcripts(args: argparse.Namespace, *, many: bool) -> list[Transcript]:
    fmt = Format(args.format) if args.format else None
    files: list[Path] = (args.files or []) if many else ([args.files] if args.files else [])
    if args.demo:
        names = transcript_names() if many and args.command == "simulate" else [DEMO_TRANSCRIPT]
        demo = [_demo(name, fmt=fmt, fix=args.repair) for name in names]
    else:
        demo = []
    if not files and not demo:
        msg = "give a transcript file (or --demo for a bundled one)"
        raise ConfigurationError(msg)
    out = [*demo]
    for path in expand(files):
        out.extend(read_file(path, fmt=fmt, fix=args.repair))
    return out


def _counter(spec: str | None) -> tuple[str, BaseCounter]:
    if spec is None:
        return "heuristic", TokenCounter()
    from .._counting.tokenizer import TokenizerCounter

    try:
        if spec in ("o200k_base", "cl100k_base"):
            return spec, TokenizerCounter.from_encoding(spec)
        return Path(spec).name, TokenizerCounter.from_file(spec)
    except (NeuronContextError, OSError, ValueError) as exc:
        msg = f"--tokenizer {spec}: {exc}"
        raise ConfigurationError(msg) from exc


def _provider(spec: str) -> Provider:
    kind, _, model = spec.partition(":")
    try:
        if kind == "extractive" and not model:
            from .._summary.extractive import ExtractiveSummarizer

            return ExtractiveSummarizer()
        if kind == "openai" and model:
            from ..providers import OpenAIProvider

            return OpenAIProvider(model)
        if kind == "anthropic" and model:
            from ..providers import AnthropicProvider

            return AnthropicProvider(model)
    except (NeuronContextError, ImportError) as exc:
        msg = f"--provider {spec}: {exc}"
        raise ConfigurationError(msg) from exc
    msg = f"--provider must be extractive, openai:MODEL or anthropic:MODEL, got {spec!r}"
    raise ConfigurationError(msg)


def _budget(args: argparse.Namespace, messages: Sequence[Message], counter: BaseCounter) -> int:
    if args.max_tokens is not None:
        if args.max_tokens < 1:
            msg = f"--max-tokens must be at least 1, got {args.max_tokens}"
            raise ConfigurationError(msg)
        return int(args.max_tokens)
    fraction = (
        args.fraction if args.fraction is not None else (DEMO_FRACTION if args.demo else None)
    )
    if fraction is None:
        msg = "give a budget: --max-tokens N or --fraction F"
        raise ConfigurationError(msg)
    if not 0 < fraction <= 1:
        msg = f"--fraction must be in (0, 1], got {fraction}"
        raise ConfigurationError(msg)
    return fraction_budget(messages, fraction, counter)


def _budget_text(args: argparse.Namespace) -> str:
    if args.max_tokens is not None:
        return f"{args.max_tokens:,} tokens"
    fraction = args.fraction if args.fraction is not None else DEMO_FRACTION
    return f"the system messages + {fraction:.0%} of the rest of each transcript"


def _emit_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


# -- commands ---------------------------------------------------------------------------


def _count(args: argparse.Namespace) -> int:
    from .census import census

    transcripts = _transcripts(args, many=True)
    counters: dict[str, BaseCounter] = {"heuristic": TokenCounter()}
    if args.tokenizer:
        name, exact = _counter(args.tokenizer)
        counters[name] = exact
    result = census(transcripts, counters)
    if args.json:
        _emit_json(attrs.asdict(result))
        return 0
    from .report import console, print_census

    print_census(console(), result)
    return 0


def _why(messages: Sequence[Message], tokens: int, budget: int, counter: BaseCounter) -> str:
    over = f"{tokens - budget:,} tokens over"
    system = counter.estimate_messages([m for m in messages if m.role is Role.SYSTEM])
    if system > budget:
        return f"{over}: the system messages alone cost {system:,} tokens"
    requests = [m for m in messages if m.role is Role.USER and not m.is_compaction]
    if requests and system + counter.estimate_message(requests[-1]) > budget:
        return f"{over}: the system messages and the newest user request alone exceed the budget"
    return (
        f"{over}: the stack's steps could remove no more; end it with a window or "
        "summarization, or try --strategy default"
    )


def _compact(args: argparse.Namespace) -> int:
    from .diff import diff

    (transcript, *rest) = _transcripts(args, many=False)
    if rest:
        source = transcript.name.rsplit(":", 1)[0]
        msg = f"{source} holds {len(rest) + 1} transcripts; compact takes one"
        raise ConfigurationError(msg)
    name, counter = _counter(args.tokenizer)
    spec = parse_spec(args.strategy)
    provider = _provider(args.provider)
    messages = list(transcript.messages)
    budget = _budget(args, messages, counter)
    stack = spec.build(budget, counter, provider)
    if stack.should_compact(messages, stack.token_estimate(messages)):
        result = anyio.run(stack.compact, messages)
    else:
        result = messages
    change = diff(messages, result, counter)
    problem: str | None = None
    try:
        validate(result)
    except NeuronContextError as exc:
        problem = str(exc)
    fits = change.tokens_after <= budget
    why = "" if fits else _why(result, change.tokens_after, budget, counter)
    label = spec.label + (f" (summarizer: {args.provider})" if spec.summarizes else "")
    written = None
    if args.output:
        text = dumps(result, transcript.layout)
        if args.output == "-":
            sys.stdout.write(text)
        else:
            Path(args.output).write_text(text, encoding="utf-8")
            written = f"{args.output} ({transcript.layout.format.value})"
    if args.json:
        _emit_json(
            {
                "transcript": transcript.name,
                "stack": spec.label,
                "summarizer": args.provider if spec.summarizes else None,
                "counter": name,
                "budget": budget,
                "diff": attrs.asdict(change),
                "well_formed": problem is None,
                "fits": fits,
                "why": why or None,
                "output": written,
            }
        )
    else:
        from .report import console, print_compaction

        out = console(stderr=args.output == "-")
        out.print(f"transcript: {transcript.name} ({len(messages)} messages, counted with {name})")
        print_compaction(
            out,
            label=label,
            budget=budget,
            diff=change,
            fits=fits,
            why=why,
            well_formed=problem,
            written=written,
        )
    return 0 if fits and problem is None else 1


def _simulate(args: argparse.Namespace) -> int:
    transcripts = _transcripts(args, many=True)
    name, counter = _counter(args.tokenizer)
    provider = _provider(args.provider)
    specs: list[StackSpec] = [parse_spec(s) for s in (args.strategy or [])]
    if not specs:
        specs = [parse_spec(s) for s in (DEMO_STACKS if args.demo else ("default",))]
    budgets = [_budget(args, t.messages, counter) for t in transcripts]
    replayers: list[Replayer] = []
    for spec in specs:
        for budget in budgets[:1]:  # build once now, so a bad spec fails before the replay
            spec.build(budget, counter, provider)

        def build(budget: int, spec: StackSpec = spec) -> ContextStrategy:
            return spec.build(budget, counter, provider)

        replayers.append(StackReplayer(spec.label, build))
    if args.compare_langchain or (args.demo and not args.strategy):
        try:
            replayers.append(LangChainTrim())
        except ImportError:
            if args.compare_langchain:
                sys.stderr.write(
                    "neuron-context: langchain-core is not installed; no trim_messages row\n"
                )
    model_calls = sum(
        1
        for t in transcripts
        for i, m in enumerate(t.messages)
        if m.role is Role.ASSISTANT and i > 0
    )
    runs = _run_all(replayers, transcripts, budgets, counter, model_calls)
    title = (
        f"{len(transcripts)} transcript{'s' if len(transcripts) != 1 else ''}, "
        f"{model_calls:,} model calls, tokens counted with {name}"
    ) + (f", summaries by {args.provider}" if any(s.summarizes for s in specs) else "")
    if args.plot:
        from .plot import figure, save

        save(figure(runs, title=title), args.plot)
    if args.json:
        from .report import best

        _emit_json(
            {
                "transcripts": [t.name for t in transcripts],
                "counter": name,
                "budgets": budgets,
                "runs": [
                    {
                        "label": run.label,
                        "totals": attrs.asdict(run.totals),
                        "calls": [attrs.asdict(c) for c in run.calls],
                    }
                    for run in runs
                ],
                "recommended": best(runs).label,
                "plot": str(args.plot) if args.plot else None,
            }
        )
        return 0
    from .report import console, print_runs

    out = console()
    print_runs(out, runs, title=title, budget=_budget_text(args))
    if args.plot:
        out.print(f"plot: {args.plot}")
    return 0


def _run_all(
    replayers: Sequence[Replayer],
    transcripts: Sequence[Transcript],
    budgets: Sequence[int],
    counter: BaseCounter,
    model_calls: int,
) -> list[Run]:
    async def go(tick: Callable[[], None] | None) -> list[Run]:
        return [
            await replay(replayer, transcripts, budgets, counter, tick=tick)
            for replayer in replayers
        ]

    total = model_calls * len(replayers)
    if total < 200 or not sys.stderr.isatty():
        return anyio.run(go, None)
    from rich.progress import Progress

    from .report import console

    with Progress(transient=True, console=console(stderr=True)) as progress:
        task = progress.add_task("replaying", total=total)
        return anyio.run(go, lambda: progress.advance(task))


# -- entry point ------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``neuron-context`` with ``argv`` (default: the process's); returns the exit code."""
    try:
        args = parser().parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error argparse has printed
        return exc.code if isinstance(exc.code, int) else 2
    command = {"count": _count, "compact": _compact, "simulate": _simulate}[args.command]
    try:
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


def _fail(message: str) -> None:
    line = " ".join(message.split())
    sys.stderr.write(f"neuron-context: error: {line}\n")
