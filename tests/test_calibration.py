"""Tests of CalibratedCounter: learning a correction factor from usage reports."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuron_context import (
    CalibratedCounter,
    CompositeStrategy,
    ConfigurationError,
    Message,
    SlidingWindowStrategy,
    TokenCounter,
    ToolDefinition,
    ToolResultClearingStrategy,
)


def _history(size: int, seed: int) -> list[Message]:
    rng = random.Random(seed)
    words = ("alpha", "beta", "gamma", "日本語", '{"k": 1}', "def f(): pass", "🙂")
    messages = [Message.system("You are a helpful agent.")]
    for index in range(size):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 60)))
        messages.append(Message.user(text) if index % 2 == 0 else Message.assistant(text))
    return messages


class TestCalibratedCounter:
    """CalibratedCounter."""

    def test_starts_at_the_initial_factor_and_scales_the_base(self) -> None:
        """Before any observation the factor is 1 and estimates equal the base's."""
        base = TokenCounter()
        counter = CalibratedCounter(base)
        history = _history(20, 1)
        assert counter.factor == 1.0
        assert counter.observations == 0
        assert counter.estimate_messages(history) == base.estimate_messages(history)
        assert counter.estimate_text("abcde") == 2

    def test_estimates_are_the_ceiling_of_base_times_factor(self) -> None:
        """Every method scales the base's count by the factor and rounds up."""
        base = TokenCounter()
        counter = CalibratedCounter(base, initial_factor=1.3)
        history = _history(10, 2)
        tool = ToolDefinition(name="search", description="Search the web.", input_schema={})
        assert counter.estimate_text("abcdefgh") == math.ceil(2 * 1.3)
        assert counter.estimate_texts(["abcdefgh", ""]) == [3, 0]
        assert counter.estimate_message(history[1]) == math.ceil(
            base.estimate_message(history[1]) * 1.3
        )
        assert counter.estimate_messages(history) == math.ceil(
            base.estimate_messages(history) * 1.3
        )
        assert counter.estimate_tools([tool]) == math.ceil(base.estimate_tools([tool]) * 1.3)
        content = history[1].content
        assert counter.estimate_content(content) == math.ceil(base.estimate_content(content) * 1.3)

    def test_an_exact_product_is_not_rounded_up(self) -> None:
        """``100 * 1.1`` is 110 tokens, not 111 (float error is not a token)."""
        counter = CalibratedCounter(TokenCounter(1.0, message_overhead=0), initial_factor=1.1)
        assert counter.estimate_text("x" * 100) == 110
        assert counter.estimate_text("") == 0

    def test_the_first_observation_is_taken_as_it_is(self) -> None:
        """The first usable report sets the factor to ``reported / estimated``."""
        counter = CalibratedCounter(TokenCounter())
        history = [Message.user("x" * 400)]  # 104 tokens
        assert counter.observe(history, 156) is True
        assert counter.factor == pytest.approx(1.5)
        assert counter.observations == 1
        assert counter.estimate_messages(history) == 156

    def test_later_observations_move_the_factor_by_alpha(self) -> None:
        """The factor is an exponential moving average with weight ``alpha``."""
        counter = CalibratedCounter(TokenCounter(), alpha=0.5)
        history = [Message.user("x" * 400)]  # 104 tokens
        counter.observe(history, 104)
        counter.observe(history, 208)
        assert counter.factor == pytest.approx(1.5)
        counter.observe(history, 208)
        assert counter.factor == pytest.approx(1.75)

    def test_tools_are_part_of_the_estimate_compared_with_the_report(self) -> None:
        """``tools`` are added to the estimate, as the provider counts them too."""
        base = TokenCounter()
        tool = ToolDefinition(
            name="search", description="Search the web." * 20, input_schema={"type": "object"}
        )
        history = _history(5, 3)
        estimated = base.estimate_messages(history) + base.estimate_tools([tool])
        counter = CalibratedCounter(base)
        counter.observe(history, 2 * estimated, tools=[tool])
        assert counter.factor == pytest.approx(2.0)

    @pytest.mark.parametrize("true_ratio", [0.6, 1.0, 1.7, 3.1])
    def test_converges_on_noisy_synthetic_reports(self, true_ratio: float) -> None:
        """With ±10% noise on the reports the factor ends within 5% of the true ratio."""
        rng = random.Random(42)
        base = TokenCounter()
        counter = CalibratedCounter(base)
        for round_ in range(40):
            history = _history(rng.randint(5, 60), round_)
            true_tokens = base.estimate_messages(history) * true_ratio
            counter.observe(history, round(true_tokens * rng.uniform(0.9, 1.1)))
            assert counter.min_factor <= counter.factor <= counter.max_factor
        assert counter.factor == pytest.approx(true_ratio, rel=0.05)
        # Later estimates track the true count, not the base's guess.
        history = _history(200, 1000)
        truth = base.estimate_messages(history) * true_ratio
        assert counter.estimate_messages(history) == pytest.approx(truth, rel=0.05)

    def test_follows_a_change_of_content_mix(self) -> None:
        """After the true ratio changes the factor follows it within a few observations."""
        base = TokenCounter()
        counter = CalibratedCounter(base)
        history = _history(30, 4)
        estimated = base.estimate_messages(history)
        for _ in range(10):
            counter.observe(history, round(estimated * 1.2))
        for _ in range(10):
            counter.observe(history, round(estimated * 2.4))
        assert counter.factor == pytest.approx(2.4, rel=0.05)

    def test_unusable_observations_are_ignored(self) -> None:
        """A report of 0 tokens or an empty estimate leaves the factor unchanged."""
        counter = CalibratedCounter(TokenCounter(message_overhead=0))
        counter.observe([Message.user("x" * 400)], 200)
        assert counter.observe([Message.user("x" * 400)], 0) is False
        assert counter.observe([], 500) is False
        assert counter.observe([Message(role="user", content=())], 500) is False
        assert counter.factor == pytest.approx(2.0)
        assert counter.observations == 1

    def test_absurd_reports_are_clamped(self) -> None:
        """A report 1000x the estimate moves the factor no further than ``max_factor``."""
        counter = CalibratedCounter(TokenCounter())
        history = [Message.user("x" * 400)]
        counter.observe(history, 104_000)
        assert counter.factor == 4.0
        counter.observe(history, 1)
        assert counter.factor == pytest.approx(4.0 + 0.3 * (0.25 - 4.0))
        for _ in range(50):
            counter.observe(history, 1)
        assert counter.factor == pytest.approx(0.25)

    def test_custom_bounds_clamp_the_factor(self) -> None:
        """``min_factor`` and ``max_factor`` bound every factor it learns."""
        counter = CalibratedCounter(TokenCounter(), min_factor=0.9, max_factor=1.1)
        history = [Message.user("x" * 400)]
        counter.observe(history, 1_000)
        assert counter.factor == 1.1
        counter.reset()
        counter.observe(history, 10)
        assert counter.factor == 0.9

    @given(
        reports=st.lists(
            st.tuples(st.integers(0, 10**9), st.integers(0, 2_000)), min_size=1, max_size=30
        )
    )
    def test_the_factor_is_never_negative_or_absurd(self, reports: list[tuple[int, int]]) -> None:
        """Whatever the reports, the factor stays finite and within its bounds."""
        counter = CalibratedCounter(TokenCounter())
        for reported, size in reports:
            counter.observe([Message.user("y" * size)], reported)
            assert math.isfinite(counter.factor)
            assert 0.25 <= counter.factor <= 4.0
            assert counter.estimate_text("y" * size) >= 0

    def test_reset_forgets_everything(self) -> None:
        """After ``reset`` the factor is the initial one and nothing was observed."""
        counter = CalibratedCounter(TokenCounter(), initial_factor=1.2)
        counter.observe([Message.user("x" * 400)], 300)
        counter.reset()
        assert counter.factor == 1.2
        assert counter.observations == 0

    def test_state_round_trips_through_json(self) -> None:
        """``state`` is plain JSON; ``restore`` in a new counter gives the same estimates."""
        counter = CalibratedCounter(TokenCounter())
        history = _history(20, 5)
        counter.observe(history, 3 * TokenCounter().estimate_messages(history) // 2)
        counter.observe(history, 2 * TokenCounter().estimate_messages(history))
        state = json.loads(json.dumps(counter.state()))
        other = CalibratedCounter(TokenCounter())
        other.restore(state)
        assert other.factor == counter.factor
        assert other.observations == 2
        assert other.estimate_messages(history) == counter.estimate_messages(history)
        # Learning goes on from the restored state (the next report is averaged in).
        other.observe(history, TokenCounter().estimate_messages(history))
        assert other.factor == pytest.approx(counter.factor + 0.3 * (1.0 - counter.factor))

    @pytest.mark.parametrize(
        "state",
        [
            {"factor": 1.5},
            {"format": "other", "version": 1, "factor": 1.5, "observations": 1},
            {"format": "neuron-context-calibration", "version": 2, "factor": 1.5},
            {"format": "neuron-context-calibration", "version": 1, "factor": "1.5"},
            {"format": "neuron-context-calibration", "version": 1, "factor": float("nan")},
            {"format": "neuron-context-calibration", "version": 1, "factor": 9.0},
            {"format": "neuron-context-calibration", "version": 1, "factor": -1.0},
            {"format": "neuron-context-calibration", "version": 1, "factor": 1.5},
            {
                "format": "neuron-context-calibration",
                "version": 1,
                "factor": 1.5,
                "observations": -1,
            },
        ],
    )
    def test_restore_rejects_bad_state(self, state: dict[str, object]) -> None:
        """A state that ``state()`` could not have produced raises ConfigurationError."""
        counter = CalibratedCounter(TokenCounter())
        with pytest.raises(ConfigurationError, match=r"CalibratedCounter\.restore"):
            counter.restore(state)
        assert counter.factor == 1.0

    def test_restore_rejects_a_non_mapping(self) -> None:
        """``restore`` of a list raises ConfigurationError."""
        with pytest.raises(ConfigurationError, match="must be a dict"):
            CalibratedCounter(TokenCounter()).restore([1.5])  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        ("kwargs", "field"),
        [
            ({"alpha": 0}, "alpha"),
            ({"alpha": 1.5}, "alpha"),
            ({"alpha": float("nan")}, "alpha"),
            ({"alpha": True}, "alpha"),
            ({"min_factor": 0}, "min_factor"),
            ({"max_factor": float("inf")}, "max_factor"),
            ({"max_factor": "4"}, "max_factor"),
            ({"min_factor": 2.0, "max_factor": 1.0}, "min_factor"),
            ({"initial_factor": 5.0}, "initial_factor"),
            ({"initial_factor": -1.0}, "initial_factor"),
        ],
    )
    def test_bad_settings_raise_configuration_error(
        self, kwargs: dict[str, object], field: str
    ) -> None:
        """Bad settings raise ConfigurationError naming the field."""
        with pytest.raises(ConfigurationError, match=field):
            CalibratedCounter(TokenCounter(), **kwargs)  # type: ignore[arg-type]

    def test_the_base_must_be_a_counter(self) -> None:
        """A base that is not a counter raises ConfigurationError."""
        with pytest.raises(ConfigurationError, match=r"CalibratedCounter\.base"):
            CalibratedCounter("bytes/4")  # type: ignore[arg-type]

    @pytest.mark.parametrize("reported", [-1, 1.5, "100", True, None])
    def test_bad_reports_raise_configuration_error(self, reported: object) -> None:
        """A negative or non-int report is a caller bug: ConfigurationError."""
        counter = CalibratedCounter(TokenCounter())
        with pytest.raises(ConfigurationError, match="reported_input_tokens"):
            counter.observe([Message.user("hi")], reported)  # type: ignore[arg-type]
        assert counter.observations == 0

    def test_the_base_cache_stays_valid_when_the_factor_changes(self) -> None:
        """A cached base cost is scaled by the current factor, not by the old one."""
        base = TokenCounter()
        counter = CalibratedCounter(base)
        history = _history(30, 6)
        plain = counter.estimate_messages(history)  # fills the base's cache
        counter.observe(history, 2 * plain)
        assert counter.estimate_messages(history) == 2 * plain
        assert base.estimate_messages(history) == plain

    def test_equality_is_identity(self) -> None:
        """Two counters that learn separately are never equal."""
        assert CalibratedCounter(TokenCounter()) != CalibratedCounter(TokenCounter())

    @pytest.mark.anyio
    async def test_strategies_accept_it(self) -> None:
        """A composite budgets with the calibrated counter: a factor of 2 halves the fit."""
        base = TokenCounter()
        counter = CalibratedCounter(base)
        history = _history(200, 7)
        budget = base.estimate_messages(history) // 2
        counter.observe(history, 2 * base.estimate_messages(history))
        strategy = CompositeStrategy(
            [ToolResultClearingStrategy(2, counter=counter), SlidingWindowStrategy(60)],
            budget,
            counter=counter,
        )
        assert strategy.should_compact(history, strategy.token_estimate(history))
        output = await strategy.compact(history)
        assert len(output) < len(history)
        assert strategy.token_estimate(output) < strategy.token_estimate(history)
