"""Property: random middleware stacks and random tool failures keep the history well formed."""

from __future__ import annotations

import random
from collections.abc import Sequence

import anyio
from agent_support import first_turn_role
from hypothesis import given
from hypothesis import strategies as st

from neuron_context import (
    AgentMiddleware,
    AgentOptions,
    CompletionRequest,
    CompletionResponse,
    ContextEditingMiddleware,
    ContextSection,
    HumanInTheLoopMiddleware,
    Message,
    ModelCallLimitMiddleware,
    PersistentContext,
    SlidingWindowStrategy,
    StripToolCallsStrategy,
    SummarizationMiddleware,
    TodoListMiddleware,
    ToolCallLimitMiddleware,
    ToolRetryMiddleware,
    ToolUse,
    create_agent,
    validate,
)
from neuron_context.errors import (
    AgentError,
    ProviderError,
)
from neuron_context.middleware import (
    Approval,
    SystemInjectionMiddleware,
)
from neuron_context.testing import FunctionProvider

TOOLS = ("ok", "fails", "flaky", "cancel", "missing", "write_todos")


def summarizer(fails: bool) -> FunctionProvider:
    """A summary provider that always answers, or always fails."""

    def reply(request: CompletionRequest) -> str:
        if fails:
            msg = "down"
            raise ProviderError(msg)
        return "Summary of the work."

    return FunctionProvider(reply)


def middleware_for(kind: str, seed: int) -> AgentMiddleware:
    """One middleware of ``kind``, configured from ``seed``."""
    rng = random.Random(seed)
    if kind == "retry":
        return ToolRetryMiddleware(rng.randint(0, 2), initial_delay=0, jitter=0)
    if kind == "tool_limit":
        return ToolCallLimitMiddleware(rng.randint(1, 8))
    if kind == "model_limit":
        return ModelCallLimitMiddleware(rng.randint(1, 8))
    if kind == "last_n":
        return ContextEditingMiddleware.last_n(rng.randint(1, 5))
    if kind == "strip":
        return ContextEditingMiddleware.strip_tool_calls()
    if kind == "strip_and_truncate":
        return ContextEditingMiddleware.strip_and_truncate(rng.randint(1, 4))
    if kind == "approval":
        choices = [Approval.approve(), Approval.reject("no"), Approval.edit({"x": "edited"})]
        return HumanInTheLoopMiddleware(lambda use: rng.choice(choices))
    if kind == "todos":
        return TodoListMiddleware()
    if kind == "summarize":
        return SummarizationMiddleware(
            summarizer(rng.random() < 0.3), rng.randint(20, 200), preserve_recent=rng.randint(0, 3)
        )
    persistent = PersistentContext()
    persistent.add_section(ContextSection("Rules", "Be careful.", 0))
    return SystemInjectionMiddleware(persistent=persistent)


KINDS = (
    "retry",
    "tool_limit",
    "model_limit",
    "last_n",
    "strip",
    "strip_and_truncate",
    "approval",
    "todos",
    "summarize",
    "injection",
)

replies_st = st.lists(
    st.lists(
        st.tuples(st.sampled_from(TOOLS), st.sampled_from(["a", "b", 3])), min_size=0, max_size=3
    ),
    min_size=1,
    max_size=8,
)


@given(
    kinds=st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 1000)), max_size=5),
    replies=replies_st,
    window=st.none() | st.integers(0, 6),
)
def test_random_stacks_keep_the_history_well_formed(
    kinds: list[tuple[str, int]],
    replies: list[list[tuple[str, str | int]]],
    window: int | None,
) -> None:
    """Whatever the stack and the failures, history and requests stay well formed."""
    sent: list[Sequence[Message]] = []
    script = list(replies)
    counter = iter(range(10**6))
    flaky_calls = 0

    def reply(request: CompletionRequest) -> CompletionResponse | str:
        validate(request.messages)
        sent.append(request.messages)
        if not script:
            return "done"
        uses = [
            ToolUse(
                id=f"id{next(counter)}",
                name=name,
                input={"todos": []} if name == "write_todos" else {"x": arg},
            )
            for name, arg in script.pop(0)
        ]
        if not uses:
            return "done"
        return CompletionResponse(Message.assistant(tool_uses=uses), stop_reason="tool_use")

    async def ok(x: str) -> str:
        return f"ok {x}"

    async def fails(x: str) -> str:
        raise RuntimeError(x)

    async def flaky(x: str) -> str:
        nonlocal flaky_calls
        flaky_calls += 1
        if flaky_calls % 2:
            msg = "flaky"
            raise TimeoutError(msg)
        return "recovered"

    async def run() -> None:
        with anyio.CancelScope() as scope:

            async def cancel(x: str) -> str:
                scope.cancel()
                await anyio.sleep(0)
                return "never"

            middleware = [middleware_for(kind, seed) for kind, seed in kinds]
            unique = {type(m).__name__: m for m in middleware if isinstance(m, TodoListMiddleware)}
            middleware = [m for m in middleware if not isinstance(m, TodoListMiddleware)] + list(
                unique.values()
            )
            context = (
                SlidingWindowStrategy(window, 40)
                if window is not None and window % 2
                else StripToolCallsStrategy(40)
                if window is not None
                else None
            )
            agent = create_agent(
                FunctionProvider(reply),
                [ok, fails, flaky, cancel],
                AgentOptions(middleware=middleware, context=context, max_turns=6),
            )
            try:
                await agent.run("the task")
            except AgentError:
                pass
            finally:
                validate(agent.state.messages)
                for request in sent:
                    assert first_turn_role(request) == "user"
                last = agent.state.messages[-1]
                assert not last.tool_uses, "every call is answered"

    anyio.run(run)
