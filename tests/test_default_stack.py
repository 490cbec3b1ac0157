"""default_stack (CONTRACT §3, issue 11): a hard budget, a request every provider accepts,
the task and the user's words kept, compaction to a target below the trigger."""

from __future__ import annotations

import json
import logging
import re
from typing import Literal

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from offload_support import step_in_progress
from strategies import counters, well_formed_conversations

from neuron_context import (
    BaseCounter,
    Compaction,
    CompactionError,
    CompletionRequest,
    ConfigurationError,
    ContextStrategy,
    Image,
    Message,
    Role,
    Text,
    TokenCounter,
    TokenizerCounter,
    ToolResult,
    ToolUse,
    default_stack,
    validate,
)
from neuron_context.errors import (
    BudgetExceededError,
    ProviderError,
)
from neuron_context.testing import FunctionProvider

HEADING = "[Summary of earlier conversation]\n"
"""What a provider sees before a summary (the counting rules do not price it)."""


def call(use_id: str, path: str) -> Message:
    """An assistant message reading ``path``."""
    return Message.assistant(tool_uses=[ToolUse(id=use_id, name="read_file", input={"path": path})])


def session(turns: int, *, output: str = "x" * 400) -> list[Message]:
    """One request, then ``turns`` tool calls with their results: an agent at work."""
    messages = [Message.system("You are a coding agent."), Message.user("Fix the bug in app.py")]
    for turn in range(turns):
        messages.append(call(f"c{turn}", f"src/module_{turn}.py"))
        messages.append(Message.tool_result(f"c{turn}", f"{output} in src/module_{turn}.py"))
    return messages


def first_non_system(messages: list[Message]) -> Message | None:
    """The first message that is not a system message."""
    return next((m for m in messages if m.role is not Role.SYSTEM), None)


def cost(messages: list[Message], counter: BaseCounter) -> int:
    """What a provider receives: the messages, and the heading of a summary."""
    heading = counter.estimate_text(HEADING) if any(m.is_compaction for m in messages) else 0
    return counter.estimate_messages(messages) + heading


class TestConfiguration:
    """default_stack's arguments."""

    def test_is_a_strategy_configured_once(self) -> None:
        """It returns a ContextStrategy holding the budget and counter it was given."""
        counter = TokenCounter(3.0)
        stack = default_stack(10_000, counter=counter)
        assert isinstance(stack, ContextStrategy)
        assert stack.max_tokens == 10_000
        assert stack.counter is counter

    @pytest.mark.parametrize(
        ("kwargs", "field"),
        [
            ({"max_tokens": 0}, "max_tokens"),
            ({"max_tokens": -5}, "max_tokens"),
            ({"max_tokens": 100, "target": 1.5}, "target"),
            ({"max_tokens": 100, "target": float("nan")}, "target"),
            ({"max_tokens": 100, "reserve": 0.9}, "reserve"),
            ({"max_tokens": 100, "strict": "yes"}, "strict"),
            ({"max_tokens": 100, "summarizer": "gpt"}, "summarizer"),
            ({"max_tokens": 100, "no_such_option": 1}, "no_such_option"),
            ({"max_tokens": 100, "timeout": -1}, "timeout"),
        ],
    )
    def test_bad_values_name_the_field(self, kwargs: dict[str, object], field: str) -> None:
        """Bad values raise ConfigurationError naming what is wrong."""
        with pytest.raises(ConfigurationError, match=field):
            default_stack(**kwargs)  # type: ignore[arg-type]

    def test_trigger_leaves_the_reserve(self) -> None:
        """The trigger is the budget less the reserve, of what the system messages leave."""
        stack = default_stack(1000, reserve=0.1)
        assert not stack.should_compact([], 900)
        assert stack.should_compact([], 901)
        with pytest.raises(ConfigurationError, match="token_count"):
            stack.should_compact([], float("nan"))  # type: ignore[arg-type]


class TestDefaultCounter:
    """With no counter given, the budget holds in real o200k_base tokens."""

    def test_is_exact_o200k(self) -> None:
        """The default counter is the exact o200k_base counter (loaded on first use)."""
        stack = default_stack(10_000)
        assert isinstance(stack.counter, TokenizerCounter)
        assert stack.counter.encoding == "o200k_base"
        assert stack.counter == TokenizerCounter.from_encoding("o200k_base")

    @pytest.mark.anyio
    @pytest.mark.parametrize("kind", ["code", "ids", "digits"])
    async def test_holds_where_the_heuristic_undercounts(self, kind: str) -> None:
        """Code, hex ids and numbers cost more tokens than bytes / 4 says; the
        default stack's output fits the budget counted exactly all the same."""
        texts = {
            "code": "if(a[i]!=b[j]){x+=1;}else{y-=2;}\n" * 60,
            "ids": " ".join(f"{n * 2654435761 % 2**32:08x}" for n in range(300)),
            "digits": " ".join(str(n * 7919 % 100003) for n in range(400)),
        }
        messages = session(12, output=texts[kind])
        exact = TokenizerCounter.from_encoding("o200k_base")
        heuristic = TokenCounter()
        assert exact.estimate_messages(messages) > heuristic.estimate_messages(messages)
        budget = exact.estimate_messages(messages) // 4
        output = await default_stack(budget).compact(messages)
        assert cost(output, exact) <= budget
        assert output[1] == messages[1]  # the task kept


class TestTrigger:
    """When the stack compacts: what a provider receives against the budget."""

    def test_counts_the_headings_of_the_summaries_in_front(self) -> None:
        """The summaries a compaction left at the front render with a heading each that
        the count of the messages does not price: with a system prompt that leaves little
        free (so the reserve is small), a history under the limit by its count but over
        it with the headings compacts; the same history with the summaries' text as plain
        user messages does not."""
        counter = TokenCounter()
        system = Message.system("rule " * 2_000)
        summaries = [
            Message(role=Role.USER, content=(Compaction(content=f"Summary {n}: " + "x" * 40),))
            for n in range(6)
        ]
        messages = [
            system,
            Message.user("The task."),
            *summaries,
            Message.user("Now this."),
            Message.assistant("On it."),
        ]
        heading = counter.estimate_text(HEADING)
        headings = heading * len(summaries)
        total = counter.estimate_messages(messages)
        stack = default_stack(total + headings // 2, counter=counter, reserve=0.0)
        assert not stack.should_compact(messages[:1], counter.estimate_messages(messages[:1]))
        assert stack.should_compact(messages, total)
        plain = [
            system,
            Message.user("The task."),
            *(Message.user(s.text) for s in summaries),
            *messages[-2:],
        ]
        assert not stack.should_compact(plain, counter.estimate_messages(plain))


class TestCompaction:
    """What a compaction keeps."""

    @pytest.mark.anyio
    async def test_pins_the_task_of_a_long_agent_session(self) -> None:
        """One request and many tool turns: the request stays, first, as it was."""
        messages = session(60)
        counter = TokenCounter()
        stack = default_stack(2000, counter=counter)
        output = await stack.compact(messages)
        validate(output)
        assert output[1] is messages[1]
        assert output[2].is_compaction
        assert cost(output, counter) <= 2000
        assert output[-1] is messages[-1]

    @pytest.mark.anyio
    async def test_a_short_task_stays_whole_under_a_tight_target(self) -> None:
        """A large system prompt leaves the target little room: a short task is still
        kept whole (it fits the hard budget), and a long one is cut in the middle."""
        counter = TokenCounter()
        system = Message.system("policy " * 1500)
        for words, whole in ((60, True), (600, False)):
            task = Message.user("I want to exchange my camera " + "please " * words)
            newest = Message.user("Yes, the 10x zoom one.")
            messages = [system, task, *session(10)[2:], newest, *session(10)[2:]]
            budget = counter.estimate_messages([system]) + 600
            output = await default_stack(budget, counter=counter).compact(messages)
            validate(output)
            assert cost(output, counter) <= budget
            assert (output[1] is task) is whole
            assert output[1].text.startswith("I want to exchange my camera")
            assert newest in output

    @pytest.mark.anyio
    async def test_compacts_to_the_target(self) -> None:
        """The output is near the target, so the next turns do not compact again."""
        messages = session(60)
        counter = TokenCounter()
        stack = default_stack(4000, counter=counter, target=0.6)
        output = await stack.compact(messages)
        assert cost(output, counter) <= 0.6 * 4000
        grown = [*output, call("n", "next.py"), Message.tool_result("n", "ok")]
        assert not stack.should_compact(grown, stack.token_estimate(grown))

    @pytest.mark.anyio
    async def test_summary_quotes_the_users_later_requests(self) -> None:
        """Requests older than the kept part are quoted verbatim in the summary."""
        messages = session(20)
        messages.append(Message.user("Also:\n- keep the API stable\n- add a test"))
        messages += session(40)[2:]
        messages.append(Message.user("[Request interrupted by user]"))
        messages += session(60)[2:]
        newest = Message.user("Then update the changelog.")
        messages += [newest, *session(80)[2:]]
        output = await default_stack(2500).compact(messages)
        assert newest in output
        summary = next(m for m in output if m.is_compaction)
        assert "<user_request>\nAlso:\n- keep the API stable\n- add a test\n</user_request>" in (
            summary.text
        )
        assert "Request interrupted" not in summary.text
        assert "src/module_0.py: read_file" in summary.text

    @pytest.mark.anyio
    async def test_keeps_the_newest_request(self) -> None:
        """The newest request is kept as a message even when the kept part is after it."""
        messages = [*session(5), Message.user("Now refactor utils.py"), *session(50)[2:]]
        output = await default_stack(1500).compact(messages)
        assert messages[12] in output
        validate(output)

    @pytest.mark.anyio
    async def test_a_task_that_cannot_be_cut_gives_way_to_the_newest_request(self) -> None:
        """A pinned task made of images cannot be cut to fit: it goes, the newest request
        stays, and the output fits (found by Hypothesis)."""
        picture = Image(data="0000")
        task = Message(role=Role.USER, content=(Text(text="0"), picture, picture))
        newest = Message(role=Role.USER, content=(Text(text="0"), picture))
        calls = Message.assistant(
            "",
            tool_uses=[
                ToolUse(id="t1", name="now", input={}),
                ToolUse(id="t2", name="now", input={}),
            ],
        )
        results = Message(
            role=Role.TOOL,
            content=(
                ToolResult(tool_use_id="t1", content="", is_error=True),
                ToolResult(tool_use_id="t2", content="", is_error=True),
            ),
        )
        messages = [calls, results, Message.user(""), Message.assistant(""), task, newest]
        counter = TokenCounter(tokens_per_page=0)
        budget = counter.estimate_message(task) + 64
        output = await default_stack(budget, counter=counter, reserve=0.0).compact(messages)
        assert cost(output, counter) <= budget
        assert output[-1] == newest
        validate(output)

    @pytest.mark.anyio
    async def test_the_newest_request_gets_back_the_room_of_a_task_that_went(self) -> None:
        """The newest request was cut to leave a task its room; when the task cannot
        fit even cut and goes, the newest request is whole again (found by Hypothesis:
        its one word was cut away beside an image)."""
        picture = Image(data="0000")
        task = Message(role=Role.USER, content=(Text(text=""), picture))
        newest = Message(role=Role.USER, content=(Text(text="Retry with this one."), picture))
        messages = [task, *[Message.user("") for _ in range(7)], Message.assistant(""), newest]
        counter = TokenCounter(tokens_per_page=0)
        budget = counter.estimate_message(newest) + 64
        output = await default_stack(budget, counter=counter, reserve=0.0).compact(messages)
        assert cost(output, counter) <= budget
        assert output[-1] == newest
        validate(output)

    @pytest.mark.anyio
    async def test_huge_tool_result_is_cut_in_the_middle(self) -> None:
        """A result bigger than the budget keeps its head and tail and says what was cut."""
        messages = session(1, output="line\n" * 20_000)
        counter = TokenCounter()
        output = await default_stack(3000, counter=counter).compact(messages)
        assert cost(output, counter) <= 3000
        text = output[-1].tool_results[0].content[0]
        assert isinstance(text, Text)
        assert re.search(
            r"\[\.\.\. [\d,]+ lines \([\d,]+ characters, about [\d,]+ tokens\) cut", text.text
        )
        assert "src/module_0.py" in text.text

    @pytest.mark.anyio
    @pytest.mark.parametrize("budget", [60, 80, 100])
    async def test_a_marker_counts_names_only_where_it_shows_one(self, budget: int) -> None:
        """A result cut so far that none of the names of its cut part fits the marker's
        share says what was cut, not ``naming 80: 80 names`` (tokens that tell the model
        nothing the size does not)."""
        result = " ".join(
            f"/srv/deployments/region_{i}/cluster_alpha_beta_gamma/services/"
            f"payments_gateway_v{i}/config/settings_production_override_{i}.yaml"
            for i in range(40)
        )
        text = await self.cut_step(result, budget)
        assert re.search(r"\[\.\.\. 1 line \(about [\d,]+ tokens\) cut", text), text
        assert not re.search(r"naming [\d,]+: [\d,]+ names", text), text

    @staticmethod
    async def cut_step(result: str, budget: int) -> str:
        """``result`` as ``default_stack`` keeps it as the step in progress (a lookup's
        result) in ``budget`` tokens, the output within the budget."""
        use = ToolUse(id="p1", name="get_details", input={"id": "3377618313"})
        messages = [
            Message.user("Look it up."),
            Message.assistant(tool_uses=[use]),
            Message.tool_result("p1", result),
        ]
        counter = TokenCounter()
        output = await default_stack(budget, counter=counter).compact(messages)
        assert cost(output, counter) <= budget
        return output[-1].tool_results[0].text

    @classmethod
    async def cut_text(cls, result: str, budget: int) -> tuple[str, list[str]]:
        """``result`` cut as the step in progress: the head kept before the marker, and
        the names the marker shows."""
        text = await cls.cut_step(result, budget)
        names = re.search(r", naming [\d,]+: (.*?)(?: and [\d,]+ more)? \.\.\.\]", text)
        assert names is not None, text
        head = text[: text.index("\n[... ")]
        return head, names.group(1).split(" \u00b7 ")

    @pytest.mark.anyio
    @pytest.mark.parametrize("budget", [210, 299, 412, 500])
    async def test_the_first_whole_value_after_the_head_is_named(self, budget: int) -> None:
        """Where the head ends at a separator, the value after it is whole and named
        first, among the words around it (only a value the cut runs across is left
        out)."""
        numbers = [6_589_752_851 + i * 7_919 for i in range(300)]
        text = " ".join(f"order {n} shipped to warehouse W{i}" for i, n in enumerate(numbers))
        head, names = await self.cut_text(text, budget)
        shown = [int(n) for name in names for n in re.findall(r"(?<![\w.])\d{7,}(?!\w)", name)]
        assert shown
        assert all(n in numbers for n in shown)
        start = text.index(head.rstrip(" ")) + len(head.rstrip(" "))
        after = [n for n in numbers if text.index(f"order {n} ") + 6 >= start]
        assert shown[0] == after[0], (head[-40:], shown[:3], after[:3])

    @pytest.mark.anyio
    async def test_nothing_to_do_returns_an_equal_list(self) -> None:
        """A history under the target comes back as it is."""
        messages = session(2)
        assert await default_stack(100_000).compact(messages) == messages

    @pytest.mark.anyio
    async def test_strict_says_by_how_much(self) -> None:
        """With strict=True a budget the system messages alone exceed is an error."""
        messages = [Message.system("s" * 4000), Message.user("hi"), Message.assistant("yo")]
        with pytest.raises(BudgetExceededError) as info:
            await default_stack(500, strict=True).compact(messages)
        assert isinstance(info.value, CompactionError)
        assert info.value.excess > 0
        assert str(info.value.excess) in str(info.value)

    @pytest.mark.anyio
    async def test_not_strict_logs_and_returns_its_best(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """By default an unreachable budget is logged and the best result returned."""
        messages = [Message.system("s" * 4000), Message.user("hi"), Message.assistant("yo")]
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            output = await default_stack(500).compact(messages)
        assert output[0] is messages[0]
        assert "cannot be met" in caplog.text

    @pytest.mark.anyio
    async def test_a_failing_llm_summarizer_falls_back_offline(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A summarizer that fails is replaced by the offline one; the budget holds."""

        def fail(request: object) -> str:
            msg = "down"
            raise ProviderError(msg)

        counter = TokenCounter()
        stack = default_stack(2000, counter=counter, summarizer=FunctionProvider(fail), retries=0)
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            output = await stack.compact(session(60))
        assert any(m.is_compaction for m in output)
        assert cost(output, counter) <= 2000
        assert "summarizing offline" in caplog.text

    @pytest.mark.anyio
    async def test_earlier_summaries_stay_until_the_new_one_is_squeezed(self) -> None:
        """A compaction keeps the earlier summary as it was (the prompt up to it is
        unchanged: the provider's cache serves it, and nothing it holds is lost) while
        the new summary has a tenth of the summary space beside it (``DELTA_SHARE``),
        above the target if need be, up to most of the room between the target and
        the budget (``SUMMARY_HEADROOM``); an earlier summary that leaves it less is
        merged with the new one into one, below the target."""
        counter = TokenCounter()
        stack = default_stack(3000, counter=counter, target=0.6)
        first = await stack.compact(session(60))
        (earlier,) = [m for m in first if m.is_compaction]
        grown = [*first]
        for turn in range(60, 90):
            grown += [
                call(f"c{turn}", f"src/module_{turn}.py"),
                Message.tool_result(f"c{turn}", "x" * 400 + f" in src/module_{turn}.py"),
            ]
        second = await stack.compact(grown)
        summaries = [m for m in second if m.is_compaction]
        assert len(summaries) == 2
        assert summaries[0] is earlier
        assert second[: second.index(earlier) + 1] == grown[: grown.index(earlier) + 1]
        # Earlier summaries that leave the new one its share below the ceiling stay
        # (at 1,150 facts, above the target); ones that do not are merged with it into one.
        rest = grown[grown.index(earlier) + 1 :]
        target = stack.compaction_target(grown)
        for facts, kept in ((400, True), (1150, True), (1200, False)):
            big = Message(role=Role.USER, content=(Compaction(content="- fact " * facts),))
            output = await stack.compact([grown[0], grown[1], big, *rest])
            assert len([m for m in output if m.is_compaction]) == (2 if kept else 1)
            assert (big in output) is kept
            assert cost(output, counter) <= (3000 if kept else target)
            assert (cost(output, counter) > target) is (facts == 1150)  # 400: below it

    @pytest.mark.anyio
    async def test_a_new_summary_beside_an_earlier_one_is_a_share_of_its_span(self) -> None:
        """Beside an earlier summary kept as it is, a new summary of a few turns costs at
        most 35% of the messages it summarizes, however much room the target leaves it
        (the kept summaries fill the room to the budget no faster than that)."""

        def turns(first: int, last: int) -> list[Message]:
            out: list[Message] = []
            for turn in range(first, last):
                rows = (
                    f"order_id=W{turn}{j:03d} total={turn}{j}.50 path=src/pkg_{turn}/mod_{j}.py"
                    for j in range(12)
                )
                out += [call(f"c{turn}", f"src/m{turn}.py")]
                out += [Message.tool_result(f"c{turn}", "\n".join(rows))]
            return out

        counter = TokenCounter()
        stack = default_stack(3000, counter=counter, reserve=0.0)
        task = [Message.system("You are an agent."), Message.user("Fix the orders.")]
        first = await stack.compact([*task, *turns(0, 40)])
        (earlier,) = [m for m in first if m.is_compaction]
        grown = [*first, *turns(40, 44)]
        output = await stack.compact(grown)
        kept, new = [m for m in output if m.is_compaction]
        assert kept is earlier
        shown = {id(m) for m in output}
        after = grown[grown.index(earlier) + 1 :]
        start = next(i for i, m in enumerate(after) if id(m) in shown and m.role is not Role.USER)
        span = counter.estimate_messages(after[:start])
        assert span > 0
        assert counter.estimate_text(new.text) <= 0.35 * span

    @pytest.mark.anyio
    async def test_an_unreachable_budget_is_compacted_once(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """Where the system messages leave no room for the budget, the compaction runs
        once (one logged compaction), not once more per retry of an offloading there is
        no store for (with an LLM summarizer each run could be a call)."""
        messages = [Message.system("s" * 6000), *session(60)[1:]]
        with caplog.at_level(logging.INFO, logger="neuron_context"):
            output = await default_stack(1500, counter=TokenCounter()).compact(messages)
        assert cost(output, TokenCounter()) > 1500
        runs = [
            r
            for r in caplog.records
            if r.getMessage().startswith("DefaultStack: ")
            and "messages" in r.getMessage()
            and "->" in r.getMessage()
        ]
        assert len(runs) == 1

    @pytest.mark.anyio
    async def test_llm_summarizer_gets_the_space_left(self) -> None:
        """An LLM summarizer is asked for a summary that fills the space below the target."""
        seen: list[int | None] = []

        def reply(request: object) -> str:
            seen.append(getattr(request, "max_tokens", None))
            return "The agent read every module."

        stack = default_stack(4000, summarizer=FunctionProvider(reply))
        output = await stack.compact(session(60))
        assert seen
        assert seen[0] is not None
        assert seen[0] > 500
        summary = next(m for m in output if m.is_compaction)
        assert summary.text == "The agent read every module."


class TestWhatTheNextStepNeeds:
    """Task before length; cuts that move back; the step in progress cut last."""

    @pytest.mark.anyio
    async def test_a_short_task_is_not_dropped_for_a_long_request(self) -> None:
        """The system prompt and a long retried instruction overflow the budget: the
        50-token task stays whole, the longer request is cut."""
        counter = TokenizerCounter.from_encoding("o200k_base")
        task = Message.user("Find me a cheap hotel in Lisbon for two nights in May.")
        instruction = Message.user(
            "Retry. Use the tools in this order and mind every constraint: " + "step " * 700
        )
        messages = [
            Message.system("You are a travel agent. " * 40),
            task,
            *session(3)[2:],
            instruction,
        ]
        budget = counter.estimate_messages([messages[0], instruction]) - 100
        output = await default_stack(budget).compact(messages)
        assert task in output  # whole
        assert cost(output, counter) <= budget
        kept = next(m for m in output if m.text.startswith("Retry."))
        assert counter.estimate_message(kept) < counter.estimate_message(instruction)

    @pytest.mark.anyio
    async def test_the_summary_quotes_no_request_for_being_first(self) -> None:
        """The task is kept beside the summary, so the oldest request summarized is one
        of the others: words that hold nothing an agent reuses do not take the space of
        the facts it looked up (a small summary takes the newest result's first: the
        reservation's flights), at any budget that compacts."""
        chit_chat = (
            "That sounds good, but I am not sure about which one it is yet. "
            "Let me think about what I want first, sorry."
        )
        profile = {"payment_id": "credit_card_4421486", "reservations": ["NO6JO3", "AIXC49"]}
        flights = [
            {"flight_number": f"HAT{n:03d}", "date": f"2024-05-{n:02d}"} for n in range(10, 16)
        ]
        found = [{"flight_number": f"HAT{n:03d}", "price": 100 + n} for n in range(20, 30)]
        messages = [
            Message.system("You are an airline agent."),
            Message.user("Hi! I'd like to change a reservation of mine."),
            Message.assistant("Sure. What is your user id?"),
            Message.user(chit_chat),
            Message.assistant("No problem, take your time. What is your user id?"),
            Message.user("My user id is mia_li_3668."),
            Message.assistant(
                tool_uses=[
                    ToolUse(id="u1", name="get_user_details", input={"user_id": "mia_li_3668"})
                ]
            ),
            Message.tool_result("u1", json.dumps(profile)),
            Message.assistant(
                tool_uses=[
                    ToolUse(
                        id="r1", name="get_reservation_details", input={"reservation_id": "NO6JO3"}
                    )
                ]
            ),
            Message.tool_result("r1", json.dumps({"reservation_id": "NO6JO3", "flights": flights})),
            Message.assistant("Your reservation NO6JO3 has six flights. Which one?"),
            Message.user("The second one, please, if that is possible at all."),
            Message.assistant(
                tool_uses=[
                    ToolUse(
                        id="s1",
                        name="search_direct_flight",
                        input={"origin": "JFK", "destination": "SEA", "date": "2024-05-20"},
                    )
                ]
            ),
            Message.tool_result("s1", json.dumps(found)),
        ]
        summaries = []
        for budget in range(300, 420, 15):
            output = await default_stack(budget, counter=TokenCounter()).compact(messages)
            summaries += [m.text for m in output if m.is_compaction]
        assert summaries
        assert not any(chit_chat in text for text in summaries)
        assert all("<user_request>" not in text for text in summaries)
        assert any(
            "reservation_id=NO6JO3: flights: flight_number|date" in text for text in summaries
        )

    @pytest.mark.anyio
    @pytest.mark.parametrize("budget", range(250, 900, 50))
    async def test_a_task_only_an_earlier_summary_quotes_is_kept(self, budget: int) -> None:
        """A history that starts with a summary holds its task only there (the request
        the plan pins is a later one): a new summary still quotes it first."""
        task = "Cancel reservation ZX81QP for user mia_li_3668 and refund to credit_card_4421486."
        previous = (
            f"## Goal and constraints\n<user_request>\n{task}\n</user_request>\n\n"
            "## Facts\n- get_user_details user_id=mia_li_3668: reservations=[ZX81QP]"
        )
        messages = [
            Message.system("You are an airline agent."),
            Message(role=Role.USER, content=(Compaction(content=previous),)),
        ]
        for i in range(8):
            rows = [
                {"flight_number": f"HAT{i:03d}{j}", "price": 100 + j, "seat": f"S{i}{j}X"}
                for j in range(8)
            ]
            messages += [
                Message.assistant(
                    tool_uses=[ToolUse(id=f"c{i}", name="get_flight", input={"n": f"HAT{i:03d}"})]
                ),
                Message.tool_result(f"c{i}", json.dumps(rows)),
                Message.assistant(f"Checked HAT{i:03d}."),
                Message.user(f"ok, next one please {i}"),
            ]
        output = await default_stack(budget, counter=TokenCounter()).compact(messages)
        assert any(task in m.text for m in output)

    @pytest.mark.anyio
    async def test_a_cut_inside_the_newest_exchange_moves_back(self) -> None:
        """The newest exchange (five results the model has not answered) does not fit
        the recent space: it is kept, its results cut, rather than nothing recent."""
        counter = TokenizerCounter.from_encoding("o200k_base")
        uses = [ToolUse(id=f"p{i}", name="get_product", input={"id": f"P{i}"}) for i in range(5)]
        step = [
            Message.assistant(tool_uses=uses),
            *(
                Message.tool_result(f"p{i}", f'{{"id": "P{i}", "price": {100 + i}.5}}\n' * 60)
                for i in range(5)
            ),
        ]
        messages = [*session(20), *step]
        output = await default_stack(3_000).compact(messages)
        validate(output)
        assert step[0] in output  # the calls, as they were
        answered = {r.tool_use_id for m in output for r in m.tool_results}
        assert answered >= {f"p{i}" for i in range(5)}  # every result of the step, cut or whole
        texts = [
            t.text for m in output for r in m.tool_results for t in r.content if isinstance(t, Text)
        ]
        for i in range(5):  # each result's facts are still there
            assert any(f'"price": {100 + i}.5' in text for text in texts)
        assert cost(output, counter) <= 3_000

    @pytest.mark.anyio
    async def test_kept_messages_that_fill_the_target_leave_a_summary(self) -> None:
        """The task, the newest exchange (six calls whose inputs cannot be cut, their
        results cut to their floor) and the final answer fill the target: the summary
        still gets its floor share of the room, from what the hard budget leaves."""
        counter = TokenCounter()

        def exchange(turn: int, size: int) -> list[Message]:
            uses = [
                ToolUse(
                    id=f"c{turn}_{i}",
                    name="read_file",
                    input={
                        "path": f"src/m{turn}_{i}.py",
                        "pattern": f"def f_{turn}_{i}" + "|class C" * 14,
                    },
                )
                for i in range(6)
            ]
            results = [
                Message.tool_result(u.id, f"def f_{turn}_{i}(): pass\n" * size)
                for i, u in enumerate(uses)
            ]
            return [Message.assistant(tool_uses=uses), *results]

        messages = [
            Message.user("Survey the modules and report what each defines. " * 11),
            *exchange(0, 90),
            *exchange(1, 12),
            Message.assistant("Report: " + "each module defines one function. " * 90),
        ]
        budget = 1_100
        output = await default_stack(budget, counter=counter).compact(messages)
        validate(output)
        summaries = [m for m in output if m.is_compaction]
        assert summaries
        assert "src/m0_" in summaries[0].text
        assert cost(output, counter) <= budget * 0.95

    @pytest.mark.anyio
    async def test_a_name_in_a_cut_result_keeps_its_words(self) -> None:
        """A result cut as the step in progress shows each name it keeps with the words
        of its line (``order 6589752851 shipped``), not alone: on a whole line kept, or
        among the names of its marker."""
        lines = [f"order {6_589_752_851 + i * 7_919} shipped to W{i}" for i in range(300)]
        use = ToolUse(id="p1", name="get_details", input={"id": "3377618313"})
        messages = [
            Message.user("Look it up."),
            Message.assistant(tool_uses=[use]),
            Message.tool_result("p1", "\n".join(lines)),
        ]
        output = await default_stack(400, counter=TokenCounter()).compact(messages)
        shown: list[str] = []
        for line in output[-1].tool_results[0].text.split("\n"):
            named = re.search(r", naming [\d,]+: (.*?)(?: and [\d,]+ more)? \.\.\.\]", line)
            shown.extend(named.group(1).split(" \u00b7 ") if named else [line])
        holding = [piece for piece in shown if re.search(r"\d{10}", piece)]
        assert len(holding) > 10
        assert all(piece in lines for piece in holding), holding


class TestEmptyRequests:
    """A conversation that starts on a user message never compacts to nothing."""

    @pytest.mark.anyio
    async def test_an_empty_task_before_a_huge_result(self) -> None:
        """An empty first request is kept, however little room the budget leaves."""
        messages = [
            Message.user(""),
            call("c1", "big.txt"),
            Message.tool_result("c1", "x" * 2000),
        ]
        output = await default_stack(79).compact(messages)
        assert output
        assert output[0] is messages[0]
        validate(output)

    @pytest.mark.anyio
    async def test_a_lone_empty_request(self) -> None:
        """A history of one empty user message comes back as it is."""
        messages = [Message.user("")]
        assert await default_stack(5).compact(messages) == messages

    @pytest.mark.anyio
    @pytest.mark.parametrize("blank", ["   ", "\n\t", ""])
    async def test_a_blank_newest_request_is_kept(self, blank: str) -> None:
        """A whitespace-only newest request is still the turn the model answers: kept,
        so the output ends on it as the input did."""
        messages = [
            Message.user("task " * 100),
            Message.assistant("ok " * 100),
            Message.user(blank),
        ]
        for budget in (20, 40, 200):
            output = await default_stack(budget).compact(messages)
            assert output[-1] is messages[-1], budget
            assert output[0].role is Role.USER

    @pytest.mark.anyio
    async def test_an_image_only_request_is_kept(self) -> None:
        """A request holding only an image (no text) is pinned as the newest request."""
        image = Image(media_type="image/png", url="https://example.com/a.png")
        photo = Message(role=Role.USER, content=(image,))
        messages = [*session(40), Message.assistant("Done."), photo]
        output = await default_stack(800).compact(messages)
        assert output[-1] is photo


class TestCacheAligned:
    """default_stack(cache_aligned=True) sends the agent's own prefix to the summarizer."""

    @pytest.mark.anyio
    async def test_prefix_as_the_agent_sent_it(self) -> None:
        """The request starts with the system prompt and the task, as the agent's did."""
        seen: list[CompletionRequest] = []

        def reply(request: CompletionRequest) -> str:
            seen.append(request)
            return "The agent read every module."

        messages = session(60)
        stack = default_stack(2000, summarizer=FunctionProvider(reply), cache_aligned=True)
        output = await stack.compact(messages)
        (request,) = seen
        assert request.system == "You are a coding agent."
        assert request.messages[0] is messages[1]
        assert request.messages[-1].text.startswith("[Summary request]")
        assert any(m.text == "The agent read every module." for m in output)


class TestProperties:
    """Invariants of default_stack over generated conversations."""

    @given(
        messages=well_formed_conversations(max_turns=14),
        counter=counters(),
        extra=st.integers(0, 400),
        target=st.sampled_from([0.5, 0.7, 1.0]),
        in_progress=st.sampled_from(["drop", "keep"]),
    )
    @example(  # a task empty in the input, an assistant message after it: it stays
        messages=[
            Message(role=Role.USER, content=(Compaction(content=""),)),
            Message.user(""),
            Message.assistant(tool_uses=[ToolUse(id="toolu_01", name="get_time", input={})]),
            Message.system(""),
            Message.tool_result("toolu_01", "", is_error=True),
            Message.user(""),
            Message.user(""),
        ],
        counter=TokenCounter(),
        extra=0,
        target=0.5,
        in_progress="drop",
    )
    @pytest.mark.anyio
    async def test_budget_and_start_on_user(
        self,
        messages: list[Message],
        counter: TokenCounter,
        extra: int,
        target: float,
        in_progress: Literal["drop", "keep"],
    ) -> None:
        """Whenever the system messages and the newest request fit (with ``"keep"``, the
        default: and the step in progress), the output fits; it is well formed; it starts
        on a user message when the input did; nothing is lost of the system messages."""
        systems = [m for m in messages if m.role is Role.SYSTEM]
        users = [m for m in messages if m.role is Role.USER and not m.is_compaction]
        # A conversation whose only user messages are summaries (or blank) has no newest
        # request that says anything: its opener is a summary, kept before the step in
        # progress over such a budget by design (the output starts on a user message).
        said = [m for m in users if m.text.strip() or any(type(b) is not Text for b in m.content)]
        assume(said or not any(m.is_compaction for m in messages))
        newest = max((counter.estimate_message(m) for m in users), default=0)
        floor = counter.estimate_messages(systems) + newest
        if in_progress == "keep":
            floor += counter.estimate_messages([messages[i] for i in step_in_progress(messages)])
        budget = floor + 64 + extra
        stack = default_stack(
            budget, counter=counter, target=target, reserve=0.0, in_progress=in_progress
        )
        output = await stack.compact(messages)
        validate(output)
        assert cost(output, counter) <= budget
        assert [m for m in output if m.role is Role.SYSTEM] == systems
        first = first_non_system(messages)
        if first is not None and first.role is Role.USER:
            after = first_non_system(output)
            assert after is None or after.role is Role.USER
        assert counter.estimate_messages(output) <= counter.estimate_messages(messages)

    @given(
        messages=well_formed_conversations(max_turns=14),
        counter=counters(),
        earlier=st.lists(st.integers(1, 300), min_size=1, max_size=3),
        extra=st.integers(0, 2000),
    )
    @pytest.mark.anyio
    async def test_earlier_summaries_kept_verbatim_within_budget(
        self, messages: list[Message], counter: TokenCounter, earlier: list[int], extra: int
    ) -> None:
        """Earlier summaries of any size, kept above the target or merged: the output
        fits, and an earlier summary is in it as it was or not at all."""
        users = [i for i, m in enumerate(messages) if m.role is Role.USER]
        # The budget below is where the newest request fits: a conversation whose only
        # user messages are summaries has none (its opener is a summary, kept at its
        # floor before the step in progress, over such a budget by design).
        requests = [i for i in users if not messages[i].is_compaction]
        assume(requests)
        summaries = [
            Message(
                role=Role.USER,
                content=(Compaction(content="".join(f"- fact_{k}=V{n}{k}\n" for k in range(n))),),
            )
            for n in earlier
        ]
        at = users[0] + 1
        history = [*messages[:at], *summaries, *messages[at:]]
        newest = max(counter.estimate_message(messages[i]) for i in requests)
        systems = [m for m in messages if m.role is Role.SYSTEM]
        steps = [history[i] for i in step_in_progress(history)]
        budget = counter.estimate_messages([*systems, *steps]) + newest + 64 + extra
        output = await default_stack(budget, counter=counter, reserve=0.0).compact(history)
        validate(output)
        assert cost(output, counter) <= budget
        kept = [m for m in output if m.is_compaction]
        for summary in summaries:
            assert summary in kept or all(summary.text != m.text for m in kept)

    @given(messages=well_formed_conversations(max_turns=14), counter=counters())
    @pytest.mark.anyio
    async def test_no_mutation_and_summary_text(
        self, messages: list[Message], counter: TokenCounter
    ) -> None:
        """The input is not changed; a summary message's text is its summary."""
        assume(len(messages) > 2)
        snapshot = list(messages)
        budget = max(1, counter.estimate_messages(messages) // 2)
        output = await default_stack(budget, counter=counter).compact(messages)
        assert messages == snapshot
        for message in output:
            for block in message.content:
                if isinstance(block, Compaction):
                    assert block.content in message.text


def _step_calls(messages: list[Message]) -> set[str]:
    """The ids of the step in progress: the calls of the last assistant message, when it
    made any."""
    for message in reversed(messages):
        if message.role is Role.ASSISTANT:
            return {use.id for use in message.tool_uses}
    return set()


def _room(messages: list[Message], counter: BaseCounter, budget: int) -> tuple[int, int]:
    """The cost of the system messages and the room they leave of ``budget`` (no reserve)."""
    systems = counter.estimate_messages([m for m in messages if m.role is Role.SYSTEM])
    return systems, budget - systems


def _turn(counter: BaseCounter, turn: int, output: str) -> int:
    """What one turn of :func:`session` costs."""
    result = Message.tool_result(f"c{turn}", f"{output} in src/module_{turn}.py")
    return counter.estimate_messages([call(f"c{turn}", f"src/module_{turn}.py"), result])


def _sent(output: list[Message], counter: BaseCounter) -> int:
    """What ``output`` costs as sent: its messages, and the heading each summary renders
    with."""
    summaries = sum(1 for m in output if m.is_compaction)
    return counter.estimate_messages(output) + summaries * counter.estimate_text(HEADING)


class TestDecidedTarget:
    """With no target given, the space a compaction leaves below the budget is decided
    from the conversation's growth per turn."""

    def test_slow_growth_keeps_the_base_share(self) -> None:
        """Turns small against the budget: the target is 55% of the room."""
        counter = TokenCounter()
        messages = session(20, output="x" * 40)
        stack = default_stack(20_000, counter=counter, reserve=0.0)
        systems, room = _room(messages, counter, 20_000)
        assert stack.compaction_target(messages) == systems + int(room * 0.55)

    def test_whole_turns_of_room(self) -> None:
        """The target rises to leave as many whole turns of room as 55% would leave."""
        counter = TokenCounter()
        messages = session(20)
        growth = _turn(counter, 19, "x" * 400)
        budget = 1_000 + counter.estimate_messages(messages[:1])
        stack = default_stack(budget, counter=counter, reserve=0.0)
        systems, room = _room(messages, counter, budget)
        turns = int(0.45 * room / growth)
        assert turns >= 2
        target = stack.compaction_target(messages)
        assert target > systems + int(room * 0.55)
        assert turns * growth <= budget - target < (turns + 1) * growth

    def test_a_turn_bigger_than_the_room_keeps_the_most(self) -> None:
        """When not one turn fits the room at 55%, the next call compacts anyway: the
        compaction keeps 90% of the room."""
        counter = TokenCounter()
        messages = session(20, output="x" * 4_000)
        stack = default_stack(1_500, counter=counter, reserve=0.0)
        systems, room = _room(messages, counter, 1_500)
        assert stack.compaction_target(messages) == systems + int(room * 0.9)

    def test_a_given_target_is_obeyed(self) -> None:
        """A target given by the user is the share the compaction brings the history to."""
        counter = TokenCounter()
        messages = session(20, output="x" * 4_000)
        stack = default_stack(1_500, counter=counter, reserve=0.0, target=0.4)
        systems, room = _room(messages, counter, 1_500)
        assert stack.target == 0.4
        assert default_stack(1_500).target is None
        assert stack.compaction_target(messages) == systems + int(room * 0.4)

    @pytest.mark.anyio
    async def test_a_compaction_meets_the_decided_target(self) -> None:
        """The compacted history costs at most the decided target."""
        counter = TokenCounter()
        messages = session(60)
        stack = default_stack(3_000, counter=counter)
        target = stack.compaction_target(messages)
        output = await stack.compact(messages)
        assert cost(output, counter) <= target

    @pytest.mark.anyio
    async def test_earlier_summaries_above_the_target_leave_a_turn_free(self) -> None:
        """Earlier summaries kept as they are above the target stop a measured turn of
        growth short of the budget (less, and the next call would compact again): of
        summaries of any size, the ones kept leave a turn free, the others are merged."""
        counter = TokenCounter()
        stack = default_stack(3000, counter=counter, reserve=0.0)
        messages = session(70, output="x" * 1200)
        turn = _turn(counter, 60, "x" * 1200)
        assert all(_turn(counter, t, "x" * 1200) == turn for t in range(10, 70))
        target = stack.compaction_target(messages)
        kept_above = 0
        for facts in range(300, 1500, 20):
            big = Message(role=Role.USER, content=(Compaction(content="- fact " * facts),))
            output = await stack.compact([*messages[:2], big, *messages[2:]])
            sent = _sent(output, counter)
            if big in output and sent > target:
                kept_above += 1
                assert sent + turn <= 3000
            else:
                assert sent <= max(target, 3000 - turn)
        assert kept_above > 0

    @pytest.mark.anyio
    async def test_a_turn_bigger_than_the_room_is_not_kept_free(self) -> None:
        """Where one turn is bigger than the room above the target, the next call
        compacts whatever is kept: earlier summaries still stay above the target (a
        merge would only lose what they hold)."""
        counter = TokenCounter()
        stack = default_stack(3000, counter=counter, reserve=0.0)
        messages = session(20, output="x" * 6000)
        target = stack.compaction_target(messages)
        assert _turn(counter, 15, "x" * 6000) > 3000 - target
        kept_above = 0
        for facts in range(100, 700, 20):
            big = Message(role=Role.USER, content=(Compaction(content="- fact " * facts),))
            output = await stack.compact([*messages[:2], big, *messages[2:]])
            sent = _sent(output, counter)
            assert sent <= 3000
            kept_above += big in output and sent > target
        assert kept_above > 0

    @given(
        messages=well_formed_conversations(max_turns=14),
        counter=counters(),
        extra=st.integers(0, 4_000),
        given_target=st.none() | st.sampled_from([0.05, 0.3, 0.6, 1.0]),
    )
    def test_within_the_room_obeyed_and_deterministic(
        self,
        messages: list[Message],
        counter: TokenCounter,
        extra: int,
        given_target: float | None,
    ) -> None:
        """A decided target is between 55% and 90% of the room the system messages leave
        (so below the budget); a given one is that share; the same history gives the
        same target."""
        systems, _ = _room(messages, counter, 0)
        budget = systems + 1 + extra
        stack = default_stack(budget, counter=counter, reserve=0.0, target=given_target)
        target = stack.compaction_target(messages)
        room = budget - systems
        if given_target is None:
            assert systems + int(room * 0.55) <= target <= systems + int(room * 0.9) < budget
        else:
            assert target == systems + int(room * given_target)
        again = default_stack(budget, counter=counter, reserve=0.0, target=given_target)
        assert again.compaction_target(list(messages)) == target

    @given(messages=well_formed_conversations(max_turns=14), counter=counters())
    @pytest.mark.anyio
    async def test_compaction_is_deterministic(
        self, messages: list[Message], counter: TokenCounter
    ) -> None:
        """Two stacks given the same history compact it to the same output."""
        budget = max(1, counter.estimate_messages(messages) // 2)
        first = await default_stack(budget, counter=counter).compact(messages)
        second = await default_stack(budget, counter=counter).compact(list(messages))
        assert first == second


class TestOrder:
    """The output keeps the input's order."""

    @pytest.mark.anyio
    async def test_an_earlier_summary_before_the_task_stays_before_it(self) -> None:
        """A history that starts with a summary (another strategy's) keeps its summaries
        before the task, where it stood."""
        counter = TokenCounter()
        earlier = Message(role=Role.USER, content=(Compaction(content="- read a.py: x=1"),))
        messages = session(40)
        messages.insert(1, earlier)
        output = await default_stack(2_000, counter=counter).compact(messages)
        first = next(i for i, m in enumerate(output) if m.is_compaction)
        task = next(i for i, m in enumerate(output) if m.text == "Fix the bug in app.py")
        assert first < task
