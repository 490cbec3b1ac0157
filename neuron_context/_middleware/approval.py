"""Human in the loop: approve, reject or edit each tool call before it runs.

The decision is taken in ``after_model``, before the reply is recorded, so an edit is
written into the history (the model later sees the arguments that really ran, not the
ones it proposed) and a rejection is answered with an error result holding the
reason, which the model reads and can act on.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Literal, TypeAlias

import anyio
import attrs

from .._errors import ConfigurationError
from .._messages.content import JSON, ToolResult, ToolUse
from .._validators import callable_, number, optional, require_names
from .types import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
    ToolHandler,
)

__all__ = ["Approval", "Approve", "HumanInTheLoopMiddleware"]


@attrs.frozen
class Approval:
    """A decision about one tool call: :meth:`approve`, :meth:`reject` or :meth:`edit`."""

    decision: Literal["approve", "reject", "edit"]
    reason: str = ""
    """Why it was rejected; the model sees it."""
    arguments: Mapping[str, JSON] | None = None
    """The arguments to run it with instead (for ``"edit"``)."""

    @classmethod
    def approve(cls) -> Approval:
        """Run the call as the model made it."""
        return cls("approve")

    @classmethod
    def reject(cls, reason: str = "") -> Approval:
        """Do not run it; the model gets an error result with ``reason``."""
        return cls("reject", reason)

    @classmethod
    def edit(cls, arguments: Mapping[str, JSON]) -> Approval:
        """Run it with ``arguments`` instead."""
        return cls("edit", arguments=dict(arguments))


Approve: TypeAlias = "Callable[[ToolUse], Approval | bool | Awaitable[Approval | bool]]"
"""The callback: given a tool call, a decision (``True``/``False`` approve/reject)."""


def _to_names(value: Iterable[str] | None) -> frozenset[str] | None:
    return None if value is None else require_names(value, "HumanInTheLoopMiddleware.tool_names")


@attrs.define
class HumanInTheLoopMiddleware(AgentMiddleware):
    """Asks ``approve`` (sync or async) about each tool call before it runs.

    ``tool_names`` limits the question to some tool names (``None``: every call);
    ``timeout`` bounds the wait for a decision (an undecided call is rejected).

    Examples:
        >>> hitl = HumanInTheLoopMiddleware(lambda call: call.name != "delete_file")
    """

    approve: Approve = attrs.field(validator=callable_())
    """Decides about one call."""
    timeout: float | None = attrs.field(
        default=None, kw_only=True, validator=optional(number(minimum=0, exclusive_minimum=True))
    )
    """Seconds to wait for a decision (``None``: as long as it takes). A call still
    undecided then is rejected — the model gets an error result saying no decision came —
    instead of holding the run open. It bounds what ``approve`` awaits (an async
    ``approve``); a sync one runs to completion."""
    tool_names: frozenset[str] | None = attrs.field(default=None, kw_only=True, converter=_to_names)
    """Only calls of these tools are asked about (``None``: every call); a collection of
    names, never a lone ``str``."""

    async def _decide(self, use: ToolUse) -> Approval:
        if self.timeout is None:
            return await self._ask(use)
        with anyio.move_on_after(self.timeout):
            return await self._ask(use)
        return Approval.reject(f"no decision within {self.timeout:g} seconds")

    async def _ask(self, use: ToolUse) -> Approval:
        decision = self.approve(use)
        if inspect.isawaitable(decision):
            decision = await decision
        if decision is True:
            return Approval.approve()
        if decision is False:
            return Approval.reject()
        if not isinstance(decision, Approval):
            msg = (
                "HumanInTheLoopMiddleware.approve must return an Approval or a bool, "
                f"got {type(decision).__name__}"
            )
            raise ConfigurationError(msg)
        return decision

    async def after_model(
        self, request: ModelRequest, response: ModelResponse
    ) -> ModelResponse | None:
        """Ask about each call; write edits into the reply, remember rejections."""
        rejected: dict[str, str] = {}
        content = list(response.message.content)
        changed = False
        for index, block in enumerate(content):
            if not isinstance(block, ToolUse):
                continue
            if self.tool_names is not None and block.name not in self.tool_names:
                continue
            decision = await self._decide(block)
            if decision.decision == "reject":
                rejected[block.id] = decision.reason
            elif decision.decision == "edit" and decision.arguments is not None:
                content[index] = attrs.evolve(block, input=decision.arguments)
                changed = True
        request.context.scratch[self._key] = rejected
        if changed:
            response.message = attrs.evolve(response.message, content=tuple(content))
        return response

    @property
    def _key(self) -> str:
        return f"{self.name}:{id(self)}"

    async def wrap_tool_call(self, request: ToolCallRequest, next: ToolHandler) -> ToolResult:
        """Answer a rejected call with its reason instead of running it."""
        rejected = request.context.scratch.get(self._key)
        use = request.tool_use
        if isinstance(rejected, dict) and use.id in rejected:
            reason = rejected[use.id]
            text = "The user rejected this tool call" + (f": {reason}" if reason else ".")
            return ToolResult(tool_use_id=use.id, content=text, is_error=True)
        return await next(request)
