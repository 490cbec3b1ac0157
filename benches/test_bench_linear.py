"""Hostile inputs that once cost quadratic time, at one size and four times it.

Each case is a :func:`~workloads.paired` run (CPU time, back to back in rotating order,
the median of the per-round ratios): ``small`` is the baseline and ``large`` the same
input four times as long, so ``ratio_large`` is about 4 for linear work and 16 for
quadratic. Target: under 10 for every case (measured 2.9 to 4.8 on a 2-core machine under load).

The cases, each a quadratic path that was fixed (``tests/test_hostile_issue32.py`` checks
their outputs, and counts the characters priced where a counter does the work):

- ``json-line-offload``: a one-line JSON result offloaded into page-sized pieces with a
  store, counted in o200k tokens (each piece was priced on the rest of the line);
- ``quoted-references``: a result quoting thousands of recall references the store
  holds, whose index rolls up (each split of the index was tried in turn, each pricing
  the whole index);
- ``marker-heads``: ``is_truncated`` through ``TruncateLargeResultsStrategy`` on a line of
  marker heads with no end (the one pattern scanned to the line's end from each head);
- ``facts-segments``: an earlier summary's facts line with many segments under it,
  carried by ``default_stack`` (each segment was appended to the line read so far);
- ``quoted-requests``: an earlier summary quoting many user requests, summarized again
  (each pinned request left its section's list one by one).

And the scans that must stay linear on any text (their tests check the outputs):

- ``pathological-summary``: the extractive summarizer on runs of one character, tables,
  markup, dotted names (``tests/test_adversarial_strategies.py``), 12,500 characters each;
- ``refusal``: a provider's refusal of 50,000 characters of near-matches, read for the
  numbers it states (``context_overflow``);
- ``long-history``: ``token_estimate`` and one ``default_stack`` compaction of 5,000
  tool-exchange messages (the 50,000 of ``tests/test_hostile_scale.py`` at a quarter);
- ``huge-result``: a 250 kB log as a tool result, compacted with a store;
- ``search``: ``search`` for one line in a 250 kB entry.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import anyio
import pytest
from workloads import Benchmark, Contenders, paired

from neuron_context import (
    Compaction,
    CompletionRequest,
    ExtractiveSummarizer,
    Message,
    Role,
    TokenCounter,
    TokenizerCounter,
    ToolUse,
    default_stack,
)
from neuron_context.counting import BaseCounter
from neuron_context.overflow import context_overflow
from neuron_context.stores import MemoryStore, search
from neuron_context.strategies import SummarizationStrategy, TruncateLargeResultsStrategy

ROUNDS = 3
"""Rounds per case: each round runs both sizes once (seconds each at the large size)."""


def _conversation(result: str) -> list[Message]:
    """A task, a small exchange, a big result, a last exchange and a new request."""
    small = ToolUse(id="a", name="lookup", input={"q": "user"})
    big = ToolUse(id="b", name="get_reservations", input={"user": "mia_li_3668"})
    last = ToolUse(id="c", name="noop", input={})
    return [
        Message.user("the task: book the cheapest flight"),
        Message.assistant("looking", tool_uses=[small]),
        Message.tool_result("a", "user mia_li_3668 id=AB12CD"),
        Message.assistant("fetching", tool_uses=[big]),
        Message.tool_result("b", result),
        Message.assistant("ok", tool_uses=[last]),
        Message.tool_result("c", "done"),
        Message.user("and now?"),
    ]


def _compact(
    budget: int, messages: list[Message], counter: BaseCounter, **options: object
) -> object:
    stack = default_stack(budget, counter=counter, **options)  # type: ignore[arg-type]
    return anyio.run(stack.compact, messages)


def _json_line_offload(scale: int) -> Callable[[], object]:
    o200k = TokenizerCounter.from_encoding("o200k_base")
    text = json.dumps([{"reservation_id": f"R{i:06d}", "price": i} for i in range(4_000 * scale)])
    messages = _conversation(text)
    return lambda: _compact(2_000, messages, o200k, store=MemoryStore())


def _quoted_references(scale: int) -> Callable[[], object]:
    store = MemoryStore()
    keys = [store.put(f"an earlier entry {i}") for i in range(1_000 * scale)]
    text = json.dumps([{"note": f"recall: {k}", "id": i} for i, k in enumerate(keys)])
    messages = _conversation(text)
    return lambda: _compact(500, messages, TokenCounter(), store=store)


def _marker_heads(scale: int) -> Callable[[], object]:
    messages = _conversation("[... 1 lines cut; " * (5_000 * scale))
    strategy = TruncateLargeResultsStrategy(max_result_tokens=100, keep_recent=0)
    return lambda: anyio.run(strategy.compact, messages)


def _facts_segments(scale: int) -> Callable[[], object]:
    lines = "".join(f"\n  seg ID{i} x" for i in range(60_000 * scale))
    earlier = Message(role=Role.USER, content=(Compaction(content=f"## Facts\n- get: a=1{lines}"),))
    conversation = _conversation('{"a": 1}')
    messages = [conversation[0], earlier, *conversation[1:]]
    return lambda: _compact(3_000, messages, TokenCounter())


def _quoted_requests(scale: int) -> Callable[[], object]:
    text = "".join(
        f"<user_request>\nplease do ID{i}\n</user_request>\n" for i in range(60_000 * scale)
    )
    earlier = Message(role=Role.USER, content=(Compaction(content=text),))
    request = CompletionRequest([earlier, Message.user("next")], max_tokens=1_500)
    summarizer = ExtractiveSummarizer()
    return lambda: summarizer.summarize(request)


_PATHOLOGICAL = ("+", "*", "@", "a/", "ab12", "</a", "Error", "a.", ".", "0a", "[")


def _pathological_summary(scale: int) -> Callable[[], object]:
    texts = [piece * (12_500 * scale // len(piece)) for piece in _PATHOLOGICAL]
    texts.append(("+" + "-" * 98 + "+\n" + "|" + " " * 98 + "|\n") * (62 * scale))
    summarizer = ExtractiveSummarizer()
    requests = []
    for text in texts:
        call = ToolUse(id="c1", name="bash", input={"command": text[:5000]})
        messages = [
            Message.user(text),
            Message.assistant(text, tool_uses=[call]),
            Message.tool_result("c1", text),
            Message.tool_result("c1", text, is_error=True),
        ]
        request = SummarizationStrategy(summarizer, 0).summary_request(messages)
        assert request is not None
        requests.append(request)
    return lambda: [summarizer.summarize(request) for request in requests]


def _refusal(scale: int) -> Callable[[], object]:
    n = 12_500 * scale
    texts = [
        "prompt is too long: " + "1," * n,
        "maximum context length is " + "(1 in messages " * (n // 7),
        "input token count (" + "9" * (2 * n),
        "exceeds the maximum number of tokens allowed " + "(" * (2 * n),
        "requested " * (n // 5) + "context_length_exceeded",
    ]
    errors = [RuntimeError(text) for text in texts]
    return lambda: [context_overflow(error) for error in errors]


def _long_history(scale: int) -> Callable[[], object]:
    messages = [Message.user("the task")]
    i = 0
    while len(messages) < 1_250 * scale:
        use = ToolUse(id=f"c{i}", name="read", input={"path": f"f{i}.py"})
        messages.append(Message.assistant(f"step {i}", tool_uses=[use]))
        messages.append(Message.tool_result(use.id, f"line {i}\n" * 5))
        i += 1
    messages.append(Message.user("next"))

    def run() -> object:
        stack = default_stack(20_000)
        stack.token_estimate(messages)
        return anyio.run(stack.compact, messages)

    return run


def _huge_result(scale: int) -> Callable[[], object]:
    text = "log line with words and numbers 12345\n" * (1_700 * scale)
    use = ToolUse(id="a", name="cat", input={})
    messages = [
        Message.user("task"),
        Message.assistant("", tool_uses=[use]),
        Message.tool_result("a", text),
        Message.user("next"),
    ]
    return lambda: _compact(8_000, messages, TokenCounter(), store=MemoryStore())


def _search(scale: int) -> Callable[[], object]:
    store = MemoryStore()
    store.put("needle here\n" + "hay\n" * (62_500 * scale))
    return lambda: search(store, "needle")


CASES: dict[str, Callable[[int], Callable[[], object]]] = {
    "json-line-offload": _json_line_offload,
    "quoted-references": _quoted_references,
    "marker-heads": _marker_heads,
    "facts-segments": _facts_segments,
    "quoted-requests": _quoted_requests,
    "pathological-summary": _pathological_summary,
    "refusal": _refusal,
    "long-history": _long_history,
    "huge-result": _huge_result,
    "search": _search,
}


@pytest.mark.parametrize("case", list(CASES))
def test_four_times_the_input(benchmark: Benchmark, case: str) -> None:
    """``case`` at its size (``small``) and at four times it (``large``)."""
    benchmark.group = f"linear {case}"
    small, large = CASES[case](1), CASES[case](4)

    def make() -> Contenders:
        return {"small": small, "large": large}

    paired(benchmark, make, rounds=ROUNDS, baseline="small", results=False)


def _listing(size: int) -> str:
    """A numbered code listing of about ``size`` characters, each line holding names."""
    lines = []
    total = 0
    number = 0
    while total < size:
        number += 1
        line = (
            f"{number:6d}→    def handle_{number}(self, item_id, value): "
            f"return self.store.get('K{number:05d}', value) + {number * 7}\n"
        )
        lines.append(line)
        total += len(line)
    return "".join(lines)


def test_a_huge_listing_against_its_middle_cut(benchmark: Benchmark) -> None:
    """A 2.5 MB listing as a recent result: ``default_stack`` chooses its lines (each
    weighed for what an agent reuses, on at most a bounded share of them) against the
    same compaction by ``TruncateLargeResultsStrategy``, which only cuts it in the
    middle (``ratio_middle`` below 1: the middle cut is cheaper; measured 0.5)."""
    benchmark.group = "a huge listing cut"
    counter = TokenCounter()
    messages = _conversation(_listing(2_500_000))
    middle = TruncateLargeResultsStrategy(max_result_tokens=3_000, keep_recent=0)

    def make() -> Contenders:
        return {
            "ours": lambda: _compact(20_000, messages, counter),
            "middle": lambda: anyio.run(middle.compact, messages),
        }

    paired(benchmark, make, rounds=ROUNDS, results=False)
