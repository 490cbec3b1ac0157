"""Examples for ToolResultClearingStrategy (CONTRACT §3)."""

from __future__ import annotations

import gc
import pickle
import threading
import weakref
from collections.abc import Sequence

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import well_formed_conversations

from neuron_context import (
    ConfigurationError,
    Image,
    Message,
    Role,
    Text,
    TokenCounter,
    ToolResult,
    ToolResultClearingStrategy,
    ToolUse,
    validate,
)

PLACEHOLDER = "[tool result cleared]"
BIG = "x" * 400  # 100 tokens; the placeholder's 21 bytes cost 6.


def call(id_: str, name: str = "read_file", **input_: str) -> Message:
    """An assistant message calling ``name`` with ``input_``."""
    return Message.assistant(tool_uses=[ToolUse(id=id_, name=name, input=input_)])


def cleared(id_: str, *, is_error: bool = False, text: str = PLACEHOLDER) -> Message:
    """A TOOL message whose only result was cleared."""
    return Message.tool_result(id_, text, is_error=is_error)


USER = Message.user("Summarise the files.")
DONE = Message.assistant("Done.")


def history() -> list[Message]:
    """Three calls with big results; the second one failed."""
    return [
        USER,
        call("a", path="/a"),
        Message.tool_result("a", BIG),
        call("b", path="/b"),
        Message.tool_result("b", BIG, is_error=True),
        call("c", path="/c"),
        Message.tool_result("c", BIG),
        DONE,
    ]


class TestToolResultClearingStrategy:
    """ToolResultClearingStrategy."""

    @pytest.mark.anyio
    async def test_clears_all_but_the_newest(self) -> None:
        """All but the keep_recent_n newest results become the placeholder."""
        messages = history()
        output = await ToolResultClearingStrategy(1, 0).compact(messages)
        expected = list(messages)
        expected[2] = cleared("a")
        expected[4] = cleared("b", is_error=True)
        assert output == expected
        validate(output)

    @pytest.mark.anyio
    async def test_keeps_tool_use_id_and_is_error(self) -> None:
        """A cleared result keeps its tool_use_id and is_error."""
        output = await ToolResultClearingStrategy(0, 0).compact(history())
        results = [r for m in output for r in m.tool_results]
        assert [(r.tool_use_id, r.is_error) for r in results] == [
            ("a", False),
            ("b", True),
            ("c", False),
        ]
        assert all(r.content == (Text(text=PLACEHOLDER),) for r in results)

    @pytest.mark.anyio
    async def test_never_removes_a_message(self) -> None:
        """The output has as many messages as the input, with the same roles."""
        messages = history()
        output = await ToolResultClearingStrategy(0, 0).compact(messages)
        assert [m.role for m in output] == [m.role for m in messages]

    @pytest.mark.anyio
    async def test_keep_recent_n_covers_everything(self) -> None:
        """With no more results than keep_recent_n the output is equal to the input."""
        messages = history()
        output = await ToolResultClearingStrategy(3, 0).compact(messages)
        assert output == messages
        assert output is not messages

    @pytest.mark.anyio
    async def test_no_tool_results(self) -> None:
        """A conversation without tool results comes back equal."""
        assert await ToolResultClearingStrategy(0, 0).compact([USER, DONE]) == [USER, DONE]
        assert await ToolResultClearingStrategy(0, 0).compact([]) == []

    @pytest.mark.anyio
    async def test_keep_recent_n_counts_result_blocks(self) -> None:
        """keep_recent_n counts ToolResult blocks, not TOOL messages."""
        parallel = Message.assistant(
            tool_uses=[ToolUse(id=i, name="read_file") for i in ("a", "b", "c")]
        )
        answers = Message(
            role=Role.TOOL,
            content=tuple(ToolResult(tool_use_id=i, content=BIG) for i in ("a", "b", "c")),
        )
        output = await ToolResultClearingStrategy(1, 0).compact([USER, parallel, answers, DONE])
        assert output[2].tool_results == (
            ToolResult(tool_use_id="a", content=PLACEHOLDER),
            ToolResult(tool_use_id="b", content=PLACEHOLDER),
            ToolResult(tool_use_id="c", content=BIG),
        )

    @pytest.mark.anyio
    async def test_small_results_are_untouched(self) -> None:
        """A result costing no more than the placeholder is left as it is."""
        small = "y" * 24  # 6 tokens, as much as the placeholder
        messages = [USER, call("a"), Message.tool_result("a", small), call("b")]
        messages.append(Message.tool_result("b", small + "y"))  # 7 tokens
        output = await ToolResultClearingStrategy(0, 0).compact(messages)
        assert output[2] == messages[2]
        assert output[4] == cleared("b")

    @pytest.mark.anyio
    async def test_already_cleared_results_stay(self) -> None:
        """Clearing twice gives the same result as clearing once."""
        strategy = ToolResultClearingStrategy(1, 0)
        once = await strategy.compact(history())
        assert await strategy.compact(once) == once

    @pytest.mark.anyio
    async def test_image_results_are_cleared(self) -> None:
        """An image result costs more than the placeholder and is cleared."""
        image = Image(url="https://example.com/plot.png")
        messages = [USER, call("a"), Message.tool_result("a", [image]), DONE]
        output = await ToolResultClearingStrategy(0, 0).compact(messages)
        assert output[2] == cleared("a")

    @pytest.mark.anyio
    async def test_custom_placeholder(self) -> None:
        """The placeholder text is configurable."""
        output = await ToolResultClearingStrategy(2, 0, placeholder="[gone]").compact(history())
        assert output[2] == cleared("a", text="[gone]")

    @pytest.mark.anyio
    async def test_exclude_tools(self) -> None:
        """Results of excluded tools are never cleared."""
        messages = [
            USER,
            call("a", name="read_memory"),
            Message.tool_result("a", BIG),
            call("b", name="read_file"),
            Message.tool_result("b", BIG),
            DONE,
        ]
        strategy = ToolResultClearingStrategy(0, 0, exclude_tools={"read_memory"})
        output = await strategy.compact(messages)
        assert output[2] == messages[2]
        assert output[4] == cleared("b")

    @pytest.mark.anyio
    async def test_clear_tool_inputs(self) -> None:
        """With clear_tool_inputs the inputs of the cleared calls become {}."""
        messages = history()
        output = await ToolResultClearingStrategy(1, 0, clear_tool_inputs=True).compact(messages)
        assert [m.tool_uses[0].input for m in output if m.tool_uses] == [{}, {}, {"path": "/c"}]
        assert [m.tool_uses[0].id for m in output if m.tool_uses] == ["a", "b", "c"]
        assert messages[1].tool_uses[0].input == {"path": "/a"}
        validate(output)

    @pytest.mark.anyio
    async def test_inputs_kept_by_default(self) -> None:
        """Without clear_tool_inputs the calls are left as they are."""
        messages = history()
        output = await ToolResultClearingStrategy(0, 0).compact(messages)
        assert [m for m in output if m.tool_uses] == [m for m in messages if m.tool_uses]

    @pytest.mark.anyio
    async def test_min_reclaim_tokens_below(self) -> None:
        """When clearing would reclaim fewer tokens than min_reclaim_tokens nothing changes."""
        messages = history()
        # Clearing a and b reclaims 2 * (100 - 6) = 188 tokens.
        strategy = ToolResultClearingStrategy(1, 0, min_reclaim_tokens=189)
        output = await strategy.compact(messages)
        assert output == messages
        assert output is not messages

    @pytest.mark.anyio
    async def test_min_reclaim_tokens_reached(self) -> None:
        """When clearing reclaims exactly min_reclaim_tokens it clears."""
        strategy = ToolResultClearingStrategy(1, 0, min_reclaim_tokens=188)
        output = await strategy.compact(history())
        assert output[2] == cleared("a")

    @pytest.mark.anyio
    async def test_input_is_not_mutated(self) -> None:
        """The input list and its messages are left as they were."""
        messages = history()
        before = [Message(role=m.role, content=m.content) for m in messages]
        await ToolResultClearingStrategy(0, 0, clear_tool_inputs=True).compact(messages)
        assert messages == before

    @pytest.mark.anyio
    async def test_uses_its_counter(self) -> None:
        """Whether a result is small is judged by the strategy's counter."""
        messages = [USER, call("a"), Message.tool_result("a", "y" * 30), DONE]
        assert (await ToolResultClearingStrategy(0, 0).compact(messages))[2] == cleared("a")
        coarse = ToolResultClearingStrategy(0, 0, counter=TokenCounter(100.0))
        assert (await coarse.compact(messages))[2] == messages[2]

    def test_should_compact_is_strict(self) -> None:
        """should_compact is token_count > max_tokens."""
        strategy = ToolResultClearingStrategy(2, 500)
        assert strategy.should_compact([], 500) is False
        assert strategy.should_compact([], 501) is True

    def test_defaults(self) -> None:
        """max_tokens defaults to 0 and the counter to the default heuristic."""
        strategy = ToolResultClearingStrategy(2)
        assert strategy.max_tokens == 0
        assert strategy.counter == TokenCounter()
        assert strategy.placeholder == PLACEHOLDER

    def test_token_estimate_uses_the_counter(self) -> None:
        """token_estimate is the counter's estimate_messages."""
        messages = [Message.user("a" * 20)]
        strategy = ToolResultClearingStrategy(2, 0, counter=TokenCounter(2.0))
        assert strategy.token_estimate(messages) == 14

    @pytest.mark.parametrize(
        ("kwargs", "field"),
        [
            ({"keep_recent_n": -1}, "keep_recent_n"),
            ({"keep_recent_n": 1.5}, "keep_recent_n"),
            ({"max_tokens": -1}, "max_tokens"),
            ({"placeholder": None}, "placeholder"),
            ({"exclude_tools": "read_file"}, "exclude_tools"),
            ({"exclude_tools": [1]}, "exclude_tools"),
            ({"exclude_tools": 3}, "exclude_tools"),
            ({"min_reclaim_tokens": -5}, "min_reclaim_tokens"),
            ({"clear_tool_inputs": "yes"}, "clear_tool_inputs"),
            ({"counter": "heuristic"}, "counter"),
        ],
    )
    def test_bad_configuration(self, kwargs: dict[str, object], field: str) -> None:
        """Bad configuration raises ConfigurationError naming the field."""
        arguments: dict[str, object] = {"keep_recent_n": 1, **kwargs}
        with pytest.raises(ConfigurationError, match=field):
            ToolResultClearingStrategy(**arguments)  # type: ignore[arg-type]


def reference_clearing(
    messages: Sequence[Message],
    keep: int,
    *,
    placeholder: str = PLACEHOLDER,
    exclude: frozenset[str] = frozenset(),
    min_reclaim: int = 0,
) -> list[Message]:
    """The clearing rule, written out plainly (``attrs.evolve``, no cache)."""
    counter = TokenCounter()
    names: dict[str, str] = {}
    positions: list[tuple[int, int, ToolResult, str | None]] = []
    for m_index, message in enumerate(messages):
        for use in message.tool_uses:
            names[use.id] = use.name
        for b_index, block in enumerate(message.content):
            if message.role is Role.TOOL and isinstance(block, ToolResult):
                positions.append((m_index, b_index, block, names.get(block.tool_use_id)))
    blocks = (Text(text=placeholder),)
    cost_of_placeholder = counter.estimate_text(placeholder)
    replaced: dict[int, dict[int, ToolResult]] = {}
    reclaimed = 0
    for m_index, b_index, result, name in positions[: max(0, len(positions) - keep)]:
        cost = counter.estimate_content(result.content)
        if name in exclude or result.content == blocks or cost <= cost_of_placeholder:
            continue
        replaced.setdefault(m_index, {})[b_index] = attrs.evolve(result, content=blocks)
        reclaimed += cost - cost_of_placeholder
    if not replaced or reclaimed < min_reclaim:
        return list(messages)
    output = list(messages)
    for m_index, new in replaced.items():
        content = tuple(new.get(i, b) for i, b in enumerate(messages[m_index].content))
        output[m_index] = attrs.evolve(messages[m_index], content=content)
    return output


class TestClearingMatchesReference:
    """The fast path (cached cleared copies, private constructors) equals the plain rule."""

    @given(
        well_formed_conversations(max_turns=8),
        st.integers(0, 4),
        st.data(),
    )
    def test_equal_over_turns_and_copies(
        self, messages: list[Message], keep: int, data: st.DataObject
    ) -> None:
        """Each prefix of a growing history, twice, and a fresh copy: equal to the rule."""
        placeholder = data.draw(st.sampled_from([PLACEHOLDER, "[gone]", "cleared: " + "z" * 40]))
        min_reclaim = data.draw(st.integers(0, 60))
        exclude_some = data.draw(st.booleans())
        used = sorted({use.name for message in messages for use in message.tool_uses})
        exclude = frozenset(used[: len(used) // 2]) if exclude_some else frozenset()
        strategy = ToolResultClearingStrategy(
            keep, 0, placeholder=placeholder, exclude_tools=exclude, min_reclaim_tokens=min_reclaim
        )
        cuts = sorted(data.draw(st.lists(st.integers(0, len(messages)), max_size=3)))
        for size in [*cuts, len(messages), len(messages)]:
            prefix = messages[:size]
            expected = reference_clearing(
                prefix, keep, placeholder=placeholder, exclude=exclude, min_reclaim=min_reclaim
            )
            output = strategy.apply(prefix)
            assert output == expected
            assert [type(b) for m in output for b in m.content] == [
                type(b) for m in expected for b in m.content
            ]
            if output:
                validate(output)
        copied = pickle.loads(pickle.dumps(messages))
        assert strategy.apply(copied) == strategy.apply(messages)

    def test_cleared_copies_do_not_keep_originals_alive(self) -> None:
        """A history the caller dropped is freed although its cleared copies were cached."""
        messages = history()
        messages[2] = Message.tool_result("a", "y" * 400)
        probe = weakref.ref(messages[2])
        output = ToolResultClearingStrategy(0, 0).apply(messages)
        assert output[2].tool_results[0].text == PLACEHOLDER
        del messages, output
        gc.collect()
        assert probe() is None

    def test_one_strategy_shared_by_threads(self) -> None:
        """Threads clearing different growing histories with one strategy get the rule's output."""
        strategy = ToolResultClearingStrategy(1, 0)
        failures: list[str] = []

        def agent(name: str) -> None:
            messages = [Message.user("go")]
            for turn in range(40):
                messages += [call(f"{name}{turn}"), Message.tool_result(f"{name}{turn}", BIG)]
                if strategy.apply(messages) != reference_clearing(messages, 1):
                    failures.append(f"{name} at {turn}")

        threads = [threading.Thread(target=agent, args=(name,)) for name in "abcd"]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
