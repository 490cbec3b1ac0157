"""Adapters for the agent frameworks users already run: LangChain, pydantic-ai, the Agents SDK.

One module per framework, each behind its own extra and imported only when used (from a
clone of the repository, as the README's Install section says)::

    neuron_context.ext.langchain      python -m pip install ".[langchain]"
    neuron_context.ext.pydantic_ai    python -m pip install ".[pydantic-ai]"
    neuron_context.ext.openai_agents  python -m pip install ".[openai-agents]"

This package itself imports nothing, so ``import neuron_context`` never pays for a
framework. Each adapter converts the framework's messages to ours and back, runs any
:class:`~neuron_context.ContextStrategy` on them, and hands the framework only a
well-formed conversation: messages the strategy kept unchanged are handed back as the very
objects the framework gave (ids, metadata and provider fields intact).
"""
