"""MiddlewareChain: hook order, onion wrapping, in-place edits and replacements."""

from __future__ import annotations

import pytest
from agent_support import answer, calls, scripted

from neuron_context import (
    AgentMiddleware,
    AgentOptions,
    ConfigurationError,
    Message,
    MiddlewareChain,
    ModelRequest,
    ToolCallRequest,
    ToolResult,
    create_agent,
)
from neuron_context.middleware import (
    ModelHandler,
    ModelResponse,
    ToolHandler,
)

pytestmark = pytest.mark.anyio


class Recorder(AgentMiddleware):
    """Records every hook it sees into a shared log."""

    def __init__(self, label: str, log: list[str]) -> None:
        self.label = label
        self.log = log

    async def before_agent(self, messages: list[Message]) -> None:
        self.log.append(f"{self.label}.before_agent")

    async def after_agent(self, messages: list[Message]) -> None:
        self.log.append(f"{self.label}.after_agent")

    async def before_model(self, request: ModelRequest) -> None:
        self.log.append(f"{self.label}.before_model")

    async def after_model(self, request: ModelRequest, response: ModelResponse) -> None:
        self.log.append(f"{self.label}.after_model")

    async def wrap_model_call(self, request: ModelRequest, next: ModelHandler) -> ModelResponse:
        self.log.append(f"{self.label}.wrap_model>")
        response = await next(request)
        self.log.append(f"{self.label}.wrap_model<")
        return response

    async def wrap_tool_call(self, request: ToolCallRequest, next: ToolHandler) -> ToolResult:
        self.log.append(f"{self.label}.wrap_tool>")
        result = await next(request)
        self.log.append(f"{self.label}.wrap_tool<")
        return result


class TestMiddlewareChain:
    """The order of hooks in one run."""

    async def test_order(self) -> None:
        """before_* in order, after_* reversed, wrappers onion-style, before_model first."""
        log: list[str] = []

        def tool() -> str:
            log.append("tool")
            return "ok"

        options = AgentOptions(middleware=[Recorder("a", log), Recorder("b", log)])
        agent = create_agent(scripted([calls(("tool", {})), answer("done")]), [tool], options)
        await agent.run("go")
        model_turn = [
            "a.before_model",
            "b.before_model",
            "a.wrap_model>",
            "b.wrap_model>",
            "b.wrap_model<",
            "a.wrap_model<",
            "b.after_model",
            "a.after_model",
        ]
        assert log == [
            "a.before_agent",
            "b.before_agent",
            *model_turn,
            "a.wrap_tool>",
            "b.wrap_tool>",
            "tool",
            "b.wrap_tool<",
            "a.wrap_tool<",
            *model_turn,
            "b.after_agent",
            "a.after_agent",
        ]

    async def test_replacements_and_in_place_edits(self) -> None:
        """A hook may edit in place or return a replacement; None keeps the value."""

        class Edits(AgentMiddleware):
            async def before_agent(self, messages: list[Message]) -> list[Message]:
                return [Message.system("injected"), *messages]

            async def before_model(self, request: ModelRequest) -> ModelRequest:
                request.system_prompt = "edited in place"
                return ModelRequest(
                    request.messages,
                    tools=request.tools,
                    system_prompt=request.system_prompt + " and replaced",
                    context=request.context,
                )

            async def after_model(
                self, request: ModelRequest, response: ModelResponse
            ) -> ModelResponse:
                response.message = Message.assistant(response.message.text.upper())
                return response

        provider = scripted([answer("done")])
        agent = create_agent(provider, options=AgentOptions(middleware=[Edits()]))
        result = await agent.run("go")
        assert provider.requests[0].system == "edited in place and replaced"
        assert provider.requests[0].messages[0].text == "injected"
        assert result.text == "DONE"
        assert result.messages[-1].text == "DONE"

    async def test_wrapper_can_short_circuit(self) -> None:
        """A wrap_tool_call that does not call next decides the result alone."""

        class Canned(AgentMiddleware):
            async def wrap_tool_call(
                self, request: ToolCallRequest, next: ToolHandler
            ) -> ToolResult:
                return ToolResult(tool_use_id=request.tool_use.id, content="canned")

        def tool() -> str:
            raise AssertionError

        agent = create_agent(
            scripted([calls(("tool", {})), answer("done")]),
            [tool],
            AgentOptions(middleware=[Canned()]),
        )
        result = await agent.run("go")
        assert result.messages[2].tool_results[0].text == "canned"

    def test_only_overridden_hooks_are_visited(self) -> None:
        """The chain keeps the middlewares it was given, in order."""
        plain, log = AgentMiddleware(), list[str]()
        chain = MiddlewareChain([plain, Recorder("a", log)])
        assert chain.middlewares == (plain, chain.middlewares[1])
        assert "MiddlewareChain" in repr(chain)

    def test_rejects_non_middlewares(self) -> None:
        """Anything but middlewares is a ConfigurationError."""
        with pytest.raises(ConfigurationError, match="AgentMiddleware"):
            MiddlewareChain([object()])  # type: ignore[list-item]
        with pytest.raises(ConfigurationError, match="not one"):
            MiddlewareChain(AgentMiddleware())  # type: ignore[arg-type]

    async def test_default_hooks_are_no_ops(self) -> None:
        """A bare AgentMiddleware changes nothing."""
        provider = scripted([answer("done")])
        agent = create_agent(provider, options=AgentOptions(middleware=[AgentMiddleware()]))
        result = await agent.run("go")
        assert [m.text for m in result.messages] == ["go", "done"]
