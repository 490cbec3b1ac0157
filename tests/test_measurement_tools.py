"""The team's measurement tools (``../shared/tools``, beside the repository) trace
``default_stack``'s steps by wrapping them (``evidence.py`` records what the plan, the
summaries and the last resort produced, to say which step lost an item): the steps keep
the signatures those wrappers call them with, with a store and without one."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import anyio
import pytest

from neuron_context import Message, TokenCounter, ToolUse, default_stack
from neuron_context._strategies import default as stack_module
from neuron_context._strategies import default_plan as plan_module
from neuron_context.stores import MemoryStore

TOOLS = Path(__file__).resolve().parents[1].parent / "shared" / "tools"


@pytest.fixture
def evidence() -> Iterator[ModuleType]:
    """``evidence.py`` loaded with its tracing installed, and removed again after the
    test (skipped without the tools; under CI, where they are beside the repository,
    their absence fails)."""
    path = TOOLS / "evidence.py"
    if not path.is_file():
        reason = f"the measurement tools are not at {TOOLS}"
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail(f"{reason} (CI is set: they must be there)", pytrace=False)
        pytest.skip(reason)
    saved = dict(vars(stack_module.DefaultStack))
    plan_of = vars(plan_module.Plan)["of"]
    spec = importlib.util.spec_from_file_location("neuron_evidence_tool", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    path_before = list(sys.path)
    try:
        spec.loader.exec_module(module)
        assert module.install_tracing()
        yield module
    finally:
        sys.path[:] = path_before
        for name in ("_fit", "_summaries", "_evidence_traced"):
            if name in saved:
                setattr(stack_module.DefaultStack, name, saved[name])
            elif hasattr(stack_module.DefaultStack, name):
                delattr(stack_module.DefaultStack, name)
        plan_module.Plan.of = plan_of  # type: ignore[method-assign]


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
def test_evidence_traces_every_step(evidence: ModuleType, store: bool, over: int) -> None:
    """With the tool's wrappers installed, a compaction runs as before and the tool has
    what each step produced (before: the last resort took a keyword the wrapper does not
    pass on, and every compaction raised a TypeError)."""
    counter = TokenCounter()
    messages = _conversation()
    budget = counter.estimate_message(messages[0]) + 60 + over
    stack = default_stack(budget, counter=counter, store=MemoryStore() if store else None)
    evidence.TRACE.clear()
    output = anyio.run(stack.compact, messages)
    assert output
    assert {"plan", "parts_in", "parts_out"} <= set(evidence.TRACE)
