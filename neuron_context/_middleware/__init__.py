"""Middleware for the agent loop: ``types`` (the hook protocol and what the hooks see),
``chain`` (running them in order), ``compacting`` (the compaction step as a run reports
it), and one module per built-in middleware. Public through
:mod:`neuron_context.middleware`."""
