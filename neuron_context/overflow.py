"""A provider's refusal of a request too long for the model: recognised, and the window
it shows.

The agent loop and every adapter recover from such a refusal through one step (recompact
to the size the refusal implies, never below the system prompt, the tools and the newest
request; send once more; then :class:`~neuron_context.errors.ContextOverflowError`). A
loop of your own can do the same with these: :func:`context_overflow` tells a refusal
from any other failure, whichever provider or framework raised it, and
:meth:`Overflow.budget` is the budget, in your counter's tokens, that the refused request
fits.
"""

from ._compaction.refusal import Overflow, context_overflow

__all__ = ["Overflow", "context_overflow"]
