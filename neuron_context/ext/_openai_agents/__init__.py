"""The OpenAI Agents SDK adapter's rooms; :mod:`neuron_context.ext.openai_agents` is its face.

- :mod:`.items`: Responses-API input items read as our messages and written back (no
  SDK needed: the command line reads Agents SDK dumps with it).
- :mod:`.reader`: the incremental reader of a call's items, and the items for a
  compaction of them (the SDK's own objects wherever the strategy kept a message).
- :mod:`.filter`: ``CallModelInputFilter``, the run's ``call_model_input_filter``.
- :mod:`.model`: the model ``CallModelInputFilter.wrap`` gives, recovering a call its
  provider refused as too long.
- :mod:`.session`: ``CompactingSession``, a ``Session`` that returns its compaction.
- :mod:`.stores`: the recall tool as an SDK function tool.
- :mod:`.identity`: which conversation a call belongs to (the name the caller entered,
  or the run's ``CompactingSession``), and the one-time warning when none is known.
- :mod:`.fleet`: a named conversation's view kept in the offload store, so any worker
  of a fleet continues it.

This package imports nothing, so :mod:`.items` can be read without the SDK installed.
"""
