"""The OpenAI Agents SDK: a ``call_model_input_filter``, a compacting session, item conversion.

Install the ``openai-agents`` extra (``python -m pip install ".[openai-agents]"`` from a
clone). :class:`CallModelInputFilter` runs any :class:`~neuron_context.ContextStrategy` on
the Responses-API input items of each model call::

    result = await Runner.run(agent, question, run_config=RunConfig(
        call_model_input_filter=CallModelInputFilter(strategy)))

Like any ``call_model_input_filter``, it changes only what the model is sent: the run's
own items keep the whole history (the SDK decides this). So it sends a compacted *view*,
kept between calls per conversation: each call extends the view with the new items and
compacts it again only when the view itself crosses the trigger, so a run compacts as
rarely as a loop that rewrites its history, and the requests between two compactions
share their prefix (the provider's prompt cache serves it). A call's conversation is the
name the run goes under (``neuron_context.stores.conversation(name)``, or the
``session_id`` of the run's :class:`CompactingSession`), else the one whose items its
items start with (the SDK rebuilds the input items every turn: matched by content); a
call converts only the items added since the last one. A named conversation's offloads
go to its namespace of the strategy's store, and its view is kept there too, so any
worker of a fleet continues it.

The agent's instructions and its function tools are counted against the budget; the
instructions are never edited. Function calls stay with their outputs and reasoning items
with the reply they belong to. Items the strategy keeps are passed on as the very objects
the SDK gave for this call (the SDK matches them back to its run state by identity).

What the SDK sends, the filter accepts: items are read and written back as they came, and
nothing is repaired (the SDK and the server complete what they send by design). In a run
whose history the server keeps (``previous_response_id``, ``auto_previous_response_id``,
``conversation_id``), the input is only the new items: outputs whose calls live on the
server go first, as they came, and only the items after them are compacted. A failing
strategy (the one compaction step of :mod:`neuron_context._compaction.step`), an input
the filter cannot read or a compaction it cannot write back leave the input as the SDK
built it, with a warning: the filter never costs the model call.

:class:`CompactingSession` wraps a ``Session`` (``SQLiteSession``, ...) so that what it
returns is compacted: the session keeps everything, each run starts from a history that
fits.
"""

from __future__ import annotations

from .._exports import publish as _publish
from ._core import missing_extra

try:
    from ..formats._responses_items import from_responses_items, to_responses_items
    from ._openai_agents.filter import CallModelInputFilter
    from ._openai_agents.session import CompactingSession
    from ._openai_agents.stores import recall_tool
except ModuleNotFoundError as exc:  # pragma: no cover - exercised by a test in a subprocess
    raise missing_extra(__name__) from exc

__all__ = [
    "CallModelInputFilter",
    "CompactingSession",
    "from_responses_items",
    "recall_tool",
    "to_responses_items",
]

_publish(__name__, globals(), __all__)
