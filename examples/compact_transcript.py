"""The main job: compact a real agent transcript, offline, and show what happened.

Loads a transcript bundled with the package (OpenAI Chat Completions form), runs the
recommended strategy stack at a budget of a fraction of its size, checks that the
result is still a well-formed conversation, and prints tokens before and after and what
each strategy removed. No network, no API key.

    python examples/compact_transcript.py
    python examples/compact_transcript.py --transcript spotter-tool-heavy --fraction 0.1
"""

from __future__ import annotations

import argparse
import functools
import logging
import sys

import anyio

from neuron_context import (
    CompositeStrategy,
    ContextStrategy,
    ExtractiveSummarizer,
    FallbackStrategy,
    Message,
    SlidingWindowStrategy,
    SummarizationStrategy,
    TokenCounter,
    ToolResultClearingStrategy,
    repair,
    validate,
)
from neuron_context.data import load_record, transcript_names
from neuron_context.formats import from_openai


def build_stack(budget: int, counter: TokenCounter) -> ContextStrategy:
    """Cheapest first: clear old tool results, summarize the older part, then a window.

    The summarizer is the offline :class:`ExtractiveSummarizer` (no model, no key). If the
    summary fails, the same stack without it runs on the original messages.
    """
    clearing = ToolResultClearingStrategy(2, budget, counter=counter, min_reclaim_tokens=200)
    summarize = SummarizationStrategy(
        ExtractiveSummarizer(), 6, budget, counter=counter, max_summary_tokens=budget // 4 or 1
    )
    window = SlidingWindowStrategy(8, budget, counter=counter)
    return FallbackStrategy(
        CompositeStrategy([clearing, summarize, window], budget, counter=counter),
        CompositeStrategy([clearing, window], budget, counter=counter),
    )


def describe(before: list[Message], after: list[Message], counter: TokenCounter) -> str:
    """A short report of what changed."""
    kept = {id(m) for m in after}
    dropped = [m for m in before if id(m) not in kept]
    summaries = [m for m in after if m.is_compaction]
    originals = {id(m) for m in before}
    cleared = sum(1 for m in after if m.is_tool and id(m) not in originals)
    lines = [
        f"messages: {len(before)} -> {len(after)} ({len(dropped)} dropped or replaced)",
        f"tokens:   {counter.estimate_messages(before)} -> {counter.estimate_messages(after)}",
        f"tool messages with cleared results: {cleared}",
    ]
    for message in summaries:
        lines.append("summary:")
        lines.extend("  | " + line for line in message.content[0].content.splitlines()[:20])  # type: ignore[union-attr]
    return "\n".join(lines)


async def run(name: str, fraction: float, *, verbose: bool) -> int:
    """Compact one transcript and print the report; returns a process exit code."""
    record = load_record(name)
    messages = repair(from_openai(record["messages"]))
    counter = TokenCounter()
    total = counter.estimate_messages(messages)
    budget = int(total * fraction)
    print(f"transcript: {name} ({record['source']}, {record.get('agent', 'agent')})")
    print(f"budget:     {budget} tokens ({fraction:.0%} of {total})")
    if verbose:
        logging.basicConfig(level=logging.INFO, format="  log: %(message)s")
    stack = build_stack(budget, counter)
    if not stack.should_compact(messages, total):
        print("already within budget")
        return 0
    compacted = await stack.compact(messages)
    validate(compacted)
    print(describe(messages, compacted, counter))
    fits = counter.estimate_messages(compacted) <= budget
    print("fits the budget: " + ("yes" if fits else "no (see the warning above)"))
    print("well formed:     yes (validate() passed)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--transcript", choices=transcript_names(), default=None)
    parser.add_argument("--fraction", type=float, default=0.25, help="budget / size")
    parser.add_argument("-v", "--verbose", action="store_true", help="log each strategy")
    args = parser.parse_args(argv)
    names = [args.transcript] if args.transcript else transcript_names()
    for index, name in enumerate(names):
        if index:
            print()
        code = anyio.run(functools.partial(run, name, args.fraction, verbose=args.verbose))
        if code:
            return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
