"""The prompt cache's cost model and the compaction schedule that uses it (issue 24): the
prices, when default_stack compacts below its budget, and the guarantees it keeps."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from offload_support import step_in_progress
from strategies import counters, well_formed_conversations

from neuron_context import (
    ConfigurationError,
    Message,
    Role,
    Text,
    TokenCounter,
    ToolUse,
    default_stack,
    validate,
)
from neuron_context.counting import CacheCostModel, cost_model
from neuron_context.strategies import CacheSchedule

HEADING = "[Summary of earlier conversation]\n"


def session(turns: int, *, output: str = "x" * 400) -> list[Message]:
    """One request, then ``turns`` tool calls with their results."""
    messages = [Message.system("You are a coding agent."), Message.user("Fix the bug in app.py")]
    for turn in range(turns):
        use = ToolUse(id=f"c{turn}", name="read_file", input={"path": f"src/m{turn}.py"})
        messages.append(Message.assistant(tool_uses=[use]))
        messages.append(Message.tool_result(f"c{turn}", f"{output} in src/m{turn}.py"))
    return messages


def cost(messages: list[Message], counter: TokenCounter) -> int:
    """What a provider receives: the messages, and the heading of each summary."""
    headings = sum(1 for m in messages if m.is_compaction) * counter.estimate_text(HEADING)
    return counter.estimate_messages(messages) + headings


class FakeClock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class TestCacheCostModel:
    """CacheCostModel: the presets, the prices of a request, expiry."""

    def test_the_presets(self) -> None:
        """Anthropic writes at 1.25x (5 minutes) or 2x (an hour); OpenAI writes at the
        input price; both read at 0.1x."""
        anthropic, hour, openai = (cost_model(n) for n in ("anthropic", "anthropic-1h", "openai"))
        assert (anthropic.cache_read, anthropic.cache_write) == (0.1, 1.25)
        assert anthropic.cache_ttl == 300
        assert (hour.cache_write, hour.cache_ttl) == (2.0, 3600)
        assert (openai.cache_read, openai.cache_write, openai.output) == (0.1, 1.0, 8.0)
        assert CacheCostModel.anthropic(ttl="1h") == hour

    def test_request_and_call_costs(self) -> None:
        """Cached tokens are read, the rest written; a one-off call is input plus output."""
        model = CacheCostModel.anthropic()
        assert model.request_cost(1000, cached=800) == pytest.approx(80 + 250)
        assert model.request_cost(1000) == pytest.approx(1250)
        assert model.request_cost(1000, cached=5000) == pytest.approx(100)
        assert model.call_cost(1000, 100) == pytest.approx(1000 + 500)
        assert model.rewrite_cost(1000) == pytest.approx(1150)

    def test_expiry(self) -> None:
        """An entry unused for longer than its lifetime is gone; an unknown gap is warm."""
        model = CacheCostModel.openai()
        assert model.is_warm(None)
        assert model.is_warm(300.0)
        assert not model.is_warm(300.5)

    def test_overriding_a_price(self) -> None:
        """A preset is a value: evolve it to a model's own prices."""
        model = attrs.evolve(CacheCostModel.openai(), output=6.0)
        assert model.output == 6.0
        assert model.name == "openai"

    @pytest.mark.parametrize("field", ["input", "cache_read", "cache_write", "cache_ttl", "output"])
    def test_a_negative_price_is_a_configuration_error(self, field: str) -> None:
        """Prices and lifetimes are finite numbers >= 0, named when wrong."""
        with pytest.raises(ConfigurationError, match=f"CacheCostModel.{field}"):
            CacheCostModel(**{field: -1.0})  # type: ignore[arg-type]

    def test_unknown_presets(self) -> None:
        """An unknown preset or lifetime is a ConfigurationError naming the known ones."""
        with pytest.raises(ConfigurationError, match="anthropic-1h"):
            cost_model("gemini")
        with pytest.raises(ConfigurationError, match="unknown preset"):
            cost_model([1])  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="'5m' or '1h'"):
            CacheCostModel.anthropic(ttl="2h")  # type: ignore[arg-type]


class TestCacheSchedule:
    """CacheSchedule on its own: the gap, the target, the early decision."""

    def test_the_gap_from_the_loop_or_the_clock(self) -> None:
        """A gap the loop notes wins for one check; otherwise the clock measures it."""
        clock = FakeClock()
        schedule = CacheSchedule(CacheCostModel.anthropic(), clock=clock)
        schedule.tick()
        assert not schedule.cold()  # the first call: unknown, taken as warm
        clock.now += 600
        schedule.tick()
        assert schedule.cold()
        clock.now += 10
        schedule.tick()
        assert not schedule.cold()
        schedule.note_gap(900)
        clock.now += 10
        schedule.tick()
        assert schedule.cold()

    @pytest.mark.parametrize("gap", ["abc", None, True, float("nan"), [1], "9" * 500])
    def test_a_gap_that_is_not_seconds_is_refused_by_name(self, gap: object) -> None:
        """note_gap takes a number of seconds; anything else is a ConfigurationError that
        shows the value, cut short."""
        schedule = CacheSchedule(clock=None)
        with pytest.raises(ConfigurationError, match=r"note_gap: seconds") as caught:
            schedule.note_gap(gap)  # type: ignore[arg-type]
        assert len(str(caught.value)) < 200
        schedule.note_gap(10)  # still usable
        assert not schedule.cold()

    @given(
        st.one_of(st.integers(min_value=-(10**400), max_value=10**400), st.floats(allow_nan=False))
    )
    def test_any_number_is_a_gap(self, gap: float) -> None:
        """Every number but NaN is a gap: a negative one counts as 0, infinity as cold."""
        schedule = CacheSchedule(CacheCostModel.anthropic(), clock=None)
        schedule.note_gap(gap)
        assert schedule.cold() is (gap > CacheCostModel.anthropic().cache_ttl)

    @pytest.mark.parametrize("reading", ["1000", None, float("nan"), float("inf"), False])
    def test_a_clock_that_does_not_return_seconds_is_refused_by_name(self, reading: object) -> None:
        """A clock returning anything but a finite number fails at the trigger check with
        a ConfigurationError naming the value, never a raw TypeError."""
        schedule = CacheSchedule(clock=lambda: reading)  # type: ignore[arg-type,return-value]
        with pytest.raises(ConfigurationError, match=r"CacheSchedule\.clock\(\) must be"):
            schedule.tick()
        stack = default_stack(100, schedule=schedule)
        with pytest.raises(ConfigurationError, match=r"CacheSchedule\.clock\(\)"):
            stack.should_compact([Message.user("hi")], 1000)

    def test_the_target_leaves_room_for_min_turns(self) -> None:
        """Fast growth lowers the target, never below the floor; slow growth keeps it."""
        schedule = CacheSchedule(min_turns=4, clock=None)
        assert schedule.target(600, 1000, 300, growth=10) == 600
        assert schedule.target(600, 1000, 300, growth=150) == 400
        assert schedule.target(600, 1000, 300, growth=500) == 300
        assert schedule.target(200, 1000, 300, growth=500) == 200  # never above the target

    def test_compacting_early_only_when_cold_and_worth_it(self) -> None:
        """Early only when cold, past the middle of the band, and when the saving pays for
        the summarizer's call."""
        schedule = CacheSchedule(CacheCostModel.anthropic(), clock=None)
        assert not schedule.compact_early(900, 600, 1000, 10, own_cost=0)  # warm
        schedule.note_gap(3600)
        assert schedule.compact_early(900, 600, 1000, 10, own_cost=0)
        assert not schedule.compact_early(700, 600, 1000, 10, own_cost=0)  # too little
        assert not schedule.compact_early(900, 600, 1000, 10, own_cost=10_000)

    def test_fields_are_checked(self) -> None:
        """Bad settings are ConfigurationErrors naming the field."""
        with pytest.raises(ConfigurationError, match=r"CacheSchedule\.min_turns"):
            CacheSchedule(min_turns=0)
        with pytest.raises(ConfigurationError, match=r"CacheSchedule\.floor"):
            CacheSchedule(floor=2.0)
        with pytest.raises(ConfigurationError, match=r"CacheSchedule\.cost_model"):
            CacheSchedule("openai")  # type: ignore[arg-type]


class TestDefaultStackWithSchedule:
    """default_stack(schedule=...): what changes below the budget, and what does not."""

    def test_off_by_default(self) -> None:
        """default_stack has no schedule unless given one."""
        assert default_stack(1000).schedule is None

    def test_it_lowers_the_decided_target_to_its_turns(self) -> None:
        """With a schedule, the decided target is lowered so that its turns of growth
        fit below the budget, never below its floor."""
        counter = TokenCounter()
        messages = session(30)
        plain = default_stack(2000, counter=counter).compaction_target(messages)
        schedule = CacheSchedule(min_turns=8, floor=0.3, clock=None)
        scheduled = default_stack(2000, counter=counter, schedule=schedule)
        target = scheduled.compaction_target(messages)
        assert 0.3 * 2000 * 0.95 <= target < plain

    def test_over_the_budget_it_compacts_warm_or_cold(self) -> None:
        """A request that would not fit is compacted, whatever the cache."""
        counter = TokenCounter()
        stack = default_stack(2000, counter=counter, schedule=CacheSchedule(clock=None))
        messages = session(30)
        assert stack.should_compact(messages, counter.estimate_messages(messages))

    @pytest.mark.anyio
    async def test_early_when_cold(self) -> None:
        """Under the budget: no compaction while the cache is warm; once the previous
        call is longer ago than the cache lives, a history past the middle of the band
        is compacted to the target."""
        counter = TokenCounter()
        schedule = CacheSchedule(CacheCostModel.anthropic(), clock=None)
        stack = default_stack(2_800, counter=counter, schedule=schedule)
        messages = session(20)
        tokens = counter.estimate_messages(messages)
        assert 0.8 * 2_800 < tokens < 0.95 * 2_800
        assert not stack.should_compact(messages, tokens)
        schedule.note_gap(600)
        assert stack.should_compact(messages, tokens)
        output = await stack.compact(messages)
        assert cost(output, counter) <= 0.6 * 2_800
        schedule.note_gap(600)
        assert not stack.should_compact(session(2), counter.estimate_messages(session(2)))

    @pytest.mark.anyio
    async def test_the_tail_alone_when_that_is_enough(self) -> None:
        """A huge new tool result that crosses the budget is cut on its own: every
        message before it is kept as it was (the cached prefix survives)."""
        counter = TokenCounter()
        stack = default_stack(20_000, counter=counter, schedule=CacheSchedule(clock=None))
        messages = session(12)
        use = ToolUse(id="big", name="read_file", input={"path": "huge.log"})
        messages += [Message.assistant(tool_uses=[use]), Message.tool_result("big", "y" * 80_000)]
        output = await stack.compact(messages)
        assert all(a is b for a, b in zip(output[:-1], messages[:-1], strict=True))
        assert len(output) == len(messages)
        assert cost(output, counter) < 0.95 * 20_000
        assert counter.estimate_message(output[-1]) < counter.estimate_message(messages[-1])
        validate(output)

    @pytest.mark.anyio
    async def test_a_tail_too_big_to_cut_alone_rewrites_the_head(self) -> None:
        """When cutting the new messages would leave them too little, the history is
        compacted as without a schedule (a summary replaces the older part)."""
        counter = TokenCounter()
        stack = default_stack(6_000, counter=counter, schedule=CacheSchedule(clock=None))
        messages = session(50)
        output = await stack.compact(messages)
        assert any(m.is_compaction for m in output)
        assert cost(output, counter) <= 6_000


class TestLoop:
    """A long agent session run as a loop, with the schedule on."""

    @pytest.mark.parametrize("gap", [None, 0.0, 900.0])
    @pytest.mark.anyio
    async def test_every_call_fits_and_holds_the_task_and_newest_request(
        self, gap: float | None
    ) -> None:
        """Before every call the loop compacts when the stack says so: every request is
        within the budget, well formed, starts on the task and holds the newest request,
        with results of every size (some huge), warm or cold."""
        counter = TokenCounter()
        schedule = CacheSchedule(CacheCostModel.anthropic(), clock=None)
        stack = default_stack(3_000, counter=counter, schedule=schedule)
        task = Message.user("Fix the flaky test in tests/test_app.py")
        history = [Message.system("You are a coding agent."), task]
        newest = task
        for turn in range(120):
            if turn % 40 == 39:
                newest = Message.user(f"Now also check case {turn}.")
                history.append(newest)
            use = ToolUse(id=f"c{turn}", name="bash", input={"command": f"pytest -k {turn}"})
            size = 9_000 if turn % 17 == 0 else 40 * (turn % 7)
            history += [Message.assistant(tool_uses=[use]), Message.tool_result(use.id, "r" * size)]
            if gap is not None:
                schedule.note_gap(gap)
            if stack.should_compact(history, stack.token_estimate(history)):
                history = await stack.compact(history)
            validate(history)
            assert cost(history, counter) <= 3_000
            assert history[1] == task
            assert newest in history


class TestProperties:
    """default_stack's guarantees hold with the schedule on, warm or cold."""

    @given(
        messages=well_formed_conversations(max_turns=14),
        counter=counters(),
        extra=st.integers(0, 400),
        gap=st.sampled_from([None, 0.0, 10_000.0]),
        min_turns=st.integers(1, 12),
        floor=st.sampled_from([0.05, 0.3, 1.0]),
    )
    @pytest.mark.anyio
    async def test_budget_start_task_and_newest_request(
        self,
        messages: list[Message],
        counter: TokenCounter,
        *,
        extra: int,
        gap: float | None,
        min_turns: int,
        floor: float,
    ) -> None:
        """Whenever the system messages, the newest request and the step in progress fit,
        the output fits; it is well formed; it starts on a user message when the input
        did; the system messages are kept; the newest request is kept (cut only to leave
        a short task its room)."""
        systems = [m for m in messages if m.role is Role.SYSTEM]
        users = [m for m in messages if m.role is Role.USER and not m.is_compaction]
        # A conversation whose only user messages are summaries (or blank) has no newest
        # request that says anything:
        # its opener is a summary, kept before the step in progress over such a budget
        # by design (the output starts on a user message), as in test_default_stack.
        said = [m for m in users if m.text.strip() or any(type(b) is not Text for b in m.content)]
        assume(said or not any(m.is_compaction for m in messages))
        newest = max((counter.estimate_message(m) for m in users), default=0)
        step = counter.estimate_messages([messages[i] for i in step_in_progress(messages)])
        budget = counter.estimate_messages(systems) + newest + step + 64 + extra
        schedule = CacheSchedule(min_turns=min_turns, floor=floor, clock=None)
        if gap is not None:
            schedule.note_gap(gap)
        stack = default_stack(budget, counter=counter, reserve=0.0, schedule=schedule)
        tokens = counter.estimate_messages(messages)
        if not stack.should_compact(messages, tokens):
            assert tokens <= budget
            return
        output = await stack.compact(messages)
        validate(output)
        assert cost(output, counter) <= budget
        assert [m for m in output if m.role is Role.SYSTEM] == systems
        first = next((m for m in messages if m.role is not Role.SYSTEM), None)
        if first is not None and first.role is Role.USER:
            after = next((m for m in output if m.role is not Role.SYSTEM), None)
            assert after is None or after.role is Role.USER
        assert counter.estimate_messages(output) <= counter.estimate_messages(messages)
        if users:  # the newest request is kept, whole or cut to leave a short task room
            newest_request = users[-1]
            assert newest_request in output or any(_cut_from(m, newest_request) for m in output)


def _cut_from(message: Message, original: Message) -> bool:
    """Whether ``message`` is ``original`` cut: a user message with the same images and
    documents, and its text a head of the original's or holding a truncation marker
    (``[... cut ...]``)."""

    def others(m: Message) -> list[object]:
        return [b for b in m.content if not isinstance(b, Text)]

    if message.role is not Role.USER or message.is_compaction:
        return False
    text, whole = message.text, original.text
    cut = whole.startswith(text) or "cut" in text or text.startswith(whole[:16])
    return others(message) == others(original) and cut
