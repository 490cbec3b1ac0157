"""The team's measurement tools (``evidence.py`` of the shared tools) trace
``default_stack``'s steps by wrapping them, to say which step lost an item: they call
``Plan.of(cls, *args, **kwargs)``, ``DefaultStack._summaries(self, plan, target)`` and
``DefaultStack._fit(self, parts, messages, plan, limit)``, nothing more. The steps keep
those signatures, with a store and without one; the wrappers here call them exactly so,
so the test needs nothing outside the repository."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from neuron_context import Message, TokenCounter, ToolUse, default_stack
from neuron_context._strategies import default as stack_module
from neuron_context._strategies import default_plan as plan_module
from neuron_context.stores import MemoryStore


@pytest.fixture
def trace() -> Iterator[dict[str, Any]]:
    """What each step produced, recorded by wrappers installed as the tool installs
    them (and removed after the test)."""
    stack_class = stack_module.DefaultStack
    saved_of = vars(plan_module.Plan)["of"]
    of = plan_module.Plan.of.__func__  # type: ignore[attr-defined]
    summaries = stack_class._summaries
    fit = stack_class._fit
    recorded: dict[str, Any] = {}

    def traced_of(cls: Any, *args: Any, **kwargs: Any) -> Any:
        recorded["plan"] = plan = of(cls, *args, **kwargs)
        return plan

    async def traced_summaries(self: Any, plan: Any, target: Any) -> Any:
        recorded["summaries"] = out = await summaries(self, plan, target)
        return out

    def traced_fit(self: Any, parts: Any, messages: Any, plan: Any, limit: Any) -> Any:
        recorded["parts_in"] = list(parts)
        recorded["parts_out"] = out = fit(self, parts, messages, plan, limit)
        return out

    plan_module.Plan.of = classmethod(traced_of)  # type: ignore[method-assign,assignment]
    stack_class._summaries = traced_summaries  # type: ignore[method-assign]
    stack_class._fit = traced_fit  # type: ignore[method-assign]
    try:
        yield recorded
    finally:
        plan_module.Plan.of = saved_of  # type: ignore[method-assign]
        stack_class._summaries = summaries  # type: ignore[method-assign]
        stack_class._fit = fit  # type: ignore[method-assign]


def _conversation() -> list[Message]:
    """A policy, a task, a long result and a call in progress: the last resort runs."""
    result = "\n".join(f"line {n}: reservation R{n:04d} costs {n * 7} dollars" for n in range(200))
    return [
        Message.system("You are an airline agent. Follow the policy. " * 20),
        Message.user("Please look up my reservations; my user id is mia_li_3668."),
        Message.assistant("", tool_uses=[ToolUse(id="c1", name="list", input={"user": "mia"})]),
        Message.tool_result("c1", result),
        Message.assistant("Here they are. Which one?"),
        Message.user("The one that costs 700 dollars, please cancel it."),
        Message.assistant("", tool_uses=[ToolUse(id="c2", name="cancel", input={"id": "R0100"})]),
    ]


@pytest.mark.parametrize("store", [False, True])
@pytest.mark.parametrize("over", [0, 20, 60, 200])
def test_the_tools_wrappers_trace_every_step(trace: dict[str, Any], store: bool, over: int) -> None:
    """With the tool's wrappers installed, a compaction runs as before and the tool has
    what each step produced (before: the last resort took a keyword the wrapper does not
    pass on, and every compaction raised a TypeError)."""
    counter = TokenCounter()
    messages = _conversation()
    budget = counter.estimate_message(messages[0]) + 60 + over
    stack = default_stack(budget, counter=counter, store=MemoryStore() if store else None)
    output = anyio.run(stack.compact, messages)
    assert output
    assert {"plan", "parts_in", "parts_out"} <= set(trace)
