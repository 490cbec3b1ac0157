"""A pytest plugin that puts neuron_context's adapter into every agent a framework's own
test suite builds, so the suite runs with us inside.

Loaded by :mod:`run` (``-p neuron_plugin``) when it runs LangChain's or pydantic-ai's
tests; not a test module of ours. Configured by the environment:

- ``NEURON_FRAMEWORK``: ``langchain`` or ``pydantic-ai``, whose suite runs (the plugin
  then fills in what the suite expects of its environment and is not ours to change, in
  both runs: pydantic-ai's conftest expects HuggingFace providers the installed
  ``huggingface_hub`` may not list, and its blocking-call detector scans the ``clai``
  package, which need not be installed: a stand-in with no code is scanned instead).
- ``NEURON_BUDGET``: unset, the suite runs without us; set, the adapter is in every agent,
  with ``default_stack(NEURON_BUDGET)``: every ``create_agent`` gets
  ``ContextMiddleware(...)`` appended to its middleware, every pydantic-ai ``Agent``
  ``ProcessHistory(HistoryProcessor(...))`` appended to its capabilities. A large budget
  leaves the adapter idle: whatever fails then fails because the adapter read or wrote
  something wrongly.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import tempfile
import types
from typing import Any

from neuron_context import default_stack

FRAMEWORK = os.environ.get("NEURON_FRAMEWORK", "")
BUDGET = int(os.environ.get("NEURON_BUDGET", "0"))


def _langchain() -> None:
    from langchain import agents
    from langchain.agents import factory

    from neuron_context.ext.langchain import ContextMiddleware

    original = factory.create_agent

    @functools.wraps(original)
    def create_agent(*args: Any, middleware: Any = (), **kwargs: Any) -> Any:
        ours = ContextMiddleware(default_stack(BUDGET))
        return original(*args, middleware=[*middleware, ours], **kwargs)

    factory.create_agent = create_agent
    agents.create_agent = create_agent


def _pydantic_ai() -> None:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory

    from neuron_context.ext.pydantic_ai import HistoryProcessor

    original = Agent.__init__

    @functools.wraps(original)
    def init(self: Any, *args: Any, capabilities: Any = None, **kwargs: Any) -> None:
        ours = ProcessHistory(HistoryProcessor(default_stack(BUDGET)))
        original(self, *args, capabilities=[*(capabilities or ()), ours], **kwargs)

    Agent.__init__ = init  # type: ignore[method-assign]


def _pydantic_ai_environment() -> None:
    try:
        importlib.import_module("clai")
    except ImportError:
        stand_in = types.ModuleType("clai")
        stand_in.__path__ = [tempfile.mkdtemp(prefix="clai-")]
        sys.modules["clai"] = stand_in
    _huggingface_providers()


def _huggingface_providers() -> None:
    try:
        from huggingface_hub.inference._providers._common import (
            HARDCODED_MODEL_INFERENCE_MAPPING as MAPPING,
        )
    except ImportError:
        return
    for provider in ("together", "nebius"):
        MAPPING.setdefault(provider, {})


if FRAMEWORK == "langchain" and BUDGET:
    _langchain()
elif FRAMEWORK == "pydantic-ai":
    _pydantic_ai_environment()
    if BUDGET:
        _pydantic_ai()
