"""What each strategy that offloads makes of the shared transcripts without a store, as
hashes: the evidence that ``store=None`` (the default) changes no byte of any output.

The hashes in ``data/no_store_outputs.json`` were computed by this module on the code
before stores existed; ``test_offloading.py`` recomputes them. A change that is meant to
alter these outputs (a new marker, a better summary) rewrites the file with::

    PYTHONPATH=. python tests/no_store_outputs.py --write
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio

from neuron_context import (
    ExtractiveSummarizer,
    Message,
    SlidingWindowStrategy,
    StripProcessedImagesStrategy,
    StripToolCallsStrategy,
    SummarizationStrategy,
    SupersededToolCallsStrategy,
    TokenCounter,
    ToolResultClearingStrategy,
    default_stack,
)
from neuron_context.formats import to_json
from neuron_context.strategies import (
    CollapseRepeatedCallsStrategy,
    ContextStrategy,
    DedupeFetchesStrategy,
    StaleFileReadsStrategy,
    TruncateLargeResultsStrategy,
)

sys.path.insert(0, str(Path(__file__).parent))
from transcripts import load_transcript, transcript_name, transcript_paths

GOLDEN = Path(__file__).parent / "data" / "no_store_outputs.json"
SHARES = (0.1, 0.25, 0.5)

WRITERS = dict.fromkeys(
    ("create_python_script", "write_file", "create_file", "str_replace_editor"), "path"
)

Make = Callable[..., ContextStrategy]
"""A strategy for a budget (and keyword arguments such as ``store=``)."""

STRATEGIES: dict[str, Make] = {
    "default_stack": default_stack,
    "clearing": lambda budget, **kw: ToolResultClearingStrategy(3, budget, **kw),
    "truncate": lambda budget, **kw: TruncateLargeResultsStrategy(
        max_result_tokens=max(50, budget // 20), **kw
    ),
    "summarization": lambda budget, **kw: SummarizationStrategy(
        ExtractiveSummarizer(), 6, budget, max_summary_tokens=max(64, budget // 4), **kw
    ),
    "superseded": lambda budget, **kw: SupersededToolCallsStrategy(WRITERS, **kw),
    "stale_reads": lambda budget, **kw: StaleFileReadsStrategy(**kw),
    "dedupe_fetches": lambda budget, **kw: DedupeFetchesStrategy(**kw),
    "window": lambda budget, **kw: SlidingWindowStrategy(8, budget, start_on_user=True, **kw),
    "strip": StripToolCallsStrategy,
    "images": lambda budget, **kw: StripProcessedImagesStrategy(**kw),
    "repeats": lambda budget, **kw: CollapseRepeatedCallsStrategy(similarity=0.9, **kw),
}
"""Each strategy that offloads, as the shared transcripts exercise it."""


def digest(messages: list[Message]) -> str:
    """The SHA-256 of ``messages`` in our JSON."""
    return hashlib.sha256(to_json(messages).encode("utf-8")).hexdigest()


def outputs(paths: Sequence[Path] | None = None) -> dict[str, str]:
    """``"<transcript> <strategy> <share>"`` -> the hash of the output (of every
    transcript, or of ``paths``)."""
    counter = TokenCounter()
    found: dict[str, str] = {}
    for path in transcript_paths() if paths is None else paths:
        messages = load_transcript(path)
        total = counter.estimate_messages(messages)
        for share in SHARES:
            budget = max(1, int(total * share))
            for name, make in STRATEGIES.items():
                strategy = make(budget)
                output = anyio.run(strategy.compact, messages)
                found[f"{transcript_name(path)} {name} {share}"] = digest(output)
    return found


if __name__ == "__main__":
    if "--write" in sys.argv:
        GOLDEN.write_text(json.dumps(outputs(), indent=1, sort_keys=True) + "\n")
    else:
        print(json.dumps(outputs(), indent=1, sort_keys=True))
