"""Recovery from a provider's overflow error: the one recogniser, the budget it learns,
and the agent loop's compaction and single retry (scripted providers raising each
shape, and the official SDKs talking to a server on 127.0.0.1)."""

from __future__ import annotations

import pytest
from agent_support import answer
from callers_support import history
from fake_llm_server import FakeLLMServer, Flavour, Reply
from overflow_support import (
    ANTHROPIC_BODY,
    ANTHROPIC_TEXT,
    OPENAI_BODY,
    OPENAI_RESPONSES_BODY,
    anthropic_error,
    openai_error,
)

from neuron_context import (
    AgentOptions,
    CompletionRequest,
    CompletionResponse,
    MemoryStore,
    Message,
    TokenizerCounter,
    ToolResultClearingStrategy,
    create_agent,
    default_stack,
)
from neuron_context.errors import ContextOverflowError, ProviderError
from neuron_context.overflow import Overflow, context_overflow
from neuron_context.strategies import DefaultStack
from neuron_context.testing import FunctionProvider


def _chained(cause: BaseException, wrapper: BaseException) -> BaseException:
    wrapper.__cause__ = cause
    return wrapper


class TestRecogniser:
    """context_overflow: every shape, and what is not one."""

    @pytest.mark.parametrize(
        ("error", "tokens", "limit"),
        [
            pytest.param(openai_error(), 130542, 128000, id="openai-sdk"),
            pytest.param(openai_error(OPENAI_RESPONSES_BODY), None, None, id="openai-responses"),
            pytest.param(anthropic_error(), 210000, 200000, id="anthropic-sdk"),
            pytest.param(
                anthropic_error(
                    {
                        "type": "error",
                        "error": {
                            "type": "invalid_request_error",
                            "message": "input length and `max_tokens` exceed context limit: "
                            "187254 + 20000 > 200000, decrease input length or `max_tokens`",
                        },
                    }
                ),
                187254,
                180000,
                id="anthropic-with-reply",
            ),
            pytest.param(
                ProviderError(
                    f"OpenAI request failed with HTTP 400: Error code: 400 - {OPENAI_BODY}",
                    status_code=400,
                ),
                130542,
                128000,
                id="our-openai-provider",
            ),
            pytest.param(
                ProviderError(f"Anthropic request failed with HTTP 400: {ANTHROPIC_TEXT}"),
                210000,
                200000,
                id="our-anthropic-provider",
            ),
            pytest.param(
                _chained(anthropic_error(), RuntimeError("status_code: 400, model_name: x")),
                210000,
                200000,
                id="wrapped-by-a-framework",
            ),
            pytest.param(
                ValueError(
                    "400 The input token count (1234567) exceeds the maximum number of "
                    "tokens allowed (1048576)."
                ),
                1234567,
                1048576,
                id="gemini",
            ),
            pytest.param(
                RuntimeError(
                    "This model's maximum context length is 128000 tokens. However, you "
                    "requested 140000 tokens (120000 in the messages, 20000 in the "
                    "completion). Please reduce the length of the messages or completion."
                ),
                120000,
                108000,
                id="openai-with-reply",
            ),
            pytest.param(
                RuntimeError("the request exceeds the available context size, try increasing it"),
                None,
                None,
                id="llama-cpp",
            ),
            pytest.param(
                RuntimeError("ValidationException: Input is too long for requested model."),
                None,
                None,
                id="bedrock",
            ),
        ],
    )
    def test_each_shape(self, error: BaseException, tokens: int | None, limit: int | None) -> None:
        """Each provider's refusal is an overflow, with the numbers it states."""
        overflow = context_overflow(error)
        assert overflow is not None
        assert (overflow.tokens, overflow.limit) == (tokens, limit)

    @pytest.mark.parametrize(
        "error",
        [
            ProviderError(
                "Request too large for gpt-4o on tokens per min (TPM): Limit 30000, "
                "Requested 50000. Too many tokens per min.",
                status_code=429,
                retryable=True,
            ),
            openai_error({"error": {"message": "Invalid 'messages[1].role'", "code": None}}),
            RuntimeError("connection reset"),
            ValueError(""),
        ],
        ids=["rate-limit", "other-400", "connection", "empty"],
    )
    def test_other_failures_are_not(self, error: BaseException) -> None:
        """A rate limit that mentions tokens, another bad request: not an overflow."""
        assert context_overflow(error) is None


class TestBudget:
    """Overflow.budget: what the refusal teaches."""

    def test_learns_the_ratio(self) -> None:
        """Counted 100,000, the provider counted 130,000 against 128,000: the request
        may be 100,000 x 128 / 130 counted tokens, less a tenth."""
        learned = 100_000 * 128_000 // 130_000
        budget = Overflow(130_000, 128_000, "").budget(100_000, 120_000)
        assert budget == learned - int(learned * 0.1)

    def test_never_above_the_current_budget(self) -> None:
        assert Overflow(130_000, 128_000, "").budget(100_000, 50_000) == 50_000

    def test_without_numbers_cuts_a_quarter(self) -> None:
        assert Overflow(None, None, "").budget(10_000) == 7_500 - 750

    def test_limit_alone_below_the_count(self) -> None:
        assert Overflow(None, 8_000, "").budget(10_000) == 8_000 - 800


class Refusing:
    """A scripted provider refusing the first ``times`` calls with ``error``, then
    answering; it records what each call was sent (counted exactly)."""

    def __init__(self, error: BaseException, times: int = 1) -> None:
        self.error = error
        self.times = times
        self.sent: list[int] = []
        self.counter = TokenizerCounter.from_encoding("o200k_base")

    def __call__(self, request: CompletionRequest) -> CompletionResponse:
        self.sent.append(self.counter.estimate_messages(request.messages))
        if len(self.sent) <= self.times:
            raise self.error
        return answer("fixed")


SHAPES = [
    pytest.param(openai_error(), id="openai"),
    pytest.param(anthropic_error(), id="anthropic"),
    pytest.param(openai_error(OPENAI_RESPONSES_BODY), id="openai-no-numbers"),
]


class TestLoop:
    """The agent loop compacts to fit and retries once."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("error", SHAPES)
    async def test_recovers_and_keeps_the_learned_budget(self, error: BaseException) -> None:
        """Refused once: the history is compacted below what was sent, the retry
        answers, and the next run compacts to the learned budget without a refusal."""
        script = Refusing(error)
        stack = default_stack(1_000_000)  # far above what the provider accepts
        agent = create_agent(FunctionProvider(script), options=AgentOptions(context=stack))
        agent.state.messages = history(30)
        result = await agent.run("go on")
        assert result.text == "fixed"
        assert len(script.sent) == 2
        assert script.sent[1] < script.sent[0]
        assert agent.state.messages[0].text == "Read every module and fix the bug"
        learned = agent._learned
        assert isinstance(learned, DefaultStack)
        assert learned.target == stack.target  # the caller's own stack, smaller
        assert learned.max_tokens < script.sent[0]
        # A later run compacts to the learned budget before it calls: no refusal.
        script.times = 0
        agent.state.messages = [*agent.state.messages, *history(30)[1:]]
        await agent.run("and the rest")
        assert script.sent[2] <= learned.max_tokens

    @pytest.mark.anyio
    @pytest.mark.parametrize("error", SHAPES)
    async def test_second_refusal_is_a_library_error(self, error: BaseException) -> None:
        """Refused again after the retry: ContextOverflowError, the history as it was."""
        script = Refusing(error, times=2)
        agent = create_agent(
            FunctionProvider(script), options=AgentOptions(context=default_stack(1_000_000))
        )
        before = history(30)
        agent.state.messages = list(before)
        with pytest.raises(ContextOverflowError) as caught:
            await agent.run("go on")
        assert len(script.sent) == 2
        assert isinstance(caught.value, ProviderError)
        assert agent.state.messages[: len(before)] == before  # nothing compacted away
        assert agent.state.messages[len(before)] == Message.user("go on")

    @pytest.mark.anyio
    async def test_without_a_context_strategy(self) -> None:
        """An agent with no context strategy recovers with a default_stack."""
        script = Refusing(anthropic_error())
        agent = create_agent(FunctionProvider(script))
        agent.state.messages = history(30)
        assert (await agent.run("go on")).text == "fixed"
        assert script.sent[1] < script.sent[0]

    @pytest.mark.anyio
    async def test_another_strategy_keeps_its_store(self) -> None:
        """A strategy that is not a default_stack is replaced for the recovery by a
        default_stack at the learned budget that offloads to the strategy's store."""
        store = MemoryStore()
        script = Refusing(anthropic_error())
        clearing = ToolResultClearingStrategy(3, 1_000_000, store=store)
        agent = create_agent(FunctionProvider(script), options=AgentOptions(context=clearing))
        agent.state.messages = history(30)
        assert (await agent.run("go on")).text == "fixed"
        learned = agent._learned
        assert isinstance(learned, DefaultStack)
        assert learned.store is store
        # what the recovery removed is recallable, in the agent's conversation
        assert list(store.scoped(agent.state.conversation))

    @pytest.mark.anyio
    async def test_other_errors_are_not_retried(self) -> None:
        """A failure that is not an overflow propagates as it did, with no retry."""
        script = Refusing(openai_error({"error": {"message": "bad role", "code": None}}))
        agent = create_agent(FunctionProvider(script))
        with pytest.raises(ProviderError):
            await agent.run("hi")
        assert len(script.sent) == 1


OVERFLOW_BODIES = {"openai": OPENAI_BODY, "anthropic": ANTHROPIC_BODY}


class TestSDKProviders:
    """The official SDKs, refused by a server on 127.0.0.1, recovered from by the loop."""

    @pytest.mark.anyio
    async def test_loop_recovers(self, flavour: Flavour, server: FakeLLMServer) -> None:
        server.enqueue(
            Reply.json(OVERFLOW_BODIES[flavour.name], status=400),
            Reply.json(flavour.reply("fixed")),
        )
        agent = create_agent(
            flavour.make(server), options=AgentOptions(context=default_stack(1_000_000))
        )
        agent.state.messages = history(30)
        result = await agent.run("go on")
        assert result.text == "fixed"
        first, second = (len(str(r.body)) for r in server.requests)
        assert second < first
