"""Overflow recovery cannot make things worse: a refusal is evidence about the window, not
an order. The recogniser reads numbers of any length; the loop and every adapter (one
recovery step) never send a request without the newest user message, and raise
ContextOverflowError with the history as it was when the request cannot be made to fit."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from agent_support import answer
from callers_support import CALLERS, NEWEST, Provider, history
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import refusal_numbers, refusal_texts

from neuron_context import (
    AgentOptions,
    CalibratedCounter,
    Compaction,
    CompletionRequest,
    CompletionResponse,
    MemoryStore,
    Message,
    Role,
    TokenCounter,
    ToolUse,
    create_agent,
    default_stack,
)
from neuron_context.errors import ContextOverflowError
from neuron_context.events import CompactionCompleted, CompactionOverBudget
from neuron_context.overflow import context_overflow
from neuron_context.testing import FunctionProvider

HUGE = 10**18
"""What the recogniser reads a number of more than 18 digits as."""


class TestRefusalNumbers:
    """The recogniser reads a refusal's numbers by their length first."""

    @given(refusal_texts())
    def test_any_refusal_is_read_without_error(self, text: str) -> None:
        """Every shape, numbers of any length: an Overflow whose numbers are at most
        HUGE, and a budget of at least one token."""
        overflow = context_overflow(ValueError(text))
        assert overflow is not None
        for number in (overflow.tokens, overflow.limit):
            assert number is None or 0 <= number <= HUGE
        assert overflow.budget(1_000) >= 1

    @given(st.text(max_size=300))
    def test_any_text_is_read_without_error(self, text: str) -> None:
        """Whatever an error says, the recogniser answers (an Overflow or None)."""
        context_overflow(RuntimeError(text))

    def test_five_thousand_digits(self) -> None:
        """A count of 5,000 digits is a very large count, not Python's ValueError."""
        overflow = context_overflow(
            ValueError(f"prompt is too long: {'9' * 5000} tokens > 200 maximum")
        )
        assert overflow is not None
        assert (overflow.tokens, overflow.limit) == (HUGE, 200)

    def test_an_exception_whose_text_raises(self) -> None:
        """An exception whose __str__ raises is read by its attributes, never raised."""

        class OddError(Exception):
            code = "context_length_exceeded"

            def __str__(self) -> str:
                msg = "no text"
                raise RuntimeError(msg)

        overflow = context_overflow(OddError())
        assert overflow is not None


class Refusing:
    """A scripted provider refusing the first ``times`` calls with ``text``; it records
    every request it was sent."""

    def __init__(self, text: str, times: int = 1) -> None:
        self.text, self.times = text, times
        self.sent: list[list[Message]] = []

    def __call__(self, request: CompletionRequest) -> CompletionResponse:
        self.sent.append(list(request.messages))
        if len(self.sent) <= self.times:
            raise ValueError(self.text)
        return answer("fixed")


class TestTheLoop:
    """The loop's recovery: never below the system prompt, tools and newest request."""

    @pytest.mark.parametrize("times", [1, 2])
    def test_a_one_token_window_wipes_nothing(self, times: int) -> None:
        """Refused with a 1-token window: ContextOverflowError at once, the history as it
        was before the run plus the run's input (nothing dropped, nothing replaced)."""
        script = Refusing("prompt is too long: 100000 tokens > 1 maximum", times)
        agent = create_agent(
            FunctionProvider(script),
            options=AgentOptions(context=default_stack(10**6), system_prompt="Be careful."),
        )
        before = history()
        agent.state.messages = list(before)
        with pytest.raises(ContextOverflowError) as caught:
            agent.run_sync("go on")
        assert agent.state.messages == [*before, Message.user("go on")]
        assert len(script.sent) == 1  # nothing sent again
        assert caught.value.limit == 1
        assert isinstance(caught.value.__cause__, Exception)

    def test_the_newest_request_alone_cannot_fit(self) -> None:
        """Anthropic's 3838 > 200 where the newest request alone is over the budget it
        implies: ContextOverflowError, no request without the newest user message."""
        script = Refusing("prompt is too long: 3838 tokens > 200 maximum", times=1)
        agent = create_agent(FunctionProvider(script))
        before = [Message.user("the task")]
        agent.state.messages = list(before)
        request = "please " * 400
        with pytest.raises(ContextOverflowError):
            agent.run_sync(request)
        assert agent.state.messages == [*before, Message.user(request)]
        assert len(script.sent) == 1

    def test_five_thousand_digits_through_run_sync(self) -> None:
        """A refusal with a count of 5,000 digits: a ContextOverflowError from run_sync,
        never a raw ValueError."""
        script = Refusing(f"prompt is too long: {'4' * 5000} tokens > 200000 maximum")
        agent = create_agent(FunctionProvider(script))
        agent.state.messages = history()
        with pytest.raises(ContextOverflowError):
            agent.run_sync("go on")

    @settings(max_examples=25, deadline=None)
    @given(refusal_numbers(), refusal_numbers())
    def test_any_refusal_numbers(self, tokens: str, limit: str) -> None:
        """Whatever the refusal claims: every request sent holds the newest user message;
        either the retry is answered or the run raises ContextOverflowError with the
        history as it was plus the input."""
        script = Refusing(f"prompt is too long: {tokens} tokens > {limit} maximum")
        agent = create_agent(FunctionProvider(script), options=AgentOptions(system_prompt="Hi"))
        before = history(6)
        agent.state.messages = list(before)
        newest = Message.user("go on")
        try:
            result = agent.run_sync("go on")
        except ContextOverflowError:
            assert agent.state.messages == [*before, newest]
        else:
            assert result.text == "fixed"
            assert agent.state.messages[-2:] == [newest, Message.assistant("fixed")]
        assert all(newest in sent for sent in script.sent)

    def test_the_refusal_calibrates(self) -> None:
        """The provider's count in a refusal and in every answered call's usage reach a
        CalibratedCounter, through the one calibration the adapters use too."""
        counter = CalibratedCounter(TokenCounter())
        script = Refusing("prompt is too long: 9000 tokens > 6000 maximum")
        agent = create_agent(
            FunctionProvider(script),
            options=AgentOptions(context=default_stack(10**6, counter=counter)),
        )
        agent.state.messages = history()
        result = agent.run_sync("go on")
        assert counter.observations == 2  # the refusal's count, then the reply's usage
        assert any(
            isinstance(e, CompactionCompleted) and e.trigger == "overflow" for e in result.events
        )


# -- every caller against the same refusing provider ------------------------------------


class TestEveryCaller:
    """The loop and each adapter share one recovery rule, against the same provider."""

    @pytest.mark.parametrize("caller", CALLERS)
    def test_a_one_token_window_is_refused_not_obeyed(self, caller: Any) -> None:
        """A refusal claiming a 1-token window: ContextOverflowError, nothing sent again,
        the caller's history untouched."""
        counter = CalibratedCounter(TokenCounter())
        provider = Provider("prompt is too long: 100000 tokens > 1 maximum", times=10)
        with pytest.raises(ContextOverflowError):
            caller(provider, history(), default_stack(10**6, counter=counter), NEWEST)
        assert len(provider.sent) == 1
        assert counter.observations == 0  # a window nothing fits teaches the counter nothing

    @pytest.mark.parametrize("caller", CALLERS)
    def test_the_newest_request_alone_cannot_fit(self, caller: Any) -> None:
        """Anthropic's 3838 > 200 where the newest request alone is over the window it
        implies: ContextOverflowError, no request without the newest user message."""
        provider = Provider("prompt is too long: 3838 tokens > 200 maximum", times=10)
        with pytest.raises(ContextOverflowError):
            caller(provider, [Message.user("the task")], default_stack(10**6), "please " * 400)
        assert len(provider.sent) == 1

    @pytest.mark.parametrize("caller", CALLERS)
    def test_a_window_that_fits_is_recovered_with_the_newest_request(self, caller: Any) -> None:
        """A refusal whose window holds the newest request: recompacted and sent once
        more, smaller, with the newest user message; the answer reaches the caller and
        the caller's own history is not edited by the recovery (the loop keeps the
        recompacted one, ending on the newest request and the answer)."""
        provider = Provider("prompt is too long: 20000 tokens > 10000 maximum", times=1)
        text, kept = caller(provider, history(), default_stack(10**6), NEWEST)
        assert text == "done"
        assert kept
        first, retry = provider.sent
        assert len(retry) < len(first)
        assert NEWEST in retry

    @pytest.mark.parametrize("caller", CALLERS)
    def test_reported_input_tokens_calibrate(self, caller: Any) -> None:
        """The provider's reported input tokens reach the strategy's CalibratedCounter:
        the refusal's count, then the answered call's usage (one mechanism)."""
        counter = CalibratedCounter(TokenCounter())
        provider = Provider("prompt is too long: 20000 tokens > 10000 maximum", times=1)
        caller(provider, history(), default_stack(10**6, counter=counter), NEWEST)
        assert counter.observations == 2
        assert counter.factor != 1.0


# -- the step in progress is never dropped to meet a budget -----------------------------


def _step() -> list[Message]:
    use = ToolUse(id="c1", name="get_weather", input={"city": "Paris"})
    return [
        Message.user("Give me the weather as JSON"),
        Message.assistant(tool_uses=[use]),
        Message.tool_result("c1", "sunny, 21C " * 40),
    ]


class TestStepInProgress:
    """A budget too small for the newest request with its tool exchange keeps them (the
    default: over budget, reported), drops the step's oldest messages (the budget holds,
    what goes is offloaded with a store) or raises, by the caller's choice."""

    def test_dropped_within_budget(self) -> None:
        stack = default_stack(30, counter=TokenCounter(), in_progress="drop")
        output = anyio.run(stack.compact, _step())
        assert TokenCounter().estimate_messages(output) <= 30
        assert output[0].text == "Give me the weather as JSON"

    @pytest.mark.parametrize("store", [None, MemoryStore()])
    def test_kept_by_default(self, store: MemoryStore | None) -> None:
        """The default never drops the step, with or without a store."""
        stack = default_stack(30, counter=TokenCounter(), store=store)
        output = anyio.run(stack.compact, _step())
        assert output[-2].tool_uses == _step()[1].tool_uses
        assert [r.tool_use_id for r in output[-1].tool_results] == ["c1"]
        assert output[0].text.startswith("Give me the weather")

    @pytest.mark.parametrize("budget", [5, 30, 60])
    def test_kept_over_budget(self, budget: int) -> None:
        stack = default_stack(budget, counter=TokenCounter(), in_progress="keep")
        output = anyio.run(stack.compact, _step())
        assert [m.role for m in output] == [m.role for m in _step()]
        assert output[1].tool_uses == _step()[1].tool_uses
        assert [r.tool_use_id for r in output[2].tool_results] == ["c1"]

    def test_or_raised(self) -> None:
        stack = default_stack(30, counter=TokenCounter(), in_progress="raise")
        with pytest.raises(ContextOverflowError):
            anyio.run(stack.compact, _step())

    def test_the_loop_reports_it(self) -> None:
        """The loop keeps the step and emits CompactionOverBudget after the compaction."""
        agent = create_agent(
            FunctionProvider(lambda request: answer("It is sunny.")),
            options=AgentOptions(
                context=default_stack(30, counter=TokenCounter(), in_progress="keep")
            ),
        )
        agent.state.messages = _step()
        result = agent.run_sync([])
        over = [e for e in result.events if isinstance(e, CompactionOverBudget)]
        assert len(over) == 1
        assert over[0].max_tokens == 30
        assert over[0].tokens_after > 30
        assert result.messages[1].tool_uses == _step()[1].tool_uses

    def test_langchain_does_not_redo_the_step(self) -> None:
        """At a budget too small for the step, with ``in_progress="keep"``, a LangChain
        agent whose model answers once it sees its tool's result answers (it loops to the
        recursion limit when the compaction keeps only the user message)."""
        pytest.importorskip("langchain")
        from langchain.agents import create_agent as create_langchain_agent
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
        from langchain_core.outputs import ChatGeneration, ChatResult
        from langchain_core.tools import tool

        from neuron_context.ext.langchain import ContextMiddleware

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return "sunny, 21C " * 40

        class Model(GenericFakeChatModel):
            def bind_tools(self, tools: Any, **kwargs: Any) -> Model:
                return self

            def _generate(
                self, messages: list[BaseMessage], *args: Any, **kwargs: Any
            ) -> ChatResult:
                if isinstance(messages[-1], ToolMessage):
                    reply = AIMessage(content="It is sunny.")
                else:
                    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}
                    reply = AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}])
                return ChatResult(generations=[ChatGeneration(message=reply)])

        stack = default_stack(40, counter=TokenCounter(), in_progress="keep")
        middleware = ContextMiddleware(stack)
        agent = create_langchain_agent(
            Model(messages=iter(())), [get_weather], middleware=[middleware]
        )
        question: Any = {"messages": [{"role": "user", "content": "Weather in Paris?"}]}
        result = agent.invoke(question, {"recursion_limit": 12})
        assert result["messages"][-1].content == "It is sunny."


class TestHomes:
    """The recogniser lives in neuron_context.overflow; errors holds only errors."""

    def test_errors_still_imports_the_recogniser(self) -> None:
        """``errors.context_overflow`` and ``errors.Overflow`` (documented before) are
        the overflow namespace's own objects, though not errors and not in its __all__."""
        from neuron_context import errors, overflow

        assert errors.context_overflow is overflow.context_overflow
        assert errors.Overflow is overflow.Overflow
        assert "context_overflow" not in errors.__all__
        with pytest.raises(AttributeError):
            errors.no_such_name  # noqa: B018


class TestCalibratedRequests:
    """What a request costs follows the calibration: the system prompt's and the tools'
    costs are priced anew when the factor moves."""

    def test_the_overhead_follows_the_factor(self) -> None:
        counter = CalibratedCounter(TokenCounter())
        prompt = "Follow the house style. " * 40
        agent = create_agent(
            FunctionProvider(lambda request: answer("ok")),
            [_lookup],
            AgentOptions(system_prompt=prompt, counter=counter),
        )
        before = agent.count_request([])
        assert counter.observe([Message.user("x" * 400)], 200)
        after = agent.count_request([])
        system = counter.estimate_message(Message.system(prompt))
        assert after == system + counter.estimate_tools(agent.definitions)
        assert after > before


def _lookup(key: str) -> str:
    """Look a key up."""
    return key


class TestSummaryAtTheFront:
    """A history whose only user message is a summary at its front, then a step in
    progress: the output starts on the summary again (cut, or over the budget as a kept
    step is), never on an empty list or without the step (the summary did not fit the
    budget and every non-user message went with it)."""

    @pytest.mark.parametrize("budget", range(40, 161, 10))
    def test_the_step_and_its_opener_kept(self, budget: int) -> None:
        history, ls = self._history()
        output = anyio.run(default_stack(budget, counter=TokenCounter()).compact, history)
        assert output
        assert output[0].role is Role.USER
        assert any(ls in m.tool_uses for m in output)
        assert [r.tool_use_id for m in output for r in m.tool_results][-1:] == ["b"]

    def test_or_raised(self) -> None:
        history, _ = self._history()
        stack = default_stack(60, counter=TokenCounter(), in_progress="raise")
        with pytest.raises(ContextOverflowError):
            anyio.run(stack.compact, history)

    @staticmethod
    def _history() -> tuple[list[Message], ToolUse]:
        listing = "total 84\n" + "\n".join(
            f"-rw-rw-r--  1 marco marco   752 Feb 12 16:59 file{i}.js" for i in range(8)
        )
        find = ToolUse(id="a", name="Bash", input={"command": "find assets -name '*.css'"})
        ls = ToolUse(id="b", name="Bash", input={"command": "ls -la assets/"})
        history = [
            Message(role=Role.USER, content=(Compaction(content="[recall: ed527fcc70359224]"),)),
            Message.assistant(tool_uses=[find]),
            Message.tool_result("a", "\n[... 10 lines (about 269 tokens) cut ...]\n"),
            Message.assistant(tool_uses=[ls]),
            Message.tool_result("b", listing),
        ]
        return history, ls
