"""The provider interface values and ProviderError (CONTRACT §5, §6)."""

from __future__ import annotations

import math

import attrs
import pytest

from neuron_context import (
    CompletionRequest,
    CompletionResponse,
    ConfigurationError,
    Message,
    NeuronContextError,
    Provider,
    StopReason,
    TokenUsage,
    ToolDefinition,
    ToolUse,
)
from neuron_context.errors import ProviderError


class TestStopReason:
    """StopReason."""

    def test_values(self) -> None:
        """The four reasons have the contract's string values."""
        assert [r.value for r in StopReason] == [
            "end_turn",
            "tool_use",
            "max_tokens",
            "stop_sequence",
        ]

    def test_is_a_str(self) -> None:
        """A reason compares equal to its plain string."""
        assert str(StopReason.MAX_TOKENS) == "max_tokens"
        assert StopReason("max_tokens") is StopReason.MAX_TOKENS
        assert isinstance(StopReason.END_TURN, str)


class TestCompletionRequest:
    """CompletionRequest."""

    def test_defaults(self) -> None:
        """Only the messages are required; they are stored as a tuple."""
        messages = [Message.user("hi")]
        request = CompletionRequest(messages)
        assert request.messages == (Message.user("hi"),)
        assert isinstance(request.messages, tuple)
        assert (request.system, request.tools, request.model) == (None, (), None)
        assert (request.max_tokens, request.temperature) == (None, None)

    def test_all_fields(self) -> None:
        """Every field is kept."""
        tool = ToolDefinition(name="get_time")
        request = CompletionRequest(
            (Message.user("hi"),),
            system="Be brief.",
            tools=[tool],
            model="m",
            max_tokens=10,
            temperature=0.5,
        )
        assert request.tools == (tool,)
        assert (request.system, request.model, request.max_tokens) == ("Be brief.", "m", 10)
        assert request.temperature == 0.5

    def test_options_are_keyword_only(self) -> None:
        """Everything after the messages is keyword-only."""
        with pytest.raises(TypeError):
            CompletionRequest([], "system")  # type: ignore[call-arg]

    def test_frozen(self) -> None:
        """A request cannot be changed."""
        request = CompletionRequest([])
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            request.model = "x"  # type: ignore[misc]

    @pytest.mark.parametrize(
        ("kwargs", "field"),
        [
            ({"messages": Message.user("hi")}, "messages"),
            ({"messages": "hi"}, "messages"),
            ({"messages": [Message.user("hi"), "hi"]}, "messages"),
            ({"messages": 3}, "messages"),
            ({"messages": [], "system": 3}, "system"),
            ({"messages": [], "model": 3}, "model"),
            ({"messages": [], "tools": ["get_time"]}, "tools"),
            ({"messages": [], "tools": ToolDefinition(name="t")}, "tools"),
            ({"messages": [], "max_tokens": 0}, "max_tokens"),
            ({"messages": [], "max_tokens": True}, "max_tokens"),
            ({"messages": [], "max_tokens": 1.5}, "max_tokens"),
            ({"messages": [], "temperature": -0.1}, "temperature"),
            ({"messages": [], "temperature": math.nan}, "temperature"),
            ({"messages": [], "temperature": "hot"}, "temperature"),
        ],
    )
    def test_bad_values_name_the_field(self, kwargs: dict[str, object], field: str) -> None:
        """Bad values raise ConfigurationError naming the field."""
        with pytest.raises(ConfigurationError, match=rf"CompletionRequest\.{field}"):
            CompletionRequest(**kwargs)  # type: ignore[arg-type]


class TestCompletionResponse:
    """CompletionResponse."""

    def test_plain_string_stop_reason(self) -> None:
        """A plain string stop reason becomes a StopReason."""
        response = CompletionResponse(Message.assistant("hi"), stop_reason="max_tokens")
        assert response.stop_reason is StopReason.MAX_TOKENS

    def test_unknown_stop_reason(self) -> None:
        """An unknown stop reason is a ConfigurationError naming the field."""
        with pytest.raises(ConfigurationError, match=r"CompletionResponse\.stop_reason"):
            CompletionResponse(Message.assistant("hi"), stop_reason="length")

    def test_text_and_tool_uses(self) -> None:
        """``text`` and ``tool_uses`` read the message."""
        use = ToolUse(id="c1", name="get_time")
        message = Message.assistant("one", tool_uses=[use])
        response = CompletionResponse(message, stop_reason=StopReason.TOOL_USE)
        assert response.text == "one"
        assert response.tool_uses == (use,)
        assert response.usage is None

    def test_usage(self) -> None:
        """The usage is kept."""
        usage = TokenUsage(3, 4)
        response = CompletionResponse(Message.assistant("x"), stop_reason="end_turn", usage=usage)
        assert response.usage == TokenUsage(input_tokens=3, output_tokens=4)

    def test_what_the_provider_reported(self) -> None:
        """The finish reason as the provider said it, the model and the reply's id are
        optional, and kept beside the mapped stop reason."""
        response = CompletionResponse(
            Message.assistant("x"),
            stop_reason="end_turn",
            finish_reason="stop",
            model="gpt-4.1-2025-04-14",
            response_id="chatcmpl-1",
        )
        assert response.stop_reason is StopReason.END_TURN
        assert (response.finish_reason, response.model, response.response_id) == (
            "stop",
            "gpt-4.1-2025-04-14",
            "chatcmpl-1",
        )
        bare = CompletionResponse(Message.assistant("x"), stop_reason="end_turn")
        assert (bare.finish_reason, bare.model, bare.response_id) == (None, None, None)

    @pytest.mark.parametrize(
        ("kwargs", "field"),
        [
            *(
                ({"message": Message.assistant("x"), "stop_reason": "end_turn", name: 5}, name)
                for name in ("finish_reason", "model", "response_id")
            ),
            ({"message": "hi", "stop_reason": "end_turn"}, "message"),
            ({"message": Message.user("hi"), "stop_reason": "end_turn"}, "message"),
            (
                {"message": Message.assistant("x"), "stop_reason": "end_turn", "usage": (1, 2)},
                "usage",
            ),
        ],
    )
    def test_bad_values_name_the_field(self, kwargs: dict[str, object], field: str) -> None:
        """Bad values raise ConfigurationError naming the field."""
        with pytest.raises(ConfigurationError, match=rf"CompletionResponse\.{field}"):
            CompletionResponse(**kwargs)  # type: ignore[arg-type]

    def test_stop_reason_is_required(self) -> None:
        """The stop reason has no default."""
        with pytest.raises(TypeError):
            CompletionResponse(Message.assistant("x"))  # type: ignore[call-arg]


class TestTokenUsage:
    """TokenUsage."""

    def test_total(self) -> None:
        """The total is the sum."""
        assert TokenUsage(input_tokens=10, output_tokens=5).total_tokens == 15

    @pytest.mark.parametrize("value", [-1, 1.0, True, None])
    def test_bad_counts(self, value: object) -> None:
        """Counts are non-negative ints, named on failure."""
        with pytest.raises(ConfigurationError, match=r"TokenUsage\.output_tokens"):
            TokenUsage(1, value)  # type: ignore[arg-type]


class TestProvider:
    """Provider."""

    def test_is_abstract(self) -> None:
        """A provider without ``complete`` cannot be built."""

        class Incomplete(Provider):
            pass

        with pytest.raises(TypeError):
            Incomplete()  # type: ignore[abstract]

    @pytest.mark.anyio
    async def test_subclass(self) -> None:
        """A subclass implementing ``complete`` answers requests."""

        class Echo(Provider):
            async def complete(self, request: CompletionRequest) -> CompletionResponse:
                return CompletionResponse(
                    Message.assistant(request.messages[-1].text), stop_reason="end_turn"
                )

        response = await Echo().complete(CompletionRequest([Message.user("ping")]))
        assert response.text == "ping"


class TestProviderError:
    """ProviderError."""

    def test_defaults(self) -> None:
        """A bare error is not retryable and has no status or retry-after."""
        error = ProviderError("boom")
        assert isinstance(error, NeuronContextError)
        assert str(error) == "boom"
        assert (error.retryable, error.status_code, error.retry_after) == (False, None, None)

    def test_fields(self) -> None:
        """The context is kept."""
        error = ProviderError("rate limited", retryable=True, status_code=429, retry_after=2.5)
        assert (error.retryable, error.status_code, error.retry_after) == (True, 429, 2.5)
