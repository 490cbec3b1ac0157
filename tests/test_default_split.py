"""How default_stack splits its space (issue 32, "the budget used on purpose"): the step in
progress may be kept above the target, and a summary of a short span gives the kept
messages the room it does not need."""

from __future__ import annotations

import json
import re

import pytest

from neuron_context import (
    BaseCounter,
    MemoryStore,
    Message,
    Role,
    TokenCounter,
    ToolUse,
    default_stack,
    validate,
)
from neuron_context.strategies import CacheSchedule

HEADING = "[Summary of earlier conversation]\n"
"""What a provider sees before a summary (the counting rules do not price it)."""


def _sent(output: list[Message], counter: BaseCounter) -> int:
    """What ``output`` costs as sent: its messages, and each summary's heading."""
    summaries = sum(1 for m in output if m.is_compaction)
    return counter.estimate_messages(output) + summaries * counter.estimate_text(HEADING)


def _work(turns: int) -> list[Message]:
    """A task, then ``turns`` small reads with their results (a measured growth)."""
    messages = [Message.system("You are a coding agent."), Message.user("Fix the bug in app.py")]
    for turn in range(turns):
        use = ToolUse(id=f"c{turn}", name="read_file", input={"path": f"src/module_{turn}.py"})
        messages.append(Message.assistant(tool_uses=[use]))
        messages.append(Message.tool_result(f"c{turn}", "x" * 200 + f" in src/module_{turn}.py"))
    return messages


def _big_step() -> list[Message]:
    """Four reads the model has not answered yet, each far above its share."""
    uses = [
        ToolUse(id=f"r{i}", name="read_file", input={"path": f"lib/part_{i}.py"}) for i in range(4)
    ]
    results = [
        Message.tool_result(
            f"r{i}",
            "\n".join(
                f"def handler_{i}_{j}(order_id='W{i}{j:03}'): return {j}" for j in range(120)
            ),
        )
        for i in range(4)
    ]
    return [Message.assistant(tool_uses=uses), *results]


def _step_cost(output: list[Message], counter: BaseCounter) -> int:
    """What the results of :func:`_big_step` cost in ``output``."""
    return sum(
        counter.estimate_message(m)
        for m in output
        if m.role is Role.TOOL and m.tool_results[0].tool_use_id.startswith("r")
    )


class TestStepAboveTheTarget:
    """The step in progress is what the next call reads first."""

    @pytest.mark.anyio
    async def test_takes_the_room_above_the_target_less_two_turns(self) -> None:
        """A big step in progress is kept above the target, up to the budget less two
        measured turns of growth, and never beyond it."""
        counter = TokenCounter()
        messages = [*_work(20), *_big_step()]
        turn = counter.estimate_messages(_work(20)[-2:])
        stack = default_stack(3_000, counter=counter, reserve=0.0)
        target = stack.compaction_target(messages)
        output = await stack.compact(messages)
        validate(output)
        sent = _sent(output, counter)
        assert sent > target + 500  # the step took room above the target
        assert sent + 2 * turn <= 3_000  # two turns of growth stay free
        assert all(
            f"r{i}" in {r.tool_use_id for m in output for r in m.tool_results} for i in range(4)
        )

    @pytest.mark.anyio
    async def test_a_schedule_keeps_its_turns_free(self) -> None:
        """With a cache schedule (compacting the whole history, not only the tail), the
        step stops short of the schedule's turns of growth, not two."""
        counter = TokenCounter()
        messages = [*_work(20), *_big_step()]
        turn = counter.estimate_messages(_work(20)[-2:])
        schedule = CacheSchedule(clock=None, min_turns=8, tail_first=False)
        stack = default_stack(3_000, counter=counter, reserve=0.0, schedule=schedule)
        output = await stack.compact(messages)
        assert _sent(output, counter) + 8 * turn <= 3_000

    @pytest.mark.anyio
    async def test_without_a_measured_growth_it_stays_at_the_target(self) -> None:
        """With no turns before the step (no growth measured), the step is cut to its
        share below the target, as is anything kept."""
        counter = TokenCounter()
        messages = [*_work(0), *_big_step()]
        stack = default_stack(3_000, counter=counter, reserve=0.0)
        target = stack.compaction_target(messages)
        output = await stack.compact(messages)
        assert _sent(output, counter) <= target


def _chat() -> list[Message]:
    """A few short exchanges, then a lookup the assistant answered, then the newest
    request: the answer holds what the next step needs."""
    messages = [
        Message.system("You are an airline agent."),
        Message.user("I need to change my booking."),
    ]
    for i in range(5):
        messages.append(Message.assistant(f"Could you tell me more about request {i}, please?"))
        messages.append(Message.user(f"Sure, here is detail number {i} about my trip."))
    flights = ", ".join(
        f'{{"flight_number": "HAT{100 + i}", "date": "2024-05-{10 + i}", "price": {120 + i}}}'
        for i in range(12)
    )
    lookup = ToolUse(id="g1", name="get_reservation_details", input={"reservation_id": "GV1N64"})
    answer = ", ".join(f"HAT{100 + i} on 2024-05-{10 + i} for ${120 + i}" for i in range(12))
    return [
        *messages,
        Message.assistant(tool_uses=[lookup]),
        Message.tool_result("g1", f'{{"reservation_id": "GV1N64", "flights": [{flights}]}}'),
        Message.assistant(f"Here are the details of reservation GV1N64: {answer}"),
        Message.user("Yes, please proceed with the change."),
    ]


class TestSummaryOfAShortSpan:
    """A summary needs a share of what it summarizes; the kept messages get the rest."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("budget", [480, 490, 500, 510])
    async def test_the_recent_answer_is_kept_whole(self, budget: int) -> None:
        """Just over the budget, the short chat before a lookup is summarized in what it
        needs and the assistant's answer after the lookup is kept whole, not cut to
        make room for a summary about as long as the chat."""
        counter = TokenCounter()
        messages = _chat()
        stack = default_stack(budget, counter=counter, reserve=0.0)
        assert stack.should_compact(messages, counter.estimate_messages(messages))
        output = await stack.compact(messages)
        validate(output)
        assert messages[-2] in output
        assert _sent(output, counter) <= budget


def _proposal() -> list[Message]:
    """Reads, then the assistant's proposal (the booking it will make) and the user's
    yes: the next step acts on the proposal."""
    details = "\n".join(
        f"- Passenger {i}: Name P{i} Smith, Date of Birth 1990-01-{10 + i:02}, seat 1{i}A"
        for i in range(12)
    )
    return [
        *_work(20),
        Message.assistant(f"To confirm, here are the details of the booking:\n{details}\nProceed?"),
        Message.user("Everything looks correct. Yes, please proceed with the booking."),
    ]


class TestAnsweredExchange:
    """When the newest message is the user's answer, the assistant's last words before
    it (a proposal, a question, options) are what the next step acts on: they are
    levelled first, as the step in progress is."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("budget", [1_000, 1_200, 1_400])
    async def test_the_proposal_the_user_answers_is_kept_whole(self, budget: int) -> None:
        """The proposal is kept whole while the budget has room for it, not cut to the
        level of the older reads."""
        counter = TokenCounter()
        messages = _proposal()
        stack = default_stack(budget, counter=counter, reserve=0.0)
        output = await stack.compact(messages)
        validate(output)
        assert messages[-2] in output
        assert messages[-1] in output
        assert _sent(output, counter) <= budget

    @pytest.mark.anyio
    async def test_older_reads_give_way_first(self) -> None:
        """Where the proposal and the older reads do not all fit, the reads give way
        first: the proposal is kept whole beside the summary."""
        counter = TokenCounter()
        messages = _proposal()
        stack = default_stack(700, counter=counter, reserve=0.0)
        output = await stack.compact(messages)
        validate(output)
        kept = [m for m in output if m.role is Role.ASSISTANT and not m.tool_uses]
        assert kept == [messages[-2]]
        assert not any(m.role is Role.TOOL for m in output)
        assert _sent(output, counter) <= 700


def _small_talk() -> list[Message]:
    """Twenty turns of the same chit-chat after an airline agent's prompt (a summary of
    them is short)."""
    messages = [
        Message.system("You are an airline agent."),
        Message.user("I want to book a flight."),
    ]
    for _ in range(20):
        messages.append(Message.assistant("Noted, anything else?"))
        messages.append(Message.user("Yes, one more thing to tell you about the trip."))
    return messages


def _lookup_after_chat() -> list[Message]:
    """Twenty turns of the same chit-chat, then a search whose forty rows are far above
    their share."""
    messages = _small_talk()
    rows = "\n".join(
        f"HAT{100 + i} JFK-SEA 2024-05-{10 + i % 20:02} economy ${120 + i} seats {i + 3}"
        for i in range(40)
    )
    search = ToolUse(
        id="s1", name="search_direct_flight", input={"origin": "JFK", "destination": "SEA"}
    )
    return [*messages, Message.assistant(tool_uses=[search]), Message.tool_result("s1", rows)]


class TestRoomTheSummaryLeft:
    """The room below the target a summary did not take goes to the step in progress the
    plan cut."""

    @pytest.mark.anyio
    async def test_the_cut_result_keeps_more_rows(self) -> None:
        """Where the summary of the chit-chat is too short to write, the search result
        is levelled again in the room it leaves: it keeps more of its rows, and the
        output stays within the budget."""
        counter = TokenCounter()
        messages = _lookup_after_chat()
        stack = default_stack(400, counter=counter, reserve=0.0)
        output = await stack.compact(messages)
        validate(output)
        rows = [
            line for line in output[-1].tool_results[0].text.splitlines() if line.startswith("HAT")
        ]
        assert len(rows) >= 22  # 19 when the room was left unused
        assert _sent(output, counter) <= 400

    @pytest.mark.anyio
    async def test_a_result_cut_below_its_cap_still_takes_the_room(self) -> None:
        """A JSON result cut to whole records keeps less than its cap: levelled again in
        the room left, its new cap counts that shortfall twice and comes out over the
        target, and a smaller room is tried rather than none: it keeps another record,
        within the budget."""
        counter = TokenCounter()
        messages = _small_talk()
        records = [
            {
                "flight_number": f"HAT{100 + i}",
                "origin": "JFK",
                "destination": "SEA",
                "date": f"2024-05-{10 + i:02}",
                "note": "window seats only " * 3,
                "price": 120 + i,
            }
            for i in range(10)
        ]
        search = ToolUse(
            id="s1", name="search_direct_flight", input={"origin": "JFK", "destination": "SEA"}
        )
        messages += [
            Message.assistant(tool_uses=[search]),
            Message.tool_result("s1", json.dumps(records)),
        ]
        output = await default_stack(575, counter=counter, reserve=0.0).compact(messages)
        validate(output)
        kept = re.findall(r"HAT\d{3}", output[-1].tool_results[0].text)
        assert len(kept) >= 9  # 8 when the first try's overshoot gave up the room
        assert _sent(output, counter) <= 575

    @pytest.mark.anyio
    async def test_with_a_store_the_index_is_not_counted_as_the_room_used(self) -> None:
        """With a store, the index stands above the target: the room below the target
        the summary left is measured without it, and still goes to the search result."""
        counter = TokenCounter()
        stack = default_stack(700, counter=counter, reserve=0.0, store=MemoryStore())
        output = await stack.compact(_lookup_after_chat())
        validate(output)
        rows = [
            line for line in output[-1].tool_results[0].text.splitlines() if line.startswith("HAT")
        ]
        assert len(rows) >= 34  # 31 when the index was counted as room used
        assert _sent(output, counter) <= 700

    @pytest.mark.anyio
    async def test_with_a_store_the_room_taken_never_costs_the_task(self) -> None:
        """The step levelled again with the room left stays within the budget with the
        index beside it: the last resort never drops a task that fits for it."""
        task = (
            "Please migrate the billing service for customer acme_corp_4411 to the new "
            "ledger API and keep invoice INV-2024-0042 intact."
        )
        messages = [Message.user(task)]
        for i in range(6):
            read = ToolUse(id=f"t{i}", name="read", input={"path": f"src/mod{i}.py"})
            lines = "\n".join(f"line {j} of mod{i} value_{i}_{j}" for j in range(30))
            messages += [
                Message.assistant(f"Checking step {i}", tool_uses=[read]),
                Message.tool_result(f"t{i}", lines),
            ]
        run = ToolUse(id="s", name="bash", input={"cmd": "x" * 200})
        messages += [
            Message.user("also check the tests please"),
            Message.assistant("", tool_uses=[run]),
            Message.tool_result("s", "out " * 50),
        ]
        counter = TokenCounter()
        output = await default_stack(250, counter=counter, store=MemoryStore()).compact(messages)
        validate(output)
        assert any(m.text == task for m in output)
