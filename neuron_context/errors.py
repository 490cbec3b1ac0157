"""The one exception tree, rooted at :class:`NeuronContextError`.

Drawn, with what each error carries, in the docstring of the module that defines them
(and on the errors page of the docs).
"""

from ._errors import (
    AgentError,
    AgentLimitError,
    BudgetExceededError,
    CompactionError,
    ConfigurationError,
    ContextOverflowError,
    InvalidConversationError,
    MaxTurnsExceededError,
    MiddlewareError,
    ModelCallLimitExceededError,
    NeuronContextError,
    ProviderError,
    SummarizationError,
    TokenizerError,
    ToolCallLimitExceededError,
)
from ._exports import publish as _publish

__all__ = [
    "AgentError",
    "AgentLimitError",
    "BudgetExceededError",
    "CompactionError",
    "ConfigurationError",
    "ContextOverflowError",
    "InvalidConversationError",
    "MaxTurnsExceededError",
    "MiddlewareError",
    "ModelCallLimitExceededError",
    "NeuronContextError",
    "ProviderError",
    "SummarizationError",
    "TokenizerError",
    "ToolCallLimitExceededError",
]

_publish(__name__, globals(), __all__)


def __getattr__(name: str) -> object:
    """``errors.context_overflow`` and ``errors.Overflow``, which live in
    :mod:`neuron_context.overflow` (they are not errors), still import from here."""
    if name in {"Overflow", "context_overflow"}:
        from . import overflow

        return getattr(overflow, name)
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
