"""The three commands, ``count``, ``compact`` and ``simulate``: each reads its arguments
(through :mod:`~neuron_context._cli.inputs`), runs, writes its report (rich tables, or
JSON with ``--json``) and returns its exit code (:mod:`~neuron_context._cli.app` runs them
and turns their failures into exit codes).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import attrs

from .._blocking import run_blocking
from .._compaction.step import compact_step
from .._counting.counter import BaseCounter
from .._counting.heuristic import TokenCounter
from .._counting.pricing import CacheCostModel
from .._counting.pricing import cost_model as cost_model_of
from .._counting.request import RequestCounter
from .._errors import ConfigurationError
from .._messages.message import Message, Role
from .._strategies.strategy import ContextStrategy
from .._summary.extractive import ExtractiveSummarizer
from ..formats._transcripts.files import Transcript, dumps
from ..formats._transcripts.storage import check_target, printable, write_atomic
from ..providers._base import Provider
from . import inputs
from .metered import Metered
from .simulate import Replayer, Run, StackReplayer, replay
from .spec import StackSpec, parse_spec
from .stdout import ascii_stdout, emit, emit_json

__all__ = ["PROGRESS_FROM", "compact_command", "count_command", "simulate_command"]

PROGRESS_FROM = 200
"""Model calls (times stacks) from which ``simulate`` shows a progress bar on a terminal."""


def count_command(args: argparse.Namespace) -> int:
    """``neuron-context count``: where the transcripts' tokens go (0)."""
    from .census import census

    transcripts = inputs.transcripts(args, many=True)
    name, exact = inputs.counter(args.tokenizer)  # o200k_base unless told otherwise
    counters: dict[str, BaseCounter] = {name: exact}
    if name != "heuristic":
        counters["heuristic"] = TokenCounter()  # the fast estimate, beside the exact count
    result = census(transcripts, counters)
    if args.json:
        emit_json(attrs.asdict(result))
        return 0
    from .report import console, print_census

    print_census(console(), result)
    return 0


def _why(
    messages: Sequence[Message], tokens: int, budget: int, counter: BaseCounter, tools: int
) -> str:
    """Why ``messages`` (``tokens`` with the ``tools`` tokens of the tool definitions) do
    not fit ``budget``."""
    over = f"{tokens - budget:,} tokens over"
    fixed = counter.estimate_messages([m for m in messages if m.role is Role.SYSTEM]) + tools
    what = "the system messages and the tool definitions" if tools else "the system messages"
    if fixed > budget:
        return f"{over}: {what} alone cost {fixed:,} tokens"
    requests = [m for m in messages if m.role is Role.USER and not m.is_compaction]
    if requests and fixed + counter.estimate_message(requests[-1]) > budget:
        return f"{over}: {what} and the newest user request alone exceed the budget"
    return (
        f"{over}: the stack's steps could remove no more; end it with a window or "
        "summarization, or try --strategy default"
    )


def compact_command(args: argparse.Namespace) -> int:
    """``neuron-context compact``: what a stack makes of one transcript (0 when the
    result fits its budget, else 1)."""
    from .diff import diff

    output = Path(args.output) if args.output and args.output != "-" else None
    if output is not None:
        check_target(output, option="-o")
    (transcript, *rest) = inputs.transcripts(args, many=False)
    if rest:
        source = transcript.name.rsplit(":", 1)[0]
        msg = f"{source} holds {len(rest) + 1} transcripts; compact takes one"
        raise ConfigurationError(msg)
    name, counter = inputs.counter(args.tokenizer)
    spec = parse_spec(args.strategy)
    provider = inputs.provider(args.provider)
    messages = list(transcript.messages)
    tools = transcript.tools
    budget = inputs.budget(args, messages, counter, tools)
    stack = spec.build(budget, counter, provider)
    step = run_blocking(
        lambda: compact_step(
            stack,
            messages,
            counter=RequestCounter(counter),
            tools=tools,
            errors="raise",
            label="compact",
        )
    )
    result = list(step.messages)
    change = diff(messages, result, counter)
    problem: str | None = None  # the step returns a well-formed conversation or raises
    tools_tokens = counter.estimate_tools(tools) if tools else 0
    fits = change.tokens_after + tools_tokens <= budget
    why = (
        ""
        if fits
        else _why(result, change.tokens_after + tools_tokens, budget, counter, tools_tokens)
    )
    label = spec.label + (f" (summarizer: {args.provider})" if spec.summarizes else "")
    written = None
    if args.output:
        if output is None:
            emit(dumps(transcript, result, ascii_only=ascii_stdout()))
        else:
            write_atomic(output, dumps(transcript, result).encode("utf-8"), option="-o")
            written = f"{printable(args.output)} ({transcript.source.codec.name})"
    if args.json:
        emit_json(
            {
                "transcript": transcript.name,
                "stack": spec.label,
                "summarizer": args.provider if spec.summarizes else None,
                "counter": name,
                "budget": budget,
                "tool_definitions": {"count": len(tools), "tokens": tools_tokens},
                "diff": attrs.asdict(change),
                "well_formed": problem is None,
                "fits": fits,
                "why": why or None,
                "output": written,
            }
        )
    else:
        from .report import console, plain, print_compaction

        out = console(stderr=args.output == "-")
        out.print(
            f"transcript: {plain(transcript.name)} ({len(messages)} messages, "
            f"counted with {plain(name)})"
        )
        print_compaction(
            out,
            label=label,
            budget=budget,
            diff=change,
            fits=fits,
            why=why,
            well_formed=problem,
            written=written,
            tools=(len(tools), tools_tokens),
        )
    return 0 if fits and problem is None else 1


def simulate_command(args: argparse.Namespace) -> int:
    """``neuron-context simulate``: the transcripts replayed as an agent loop, stacks
    side by side (0)."""
    if args.plot:
        check_target(args.plot, option="--plot")
    transcripts = inputs.transcripts(args, many=True)
    name, counter = inputs.counter(args.tokenizer)
    provider = inputs.provider(args.provider)
    specs: list[StackSpec] = [parse_spec(s) for s in (args.strategy or [])]
    if not specs:  # the comparison a user came for: ours, a window and every peer installed
        specs = [parse_spec(s) for s in inputs.COMPARED_STACKS]
    budgets = [inputs.budget(args, t.messages, counter, t.tools) for t in transcripts]
    cost_model = cost_model_of(args.cost_model) if args.cost_model else None
    if args.gap < 0 or args.gap != args.gap:
        msg = f"--gap must be a number of seconds >= 0, got {args.gap}"
        raise ConfigurationError(msg)
    replayers: list[Replayer] = []
    for spec in specs:
        spec.build(budgets[0], counter, provider)  # a bad spec fails before the replay
        meter = None if isinstance(provider, ExtractiveSummarizer) else Metered(provider, counter)

        def build(
            budget: int, spec: StackSpec = spec, summarizer: Provider = meter or provider
        ) -> ContextStrategy:
            return spec.build(budget, counter, summarizer)

        replayers.append(StackReplayer(spec.label, build, meter=meter))
    missing: list[str] = []
    if args.compare_langchain or not args.strategy:
        from .contenders import available

        contenders, missing = available(provider)
        replayers.extend(contenders)
    model_calls = sum(
        1
        for t in transcripts
        for i, m in enumerate(t.messages)
        if m.role is Role.ASSISTANT and i > 0
    )
    runs = _run_all(
        replayers, transcripts, budgets, counter, model_calls, cost_model=cost_model, gap=args.gap
    )
    title = (
        f"{len(transcripts)} transcript{'s' if len(transcripts) != 1 else ''}, "
        f"{model_calls:,} model calls, tokens counted with {name}"
    ) + (f", summaries by {args.provider}" if any(s.summarizes for s in specs) else "")
    if args.plot:
        from .plot import figure, png

        write_atomic(args.plot, png(figure(runs, title=title)), option="--plot")
    if args.json:
        from .report import best

        emit_json(
            {
                "transcripts": [t.name for t in transcripts],
                "counter": name,
                "budgets": budgets,
                "cost_model": attrs.asdict(cost_model) if cost_model else None,
                "gap": args.gap if cost_model and math.isfinite(args.gap) else None,
                "runs": [
                    {
                        "label": run.label,
                        "totals": _totals(run),
                        "calls": [attrs.asdict(c) for c in run.calls],
                    }
                    for run in runs
                ],
                "recommended": best(runs).label,
                "plot": str(args.plot) if args.plot else None,
                "not_compared": missing,
            }
        )
        return 0
    from .report import console, plain, print_runs

    out = console()
    print_runs(out, runs, title=title, budget=inputs.budget_text(args), cost_model=cost_model)
    if missing:
        extras = sorted({note.rsplit("(the ", 1)[1].split(" ")[0] for note in missing})
        out.print(
            plain(
                f"not compared, not installed: {'; '.join(missing)}; "
                f'python -m pip install ".[{",".join(extras)}]" adds them'
            )
        )
    if args.plot:
        out.print(f"plot: {plain(str(args.plot))}")
    return 0


def _totals(run: Run) -> dict[str, object]:
    """A run's totals as JSON, with the figures its properties derive."""
    totals: dict[str, object] = attrs.asdict(run.totals)
    totals["cache_hit_rate"] = run.totals.cache_hit_rate
    totals["net_cost"] = run.totals.net_cost
    return totals


def _run_all(
    replayers: Sequence[Replayer],
    transcripts: Sequence[Transcript],
    budgets: Sequence[int],
    counter: BaseCounter,
    model_calls: int,
    *,
    cost_model: CacheCostModel | None = None,
    gap: float = 30.0,
) -> list[Run]:
    async def go(tick: Callable[[], None] | None) -> list[Run]:
        return [
            await replay(
                replayer, transcripts, budgets, counter, tick=tick, cost_model=cost_model, gap=gap
            )
            for replayer in replayers
        ]

    total = model_calls * len(replayers)
    from .report import console

    screen = console(stderr=True)
    if total < PROGRESS_FROM or not screen.is_terminal:
        return anyio.run(go, None)
    from rich.progress import Progress

    with Progress(
        transient=True, console=screen, redirect_stdout=False, redirect_stderr=False
    ) as progress:
        task = progress.add_task("replaying", total=total)
        return anyio.run(go, lambda: progress.advance(task))
