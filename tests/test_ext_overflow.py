"""Each adapter recovers from a provider's overflow error: a scripted model that counts
more tokens than the strategy's counter (as Claude's tokenizer does against o200k) and
refuses what exceeds its window, with the official SDKs' exception classes."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from overflow_support import anthropic_overflow, openai_overflow

from neuron_context import default_stack
from neuron_context.errors import ContextOverflowError

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_support import read_file, script
from pydantic import Field

from neuron_context.ext.langchain import ContextMiddleware

WINDOW = 6_000
"""The model's window, in its own tokens (two characters each: far more than o200k
counts for the files below)."""

Refusal = Callable[[int, int], Exception]


def _size(messages: list[BaseMessage]) -> int:
    """The model's own count: two characters a token."""
    return sum(len(str(m.content)) for m in messages) // 2


class WindowedChatModel(GenericFakeChatModel):
    """A scripted chat model that refuses a request over its window as its provider
    would, recording what it was sent and what it refused."""

    refusal: Any = None
    window: int = WINDOW
    sizes: list[int] = Field(default_factory=list)
    refused: list[int] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> WindowedChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self._refuse(messages)
        return super()._generate(messages, stop, run_manager, **kwargs)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """Streamed, as one chunk (the fake model's own stream drops tool calls):
        refused before it, as a provider refuses a size."""
        message = self._generate(messages, stop, run_manager, **kwargs).generations[0].message
        calls = getattr(message, "tool_calls", [])
        chunk = AIMessageChunk(
            content=message.content,
            tool_call_chunks=[
                tool_call_chunk(
                    name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=index
                )
                for index, call in enumerate(calls)
            ],
        )
        yield ChatGenerationChunk(message=chunk)

    def _refuse(self, messages: list[BaseMessage]) -> None:
        size = _size(messages)
        self.sizes.append(size)
        if size > self.window:
            self.refused.append(size)
            raise self.refusal(size, self.window)


REFUSALS = [
    pytest.param(openai_overflow, id="openai"),
    pytest.param(anthropic_overflow, id="anthropic"),
]


class TestLangChain:
    """ContextMiddleware wraps the model call: refused, it compacts and sends again."""

    @pytest.mark.parametrize("persist", [False, True])
    @pytest.mark.parametrize("refusal", REFUSALS)
    def test_recovers_and_learns(self, refusal: Refusal, persist: bool) -> None:
        """A stack whose budget is far above the model's window: the first refusal is
        recovered from, and the learned budget keeps the later calls within the window."""
        model = WindowedChatModel(messages=script(12), refusal=refusal)
        middleware = ContextMiddleware(default_stack(1_000_000), persist=persist)
        agent = create_agent(model, [read_file], middleware=[middleware])
        result = agent.invoke({"messages": [{"role": "user", "content": "read the files"}]})
        assert result["messages"][-1].content == "done"
        assert len(model.refused) == 1  # once: the budget learned holds after it
        assert len(result["messages"]) == 2 + 2 * 12 + 0  # the state keeps every message

    @pytest.mark.anyio
    @pytest.mark.parametrize("anyio_backend", ["asyncio"])  # LangGraph runs on asyncio
    @pytest.mark.parametrize("refusal", REFUSALS)
    async def test_recovers_async(self, refusal: Refusal) -> None:
        model = WindowedChatModel(messages=script(12), refusal=refusal)
        agent = create_agent(
            model, [read_file], middleware=[ContextMiddleware(default_stack(10**6))]
        )
        result = await agent.ainvoke({"messages": [{"role": "user", "content": "read the files"}]})
        assert result["messages"][-1].content == "done"
        assert len(model.refused) == 1

    @pytest.mark.parametrize("refusal", REFUSALS)
    def test_recovers_streamed(self, refusal: Refusal) -> None:
        """Streamed (the model streams its tokens to the caller): a refusal before the
        first chunk is recovered from as an invoked call's is."""
        model = WindowedChatModel(messages=script(12), refusal=refusal)
        agent = create_agent(
            model, [read_file], middleware=[ContextMiddleware(default_stack(10**6))]
        )
        question: Any = {"messages": [{"role": "user", "content": "read the files"}]}
        chunks = list(agent.stream(question, stream_mode="messages"))
        assert any(getattr(chunk, "content", "") == "done" for chunk, _ in chunks)
        assert len(model.refused) == 1

    @pytest.mark.parametrize("refusal", REFUSALS)
    def test_a_window_not_even_the_task_fits(self, refusal: Refusal) -> None:
        """A refusal whose window not even the task fits: ContextOverflowError at once
        (the refusal is evidence, not an order: nothing is sent without the task), with
        the caller's history untouched."""
        model = WindowedChatModel(messages=script(2), refusal=refusal, window=1)
        agent = create_agent(
            model, [read_file], middleware=[ContextMiddleware(default_stack(10**6))]
        )
        question: Any = {"messages": [{"role": "user", "content": "read the files"}]}
        with pytest.raises(ContextOverflowError):
            agent.invoke(question)
        assert len(model.refused) == 1
        assert question == {"messages": [{"role": "user", "content": "read the files"}]}

    @pytest.mark.parametrize("refusal", REFUSALS)
    def test_second_refusal_is_a_library_error(self, refusal: Refusal) -> None:
        """Refused again after one recompaction and retry: ContextOverflowError."""
        model = ShrinkingChatModel(messages=script(12), refusal=refusal)
        agent = create_agent(
            model, [read_file], middleware=[ContextMiddleware(default_stack(10**6))]
        )
        question: Any = {"messages": [{"role": "user", "content": "read the files"}]}
        with pytest.raises(ContextOverflowError):
            agent.invoke(question)
        assert len(model.refused) == 2


class ShrinkingChatModel(WindowedChatModel):
    """A model whose window shrinks to nothing after its first refusal."""

    def _refuse(self, messages: list[BaseMessage]) -> None:
        if self.refused:
            self.window = 1
        super()._refuse(messages)
