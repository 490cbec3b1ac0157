"""Offloading in the strategies: what they remove goes to the store, a reference stays;
without a store every output is what it was before stores existed."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import anyio
import pytest
from agent_support import answer, calls
from hypothesis import given, settings
from hypothesis import strategies as st
from no_store_outputs import GOLDEN, STRATEGIES, outputs
from offload_support import FailingStore, step_in_progress, unrecoverable
from strategies import conversations
from suite import ci_only, sample
from transcripts import load_transcript, requires_transcripts, transcript_name, transcript_paths

from neuron_context import (
    AgentOptions,
    BaseCounter,
    Compaction,
    CompletionRequest,
    MemoryStore,
    Message,
    Role,
    SlidingWindowStrategy,
    SummarizationError,
    SummarizationStrategy,
    SupersededToolCallsStrategy,
    Text,
    TokenCounter,
    TokenizerCounter,
    ToolResult,
    ToolResultClearingStrategy,
    ToolUse,
    create_agent,
    default_stack,
    formats,
)
from neuron_context.events import OffloadFailed
from neuron_context.stores import content_key
from neuron_context.strategies import (
    DedupeFetchesStrategy,
    DefaultStack,
    StaleFileReadsStrategy,
    TruncateLargeResultsStrategy,
)
from neuron_context.testing import FunctionProvider


@requires_transcripts
class TestWithoutStore:
    """``store=None`` changes nothing."""

    @pytest.mark.parametrize("path", sample(transcript_paths()), ids=transcript_name)
    def test_outputs_unchanged(self, path: Path) -> None:
        """Every offloading strategy's output on a shared transcript at 10%, 25% and 50%
        of its size hashes as it did before stores existed."""
        expected = {
            key: value
            for key, value in json.loads(GOLDEN.read_text()).items()
            if key.split(" ")[0] == transcript_name(path)
        }
        found = outputs([path])
        assert found.keys() == expected.keys()
        changed = sorted(key for key in expected if found[key] != expected[key])
        assert changed == [], f"{len(changed)} outputs changed, e.g. {changed[:3]}"

    def test_every_transcript_has_its_outputs(self) -> None:
        """The golden file holds the outputs of exactly the shared transcripts."""
        names = {key.split(" ")[0] for key in json.loads(GOLDEN.read_text())}
        assert names == {transcript_name(path) for path in transcript_paths()}


def _conversation(result: str = "x = 1\n" * 400) -> list[Message]:
    return [
        Message.user("Fix the bug in src/app.py"),
        Message.assistant(
            "Reading it.",
            tool_uses=[ToolUse(id="c1", name="read_file", input={"path": "src/app.py"})],
        ),
        Message.tool_result("c1", result),
        Message.assistant(
            "Running the tests.",
            tool_uses=[ToolUse(id="c2", name="bash", input={"command": "pytest -q"})],
        ),
        Message.tool_result("c2", "1 failed\n" * 300),
        Message.assistant("Found it."),
        Message.user("Now fix it."),
    ]


class TestClearing:
    """ToolResultClearingStrategy(store=...)."""

    def test_reference(self) -> None:
        """A cleared result names the call, its size and the key of its exact text."""
        store = MemoryStore()
        messages = _conversation()
        output = ToolResultClearingStrategy(0, store=store).apply(messages)
        result = output[2].content[0]
        assert isinstance(result, ToolResult)
        original = messages[2].content[0]
        assert isinstance(original, ToolResult)
        tokens = TokenCounter().estimate_content(original.content)
        key = content_key("x = 1\n" * 400)
        expected = f"[tool result cleared: read_file src/app.py, {tokens:,} tokens — recall: {key}]"
        assert result.content == (Text(text=expected),)
        assert store.get(key) == "x = 1\n" * 400

    def test_references_are_kept(self) -> None:
        """Clearing a cleared history again changes nothing and stores nothing more."""
        store = MemoryStore()
        strategy = ToolResultClearingStrategy(0, store=store)
        once = strategy.apply(_conversation())
        keys = set(store)
        assert strategy.apply(once) == once
        assert set(store) == keys

    def test_a_skipped_clearing_puts_nothing(self) -> None:
        """A clearing that would reclaim less than ``min_reclaim_tokens`` changes nothing
        and puts nothing in the store (the decision is taken before the puts); one that
        reclaims enough puts each cleared result."""
        messages = _conversation()
        store = MemoryStore()
        skipped = ToolResultClearingStrategy(0, store=store, min_reclaim_tokens=10**6)
        assert skipped.apply(messages) == messages
        assert set(store) == set()
        cleared = ToolResultClearingStrategy(0, store=store, min_reclaim_tokens=100)
        assert cleared.apply(messages) != messages
        assert len(set(store)) == 2

    def test_a_reference_never_costs_more_than_it_saves(self) -> None:
        """With a tokenizer, a reference is priced under its real key (a key of hex digits
        costs more tokens than a run of one letter): a result is cleared only when its
        reference is cheaper, so clearing never grows a history."""
        counter = TokenizerCounter.from_encoding("o200k_base")
        use = ToolUse(id="c1", name="read_file", input={"path": "src/app.py"})
        for words in range(1, 60):
            messages = [
                Message.user("go"),
                Message.assistant("r", tool_uses=[use]),
                Message.tool_result("c1", " ".join(["word"] * words)),
                Message.assistant("r2", tool_uses=[ToolUse(id="c2", name="ls", input={})]),
                Message.tool_result("c2", "x"),
                Message.assistant("done"),
            ]
            strategy = ToolResultClearingStrategy(1, store=MemoryStore(), counter=counter)
            output = strategy.apply(messages)
            assert counter.estimate_messages(output) <= counter.estimate_messages(messages)


class TestTruncation:
    """TruncateLargeResultsStrategy(store=...)."""

    def test_marker_names_the_key(self) -> None:
        """The cut marker ends in the key of the whole text."""
        store = MemoryStore()
        text = "".join(f"line {n}\n" for n in range(2_000))
        output = TruncateLargeResultsStrategy(
            max_result_tokens=200, keep_recent=0, store=store
        ).apply(_conversation(text))
        cut = output[2].content[0]
        assert isinstance(cut, ToolResult)
        assert f"recall: {content_key(text)} ...]" in cut.text
        assert store.get(content_key(text)) == text


class TestSummarization:
    """SummarizationStrategy(store=...)."""

    @pytest.mark.anyio
    async def test_summary_references_the_messages(self) -> None:
        """The summary ends with the key of exactly the messages it replaced."""
        store = MemoryStore()
        messages = _conversation()
        strategy = SummarizationStrategy(
            FunctionProvider(lambda request: "They fixed a bug."), 2, store=store
        )
        output = await strategy.compact(messages)
        summary = output[0].content[0]
        assert isinstance(summary, Compaction)
        assert summary.content.startswith("They fixed a bug.\n\n[original messages, ")
        assert _index_keys(summary.content) == _entry_keys(messages[:5])
        assert unrecoverable(messages[:5], output, store, transitive=False) == []


class TestSuperseded:
    """SupersededToolCallsStrategy(store=...)."""

    def test_note_after_the_newer_result(self) -> None:
        """The removed call and its result are stored; the newer result says so."""
        store = MemoryStore()
        write = [
            Message.user("Write it twice"),
            Message.assistant(
                "",
                tool_uses=[
                    ToolUse(id="w1", name="write_file", input={"path": "a.py", "text": "v1"})
                ],
            ),
            Message.tool_result("w1", "wrote a.py (v1)"),
            Message.assistant(
                "",
                tool_uses=[
                    ToolUse(id="w2", name="write_file", input={"path": "a.py", "text": "v2"})
                ],
            ),
            Message.tool_result("w2", "wrote a.py (v2)"),
        ]
        output = SupersededToolCallsStrategy({"write_file": "path"}, store=store).apply(write)
        assert len(output) == 3
        texts = [block.text for block in output[2].content[0].content]  # type: ignore[union-attr]
        assert texts[0] == "wrote a.py (v2)"
        assert texts[1].startswith("[superseded calls removed: write_file a.py, 1 call, ")
        assert unrecoverable(write, output, store) == []


class TestStaleReadsAndFetches:
    """StaleFileReadsStrategy and DedupeFetchesStrategy(store=...)."""

    def test_stale_read(self) -> None:
        """A read made stale by a later read of the same file is stored and referenced."""
        store = MemoryStore()
        messages = [
            Message.user("Read it twice"),
            Message.assistant(
                "", tool_uses=[ToolUse(id="r1", name="read_file", input={"path": "a.py"})]
            ),
            Message.tool_result("r1", "old content " * 50),
            Message.assistant(
                "", tool_uses=[ToolUse(id="r2", name="read_file", input={"path": "a.py"})]
            ),
            Message.tool_result("r2", "new content " * 50),
        ]
        output = StaleFileReadsStrategy(store=store).apply(messages)
        cleared = output[2].content[0]
        assert isinstance(cleared, ToolResult)
        assert "read_file a.py, " in cleared.text
        assert unrecoverable(messages, output, store) == []

    def test_refetch(self) -> None:
        """A page fetched again is stored and referenced."""
        store = MemoryStore()
        url = {"url": "https://example.com/docs"}
        messages = [
            Message.user("Fetch it twice"),
            Message.assistant("", tool_uses=[ToolUse(id="f1", name="fetch", input=url)]),
            Message.tool_result("f1", "page v1 " * 50),
            Message.assistant("", tool_uses=[ToolUse(id="f2", name="fetch", input=url)]),
            Message.tool_result("f2", "page v2 " * 50),
        ]
        output = DedupeFetchesStrategy(store=store).apply(messages)
        cleared = output[2].content[0]
        assert isinstance(cleared, ToolResult)
        assert "fetch https://example.com/docs, " in cleared.text
        assert unrecoverable(messages, output, store) == []


def _step_kept_over_the_limit(result_lines: int) -> list[Message]:
    """A system prompt that fills most of a budget, a task, a request, and the step in
    progress (a lookup and its result): the step is kept over the budget's limit."""
    use = ToolUse(id="c1", name="get_user_details", input={"user_id": "sophia_silva_7557"})
    lines = (f'"reservation_{i}": "R{i:05d}X",' for i in range(result_lines))
    return [
        Message.system("Follow the airline policy. " * 200),
        Message.user("Hi, I'd like to cancel my flight, please."),
        Message.assistant("Could you give me your user id, the reservation id and the reason?"),
        Message.user("My user id is sophia_silva_7557, reservation H8Q05L; a change of plans."),
        Message.assistant("", tool_uses=[use]),
        Message.tool_result("c1", "\n".join(lines)),
    ]


class TestTheStoreNeverCostsTheBudget:
    """A reference to what a compaction offloaded never costs the budget."""

    @pytest.mark.parametrize("result_lines", [3, 6])
    def test_never_over_the_budget_for_a_reference(self, result_lines: int) -> None:
        """Where the step in progress is kept over the budget's limit, the output with a
        store is over the budget only where the one without is too: the reference never
        takes an output within the budget over it."""
        counter = TokenCounter()
        messages = _step_kept_over_the_limit(result_lines)
        total = counter.estimate_messages(messages)
        for budget in range(total - 40, total - 30):
            plain = anyio.run(default_stack(budget, counter=counter).compact, messages)
            with_store = default_stack(budget, counter=counter, store=MemoryStore())
            stored = anyio.run(with_store.compact, messages)
            assert _sent(stored, counter) <= budget or _sent(plain, counter) > budget, budget


class TestWhereTheIndexStands:
    """The index of what a compaction offloaded stands where a summary would."""

    @pytest.mark.parametrize("after", [[], [Message.user("yes"), Message.assistant("hmm")]])
    def test_nothing_summarized_the_index_follows_the_system_and_the_task(
        self, after: list[Message]
    ) -> None:
        """Where nothing is summarized (only a huge message cut), the index stands after
        the system messages and the task, never before the system messages."""
        counter = TokenCounter()
        plan = "\n".join(f"- step {i}: update src/mod_{i}.py line {i}" for i in range(3_000))
        messages = [
            Message.system("You are a coding agent."),
            Message.user("Refactor the modules."),
            Message.assistant("ok"),
            Message.user("go on"),
            Message.assistant(f"Here is the plan:\n{plan}\nShall I proceed?"),
            *after,
        ]
        stack = default_stack(2_000, counter=counter, reserve=0.0, store=MemoryStore())
        output = anyio.run(stack.compact, messages)
        assert output[:2] == messages[:2]
        assert any(m.is_compaction for m in output)


class TestFailingStore:
    """A store that fails on put costs only the offload."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("name", sorted(STRATEGIES))
    async def test_as_without_a_store(self, name: str, caplog: pytest.LogCaptureFixture) -> None:
        """Each strategy's output with a failing store is its output without one, and
        each lost offload is logged."""
        messages = _conversation()
        budget = TokenCounter().estimate_messages(messages) // 4
        without = await STRATEGIES[name](budget).compact(messages)
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            failing = await STRATEGIES[name](budget, store=FailingStore()).compact(messages)
        assert failing == without
        if without != messages:
            assert "offload to FailingStore failed" in caplog.text

    @pytest.mark.anyio
    async def test_an_llm_summary_is_written_once(self) -> None:
        """When the store fails, default_stack compacts again without it; with an LLM
        summarizer the summary the first attempt wrote (of the same messages, in less
        space) is used again, not asked for twice (each is a call); here, where the
        summary fits both, the output is the one without a store."""
        asked: list[int] = []

        def summarize(request: CompletionRequest) -> str:
            asked.append(request.max_tokens or 0)
            return "The user asked to fix src/app.py; the tests failed; the bug was found."

        messages = _conversation()
        budget = TokenCounter().estimate_messages(messages) // 3
        failing = default_stack(
            budget, summarizer=FunctionProvider(summarize), store=FailingStore()
        )
        output = await failing.compact(messages)
        assert len(asked) == 1
        plain = await default_stack(budget, summarizer=FunctionProvider(summarize)).compact(
            messages
        )
        assert output == plain

    @pytest.mark.anyio
    async def test_a_summary_the_first_attempt_had_no_room_for_is_written(self) -> None:
        """Where the room kept for the reference leaves the first attempt too little for
        a summary, the attempt without a store (the store failed) asks for one: the
        summarized messages are not dropped with neither a summary nor a reference."""
        messages = [Message.user("Fix the bug in src/app.py")]
        for i in range(3):
            use = ToolUse(id=f"c{i}", name="bash", input={"command": f"step {i}"})
            messages += [
                Message.assistant(f"Step {i}", tool_uses=[use]),
                Message.tool_result(f"c{i}", f"line {i} out\n" * (20 + 7 * i)),
            ]
        messages += [Message.assistant("Found it."), Message.user("Now fix it.")]

        summary = "They ran the steps; step 2 printed its lines."

        def summarize(request: CompletionRequest) -> str:
            return summary

        def stack(store: FailingStore | None) -> DefaultStack:
            provider = FunctionProvider(summarize)
            return default_stack(155, counter=TokenCounter(), summarizer=provider, store=store)

        output = await stack(FailingStore()).compact(messages)
        assert [m.text for m in output if m.is_compaction] == [summary]
        assert output == await stack(None).compact(messages)

    def test_agent_reports_an_event(self) -> None:
        """The agent loop reports each lost offload as an OffloadFailed event and runs on."""
        replies = iter(
            [
                calls(("read_file", {"path": "a.py"})),
                calls(("read_file", {"path": "b.py"})),
                answer("done"),
            ]
        )

        def read_file(path: str) -> str:
            """Read a file."""
            return f"contents of {path}\n" * 300

        agent = create_agent(
            FunctionProvider(lambda request: next(replies)),
            [read_file],
            AgentOptions(context=ToolResultClearingStrategy(0, 10, store=FailingStore())),
        )
        result = agent.run_sync("Read both")
        assert result.text == "done"
        failed = [event for event in result.events if isinstance(event, OffloadFailed)]
        assert failed
        assert failed[0].to_dict()["store"] == "FailingStore"
        assert "ConnectionError: the store is down" in failed[0].error


@given(messages=conversations(max_turns=8), share=st.sampled_from([0.1, 0.25, 0.5]))
@settings(max_examples=20)
@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_nothing_is_lost(name: str, messages: list[Message], share: float) -> None:
    """With a store, every text of the input is in the output or behind a key in it;
    only where the budget has no room for even ``[recall: <key>]`` does default_stack
    keep the budget instead (its output is then the one without a store)."""
    store = MemoryStore()
    budget = max(1, int(TokenCounter().estimate_messages(messages) * share))
    try:
        output = anyio.run(STRATEGIES[name](budget, store=store).compact, messages)
    except SummarizationError:  # nothing to summarize: the caller keeps its messages
        return
    if unrecoverable(messages, output, store):
        assert name == "default_stack"
        assert output == anyio.run(STRATEGIES[name](budget).compact, messages)


def _replay(path: Path, share: float) -> tuple[int, int, int, int]:
    """An agent loop over one transcript with default_stack and a store, the budget the
    system messages plus ``share`` of the rest: (calls, texts lost from the request,
    texts unrecoverable where the budget has room for a reference, calls over a budget
    that holds the system messages, the newest request and the step in progress: the
    step is kept over a budget that does not).

    Counted in o200k tokens, as a production agent counts: a BPE tokenizer prices keys
    unevenly (a real key costs 5 to 16 tokens), which the character heuristic hides."""
    counter = TokenizerCounter.from_encoding("o200k_base")
    messages = load_transcript(path)
    systems = counter.estimate_messages([m for m in messages if m.role is Role.SYSTEM])
    budget = systems + int((counter.estimate_messages(messages) - systems) * share)
    store = MemoryStore()
    stack = default_stack(budget, counter=counter, store=store)
    history: list[Message] = []
    gone: set[str] = set()  # removed where the budget had no room for a reference
    calls = lost = unrecovered = over = 0
    for index, message in enumerate(messages):
        if message.role is Role.ASSISTANT and index > 0:
            calls += 1
            previous = history
            if stack.should_compact(history, stack.token_estimate(history)):
                history = anyio.run(stack.compact, history)
            before = messages[:index]
            if counter.estimate_messages(history) > budget:
                step = [before[i] for i in step_in_progress(before)]
                requests = [m for m in before if m.role is Role.USER and not m.is_compaction]
                needed = systems + counter.estimate_messages([*requests[-1:], *step])
                over += needed <= budget
            lost += len(set(unrecoverable(before, history, None)))
            missing = set(unrecoverable(before, history, store, transitive=False)) - gone
            if missing and _no_room(previous, budget, counter):
                gone |= missing  # compacted without a store: lost for good
            else:
                unrecovered += len(missing)
        history.append(message)
    return calls, lost, unrecovered, over


def _sent(output: list[Message], counter: BaseCounter) -> int:
    """What ``output`` costs as sent: its messages, and the heading each summary renders
    with."""
    heading = counter.estimate_text(formats.SUMMARY_HEADING + "\n")
    return counter.estimate_messages(output) + heading * sum(m.is_compaction for m in output)


def _no_room(history: list[Message], budget: int, counter: TokenizerCounter) -> bool:
    """Whether default_stack without a store compacts ``history`` to an output that has
    no room for the shortest reference (``[recall: <key>]``, its key as costly as any
    can be) even with its task gone (a task gives way to a reference): the one case
    where a compaction with a store is the one without it."""
    output = anyio.run(default_stack(budget, counter=counter).compact, history)
    cost = _sent(output, counter)
    heading = counter.estimate_text(formats.SUMMARY_HEADING + "\n")
    pinned = [m for m in output if m.role is not Role.SYSTEM]
    requests = [m for m in pinned if m.role is Role.USER and not m.is_compaction]
    if len(requests) > 1 and pinned[0] is requests[0]:
        cost -= counter.estimate_message(requests[0])  # the task
    reference = Message(role=Role.USER, content=(Compaction(content="[recall: 1a2b3c4d5e6f7a8b]"),))
    return cost + heading + counter.estimate_message(reference) > budget


@requires_transcripts
class TestNothingLostOnTranscripts:
    """The shared transcripts replayed as agent loops with default_stack and a store."""

    @pytest.mark.parametrize(
        "share", [pytest.param(0.1, marks=ci_only), 0.25, 0.5]
    )  # 0.1 compacts the most: the slowest, and 0.25 checks the same
    def test_every_text_recoverable_within_budget(self, share: float) -> None:
        """At 10%, 25% and 50% of each transcript (beyond its system messages), every text
        the history held before a call is in that call's request or behind a key the
        request shows (no chain of keys) wherever the budget holds the system messages,
        the newest request, the step in progress and the shortest reference (where it
        does not, the compaction is the one without a store), and no request is over a
        budget that holds the system messages, the newest request and the step in
        progress."""
        totals = [_replay(path, share) for path in transcript_paths()]
        calls, lost, unrecovered, over = (sum(column) for column in zip(*totals, strict=True))
        assert calls > 1_000
        assert lost > 0  # the budgets do force compaction
        assert (unrecovered, over) == (0, 0)

    def test_tight_budgets_priced_in_bpe_tokens(self) -> None:
        """The customer-service transcripts at 10%: a few hundred tokens beside a long
        system prompt, where the shortest reference is all that fits and its key is
        priced as a BPE tokenizer counts it (a key costs 5 to 16 o200k tokens): every
        text is still in the request or behind a key it shows, wherever a reference
        has room."""
        paths = [path for path in transcript_paths() if path.name.startswith("tau")]
        totals = [_replay(path, 0.1) for path in paths]
        calls, lost, unrecovered, over = (sum(column) for column in zip(*totals, strict=True))
        assert calls > 300
        assert lost > 0
        assert (unrecovered, over) == (0, 0)


def _index_keys(text: str) -> list[str]:
    """The keys of an index's lines, in order."""
    return re.findall(r"^- .+ — recall: ([0-9a-f]{16})$", text, re.MULTILINE)


def _entry_keys(removed: list[Message]) -> list[str]:
    """The keys of the entries of ``removed`` as :func:`_conversation` has them: the
    task, then each call with its result (each under a page)."""
    keys = [content_key([removed[0]])]
    keys += [content_key(removed[i : i + 2]) for i in range(1, len(removed), 2)]
    return keys


class TestWindowAndStrips:
    """The strategies that drop or strip messages: one reference after the system prompt."""

    def test_window(self) -> None:
        """A window's dropped messages are stored; the output starts with their reference."""
        store = MemoryStore()
        messages = [Message.system("Be brief."), *_conversation()]
        output = SlidingWindowStrategy(2, store=store).apply(messages)
        assert output[0] == messages[0]
        reference = output[1].content[0]
        assert isinstance(reference, Compaction)
        assert reference.content.startswith("[original messages, one entry per line")
        assert _index_keys(reference.content) == _entry_keys(messages[1:6])
        assert output[2:] == messages[6:]
        assert unrecoverable(messages, output, store, transitive=False) == []

    def test_a_window_of_a_window(self) -> None:
        """Sliding again drops the old reference too: the new key holds everything."""
        store = MemoryStore()
        strategy = SlidingWindowStrategy(2, store=store)
        messages = _conversation()
        once = strategy.apply(messages)
        twice = strategy.apply([*once, Message.assistant("On it."), Message.user("Thanks")])
        assert unrecoverable(messages, twice, store, transitive=False) == []


@given(messages=conversations(max_turns=8), share=st.sampled_from([0.1, 0.25, 0.5]))
@settings(max_examples=20)
@pytest.mark.parametrize("name", ["default_stack", "summarization", "window", "strip"])
def test_one_key_reaches_everything(name: str, messages: list[Message], share: float) -> None:
    """After clearing and truncating with a store, a strategy that removes those results
    again stores them as they were: every text of the input is in the output or behind
    a key the output shows (no chain of keys)."""
    store = MemoryStore()
    budget = max(1, int(TokenCounter().estimate_messages(messages) * share))
    cleared = ToolResultClearingStrategy(1, store=store).apply(messages)
    cut = TruncateLargeResultsStrategy(max_result_tokens=20, keep_recent=0, store=store).apply(
        cleared
    )
    try:
        output = anyio.run(STRATEGIES[name](budget, store=store).compact, cut)
    except SummarizationError:
        return
    if unrecoverable(messages, output, store, transitive=False):
        assert name == "default_stack"  # no room in the budget for even [recall: <key>]
        assert output == anyio.run(STRATEGIES[name](budget).compact, cut)
