"""What the Agents SDK sends, CallModelInputFilter accepts: items go as they came.

The SDK sends inputs that are not a conversation we would call well formed, by design: a
run whose history the server keeps sends only its new items (outputs whose calls live
on the server), reasoning items stand between calls and their outputs, and a run's own
filter may add what the SDK then sorts out. The filter repairs none of it; what it
cannot read or write back goes as the SDK built it, with a warning.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from agents import Agent, ModelResponse, RunConfig, Runner, SQLiteSession
from agents.models.interface import Model
from agents.run_config import CallModelData, ModelInputData
from agents_sdk_support import read_file, reply
from ext_support import well_formed
from hypothesis import assume, given
from hypothesis import strategies as st
from strategies import conversations, well_formed_conversations

from neuron_context import (
    ConfigurationError,
    ContextStrategy,
    Image,
    Message,
    Role,
    SlidingWindowStrategy,
    Thinking,
    ToolUse,
    default_stack,
)
from neuron_context.ext.openai_agents import (
    CallModelInputFilter,
    CompactingSession,
    from_responses_items,
    to_responses_items,
)

NEVER = SlidingWindowStrategy(1, 10**9)
"""A strategy whose trigger never fires."""
ALWAYS = SlidingWindowStrategy(1, 0)
"""A strategy that always compacts, to the newest message."""


@pytest.fixture
def anyio_backend() -> str:
    """The Agents SDK runs on asyncio only."""
    return "asyncio"


class ServerModel(Model):
    """Calls ``read_file`` twice, then answers; each response has an id, as a server's
    has; it records every input and the server state it was sent with."""

    def __init__(self) -> None:
        self.inputs: list[list[Any]] = []
        self.server: list[tuple[str | None, str | None]] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        """Record the input; reply with the next scripted output."""
        given = args[1] if len(args) > 1 else kwargs["input"]
        self.inputs.append(
            [{"role": "user", "content": given}] if isinstance(given, str) else given
        )
        self.server.append((kwargs.get("previous_response_id"), kwargs.get("conversation_id")))
        turn = len(self.inputs)
        return dataclasses.replace(reply(turn, 2), response_id=f"resp_{turn}")

    def stream_response(self, *args: Any, **kwargs: Any) -> Iterator[Any]:  # type: ignore[override]
        """Streaming is not scripted."""
        raise NotImplementedError


async def _inputs(run: dict[str, Any], input_filter: CallModelInputFilter | None) -> ServerModel:
    model = ServerModel()
    agent = Agent(name="reader", instructions="Be terse.", model=model, tools=[read_file])
    config = RunConfig(call_model_input_filter=input_filter, tracing_disabled=True)
    await Runner.run(agent, "go", run_config=config, **run)
    return model


def _call(items: list[Any], strategy: ContextStrategy = NEVER) -> ModelInputData:
    data = CallModelData(
        model_data=ModelInputData(input=items, instructions=None),
        agent=Agent(name="a"),
        context=None,
    )
    return anyio.run(CallModelInputFilter(strategy), data)


def _output(call_id: str, output: str = "out") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _call_item(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": "f", "arguments": "{}"}


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": text}


class TestServerManagedRuns:
    """A run whose history the server keeps sends only its new items."""

    @pytest.mark.anyio
    @pytest.mark.parametrize(
        "run",
        [
            {"previous_response_id": "resp_0"},
            {"auto_previous_response_id": True},
            {"conversation_id": "conv_1"},
        ],
        ids=["previous_response_id", "auto_previous_response_id", "conversation_id"],
    )
    @pytest.mark.parametrize(
        "make", [lambda: NEVER, lambda: default_stack(1_000_000)], ids=["idle", "default_stack"]
    )
    async def test_the_model_gets_what_the_sdk_built(self, run: dict[str, Any], make: Any) -> None:
        """With an idle filter, every call sends what the SDK alone sends: the outputs
        whose calls live on the server among them, none dropped."""
        alone = await _inputs(run, None)
        ours = await _inputs(run, CallModelInputFilter(make()))
        assert ours.inputs == alone.inputs
        assert ours.server == alone.server
        assert any(item.get("type") == "function_call_output" for item in ours.inputs[1])

    def test_outputs_held_by_the_server_survive_a_compaction(self) -> None:
        """Compaction works on the items after the outputs whose calls the server holds:
        those are sent first, as the very objects they were."""
        items = [_output("c1"), _output("c2"), _user("a " * 500), _user("newest")]
        sent = _call(items, ALWAYS).input
        assert len(sent) == 3
        assert all(a is b for a, b in zip(sent, [*items[:2], items[3]], strict=True))

    def test_held_outputs_after_other_items_are_left_alone(self) -> None:
        """An output answering no call of the input, after other items: what the server
        completes is not known, so the input goes as it came."""
        items = [_user("a " * 500), _output("on-server"), _user("newest")]
        sent = _call(items, ALWAYS)
        assert sent.input is items


class TestItemsAsTheyCame:
    """Items the SDK sends are read as they are and go back as they came."""

    @given(conversations())
    def test_an_idle_filter_sends_what_it_was_given(self, messages: list[Message]) -> None:
        """Well formed or not, an input the strategy leaves alone goes as the SDK built it."""
        try:
            items: list[Any] = to_responses_items(messages)
        except ConfigurationError:
            assume(False)  # a message with no Responses input form
        assert _call(items).input is items

    @given(well_formed_conversations(), st.integers(min_value=1, max_value=3))
    def test_held_outputs_go_first_whatever_is_compacted(
        self, messages: list[Message], held: int
    ) -> None:
        """Outputs whose calls the server holds are sent first, as they came, and what
        follows them is the compaction of the rest: well formed."""
        try:
            rest: list[Any] = to_responses_items(messages)
        except ConfigurationError:
            assume(False)
        outputs = [_output(f"server_{n}") for n in range(held)]
        sent = _call([*outputs, *rest], ALWAYS).input
        assert all(a is b for a, b in zip(sent[:held], outputs, strict=True))
        assert well_formed(from_responses_items(sent[held:]))

    def test_reasoning_between_calls_and_outputs(self) -> None:
        """A reasoning item between two calls stays in their assistant message: the
        conversation is well formed and goes as it came."""
        reasoning = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "t"}]}
        items = [_user("go"), _call_item("a"), reasoning, _call_item("b")]
        items += [_output("a"), _output("b")]
        assert [m.role for m in from_responses_items(items)] == [
            "user",
            "assistant",
            "tool",
            "tool",
        ]
        assert from_responses_items(items)[1].content == (
            ToolUse(id="a", name="f", input={}),
            Thinking(thinking="t"),
            ToolUse(id="b", name="f", input={}),
        )
        assert _call(items).input is items

    def test_a_malformed_input_is_not_repaired(self) -> None:
        """An output answering no call and a second answer to a call go as they came
        (the SDK and the server decide about them), whatever the strategy."""
        items = [_user("hi"), _output("gone"), _call_item("c"), _output("c"), _output("c")]
        assert _call(items).input is items

    @pytest.mark.anyio
    async def test_a_runs_own_filter_goes_first(self) -> None:
        """A run's own filter that adds a newer output for a call: ours, after it,
        changes nothing, and the SDK treats the input as it does without ours (it
        sends the newer one)."""

        def duplicate(data: CallModelData[Any]) -> ModelInputData:
            items: list[Any] = list(data.model_data.input)
            newer = [
                {**i, "output": "newer"} for i in items if isinstance(i, dict) and "output" in i
            ]
            return ModelInputData(input=items + newer, instructions=data.model_data.instructions)

        def ours(data: CallModelData[Any]) -> Any:
            return input_filter(
                dataclasses.replace(data, model_data=duplicate(data))  # ours runs after theirs
            )

        input_filter = CallModelInputFilter(NEVER)
        alone = await _inputs({}, None)
        model = ServerModel()
        agent = Agent(name="reader", instructions="Be terse.", model=model, tools=[read_file])
        config = RunConfig(call_model_input_filter=ours, tracing_disabled=True)
        await Runner.run(agent, "go", run_config=config)
        both = ServerModel()
        agent = Agent(name="reader", instructions="Be terse.", model=both, tools=[read_file])
        config = RunConfig(call_model_input_filter=duplicate, tracing_disabled=True)
        await Runner.run(agent, "go", run_config=config)
        assert model.inputs == both.inputs
        assert model.inputs != alone.inputs  # the SDK sent the newer outputs


class ImageReply(ContextStrategy):
    """Compacts to an assistant image: a message with no Responses input form."""

    def should_compact(self, messages: Any, token_count: int) -> bool:
        return True

    async def compact(self, messages: Any) -> list[Message]:
        image = Image(media_type="image/png", data="iVBORw0KGgo=")
        return [*messages[:-1], Message(role=Role.ASSISTANT, content=(image,))]

    def token_estimate(self, messages: Any) -> int:
        return 1


class TestFailuresCostNoCall:
    """What the filter cannot read or write back goes as the SDK built it, with a warning."""

    def test_an_input_it_cannot_read(self, caplog: pytest.LogCaptureFixture) -> None:
        """An item with a value of the wrong kind: the input goes as it came, and the
        warning names the item's path."""
        items: list[Any] = [_user("hi"), {**_call_item("c"), "arguments": {"a": 1}}]
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            assert _call(items, ALWAYS).input is items
        assert "cannot read the input" in caplog.text
        assert "items[1].arguments" in caplog.text

    def test_a_compaction_it_cannot_write(self, caplog: pytest.LogCaptureFixture) -> None:
        """A compaction with no Responses input form: the input goes as it came."""
        items: list[Any] = [_user("hi"), _user("again")]
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            assert _call(items, ImageReply()).input is items
        assert "cannot write the compaction back" in caplog.text

    @pytest.mark.anyio
    async def test_session_items_it_cannot_read(self, caplog: pytest.LogCaptureFixture) -> None:
        """CompactingSession returns items it cannot read as the wrapped session gave them."""
        inner = SQLiteSession("unreadable")
        try:
            items: list[Any] = [_user("hi"), {**_call_item("c"), "arguments": {"a": 1}}]
            await inner.add_items(items)
            with caplog.at_level(logging.WARNING, logger="neuron_context"):
                got = await CompactingSession(inner, ALWAYS).get_items()
            assert got == await inner.get_items()
            assert "cannot read the session's items" in caplog.text
        finally:
            inner.close()


class Unprintable(Exception):  # noqa: N818 - the model's own error, as a test double
    """An error whose text cannot be made."""

    def __str__(self) -> str:
        msg = "no text"
        raise RuntimeError(msg)


class FailingModel(Model):
    """A model whose every call fails with :class:`Unprintable`."""

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        raise Unprintable

    async def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise Unprintable
        yield  # an async generator


class TestTheModelsOwnError:
    """The wrapped model's error reaches the caller as it is."""

    @pytest.mark.anyio
    async def test_an_error_whose_text_cannot_be_made(self) -> None:
        """An exception whose ``__str__`` raises is the error the caller gets."""
        model = CallModelInputFilter(NEVER).wrap(FailingModel())
        agent = Agent(name="a", model=model)
        with pytest.raises(Unprintable):
            await Runner.run(agent, "go", run_config=RunConfig(tracing_disabled=True))

    @pytest.mark.anyio
    async def test_a_streamed_error_whose_text_cannot_be_made(self) -> None:
        """The same for a streamed run."""
        model = CallModelInputFilter(NEVER).wrap(FailingModel())
        agent = Agent(name="a", model=model)
        result = Runner.run_streamed(agent, "go", run_config=RunConfig(tracing_disabled=True))
        with pytest.raises(Unprintable):
            async for _ in result.stream_events():
                pass
