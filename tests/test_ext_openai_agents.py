"""neuron_context.ext.openai_agents: items, the input filter and the session in real runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest
from agents import (
    Agent,
    ModelResponse,
    ModelSettings,
    RunConfig,
    Runner,
    SessionSettings,
    SQLiteSession,
    Tool,
    TResponseInputItem,
)
from agents.models.interface import Model, ModelTracing
from agents.run_config import CallModelData, ModelInputData
from agents_sdk_support import read_file, reply
from ext_support import compaction, one_result_per_message, stack, well_formed
from hypothesis import given
from strategies import Case, cases, strategy_stacks, well_formed_conversations
from transcripts import load_transcript, requires_transcripts, transcript_paths

from neuron_context import (
    Compaction,
    ConfigurationError,
    ContentBlock,
    ContextStrategy,
    Document,
    Image,
    Message,
    RedactedThinking,
    Role,
    SlidingWindowStrategy,
    Text,
    Thinking,
    TokenCounter,
    ToolResult,
    ToolUse,
    default_stack,
)
from neuron_context.ext.openai_agents import (
    CallModelInputFilter,
    CompactingSession,
    from_responses_items,
    to_responses_items,
)
from neuron_context.formats import RAW_ARGUMENTS

STACKS = pytest.mark.parametrize("make", [stack, default_stack], ids=["composite", "default_stack"])
"""The long runs run both the hand-built composite and the recommended stack."""

COUNTER = TokenCounter()
BUDGET = 3_000
INSTRUCTIONS = "Be terse."


@pytest.fixture
def anyio_backend() -> str:
    """The Agents SDK runs on asyncio only."""
    return "asyncio"


def _expressible_block(block: ContentBlock) -> ContentBlock:
    if isinstance(block, Image):
        return attrs.evolve(
            block, width=None, height=None, media_type=block.media_type if block.data else None
        )
    if isinstance(block, Document):
        if block.data is None and block.url is None:
            return Text(text=block.text or "")
        media_type = block.media_type if block.data is not None else "application/pdf"
        return attrs.evolve(block, media_type=media_type, text=None, pages=None)
    if isinstance(block, ToolResult):
        items = tuple(_expressible_block(item) for item in block.content)
        return ToolResult(tool_use_id=block.tool_use_id, content=items)
    return block


def expected(messages: list[Message]) -> list[Message]:
    """What a round trip through Responses items gives (the documented losses)."""
    out: list[Message] = []
    for message in one_result_per_message(messages):
        content = tuple(_expressible_block(block) for block in message.content)
        previous = out[-1] if out else None
        if (
            previous is not None
            and previous.role is Role.ASSISTANT
            and message.role is Role.ASSISTANT
            and content
            and all(isinstance(b, ToolUse) for b in content)
        ):
            out[-1] = Message(role=Role.ASSISTANT, content=previous.content + content)
        else:
            out.append(Message(role=message.role, content=content))
    return out


class TestConversion:
    """from_responses_items and to_responses_items."""

    @given(well_formed_conversations())
    def test_round_trip(self, messages: list[Message]) -> None:
        """Our messages survive Responses items, with the documented losses only."""
        assert from_responses_items(to_responses_items(messages)) == expected(messages)

    @pytest.mark.parametrize("path", transcript_paths(), ids=lambda p: p.name)
    @requires_transcripts
    def test_transcripts_round_trip(self, path: Path) -> None:
        """Each shared transcript converts to Responses items and back unchanged."""
        messages = load_transcript(path)
        assert from_responses_items(to_responses_items(messages)) == expected(messages)

    def test_items(self) -> None:
        """Each block becomes the item the Responses API expects."""
        messages = [
            Message.system("be brief"),
            Message.user("hi"),
            Message(
                role=Role.ASSISTANT,
                content=(
                    Thinking(thinking="plan", signature="enc"),
                    Text(text="looking"),
                    ToolUse(id="c1", name="ls", input={"d": "."}),
                ),
            ),
            Message.tool_result("c1", "a.py"),
        ]
        assert to_responses_items(messages) == [
            {"type": "message", "role": "system", "content": "be brief"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "plan"}],
                "encrypted_content": "enc",
            },
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "looking", "annotations": []}],
            },
            {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": '{"d":"."}'},
            {"type": "function_call_output", "call_id": "c1", "output": "a.py"},
        ]

    def test_sdk_items(self) -> None:
        """Items as the SDK stores them (easy messages, ids, statuses) read as ours."""
        items: list[dict[str, Any]] = [
            {"role": "developer", "content": "rules"},
            {"role": "user", "content": "[Summary of earlier conversation]\nso far"},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "blob"},
            {
                "type": "function_call",
                "call_id": "c1",
                "name": "f",
                "arguments": "{oops",
                "id": "fc",
            },
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": [
                    {
                        "type": "input_image",
                        "image_url": "data:image/png;base64,AAAA",
                        "detail": "auto",
                    }
                ],
            },
        ]
        assert from_responses_items(items) == [
            Message.system("rules"),
            Message(role=Role.USER, content=(Compaction(content="so far"),)),
            Message(
                role=Role.ASSISTANT,
                content=(
                    RedactedThinking(data="blob"),
                    ToolUse(id="c1", name="f", input={RAW_ARGUMENTS: "{oops"}),
                ),
            ),
            Message.tool_result("c1", [Image(media_type="image/png", data="AAAA")]),
        ]

    def test_raw_arguments_go_back_verbatim(self) -> None:
        """Arguments kept raw are sent back as they came."""
        use = ToolUse(id="c1", name="f", input={RAW_ARGUMENTS: "{oops"})
        (item,) = to_responses_items([Message.assistant(tool_uses=[use])])
        assert item["arguments"] == "{oops"

    def test_raw_arguments_that_hold_an_object_round_trip(self) -> None:
        """A `_raw` string that is itself a JSON object comes back as it was, as through
        formats.to_openai / from_openai (one rule for both)."""
        use = ToolUse(id="c1", name="f", input={RAW_ARGUMENTS: '{"a":1}'})
        messages = [Message.user("go"), Message.assistant(tool_uses=[use])]
        assert from_responses_items(to_responses_items(messages)) == messages

    def test_an_assistant_image_has_no_form(self) -> None:
        """An image in an assistant message is a ConfigurationError, not dropped."""
        message = Message(role=Role.ASSISTANT, content=(Image(url="https://x.test/a.png"),))
        with pytest.raises(ConfigurationError, match="Image block"):
            to_responses_items([message])

    def test_documents(self) -> None:
        """Documents are input_file parts (data or URL); a text-only one is text."""
        message = Message(
            role=Role.USER,
            content=(
                Document(media_type="application/pdf", data="JVBERi0="),
                Document(media_type="application/pdf", url="https://example.com/a.pdf"),
                Document(media_type="text/plain", text="notes"),
            ),
        )
        (item,) = to_responses_items([message])
        assert [part["type"] for part in item["content"]] == [
            "input_file",
            "input_file",
            "input_text",
        ]


class ScriptedModel(Model):
    """A Model calling ``read_file`` ``calls`` times, then answering; it records its input."""

    def __init__(self, calls: int) -> None:
        self.calls = calls
        self.requests: list[list[TResponseInputItem]] = []
        self.instructions: list[str | None] = []

    async def get_response(  # noqa: PLR0917 - the SDK's signature
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: Any,
        handoffs: list[Any],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: Any = None,
    ) -> ModelResponse:
        """Record the input; reply with the next scripted output."""
        self.requests.append(
            [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        )
        self.instructions.append(system_instructions)
        turn = len(self.requests)
        return reply(turn, self.calls)

    def stream_response(self, *args: Any, **kwargs: Any) -> Iterator[Any]:  # type: ignore[override]
        """Streaming is not scripted."""
        raise NotImplementedError


def _agent(model: ScriptedModel) -> Agent[None]:
    return Agent(name="reader", instructions=INSTRUCTIONS, model=model, tools=[read_file])


def _config(strategy: Any) -> RunConfig:
    return RunConfig(call_model_input_filter=CallModelInputFilter(strategy), tracing_disabled=True)


class TestCallModelInputFilter:
    """CallModelInputFilter in Runner.run."""

    @pytest.mark.anyio
    @STACKS
    async def test_long_run_stays_within_budget(
        self, make: Callable[[int], ContextStrategy]
    ) -> None:
        """Twenty large function outputs later, every input fits and is well formed."""
        model = ScriptedModel(20)
        strategy = make(BUDGET)
        result = await Runner.run(_agent(model), "go", max_turns=30, run_config=_config(strategy))
        assert result.final_output == "done"
        assert len(model.requests) == 21
        for request in model.requests:
            ours = from_responses_items(request)
            assert well_formed(ours)
            sent = [Message.system(INSTRUCTIONS), *ours]
            assert strategy.token_estimate(sent) <= BUDGET  # as the strategy counts
        assert model.instructions[-1] == INSTRUCTIONS
        # The run keeps the whole history: the filter edits only what the model is sent.
        history = from_responses_items(result.to_input_list())
        assert COUNTER.estimate_messages(history) > 20_000

    @pytest.mark.anyio
    async def test_kept_items_are_the_originals(self) -> None:
        """Items the strategy keeps are the SDK's own objects; cleared outputs are copies."""
        calls: list[tuple[list[Any], list[Any]]] = []
        input_filter = CallModelInputFilter(stack(BUDGET))

        async def recording(data: CallModelData[Any]) -> ModelInputData:
            given = list(data.model_data.input)
            result = await input_filter(data)
            calls.append((given, list(result.input)))
            return result

        config = RunConfig(call_model_input_filter=recording, tracing_disabled=True)
        await Runner.run(_agent(ScriptedModel(6)), "go", run_config=config)
        given, sent = calls[-1]
        assert len(sent) == len(given)
        kept = [
            (a, b) for a, b in zip(given, sent, strict=True) if a.get("output") == b.get("output")
        ]
        assert all(a is b for a, b in kept)
        cleared = [b for b in sent if b.get("output") == "[tool result cleared]"]
        assert cleared
        assert all(b.keys() == a.keys() for a, b in zip(given, sent, strict=True))

    @pytest.mark.anyio
    async def test_window_keeps_pairs(self) -> None:
        """A tight window never sends an output without its call."""
        model = ScriptedModel(5)
        await Runner.run(_agent(model), "go", run_config=_config(SlidingWindowStrategy(3, 0)))
        assert all(well_formed(from_responses_items(r)) for r in model.requests)

    @given(cases(strategy_stacks))
    def test_sends_the_strategys_compaction(self, case: Case[ContextStrategy]) -> None:
        """What it sends reads as exactly what the strategy makes of the input."""
        items: list[Any] = to_responses_items(case.messages)
        ours = from_responses_items(items)
        strategy = case.strategy
        expected = (
            compaction(strategy, ours)
            if strategy.should_compact(ours, strategy.token_estimate(ours))
            else ours
        )
        data = CallModelData(
            model_data=ModelInputData(input=items, instructions=None),
            agent=Agent(name="a"),
            context=None,
        )
        sent = anyio.run(CallModelInputFilter(strategy), data)

        # As items, consecutive assistant messages read back as one (a held-out pending
        # call after a stripped assistant message, say), and an empty assistant message
        # the input held is sent as it came: compare what the items say.
        # (An empty assistant message item between two assistant messages keeps them
        # apart when read back, so consecutive assistant messages are compared as one.)
        def said(items: list[Any]) -> list[Message]:
            out: list[Message] = []
            for message in from_responses_items(items):
                if not message.content:
                    continue
                if out and out[-1].role is Role.ASSISTANT and message.role is Role.ASSISTANT:
                    out[-1] = attrs.evolve(out[-1], content=(*out[-1].content, *message.content))
                else:
                    out.append(message)
            return out

        assert said(sent.input) == said(to_responses_items(expected))

    def test_rejects_a_non_strategy(self) -> None:
        """The strategy must be a ContextStrategy."""
        with pytest.raises(ConfigurationError, match=r"CallModelInputFilter\.strategy"):
            CallModelInputFilter("window")  # type: ignore[arg-type]


class TestCompactingSession:
    """CompactingSession around the SDK's SQLiteSession."""

    @pytest.mark.anyio
    async def test_compacts_what_it_returns(self) -> None:
        """The wrapped session keeps everything; get_items returns a compaction that fits."""
        inner = SQLiteSession("s1")
        try:
            session = CompactingSession(inner, stack(BUDGET))
            messages = [Message.user("go")]
            for turn in range(8):
                use = ToolUse(id=f"c{turn}", name="read_file", input={})
                messages += [
                    Message.assistant(tool_uses=[use]),
                    Message.tool_result(f"c{turn}", "y" * 4_000),
                ]
            await session.add_items(to_responses_items(messages))  # type: ignore[arg-type]
            compacted = from_responses_items(await session.get_items())
            assert well_formed(compacted)
            assert COUNTER.estimate_messages(compacted) <= BUDGET
            assert len(await inner.get_items()) == 17
            assert session.session_id == "s1"
        finally:
            inner.close()

    @pytest.mark.anyio
    async def test_a_limit_cut_goes_as_the_sdk_completes_it(self, tmp_path: Path) -> None:
        """An item limit that cuts a call from its output: the items come back as the
        session gave them (the SDK drops the orphaned output itself when it prepares the
        run's input), so a run sends what it sends with the bare session. (Issue 35: an
        adapter repairs nothing the framework completes; this session used to drop the
        output itself.)"""
        use = ToolUse(id="c1", name="read_file", input={})
        messages = [Message.user("go"), Message.assistant(tool_uses=[use])]
        messages += [Message.tool_result("c1", "x"), Message.assistant("done")]
        sent: list[list[TResponseInputItem]] = []
        for wrap in (False, True):
            inner = SQLiteSession("s3", tmp_path / f"{wrap}.db")
            try:
                session: Any = CompactingSession(inner, stack(1_000_000)) if wrap else inner
                await session.add_items(to_responses_items(messages))
                if wrap:
                    items = await session.get_items(limit=2)
                    assert items == await inner.get_items(limit=2)  # as given
                    assert from_responses_items(items)[0].is_tool  # the cut output
                model = ScriptedModel(0)
                config = RunConfig(tracing_disabled=True, session_settings=SessionSettings(limit=2))
                await Runner.run(_agent(model), "next", session=session, run_config=config)
                sent.append(model.requests[-1])
            finally:
                inner.close()
        assert sent[0] == sent[1]
        assert not from_responses_items(sent[1])[0].is_tool  # the SDK dropped the output

    @pytest.mark.anyio
    async def test_in_a_run(self) -> None:
        """A run with the session sees the compacted history and stores the new items."""
        inner = SQLiteSession("s2")
        try:
            session = CompactingSession(inner, stack(BUDGET))
            model = ScriptedModel(4)
            config = RunConfig(tracing_disabled=True)
            await Runner.run(_agent(model), "first", session=session, run_config=config)
            model.calls, model.requests = 0, []
            await Runner.run(_agent(model), "second", session=session, run_config=config)
            sent = from_responses_items(model.requests[-1])
            assert well_formed(sent)
            assert COUNTER.estimate_messages(sent) <= BUDGET + 100
            assert await session.pop_item() is not None
            await session.clear_session()
            assert await inner.get_items() == []
        finally:
            inner.close()
