"""The docstring examples of the agent's public classes run as written."""

from __future__ import annotations

import doctest

import pytest

import neuron_context
import neuron_context.middleware

NAMES = [
    "Agent",
    "AgentMiddleware",
    "AgentOptions",
    "AgentState",
    "ContextEditingMiddleware",
    "HumanInTheLoopMiddleware",
    "MiddlewareChain",
    "ModelCallLimitMiddleware",
    "ModelFallbackMiddleware",
    "SummarizationMiddleware",
    "SystemInjectionMiddleware",
    "TodoListMiddleware",
    "Tool",
    "ToolCallLimitMiddleware",
    "ToolRetryMiddleware",
    "create_agent",
]


class TestAgentDocstrings:
    """Doctests of the agent API."""

    @pytest.mark.parametrize("name", NAMES)
    def test_examples_run(self, name: str) -> None:
        """Every example in the object's docstrings passes."""
        finder = doctest.DocTestFinder()
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        # Every exported name, those loaded on first use included.
        exported = {name: getattr(neuron_context, name) for name in neuron_context.__all__}
        globs = {**vars(neuron_context.middleware), **exported}
        obj = globs[name]
        for test in finder.find(obj, name, globs=globs):
            runner.run(test)
        assert runner.failures == 0
