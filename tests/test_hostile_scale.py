"""Hostile sizes and numbers: huge messages, deeply nested tool arguments, 100k-message
histories through default_stack (not quadratic), and NaN, infinite, negative or
fractional budgets wherever a budget crosses in."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from offload_support import unrecoverable

from neuron_context import (
    AgentOptions,
    CompletionRequest,
    CompletionResponse,
    ConfigurationError,
    InvalidConversationError,
    Message,
    NeuronContextError,
    SlidingWindowStrategy,
    SummarizationStrategy,
    ToolResultClearingStrategy,
    ToolUse,
    create_agent,
    default_stack,
    validate,
)
from neuron_context.formats import from_openai
from neuron_context.middleware import SummarizationMiddleware
from neuron_context.overflow import Overflow
from neuron_context.stores import MemoryStore, recall, search
from neuron_context.testing import FunctionProvider

BAD_NUMBERS = [math.nan, math.inf, -math.inf, -1, 2.5, True, "100", None]


def _history(n: int) -> list[Message]:
    """A task, tool exchanges up to ``n`` messages, and a new request."""
    messages = [Message.user("the task")]
    i = 0
    while len(messages) < n:
        use = ToolUse(id=f"c{i}", name="read", input={"path": f"f{i}.py"})
        messages.append(Message.assistant(f"step {i}", tool_uses=[use]))
        messages.append(Message.tool_result(use.id, f"line {i}\n" * 5))
        i += 1
    messages.append(Message.user("next"))
    return messages


def _compact(strategy: Any, messages: list[Message]) -> list[Message]:
    result: list[Message] = anyio.run(strategy.compact, messages)
    return result


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


class TestLongHistories:
    """default_stack over 50k messages: within the budget, well formed."""

    def test_fifty_thousand_messages(self) -> None:
        """Estimate and compaction of 50k messages: the output fits and is well formed
        (their time, four times the history against the history, is in
        benches/test_bench_linear.py)."""
        messages = _history(50_000)
        stack = default_stack(20_000)
        stack.token_estimate(messages)
        out = _compact(stack, messages)
        assert stack.token_estimate(out) <= 20_000
        validate(out)


class TestHugeMessages:
    """Megabytes of text in one message: compacted within the budget, offloaded and
    recallable."""

    @pytest.mark.parametrize("role", ["user", "tool"])
    def test_one_megabyte(self, role: str) -> None:
        """A 1 MB newest request or tool result: the output fits; the tool result's
        whole text is recallable."""
        text = "log line with words and numbers 12345\n" * 27_000
        store = MemoryStore()
        stack = default_stack(8_000, store=store)
        if role == "user":
            messages = [Message.user("task"), Message.assistant("ok"), Message.user(text)]
        else:
            use = ToolUse(id="a", name="cat", input={})
            messages = [
                Message.user("task"),
                Message.assistant("", tool_uses=[use]),
                Message.tool_result("a", text),
                Message.user("next"),
            ]
        out = _compact(stack, messages)
        assert stack.token_estimate(out) <= 8_000
        validate(out)
        if role == "tool":  # behind the output's keys: whole, or page by page
            assert unrecoverable(messages, out, store) == []

    def test_search_of_a_megabyte_entry(self) -> None:
        """search over a 1 MB entry returns a bounded page (its time is in
        benches/test_bench_linear.py)."""
        store = MemoryStore()
        store.put("needle here\n" + "hay\n" * 250_000)
        found = search(store, "needle")
        assert "needle" in found.text
        assert len(found.text) < 20_000


class TestDeepJson:
    """Tool arguments nested deeper than the limit are refused where they cross in, never
    a RecursionError."""

    def test_tool_use_depth(self) -> None:
        """Depth 100 is accepted, 101 (and 10,000) refused with a ConfigurationError."""
        ToolUse(id="a", name="t", input=_nested(99))
        for depth in (101, 10_000):
            with pytest.raises(ConfigurationError):
                ToolUse(id="a", name="t", input=_nested(depth))

    def test_wire_arguments_depth(self) -> None:
        """An OpenAI reply whose arguments nest 5,000 deep: a ConfigurationError."""
        arguments = "[" * 5_000 + "]" * 5_000
        call = {"id": "a", "type": "function", "function": {"name": "t", "arguments": arguments}}
        with pytest.raises(ConfigurationError):
            from_openai([{"role": "assistant", "content": None, "tool_calls": [call]}])

    def test_tool_returning_deep_json(self) -> None:
        """A tool returning a value nested 10,000 deep: an error result, the run goes on."""

        def deep() -> object:
            """Return something deep."""
            value: list[Any] = []
            for _ in range(10_000):
                value = [value]
            return value

        replies = iter(
            [
                CompletionResponse(
                    Message.assistant(tool_uses=[ToolUse(id="a", name="deep", input={})]),
                    stop_reason="tool_use",
                ),
                CompletionResponse(Message.assistant("done"), stop_reason="end_turn"),
            ]
        )
        agent = create_agent(FunctionProvider(lambda request: next(replies)), [deep])
        result = agent.run_sync("go")
        validate(result.messages)
        assert result.messages[2].tool_results[0].is_error

    def test_provider_reply_with_deep_input(self) -> None:
        """A provider replying with a tool call nested 10,000 deep: a library error, the
        history well formed."""

        def reply(request: CompletionRequest) -> Any:
            return json.loads("[" * 5_000 + "]" * 5_000)

        agent = create_agent(FunctionProvider(reply))
        with pytest.raises(NeuronContextError):
            agent.run_sync("go")
        validate(agent.state.messages)


class TestBadBudgets:
    """NaN, infinities, negatives, floats, bools, strings and None as a budget: a
    ConfigurationError naming the argument, wherever a budget crosses in."""

    @pytest.mark.parametrize("value", BAD_NUMBERS)
    def test_strategies(self, value: object) -> None:
        """Every strategy's max_tokens, and default_stack's."""
        provider = FunctionProvider(lambda request: "summary")
        makers: list[Callable[[], object]] = [
            lambda: default_stack(value),  # type: ignore[arg-type]
            lambda: SlidingWindowStrategy(3, value),  # type: ignore[arg-type]
            lambda: ToolResultClearingStrategy(2, value),  # type: ignore[arg-type]
            lambda: SummarizationStrategy(provider, 2, value),  # type: ignore[arg-type]
            lambda: SummarizationMiddleware(provider, value),  # type: ignore[arg-type]
        ]
        for make in makers:
            if value is None and make is makers[0]:
                continue
            with pytest.raises(ConfigurationError, match="max_tokens"):
                make()

    @pytest.mark.parametrize("value", BAD_NUMBERS)
    def test_recall_and_search(self, value: object) -> None:
        """recall/search's max_tokens."""
        with pytest.raises(ConfigurationError, match="max_tokens"):
            recall(MemoryStore(), "0" * 16, max_tokens=value)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="max_tokens"):
            search(MemoryStore(), "x", max_tokens=value)  # type: ignore[arg-type]

    @pytest.mark.parametrize("value", BAD_NUMBERS)
    def test_agent_options(self, value: object) -> None:
        """max_turns and max_output_tokens."""
        with pytest.raises(ConfigurationError, match="max_turns"):
            AgentOptions(max_turns=value)  # type: ignore[arg-type]
        if value is not None:
            with pytest.raises(ConfigurationError, match="max_output_tokens"):
                AgentOptions(max_output_tokens=value)  # type: ignore[arg-type]

    @pytest.mark.parametrize("value", [v for v in BAD_NUMBERS if not isinstance(v, int)])
    def test_overflow_budget(self, value: object) -> None:
        """Overflow.budget's sent and current (what a loop of one's own passes)."""
        overflow = Overflow(130_000, 128_000, "")
        with pytest.raises(ConfigurationError, match="sent"):
            overflow.budget(value)  # type: ignore[arg-type]
        if value is not None:
            with pytest.raises(ConfigurationError, match="current"):
                overflow.budget(1_000, value)  # type: ignore[arg-type]

    def test_overflow_with_zero_count(self) -> None:
        """An Overflow whose count is 0 (built by hand) is a cut, not a division by 0."""
        assert Overflow(0, 100, "").budget(1_000) >= 1

    def test_huge_budgets(self) -> None:
        """A budget beyond any count is accepted and compacts nothing."""
        messages = _history(50)
        for budget in (2**63, 10**400):
            assert _compact(default_stack(budget), messages) == messages

    def test_malformed_history_is_refused_by_the_loop(self) -> None:
        """A run given a history a provider would refuse: InvalidConversationError."""
        agent = create_agent(FunctionProvider(lambda request: "x"))
        orphan = Message.tool_result("nobody", "x")
        with pytest.raises(InvalidConversationError):
            agent.run_sync([Message.user("a"), orphan])


class TestHugeTextsCountedOnce:
    """A compaction cutting one huge message tokenizes it about once, not once per
    question it asks of it (each pass over megabytes costs seconds)."""

    @pytest.mark.parametrize("role", ["user", "tool"])
    def test_characters_tokenized(self, role: str, monkeypatch: pytest.MonkeyPatch) -> None:
        """A 1 MB unbroken run (a base64 blob): the characters tiktoken reads during the
        compaction stay under twice the text's length (five times before)."""
        tiktoken = pytest.importorskip("tiktoken")
        read: list[int] = []
        original = tiktoken.Encoding.encode_ordinary

        def counting(self: Any, text: str) -> list[int]:
            read.append(len(text))
            result: list[int] = original(self, text)
            return result

        monkeypatch.setattr(tiktoken.Encoding, "encode_ordinary", counting)
        text = "QUJD" * 250_000
        if role == "user":
            messages = [Message.user("task"), Message.assistant("ok"), Message.user(text)]
        else:
            use = ToolUse(id="a", name="cat", input={})
            messages = [
                Message.user("task"),
                Message.assistant("", tool_uses=[use]),
                Message.tool_result("a", text),
                Message.user("next"),
            ]
        stack = default_stack(20_000)
        out = _compact(stack, messages)
        assert stack.token_estimate(out) <= 20_000
        assert sum(read) < 2 * len(text), sum(read)
