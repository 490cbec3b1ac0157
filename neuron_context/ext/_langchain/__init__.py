"""The LangChain adapter's rooms, behind its face :mod:`neuron_context.ext.langchain`.

- :mod:`.messages`: ``langchain_core`` messages read as ours and written back (roles, tool
  calls, tool messages); :mod:`.blocks`: their content blocks, both ways.
- :mod:`.reader`: one conversation's messages read incrementally, and a compaction
  written back with the original objects wherever the strategy kept them.
- :mod:`.model`: one model call of ``ContextMiddleware``: read, compact, send, and send
  once more when the provider refuses the request as too long.
- :mod:`.stores`: the recall tool as a LangChain tool, and a LangGraph ``BaseStore`` as
  our store.

Each module imports LangChain at its top: import them through the face, which turns a
missing framework into an error naming the extra.
"""
