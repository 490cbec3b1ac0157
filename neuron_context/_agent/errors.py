"""The agent's errors: limits that stop a run.

They extend the package tree (:mod:`neuron_context._errors`)::

    NeuronContextError
    └── AgentError                         the agent loop stopped a run
        └── AgentLimitError                a configured limit was reached (.limit, .count)
            ├── MaxTurnsExceededError      AgentOptions.max_turns
            ├── ModelCallLimitExceededError  ModelCallLimitMiddleware
            └── ToolCallLimitExceededError   ToolCallLimitMiddleware (.tool_name)

An :class:`AgentError` raised inside a middleware or a tool is never turned into an
error result for the model: it leaves the run (after the history has been closed so it
stays well formed). Every other exception a tool raises becomes a
``ToolResult(is_error=True)``.
"""

from __future__ import annotations

from .._errors import NeuronContextError

__all__ = [
    "AgentError",
    "AgentLimitError",
    "MaxTurnsExceededError",
    "ModelCallLimitExceededError",
    "ToolCallLimitExceededError",
]


class AgentError(NeuronContextError):
    """The agent loop stopped a run; it propagates out of :meth:`Agent.run`."""


class AgentLimitError(AgentError):
    """A configured limit was reached; the call over the limit was not made.

    Attributes:
        limit: the configured maximum.
        count: the number the run would have reached (``limit + 1``).
    """

    def __init__(self, message: str, *, limit: int, count: int) -> None:
        super().__init__(message)
        self.limit: int = limit
        self.count: int = count


class MaxTurnsExceededError(AgentLimitError):
    """The run needed more model turns than ``AgentOptions.max_turns``."""


class ModelCallLimitExceededError(AgentLimitError):
    """A :class:`ModelCallLimitMiddleware` stopped the run before one more model call."""


class ToolCallLimitExceededError(AgentLimitError):
    """A :class:`ToolCallLimitMiddleware` stopped the run before one more tool call.

    Attributes:
        tool_name: the tool whose own limit was reached, or ``None`` for the run-wide one.
    """

    def __init__(
        self, message: str, *, limit: int, count: int, tool_name: str | None = None
    ) -> None:
        super().__init__(message, limit=limit, count=count)
        self.tool_name: str | None = tool_name
