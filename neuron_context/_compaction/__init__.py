"""Compaction as every caller runs it: one step, one count of the request, one view.

The agent loop, its middlewares, the framework adapters and the command line all compact
through this room, so they share one policy (what is counted, what a failure does, what
a malformed result does) and one cost:

- ``step``: :func:`compact_step`, decide → compact → start on a user message → check →
  measure, returning a :class:`StepResult` that events and log lines are made from.
- ``view``: :class:`ContextView`, the compacted view of a history that only grows, for
  callers that keep the full history and send the view (it is extended with the new
  messages and compacted again only when it crosses the trigger itself).
- ``refusal``: :func:`context_overflow`, the one recogniser of a provider's "too long"
  refusal, and the budget it implies (``Overflow.budget``); public as
  :mod:`neuron_context.overflow`.
- ``recovery``: the resend-with-recovery step (``resend``, ``resend_sync``) every caller
  sends through: refused as too long, recompact (never below the system prompt, tools
  and newest request) and send once more (``resend_sync`` runs the same step).
- ``calibration``: the provider's reported input tokens calibrate the counter
  (``calibrate``), and what they taught it (a ``Calibration``) is recorded on the model
  call's span.
- ``reporting``: the loop's compaction of its history (and its recompaction after a
  refusal), reported as the run's events.

What a request costs (messages, system prompt, tool definitions) is counting's
(:class:`~neuron_context._counting.request.RequestCounter`).
"""
