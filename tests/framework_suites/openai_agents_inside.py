"""A pytest plugin that puts our ``CallModelInputFilter`` into every run of the Agents SDK's
own tests (``-p openai_agents_inside``; see ``run_openai_agents.py``).

Every model call of every run goes through a filter of ours, after the run's own
``call_model_input_filter`` if the test set one (the SDK's ``maybe_filter_model_input``
is wrapped where its run loop calls it). Each test gets a new filter, as a user's
``RunConfig`` would, over ``default_stack(NEURON_CONTEXT_BUDGET)`` (default 1,000,000
tokens: idle, the budget never reached), so a test that fails with it and passes without
it fails because of what the filter does to an input it need not touch.

With ``NEURON_CONTEXT_TRACE`` set to a file, each model call whose input the filter
changed appends a line naming the test (the input was not passed on as the SDK built it).
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from agents.run_config import CallModelData, ModelInputData
from agents.run_internal import run_loop

from neuron_context import default_stack
from neuron_context.ext.openai_agents import CallModelInputFilter

_BUDGET = int(os.environ.get("NEURON_CONTEXT_BUDGET", "1000000"))
_TRACE = os.environ.get("NEURON_CONTEXT_TRACE")
_original = run_loop.maybe_filter_model_input
_state: dict[str, Any] = {"filter": None, "test": ""}


async def _filtered(**kwargs: Any) -> ModelInputData:
    """The run's own filter (if any), then ours."""
    theirs = await _original(**kwargs)
    given = list(theirs.input)
    data: CallModelData[Any] = CallModelData(
        model_data=ModelInputData(input=list(given), instructions=theirs.instructions),
        agent=kwargs["agent"],
        context=kwargs["context_wrapper"].context,
    )
    ours: ModelInputData = await _state["filter"](data)
    changed = len(ours.input) != len(given) or any(
        a is not b for a, b in zip(ours.input, given, strict=False)
    )
    if changed and _TRACE:
        with open(_TRACE, "a", encoding="utf-8") as trace:
            line = {"test": _state["test"], "given": len(given), "sent": len(ours.input)}
            trace.write(json.dumps(line) + "\n")
    return ours


def pytest_configure(config: pytest.Config) -> None:
    run_loop.maybe_filter_model_input = _filtered


def pytest_runtest_setup(item: pytest.Item) -> None:
    _state["filter"] = CallModelInputFilter(default_stack(_BUDGET))
    _state["test"] = item.nodeid
