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
from ._overflow import Overflow, context_overflow

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
    "Overflow",
    "ProviderError",
    "SummarizationError",
    "TokenizerError",
    "ToolCallLimitExceededError",
    "context_overflow",
]

_publish(__name__, globals(), __all__)
