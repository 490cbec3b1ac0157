"""Middleware for the agent loop: the hook protocol, its chain, and the built-ins.

``AgentMiddleware`` is the protocol (``before_agent``, ``after_agent``, ``before_model``,
``after_model``, ``wrap_model_call``, ``wrap_tool_call``); ``ModelRequest``,
``ModelResponse`` and ``ToolCallRequest`` are what the hooks see; ``MiddlewareChain``
runs them in order. Each built-in lives in a module of its own.
"""

from ._exports import publish as _publish
from ._middleware.approval import Approval, HumanInTheLoopMiddleware
from ._middleware.chain import MiddlewareChain
from ._middleware.editing import ContextEditingMiddleware
from ._middleware.fallback import ModelFallbackMiddleware
from ._middleware.injecting import SystemInjectionMiddleware
from ._middleware.limits import ModelCallLimitMiddleware, ToolCallLimitMiddleware
from ._middleware.model_selection import (
    DynamicModelSelectionMiddleware,
    ModelRoute,
)
from ._middleware.retry import ToolRetryMiddleware
from ._middleware.summarizing import SummarizationMiddleware
from ._middleware.todos import TodoListMiddleware
from ._middleware.tool_logging import ToolCallLoggingMiddleware
from ._middleware.types import (
    AgentMiddleware,
    ModelHandler,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    ToolHandler,
)

__all__ = [
    "AgentMiddleware",
    "Approval",
    "ContextEditingMiddleware",
    "DynamicModelSelectionMiddleware",
    "HumanInTheLoopMiddleware",
    "MiddlewareChain",
    "ModelCallLimitMiddleware",
    "ModelFallbackMiddleware",
    "ModelHandler",
    "ModelRequest",
    "ModelResponse",
    "ModelRoute",
    "SummarizationMiddleware",
    "SystemInjectionMiddleware",
    "TodoListMiddleware",
    "ToolCallLimitMiddleware",
    "ToolCallLoggingMiddleware",
    "ToolCallRequest",
    "ToolHandler",
    "ToolRetryMiddleware",
]

_publish(__name__, globals(), __all__)
