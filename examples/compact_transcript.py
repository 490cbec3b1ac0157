"""The main job: compact a real agent transcript, offline, and show what happened.

Loads a transcript bundled with the package (OpenAI Chat Completions form), runs the
recommended stack (``default_stack``, with its offline extractive summarizer) at a budget
of a fraction of its size, checks that the result is still a well-formed conversation
that starts on a user message, and prints tokens before and after and what was kept,
summarized and cut. No network, no API key.

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
    ContextStrategy,
    Message,
    Role,
    TokenCounter,
    default_stack,
    repair,
    validate,
)
from neuron_context.data import load_record, transcript_names
from neuron_context.formats import SUMMARY_HEADING, from_openai


def build_stack(budget: int, counter: TokenCounter) -> ContextStrategy:
    """The recommended stack: ``default_stack``, offline (see its documentation)."""
    return default_stack(budget, counter=counter)


def provider_cost(messages: list[Message], counter: TokenCounter) -> int:
    """What a provider receives: the messages, and each summary's heading."""
    headings = sum(1 for m in messages if m.is_compaction)
    return counter.estimate_messages(messages) + headings * counter.estimate_text(
        SUMMARY_HEADING + "\n"
    )


def describe(before: list[Message], after: list[Message], counter: TokenCounter) -> str:
    """A short report of what changed."""
    kept = {id(m) for m in after}
    dropped = [m for m in before if id(m) not in kept]
    summaries = [m for m in after if m.is_compaction]
    originals = {id(m) for m in before}
    cleared = sum(1 for m in after if not m.is_compaction and id(m) not in originals)
    pinned = [m for m in after if m.role is Role.USER and not m.is_compaction and id(m) in kept]
    lines = [
        f"messages: {len(before)} -> {len(after)} ({len(dropped)} dropped or replaced)",
        f"tokens:   {counter.estimate_messages(before)} -> {provider_cost(after, counter)}",
        f"kept user requests: {len(pinned)}; messages cut in the middle: {cleared}",
    ]
    for message in summaries:
        lines.append("summary:")
        lines.extend("  | " + line for line in message.text.splitlines()[:20])
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
    print("stack:      default_stack (offline: ExtractiveSummarizer)")
    if not stack.should_compact(messages, total):
        print("already within budget")
        return 0
    compacted = await stack.compact(messages)
    validate(compacted)
    print(describe(messages, compacted, counter))
    fits = provider_cost(compacted, counter) <= budget
    first = next((m for m in compacted if m.role is not Role.SYSTEM), None)
    print("fits the budget: " + ("yes" if fits else "no (see the warning above)"))
    print("well formed:     yes (validate() passed)")
    print("starts on user:  " + ("yes" if first is None or first.role is Role.USER else "no"))
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
