"""The pydantic-ai adapter's rooms, behind its face :mod:`neuron_context.ext.pydantic_ai`.

- :mod:`.messages`: pydantic-ai's ``ModelMessage`` s read as ours (and the mapping);
  :mod:`.parts`: ours written as pydantic-ai's request and response parts.
- :mod:`.reader`: one conversation's messages read incrementally, and a compaction
  written back with the original objects wherever the strategy kept them.
- :mod:`.model`: the model wrapped to recover from its provider's overflow errors.
- :mod:`.stores`: the recall tool as a pydantic-ai tool.

Each module imports pydantic-ai at its top: import them through the face, which turns a
missing framework into an error naming the extra.
"""
