"""Where users pay: one call of an agent framework's entry point with our adapter in it,
beside the bare framework; our own loop at two history sizes; the documented turn of a
user's own loop beside LangChain's recount.

Every group is a :func:`~workloads.paired` run (CPU time, the contenders back to back in
rotating order, the median of the per-round ratios to the baseline). The agent loops are
scripted (:mod:`loops`: no HTTP) and prefilled from the transcripts workload; each
contender is **its own loop** (:class:`loops.Loop`): it keeps the history its previous call
returned and sends it with a new question, as a user's loop does, so its history grows by
four messages a round and whatever the adapter remembers between calls is used. Before the
timed rounds each contender makes one untimed call (a process's first call: one-time
conversions, the framework's id assignment). Inside the timing: the one call of the entry
point (the framework's whole run: two model calls, the tool call, our adapter in each
model call); outside it: building the agents and converting the prefilled history.

- ``loop-langchain``: ``langchain.agents.create_agent`` ``.invoke``; ``bare`` (no
  middleware, the baseline), ``idle`` (``ContextMiddleware(default_stack(budget never
  reached))``), ``firing`` (``ContextMiddleware(default_stack(budget))``, the budget below
  the history; the adapter's defaults, so the state keeps the whole history). Targets at
  10k: idle at most 1.1x bare, firing at most 1.5x.
- ``loop-openai-agents``: ``Runner.run`` (awaited on a kept event loop) with
  ``RunConfig(call_model_input_filter=CallModelInputFilter(...))``; the same contenders
  and targets.
- ``loop-openai-agents-users-by-items`` / ``-named``: one ``CallModelInputFilter(
  default_stack(firing budget))`` serving 40 interleaved conversations (``many``) beside
  the same filter serving one (``one``, the baseline), each conversation found by its
  items or named (``conversation(name)`` around each run). Targets: ``many`` at most 1.2x
  ``one``, no more compactions per conversation than one conversation's + 1, the
  previous request the next one's prefix (median share at least 0.95).
- ``loop-pydantic-ai``: ``Agent.run(..., message_history=...)`` (awaited on a kept event
  loop, as ``run_sync`` does on its own) with
  ``capabilities=[ProcessHistory(HistoryProcessor(...))]``; the same contenders and
  targets. pydantic-ai keeps a processor's output as the run's history, so the firing
  contender compacts at its untimed first call and its timed calls run on the compacted
  history (what a user's loop pays).
- ``loop-pydantic-ai-users``: one ``Agent`` (one ``HistoryProcessor(default_stack(firing
  budget))``) serving 40 interleaved conversations, each run naming its
  ``conversation_id`` (``many``), beside the same agent serving one (``one``, the
  baseline). Targets: ``many`` at most 1.2x ``one``, no more compactions per conversation
  than one conversation's + 1, the previous request the next one's prefix (median share
  at least 0.95).
- ``loop-ours-run_sync`` / ``loop-ours-run``: ``neuron_context.create_agent`` with
  ``AgentOptions(context=default_stack(budget never reached))``, prefilled through
  ``agent.state.messages``, one ``agent.run_sync(question)`` (or ``await agent.run``
  on a kept event loop); the baseline is the same loop at the smallest history size
  (``idle_<small>``), beside it at N messages with the stack (``idle_<N>``) and without
  one (``bare_<N>``). Target: ``idle_10000`` within 1.3x of ``idle_1000``.
- ``turn-documented``: the README's turn: the history grows by a realistic turn of fresh
  message objects (a question, a tool call, its result, the answer), then
  ``stack.should_compact(history, stack.token_estimate(history))`` with ``stack =
  default_stack(budget never reached)``, vs ``count_tokens_approximately`` of the same
  history as LangChain messages. Target: at least 150x at 20k (the exact default
  counter; far from the budget the estimate adds the bytes of what is new, see
  ``DefaultStack.token_estimate``).

Sizes: ``BENCH_LOOP_SIZES`` (default ``100,300``; ``nox -s bench`` sets ``1000,10000``)
for the loops, ``BENCH_TURN_SIZES`` for the documented turn.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, cast

import pytest
from langchain_core.messages import BaseMessage
from langchain_core.messages.utils import count_tokens_approximately
from loops import (
    IDLE_BUDGET,
    LangChainLoop,
    LangChainUsers,
    Loop,
    OpenAIAgentsLoop,
    OpenAIAgentsUsers,
    OurLoop,
    PydanticAILoop,
    PydanticAIUsers,
    firing,
    firing_budget,
    idle,
    realistic_turn,
)
from workloads import (
    DATASETS,
    LOOP_SIZES,
    TURN_SIZES,
    Benchmark,
    Contenders,
    Dataset,
    agreeable,
    paired,
    priced,
    workload,
)

from neuron_context import ContextStrategy, TokenCounter, TokenizerCounter, default_stack
from neuron_context.testing import RecordingStrategy

COUNTER = TokenCounter()
ENTRIES = ("run_sync", "run")
"""How our loop is called: ``agent.run_sync(...)``, or ``await agent.run(...)``."""


def _rounds(size: int) -> int:
    """Few rounds: an agent call with a middleware can take seconds at 10k messages."""
    return max(3, min(15, 15_000 // size))


@pytest.fixture
def event_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop kept for the whole benchmark, as an async application has one."""
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def _run_loops(benchmark: Benchmark, loops: dict[str, Loop], *, rounds: int, baseline: str) -> None:
    """One untimed call of each loop (when timing), then the paired rounds of one call each."""
    if benchmark.enabled:
        for loop in loops.values():
            loop.turn()
    paired(
        benchmark,
        lambda: {name: loop.turn for name, loop in loops.items()},
        rounds=rounds,
        baseline=baseline,
        results=False,
    )
    for loop in loops.values():
        assert loop.turns >= 1


def _frameworks(
    benchmark: Benchmark, size: int, make: Callable[[int, ContextStrategy | None], Loop]
) -> None:
    """``bare``, ``idle`` and ``firing`` loops of one framework, and what their model got."""
    loops = {
        "bare": make(size, None),
        "idle": make(size, idle()),
        "firing": make(size, firing(size)),
    }
    _run_loops(benchmark, loops, rounds=_rounds(size), baseline="bare")
    bare, idle_loop, firing_loop = loops["bare"], loops["idle"], loops["firing"]
    for loop in (bare, idle_loop):  # the whole history kept, four messages a turn (pydantic-ai
        # merges the first question into the prefilled history's trailing tool results)
        assert loop.history_length() - loop.start in {4 * loop.turns - 1, 4 * loop.turns}
    assert bare.history_length() == idle_loop.history_length()
    sent = COUNTER.estimate_messages(bare.last_request())
    assert COUNTER.estimate_messages(idle_loop.last_request()) == sent  # passed through
    budget = firing_budget(size)
    assert budget < sent
    compacted = firing_loop.last_request()
    assert COUNTER.estimate_messages(compacted) <= budget  # the model got a compaction
    assert len(compacted) < len(bare.last_request())


@pytest.mark.parametrize("size", LOOP_SIZES)
def test_langchain(benchmark: Benchmark, size: int) -> None:
    """LangChain's ``create_agent(...).invoke``: bare, with our middleware idle and firing."""
    benchmark.group = f"loop-langchain transcripts {size}"
    _frameworks(benchmark, size, LangChainLoop)


USERS = 40
"""How many conversations one agent serves in ``loop-langchain-users``."""


def _prefix_kept(requests: Sequence[Sequence[object]]) -> float:
    """The median share of a request's messages that the next request starts with (1.0
    for fewer than two requests: no prefix to keep)."""
    shares = [1.0] if len(requests) < 2 else []
    for earlier, later in itertools.pairwise(requests):
        same = 0
        for before, after in zip(earlier, later, strict=False):
            if before != after:
                break
            same += 1
        shares.append(same / len(earlier))
    return statistics.median(shares)


class _Users(Protocol):
    """A loop serving conversations in rotation, with each conversation's requests."""

    requests: list[Any]

    def turn(self) -> object: ...


def _serve(benchmark: Benchmark, size: int, one: _Users, many: _Users) -> None:
    """Time ``many`` (``USERS`` conversations in rotation) beside ``one`` (the same agent
    serving one), each conversation's first call untimed; then a second call each, and
    the check that a conversation's request keeps the previous one as its prefix
    (median >= 95% of its messages), with both figures in the benchmark's extra info."""
    for _ in range(USERS - 1):  # each conversation's first call: untimed, as for one
        many.turn()
    loops = cast("dict[str, Loop]", {"one": one, "many": many})
    _run_loops(benchmark, loops, rounds=max(USERS, _rounds(size)), baseline="one")
    for _ in range(USERS):  # a second call each (run once, as CI runs it: the checks')
        many.turn()
    one.turn()
    served = [requests for requests in many.requests if len(requests) >= 2]
    assert served
    kept = statistics.median(_prefix_kept(requests) for requests in served)
    benchmark.extra_info["prefix_kept_many"] = kept
    benchmark.extra_info["prefix_kept_one"] = _prefix_kept(one.requests[0])
    assert kept >= 0.95


@pytest.mark.parametrize("size", LOOP_SIZES)
def test_langchain_users(benchmark: Benchmark, size: int) -> None:
    """One LangChain agent serving 40 interleaved conversations beside the same agent
    serving one: per invoke, compactions per conversation, the prefix kept."""
    benchmark.group = f"loop-langchain-users transcripts {size}"
    _serve(
        benchmark,
        size,
        LangChainUsers(size, firing(size), 1),
        LangChainUsers(size, firing(size), USERS),
    )


@pytest.mark.parametrize("size", LOOP_SIZES)
def test_openai_agents(
    benchmark: Benchmark, size: int, event_loop: asyncio.AbstractEventLoop
) -> None:
    """The Agents SDK's ``Runner.run``: bare, with our input filter idle and firing."""
    benchmark.group = f"loop-openai-agents transcripts {size}"
    _frameworks(benchmark, size, lambda n, strategy: OpenAIAgentsLoop(n, strategy, event_loop))


@pytest.mark.parametrize("named", [False, True], ids=["by-items", "named"])
@pytest.mark.parametrize("size", LOOP_SIZES)
def test_openai_agents_users(
    benchmark: Benchmark, size: int, named: bool, event_loop: asyncio.AbstractEventLoop
) -> None:
    """One Agents SDK filter serving 40 interleaved conversations beside the same filter
    serving one: per run, compactions per conversation, the prefix kept. ``named``: each
    run inside ``conversation(name)`` (found by its key); else found by its items."""
    benchmark.group = f"loop-openai-agents-users-{'named' if named else 'by-items'} {size}"
    one = OpenAIAgentsUsers(size, firing(size), 1, event_loop, named=named)
    many = OpenAIAgentsUsers(size, firing(size), USERS, event_loop, named=named)
    _serve(benchmark, size, one, many)
    compactions = _compactions(many)
    benchmark.extra_info["compactions_per_conversation_many"] = compactions
    benchmark.extra_info["compactions_one"] = _compactions(one)
    assert max(compactions) <= _compactions(one)[0] + 1


def _compactions(loop: OpenAIAgentsUsers) -> list[int]:
    """How many times each conversation's request did not start with the previous one
    (the view compacted again between them), per conversation."""
    counts = []
    for requests in loop.requests:
        counts.append(
            sum(
                1
                for earlier, later in itertools.pairwise(requests)
                if later[: len(earlier)] != earlier
            )
        )
    return counts


@pytest.mark.parametrize("size", LOOP_SIZES)
def test_pydantic_ai(
    benchmark: Benchmark, size: int, event_loop: asyncio.AbstractEventLoop
) -> None:
    """pydantic-ai's ``Agent.run``: bare, with our history processor idle and firing."""
    benchmark.group = f"loop-pydantic-ai transcripts {size}"
    _frameworks(benchmark, size, lambda n, strategy: PydanticAILoop(n, strategy, event_loop))


@pytest.mark.parametrize("size", LOOP_SIZES)
def test_pydantic_ai_users(
    benchmark: Benchmark, size: int, event_loop: asyncio.AbstractEventLoop
) -> None:
    """One pydantic-ai agent serving 40 interleaved conversations beside the same agent
    serving one: per run, compactions per conversation, the prefix kept."""
    benchmark.group = f"loop-pydantic-ai-users transcripts {size}"
    one_strategy = RecordingStrategy(firing(size))
    many_strategy = RecordingStrategy(firing(size))
    _serve(
        benchmark,
        size,
        PydanticAIUsers(size, one_strategy, 1, event_loop),
        PydanticAIUsers(size, many_strategy, USERS, event_loop),
    )
    benchmark.extra_info["compactions_one"] = len(one_strategy.calls)
    benchmark.extra_info["compactions_many"] = len(many_strategy.calls) / USERS
    assert len(many_strategy.calls) <= USERS * (len(one_strategy.calls) + 1)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("size", LOOP_SIZES[1:])
def test_ours(
    benchmark: Benchmark, size: int, entry: str, event_loop: asyncio.AbstractEventLoop
) -> None:
    """Our loop at ``size`` messages beside the same loop at the smallest size."""
    benchmark.group = f"loop-ours-{entry} transcripts {size}"
    small = LOOP_SIZES[0]
    given = event_loop if entry == "run" else None
    loops: dict[str, Loop] = {
        f"idle_{small}": OurLoop(small, idle(), given),
        f"idle_{size}": OurLoop(size, idle(), given),
        f"bare_{size}": OurLoop(size, None, given),
    }
    # A run costs a millisecond or two: many rounds, for a median the machine's noise
    # does not decide.
    _run_loops(benchmark, loops, rounds=max(40, _rounds(size)), baseline=f"idle_{small}")
    for loop in loops.values():
        assert loop.history_length() - loop.start == 4 * loop.turns  # idle: nothing compacted
        assert loop.last_request()[-1].is_tool  # the model got the tool's result


@pytest.mark.parametrize("size", TURN_SIZES)
@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("where", ["idle", "trigger"])
def test_documented_turn(benchmark: Benchmark, dataset: Dataset, size: int, where: str) -> None:
    """The README's turn of a user's own loop after a realistic turn, beside the recount:
    far from the budget (``idle``), or with the history over the trigger, where the
    estimate is the exact count (``trigger``: the new texts are tokenized every turn)."""
    work = workload(dataset, size)
    history = list(work.messages)
    peer_history: list[BaseMessage] = list(work.peer)
    budget = IDLE_BUDGET
    if where == "trigger":
        budget = priced(history, TokenizerCounter.from_encoding("o200k_base"))
    benchmark.group = f"turn-documented{'' if where == 'idle' else '-trigger'} {dataset} {size}"
    stack = default_stack(budget)
    stack.token_estimate(history)  # the previous turns
    stack.token_estimate(history)

    def make() -> Contenders:
        ours, theirs = realistic_turn(len(history))
        history.extend(ours)
        peer_history.extend(theirs)
        return {
            "ours": lambda: stack.should_compact(history, stack.token_estimate(history)),
            "peer": lambda: count_tokens_approximately(peer_history),
        }

    results = paired(benchmark, make, rounds=max(3, min(50, 1_000_000 // size)))
    assert results["ours"] is (where == "trigger")
    # The default stack counts exactly (o200k): its memo's count is a fresh count's; over
    # the trigger its estimate is that count, far from it a bound no lower (the bytes of
    # what it has not tokenized), which decides as the count does.
    exact = priced(history, stack.counter)
    assert stack.counter.estimate_messages(history) == exact
    if where == "trigger":
        assert stack.token_estimate(history) == exact
    else:
        assert exact <= stack.token_estimate(history) <= IDLE_BUDGET
    assert agreeable(priced(history), results["peer"])  # type: ignore[arg-type]
