"""ContextMiddleware budgeted from the model: ``fraction`` of its profile's input window."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain.agents.middleware import ModelFallbackMiddleware
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.model_profile import ModelProfile
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_support import ScriptedChatModel, read_file, script

from neuron_context import ConfigurationError, default_stack
from neuron_context.ext.langchain import ContextMiddleware, from_langchain
from neuron_context.strategies import DefaultStack


class Model(ScriptedChatModel):
    """The recording fake model, failing every call when ``fail`` (a primary that is down)."""

    fail: bool = False

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.fail:
            self.requests.append(list(messages))
            msg = "the primary model is down"
            raise RuntimeError(msg)
        return super()._generate(messages, stop, run_manager, **kwargs)


def _model(window: int | None, calls: int = 12, *, fail: bool = False) -> Model:
    profile = None if window is None else ModelProfile(max_input_tokens=window)
    return Model(messages=script(calls), profile=profile, fail=fail)


def _run(model: Model, middleware: ContextMiddleware, *extra: Any) -> dict[str, Any]:
    agent = create_agent(model, [read_file], middleware=[*extra, middleware])
    result: dict[str, Any] = agent.invoke({"messages": [{"role": "user", "content": "go"}]})
    return result


def _largest(model: Model) -> int:
    """The largest request the model got, in default_stack's own (exact) tokens."""
    counter = default_stack(1).counter
    return max(counter.estimate_messages(from_langchain(request)) for request in model.requests)


class TestBudgetFromModel:
    def test_no_strategy_budgets_the_profile_window(self) -> None:
        """With no strategy, every request fits 80% of the model's input window."""
        model = _model(5_000)
        middleware = ContextMiddleware()
        _run(model, middleware)
        assert isinstance(middleware.strategy, DefaultStack)
        assert middleware.strategy.max_tokens == 4_000
        assert 2_000 < _largest(model) <= 4_000  # compacted, and only as far as needed

    def test_fraction_sets_the_share(self) -> None:
        """``fraction=0.5`` budgets half the window."""
        model = _model(5_000)
        middleware = ContextMiddleware(fraction=0.5)
        _run(model, middleware)
        assert middleware.strategy is not None
        assert middleware.strategy.max_tokens == 2_500  # type: ignore[attr-defined]
        assert _largest(model) <= 2_500

    def test_a_function_makes_the_strategy_for_the_budget(self) -> None:
        """A function of the budget makes the strategy, once per budget."""
        budgets: list[int] = []

        def make(budget: int) -> DefaultStack:
            budgets.append(budget)
            return default_stack(budget)

        model = _model(5_000)
        _run(model, ContextMiddleware(make, fraction=0.6))
        assert budgets == [3_000]
        assert _largest(model) <= 3_000

    def test_a_model_without_a_window_is_named(self) -> None:
        """A model with no profile window: a ConfigurationError naming the figure."""
        with pytest.raises(ConfigurationError, match="max_input_tokens"):
            _run(_model(None), ContextMiddleware())

    def test_a_fallback_model_gets_its_own_budget(self) -> None:
        """A call that falls back to a model with a smaller window fits that window."""
        primary = _model(50_000, fail=True)
        fallback = _model(4_000)
        _run(primary, ContextMiddleware(), ModelFallbackMiddleware(fallback))
        assert fallback.requests
        assert _largest(fallback) <= 3_200
        assert _largest(primary) > 3_200  # the primary's budget left its requests whole

    @pytest.mark.parametrize("fraction", [0, -0.5, 1.5, float("nan"), "0.8", True])
    def test_a_bad_fraction_is_refused(self, fraction: object) -> None:
        """A fraction outside (0, 1] is refused where it is given."""
        with pytest.raises(ConfigurationError, match="fraction"):
            ContextMiddleware(fraction=fraction)  # type: ignore[arg-type]

    def test_a_fraction_beside_a_strategy_is_refused(self) -> None:
        """A strategy has its own budget: a fraction beside it is a ConfigurationError."""
        with pytest.raises(ConfigurationError, match="one or the other"):
            ContextMiddleware(default_stack(1_000), fraction=0.5)

    def test_a_function_returning_no_strategy_is_refused(self) -> None:
        """A function that returns something else than a strategy is named."""
        with pytest.raises(ConfigurationError, match="must return a ContextStrategy"):
            _run(_model(5_000), ContextMiddleware(lambda budget: budget))  # type: ignore[arg-type,return-value]

    def test_persist_compacts_the_state_for_the_model_budget(self) -> None:
        """``persist=True`` without a strategy writes compactions sized for the model."""
        model = _model(5_000)
        result = _run(model, ContextMiddleware(persist=True))
        assert len(result["messages"]) < 2 * 12 + 2  # the state was compacted
        assert _largest(model) <= 4_000
