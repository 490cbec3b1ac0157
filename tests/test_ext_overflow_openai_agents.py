"""OpenAI Agents SDK: CallModelInputFilter.wrap recovers from a provider's overflow error
(a scripted model that counts more tokens than the strategy's counter and refuses what
exceeds its window, raising the official SDKs' exception classes)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from overflow_support import anthropic_overflow, openai_overflow

from neuron_context import default_stack
from neuron_context.errors import ContextOverflowError

pytest.importorskip("agents")

from agents import Agent, ModelResponse, RunConfig, Runner
from agents.models.interface import Model, ModelTracing
from agents_sdk_support import read_file, reply

from neuron_context.ext.openai_agents import CallModelInputFilter

WINDOW = 6_000
"""The model's window, in its own tokens (two characters each)."""

Refusal = Callable[[int, int], Exception]


class Windowed(Model):
    """A model refusing an input over ``window`` (0: every input), calling ``read_file``
    ``calls`` times, then answering."""

    def __init__(self, refusal: Refusal, calls: int, window: int = WINDOW) -> None:
        self.refusal, self.calls, self.window = refusal, calls, window
        self.answered = 0
        self.refused: list[int] = []

    async def get_response(  # noqa: PLR0917 - the SDK's signature
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
    ) -> ModelResponse:
        size = len(json.dumps(input, default=str)) // 2
        if size > self.window or self.window == 0:
            self.refused.append(size)
            raise self.refusal(max(size, WINDOW + 1), max(self.window, WINDOW))
        self.answered += 1
        turn = self.answered
        return reply(turn, self.calls)

    def stream_response(self, *args: Any, **kwargs: Any) -> Iterator[Any]:  # type: ignore[override]
        """Streaming is not scripted."""
        raise NotImplementedError


REFUSALS = [
    pytest.param(openai_overflow, id="openai"),
    pytest.param(anthropic_overflow, id="anthropic"),
]


async def _run(script: Windowed, compacting: CallModelInputFilter) -> Any:
    agent = Agent(
        name="reader", instructions="Be terse.", model=compacting.wrap(script), tools=[read_file]
    )
    config = RunConfig(call_model_input_filter=compacting, tracing_disabled=True)
    return await Runner.run(agent, "read the files", max_turns=30, run_config=config)


class TestCallModelInputFilterWrap:
    @pytest.mark.anyio
    @pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the SDK runs on asyncio
    @pytest.mark.parametrize("refusal", REFUSALS)
    async def test_recovers_and_learns(self, refusal: Refusal) -> None:
        """Refused once, the input is compacted and sent again; the filter keeps the
        learned budget, so the later inputs fit."""
        script = Windowed(refusal, 12)
        compacting = CallModelInputFilter(default_stack(1_000_000))
        result = await _run(script, compacting)
        assert result.final_output == "done"
        assert len(script.refused) == 1
        assert compacting.strategy.max_tokens < 1_000_000  # type: ignore[attr-defined]

    @pytest.mark.anyio
    @pytest.mark.parametrize("anyio_backend", ["asyncio"])
    @pytest.mark.parametrize("refusal", REFUSALS)
    async def test_second_refusal_is_a_library_error(self, refusal: Refusal) -> None:
        script = Windowed(refusal, 2, window=0)
        with pytest.raises(ContextOverflowError):
            await _run(script, CallModelInputFilter(default_stack(10**6)))
        assert len(script.refused) == 2
