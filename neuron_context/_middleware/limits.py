"""Limits: stop a run before one model call or tool call too many.

Both count per run (the loop keeps the counters in :class:`AgentState`, so they survive
a move to another worker), report :class:`LimitReached`, and raise a clear
:class:`AgentLimitError` subclass. The call over the limit is never made; the history
stays well formed (calls that were stopped are closed as interrupted).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from .._errors import ModelCallLimitExceededError, ToolCallLimitExceededError, show
from .._messages.content import ToolResult
from .._run.events import LimitReached
from .._validators import fail, positive_int, require_int
from .types import AgentMiddleware, ModelRequest, ToolCallRequest, ToolHandler

__all__ = ["ModelCallLimitMiddleware", "ToolCallLimitMiddleware"]


@attrs.define
class ModelCallLimitMiddleware(AgentMiddleware):
    """At most ``n`` model calls per run; the next raises
    :class:`ModelCallLimitExceededError`.

    Examples:
        >>> limit = ModelCallLimitMiddleware(10)
    """

    n: int = attrs.field(validator=positive_int())
    """The most model calls one run may make."""

    async def before_model(self, request: ModelRequest) -> None:
        """Raise before the call over the limit."""
        context = request.context
        count = context.state.run_model_calls
        if count > self.n:
            context.emit(LimitReached(context.turn, "model_calls", self.n))
            msg = f"ModelCallLimitMiddleware: the run reached its limit of {self.n} model calls"
            raise ModelCallLimitExceededError(msg, limit=self.n, count=count)


def _to_per_tool(value: Mapping[str, int] | None) -> dict[str, int]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        name = "ToolCallLimitMiddleware.per_tool"
        raise fail(name, "must map tool names to limits")
    return {
        name: require_int(limit, f"ToolCallLimitMiddleware.per_tool[{show(name)}]", minimum=1)
        for name, limit in value.items()
    }


@attrs.define
class ToolCallLimitMiddleware(AgentMiddleware):
    """At most ``n`` tool calls per run (and at most ``per_tool[name]`` of one tool).

    The (n+1)-th call is not made: :class:`ToolCallLimitExceededError` is raised (calls
    of the same reply still running are cancelled and closed as interrupted).

    Examples:
        >>> limit = ToolCallLimitMiddleware(20, per_tool={"search": 5})
    """

    n: int | None = attrs.field(default=None)
    """The most tool calls one run may make (``None``: no run-wide limit)."""
    per_tool: dict[str, int] = attrs.field(factory=dict, kw_only=True, converter=_to_per_tool)
    """The most calls of one tool per run, by name."""

    def __attrs_post_init__(self) -> None:
        if self.n is not None:
            require_int(self.n, "ToolCallLimitMiddleware.n", minimum=1)

    async def wrap_tool_call(self, request: ToolCallRequest, next: ToolHandler) -> ToolResult:
        """Raise instead of making a call over a limit."""
        name = request.tool_use.name
        limit = self.per_tool.get(name)
        if limit is not None and request.number_for_tool > limit:
            self._stop(request, limit, request.number_for_tool, name)
        if self.n is not None and request.number > self.n:
            self._stop(request, self.n, request.number, None)
        return await next(request)

    def _stop(self, request: ToolCallRequest, limit: int, count: int, name: str | None) -> None:
        context = request.context
        context.emit(LimitReached(context.turn, "tool_calls", limit, name))
        which = f"{limit} calls of {name}" if name is not None else f"{limit} tool calls"
        msg = f"ToolCallLimitMiddleware: the run reached its limit of {which}"
        raise ToolCallLimitExceededError(msg, limit=limit, count=count, tool_name=name)
