"""DynamicModelSelectionMiddleware: images → multimodal, large → long context, else default."""

from __future__ import annotations

import logging

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import counters, texts, well_formed_conversations

from neuron_context import (
    AgentOptions,
    CompletionRequest,
    ConfigurationError,
    ContextEditingMiddleware,
    Image,
    Message,
    ModelRequest,
    Role,
    RunContext,
    StripProcessedImagesStrategy,
    Text,
    TokenCounter,
    ToolDefinition,
    ToolResult,
    create_agent,
)
from neuron_context.events import (
    AgentEvent,
    ModelCalled,
    ModelRouted,
)
from neuron_context.middleware import (
    DynamicModelSelectionMiddleware,
    ModelResponse,
    ModelRoute,
)
from neuron_context.testing import FunctionProvider

LOCAL = ModelRoute("local", model="small")
VISION = ModelRoute("vision", provider=FunctionProvider(lambda r: "vision"), model="eyes")
REMOTE = ModelRoute("remote", model="long-1m")
TOOLS = [ToolDefinition(name="ls", description="List files.", input_schema={"type": "object"})]


def images_in(messages: list[Message]) -> int:
    """Images in the messages and in their tool results (an independent count)."""
    return sum(
        1
        for message in messages
        for block in message.content
        for item in (block.content if isinstance(block, ToolResult) else (block,))
        if isinstance(item, Image)
    )


def route(router: DynamicModelSelectionMiddleware, request: ModelRequest) -> ModelRequest:
    """The request ``router`` hands to the next handler."""
    sent: list[ModelRequest] = []

    async def handler(routed: ModelRequest) -> ModelResponse:
        sent.append(routed)
        return ModelResponse(Message.assistant("ok"))

    anyio.run(router.wrap_model_call, request, handler)
    (routed,) = sent
    return routed


def request_tokens(counter: TokenCounter, request: ModelRequest) -> int:
    """What the provider receives: messages, system prompt as a message, tools."""
    total = counter.estimate_messages(request.messages) + counter.estimate_tools(request.tools)
    if request.system_prompt:
        total += counter.estimate_message(Message.system(request.system_prompt))
    return total


class TestDynamicModelSelectionMiddleware:
    """Routing of DynamicModelSelectionMiddleware."""

    @given(counters(), well_formed_conversations(), st.data())
    def test_routes_generated_requests_by_the_rules(
        self, counter: TokenCounter, messages: list[Message], data: st.DataObject
    ) -> None:
        """Images pick multimodal, then size picks long context, else the default."""
        system = data.draw(st.none() | texts(), label="system_prompt")
        with_tools = data.draw(st.booleans(), label="tools")
        threshold = data.draw(st.integers(0, 3000), label="long_context_tokens")
        with_multimodal = data.draw(st.booleans(), label="multimodal route")
        with_long = data.draw(st.booleans(), label="long-context route")
        router = DynamicModelSelectionMiddleware(
            default=LOCAL,
            multimodal=VISION if with_multimodal else None,
            long_context=REMOTE if with_long else None,
            long_context_tokens=threshold,
        )
        events: list[AgentEvent] = []
        context = RunContext(counter=counter, turn=3, sink=events.append)
        request = ModelRequest(
            messages,
            tools=TOOLS if with_tools else [],
            system_prompt=system,
            model="configured",
            context=context,
        )
        tokens = request_tokens(counter, request)
        images = images_in(messages)
        if images and with_multimodal:
            expected, reason = VISION, "images"
        elif tokens > threshold and with_long:
            expected, reason = REMOTE, "long_context"
        else:
            expected, reason = LOCAL, "default"
        routed = route(router, request)
        assert routed.model == expected.model
        assert routed.provider is expected.provider
        assert routed.context is context
        assert (request.model, request.provider) == ("configured", None)
        provider = type(expected.provider).__name__ if expected.provider else "agent"
        (event,) = events
        assert isinstance(event, ModelRouted)
        assert (event.turn, event.route, event.reason, event.provider) == (
            3,
            expected.name,
            reason,
            provider,
        )
        assert (event.model, event.tokens, event.images) == (expected.model, tokens, images)

    def test_no_route_keeps_the_request(self) -> None:
        """Without routes (or a default of None) the request keeps its provider and model."""
        request = ModelRequest([Message.user("hi")], model="configured")
        assert route(DynamicModelSelectionMiddleware(), request) is request

    def test_user_rules_come_first(self) -> None:
        """A rule returning a route wins over the built-in rules; None passes on."""
        image = Message(
            role=Role.USER,
            content=(Text(text="see"), Image(media_type=None, url="https://x.test/a.png")),
        )
        router = DynamicModelSelectionMiddleware(
            multimodal=VISION,
            rules=[lambda request: None, lambda request: REMOTE if request.system_prompt else None],
        )
        with_prompt = ModelRequest([image], system_prompt="be brief")
        assert router.choose(with_prompt)[:2] == (REMOTE, "rule")
        assert router.choose(ModelRequest([image]))[:2] == (VISION, "images")

    def test_logs_the_route(self, caplog: pytest.LogCaptureFixture) -> None:
        """The choice is logged with its fields in extra."""
        router = DynamicModelSelectionMiddleware(default=LOCAL)
        with caplog.at_level(logging.INFO, logger="neuron_context"):
            route(router, ModelRequest([Message.user("hi")]))
        (record,) = [r for r in caplog.records if r.msg.startswith("DynamicModel")]
        assert record.route == "local"  # type: ignore[attr-defined]
        assert record.reason == "default"  # type: ignore[attr-defined]
        assert record.model == "small"  # type: ignore[attr-defined]

    def test_in_the_agent_loop_after_stripping_answered_images(self) -> None:
        """The image turn goes to vision; once answered and stubbed, back to the default."""
        default_provider = FunctionProvider(lambda request: "text only")
        seen: list[CompletionRequest] = []

        def look(request: CompletionRequest) -> str:
            seen.append(request)
            return "A cat on a sofa."

        vision = ModelRoute("vision", provider=FunctionProvider(look), model="eyes")
        agent = create_agent(
            default_provider,
            options=AgentOptions(
                middleware=[
                    ContextEditingMiddleware(StripProcessedImagesStrategy()),
                    DynamicModelSelectionMiddleware(default=LOCAL, multimodal=vision),
                ]
            ),
        )
        photo = Image(media_type="image/png", data="aGVsbG8=")
        first = agent.run_sync([Message(role=Role.USER, content=(Text(text="What is it?"), photo))])
        second = agent.run_sync("And the colour of the sofa?")
        assert first.text == "A cat on a sofa."
        assert second.text == "text only"
        routed = [e for e in (*first.events, *second.events) if isinstance(e, ModelRouted)]
        assert [(e.route, e.reason, e.images) for e in routed] == [
            ("vision", "images", 1),
            ("local", "default", 0),
        ]
        called = [e for e in (*first.events, *second.events) if isinstance(e, ModelCalled)]
        assert [(e.provider, e.model) for e in called] == [
            ("FunctionProvider", "eyes"),
            ("FunctionProvider", "small"),
        ]
        assert default_provider.requests[0].messages[0].content[1] == Text(
            text="[image/png image, already processed]"
        )
        assert len(seen) == 1

    def test_configuration(self) -> None:
        """Routes must be ModelRoutes; names non-empty; rules callable."""
        with pytest.raises(ConfigurationError, match=r"DynamicModelSelectionMiddleware\.default"):
            DynamicModelSelectionMiddleware(default="small")  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match=r"ModelRoute\.name"):
            ModelRoute("")
        with pytest.raises(ConfigurationError, match=r"DynamicModelSelectionMiddleware\.rules"):
            DynamicModelSelectionMiddleware(rules=[3])  # type: ignore[list-item]
        with pytest.raises(
            ConfigurationError, match=r"DynamicModelSelectionMiddleware\.long_context_tokens"
        ):
            DynamicModelSelectionMiddleware(long_context_tokens=-1)
