"""Running the tool calls of one model reply: concurrently, and always answered.

The calls of one reply run in one anyio task group, each through the whole
``wrap_tool_call`` chain down to :func:`execute_tool`. Whatever happens, the reply's
calls are answered in one tool message, in call order: a result for every call that
finished, and ``repair()``'s interrupted error result for every call that did not
(cancellation, a limit stopping the run). An :class:`AgentError` raised in the chain
cancels the other calls and leaves the run; any other exception becomes an error result
the model reads.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Literal

import anyio
import attrs

from .. import _tracing as tracing
from .._errors import AgentError, described, show
from .._messages.content import ToolResult, ToolUse
from .._messages.message import Message, Role
from .._messages.wellformed import INTERRUPTED
from .._middleware.chain import MiddlewareChain
from .._middleware.types import ToolCallRequest
from .._run.events import ToolCalled
from .._run.run import RunContext
from .._run.schema import validate_arguments
from .._run.tools import Tool, result_of

__all__ = ["close_calls", "execute_tool", "run_tool_calls"]


def close_calls(messages: list[Message], results: Mapping[str, ToolResult]) -> None:
    """Answer the calls of a trailing assistant message of ``messages``, in place.

    Each call gets its result from ``results``, or an interrupted error result (as
    :func:`~neuron_context.repair` closes a dangling call); the tool message holding
    them is appended (the history grows, as its running count expects).
    """
    if not messages or messages[-1].role is not Role.ASSISTANT:
        return
    uses = messages[-1].tool_uses
    if not uses:
        return
    blocks = tuple(
        results.get(use.id) or ToolResult(tool_use_id=use.id, content=INTERRUPTED, is_error=True)
        for use in uses
    )
    messages.append(Message(role=Role.TOOL, content=blocks))


async def execute_tool(tools: Mapping[str, Tool], request: ToolCallRequest) -> ToolResult:
    """The innermost handler: check the name and the arguments, then call the tool.

    An unknown tool or invalid arguments are an error result (the tool is not called);
    the tool's own exception propagates, for the chain (a retry) to see.
    """
    use, tool = request.tool_use, request.tool
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        text = f"unknown tool {show(use.name)}; the available tools are: {known}"
        return ToolResult(tool_use_id=use.id, content=text, is_error=True)
    problems = validate_arguments(use.input, tool.input_schema)
    if problems:
        text = f"invalid arguments for {tool.name}: " + "; ".join(problems)
        return ToolResult(tool_use_id=use.id, content=text, is_error=True)
    value = await tool.invoke(use.input, request.context)
    return result_of(use.id, value, f"tool {show(tool.name)}")


async def run_tool_calls(
    chain: MiddlewareChain,
    tools: Mapping[str, Tool],
    context: RunContext,
    uses: Sequence[ToolUse],
) -> None:
    """Run ``uses`` concurrently and append their answers to the history.

    Raises:
        AgentError: a middleware stopped the run (the history is answered first).
    """
    state = context.state
    requests: list[ToolCallRequest] = []
    for use in uses:
        number, for_tool = state.count_tool_call(use.name)
        requests.append(
            ToolCallRequest(
                use,
                tools.get(use.name),
                context=context,
                number=number,
                number_for_tool=for_tool,
            )
        )

    async def innermost(request: ToolCallRequest) -> ToolResult:
        return await execute_tool(tools, request)

    results: dict[str, ToolResult] = {}
    stops: list[AgentError] = []

    async def one(request: ToolCallRequest, scope: anyio.CancelScope) -> None:
        use = request.tool_use
        started = time.perf_counter()
        try:
            with tracing.tool_call(use, request.tool) as span:
                result = await chain.call_tool(request, innermost)
                span.tool_result(result)
        except AgentError as exc:
            stops.append(exc)
            scope.cancel()
            duration = time.perf_counter() - started
            context.emit(
                ToolCalled(context.turn, use.name, use.id, "cancelled", str(exc), duration)
            )
            return
        except anyio.get_cancelled_exc_class():
            duration = time.perf_counter() - started
            context.emit(ToolCalled(context.turn, use.name, use.id, "cancelled", None, duration))
            raise
        except Exception as exc:
            result = ToolResult(tool_use_id=use.id, content=described(exc), is_error=True)
        if result.tool_use_id != use.id:
            result = attrs.evolve(result, tool_use_id=use.id)
        results[use.id] = result
        error = result.text if result.is_error else None
        outcome: Literal["success", "error"] = "error" if result.is_error else "success"
        duration = time.perf_counter() - started
        context.emit(ToolCalled(context.turn, use.name, use.id, outcome, error, duration))

    try:
        async with anyio.create_task_group() as group:
            for request in requests:
                group.start_soon(one, request, group.cancel_scope)
    finally:
        close_calls(state.messages, results)
    if stops:
        raise stops[0]
