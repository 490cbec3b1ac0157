"""Compaction as every caller runs it: one step, one count of the request, one view.

The agent loop, its middlewares, the framework adapters and the command line all compact
through this room, so they share one policy (what is counted, what a failure does, what
a malformed result does) and one cost:

- ``request``: :class:`RequestCounter`, what a request costs: its messages (through the
  counter's history memo, so a grown history costs its new messages), the system prompt
  and the tool definitions.
- ``step``: :func:`compact_step`, decide → compact → start on a user message → check →
  measure, returning a :class:`StepResult` that events and log lines are made from.
- ``view``: :class:`ContextView`, the compacted view of a history that only grows, for
  callers that keep the full history and send the view (it is extended with the new
  messages and compacted again only when it crosses the trigger itself).
"""
