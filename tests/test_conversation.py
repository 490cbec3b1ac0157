"""Examples for conversation validation, repair and structure (CONTRACT §1)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from neuron_context import (
    Compaction,
    InvalidConversationError,
    Message,
    Role,
    ToolResult,
    ToolUse,
    repair,
    validate,
)
from neuron_context.strategies import (
    Exchange,
    Structure,
)

INTERRUPTED = "[no result: the call was interrupted]"


def call(*ids: str, text: str = "") -> Message:
    """An assistant message calling ``get_time`` once per id."""
    return Message.assistant(text, tool_uses=[ToolUse(id=i, name="get_time") for i in ids])


def result(*ids: str, text: str = "ok") -> Message:
    """A TOOL message answering each id."""
    return Message(
        role=Role.TOOL,
        content=tuple(ToolResult(tool_use_id=i, content=text) for i in ids),
    )


def interrupted(*ids: str) -> Message:
    """The TOOL message repair adds to close dangling calls."""
    return Message(
        role=Role.TOOL,
        content=tuple(ToolResult(tool_use_id=i, content=INTERRUPTED, is_error=True) for i in ids),
    )


SYSTEM = Message.system("You are helpful.")
USER = Message.user("What time is it?")
DONE = Message.assistant("It is noon.")

WELL_FORMED: dict[str, list[Message]] = {
    "empty": [],
    "text only": [SYSTEM, USER, DONE],
    "one call": [USER, call("a"), result("a"), DONE],
    "parallel out of order in one message": [USER, call("a", "b"), result("b", "a"), DONE],
    "parallel over several tool messages": [
        SYSTEM,
        USER,
        call("a", "b", "c"),
        result("c"),
        result("a"),
        result("b"),
        DONE,
    ],
    "system between call and result": [USER, call("a"), Message.system("note"), result("a"), DONE],
    "trailing call still running": [USER, call("a"), result("a"), call("b")],
    "trailing call partly answered": [USER, call("a", "b"), result("b")],
    "trailing call then system": [USER, call("a"), Message.system("note")],
    "ids reused by a later exchange": [
        USER,
        call("a"),
        result("a"),
        Message.user("again"),
        call("a"),
        result("a"),
        DONE,
    ],
    "ids reused by back-to-back exchanges": [USER, call("a"), result("a"), call("a"), result("a")],
}


class TestValidate:
    """validate()."""

    @pytest.mark.parametrize("messages", WELL_FORMED.values(), ids=WELL_FORMED.keys())
    def test_well_formed(self, messages: list[Message]) -> None:
        """A well-formed conversation passes."""
        validate(messages)

    def test_orphan_result(self) -> None:
        """A result answering no call of its exchange is named."""
        with pytest.raises(InvalidConversationError, match="orphan") as info:
            validate([USER, call("a"), result("a"), result("orphan")])
        assert info.value.ids == ("orphan",)

    def test_orphan_result_before_any_call(self) -> None:
        """A result before any assistant message is an orphan."""
        with pytest.raises(InvalidConversationError, match="x1") as info:
            validate([result("x1"), USER])
        assert info.value.ids == ("x1",)

    def test_result_after_a_user_message(self) -> None:
        """A result after the next user message no longer answers the call."""
        with pytest.raises(InvalidConversationError, match="late") as info:
            validate([USER, call("late"), result("late"), Message.user("next"), result("late")])
        assert info.value.ids == ("late",)

    def test_result_answering_an_older_exchange(self) -> None:
        """A result must answer the nearest preceding assistant message with tool uses."""
        messages = [USER, call("a"), result("a"), call("b"), result("b"), result("a")]
        with pytest.raises(InvalidConversationError) as info:
            validate(messages)
        assert info.value.ids == ("a",)

    def test_second_answer(self) -> None:
        """A call answered twice is named."""
        with pytest.raises(InvalidConversationError, match=r"twice.*dup") as info:
            validate([USER, call("dup"), result("dup"), result("dup"), DONE])
        assert info.value.ids == ("dup",)

    def test_second_answer_in_one_message(self) -> None:
        """Two answers to one call in the same TOOL message are a second answer."""
        with pytest.raises(InvalidConversationError, match="twice") as info:
            validate([USER, call("dup"), result("dup", "dup")])
        assert info.value.ids == ("dup",)

    def test_dangling_call_followed_by_user(self) -> None:
        """A call unanswered before the next user message is named."""
        with pytest.raises(InvalidConversationError, match=r"never answered.*b") as info:
            validate([USER, call("a", "b"), result("a"), Message.user("next")])
        assert info.value.ids == ("b",)

    def test_dangling_call_followed_by_assistant(self) -> None:
        """A call unanswered before the next assistant message is named."""
        with pytest.raises(InvalidConversationError, match="never answered") as info:
            validate([USER, call("a"), DONE])
        assert info.value.ids == ("a",)

    def test_every_offending_id_is_named(self) -> None:
        """An orphan, a second answer and a dangling call are all named, in message and ids."""
        messages = [
            USER,
            call("a", "b"),
            result("a"),
            result("a"),
            result("x"),
            Message.user("next"),
            call("c"),
            DONE,
        ]
        with pytest.raises(InvalidConversationError) as info:
            validate(messages)
        assert sorted(info.value.ids) == ["a", "b", "c", "x"]
        text = str(info.value)
        for id_ in ("a", "b", "c", "x"):
            assert id_ in text

    def test_same_id_dangling_and_orphan(self) -> None:
        """A call answered only after the next user message is both dangling and orphaned."""
        with pytest.raises(InvalidConversationError, match="never answered") as info:
            validate([USER, call("a"), Message.user("next"), result("a")])
        assert info.value.ids == ("a", "a")

    def test_error_is_a_value_error(self) -> None:
        """The error can be caught as a ValueError."""
        with pytest.raises(ValueError, match="not well formed"):
            validate([result("x")])


MALFORMED: dict[str, tuple[list[Message], list[Message]]] = {
    "orphan result": (
        [USER, call("a"), result("a"), result("x"), DONE],
        [USER, call("a"), result("a"), DONE],
    ),
    "orphan before any call": ([result("x"), USER], [USER]),
    "orphan beside a good result": (
        [USER, call("a"), result("x", "a"), DONE],
        [USER, call("a"), result("a"), DONE],
    ),
    "result after a user message": (
        [USER, call("a"), result("a"), Message.user("next"), result("a")],
        [USER, call("a"), result("a"), Message.user("next")],
    ),
    "second answer": (
        [USER, call("a"), result("a", text="first"), result("a", text="second"), DONE],
        [USER, call("a"), result("a", text="first"), DONE],
    ),
    "second answer in one message": (
        [USER, call("a"), result("a", "a"), DONE],
        [USER, call("a"), result("a"), DONE],
    ),
    "dangling call followed by user": (
        [USER, call("a", "b"), result("a"), Message.user("next")],
        [USER, call("a", "b"), result("a"), interrupted("b"), Message.user("next")],
    ),
    "dangling call without results": (
        [USER, call("a", "b"), DONE],
        [USER, call("a", "b"), interrupted("a", "b"), DONE],
    ),
    "dangling call then system then user": (
        [USER, call("a"), Message.system("note"), Message.user("next")],
        [USER, call("a"), interrupted("a"), Message.system("note"), Message.user("next")],
    ),
    "dangling call with a system message inside the exchange": (
        [USER, call("a", "b"), Message.system("note"), result("b"), DONE],
        [USER, call("a", "b"), Message.system("note"), result("b"), interrupted("a"), DONE],
    ),
    "everything at once": (
        [USER, call("a", "b"), result("a"), result("a"), result("x"), USER, call("c"), DONE],
        [
            USER,
            call("a", "b"),
            result("a"),
            interrupted("b"),
            USER,
            call("c"),
            interrupted("c"),
            DONE,
        ],
    ),
}


class TestRepair:
    """repair()."""

    @pytest.mark.parametrize(("messages", "expected"), MALFORMED.values(), ids=MALFORMED.keys())
    def test_repairs(self, messages: list[Message], expected: list[Message]) -> None:
        """Each malformed conversation repairs to exactly the expected list."""
        assert repair(messages) == expected
        validate(expected)

    @pytest.mark.parametrize(("messages", "expected"), MALFORMED.values(), ids=MALFORMED.keys())
    def test_idempotent(self, messages: list[Message], expected: list[Message]) -> None:
        """Repairing a repaired conversation changes nothing."""
        once = repair(messages)
        assert repair(once) == once

    @pytest.mark.parametrize(("messages", "expected"), MALFORMED.values(), ids=MALFORMED.keys())
    def test_deterministic(self, messages: list[Message], expected: list[Message]) -> None:
        """Two repairs of the same input are equal."""
        assert repair(messages) == repair(list(messages))

    @pytest.mark.parametrize(("messages", "expected"), MALFORMED.values(), ids=MALFORMED.keys())
    def test_does_not_mutate(self, messages: list[Message], expected: list[Message]) -> None:
        """The input list is left as it was."""
        before = list(messages)
        repair(messages)
        assert messages == before

    @pytest.mark.parametrize("messages", WELL_FORMED.values(), ids=WELL_FORMED.keys())
    def test_well_formed_comes_back_equal(self, messages: list[Message]) -> None:
        """A well-formed input comes back as an equal, new list."""
        repaired = repair(messages)
        assert type(repaired) is list
        assert repaired == messages
        assert repaired is not messages

    def test_accepts_a_tuple(self) -> None:
        """Any sequence is accepted and a list is returned."""
        assert repair((USER, DONE)) == [USER, DONE]

    def test_closing_result_is_an_error(self) -> None:
        """The result that closes a dangling call is an error with the interrupted text."""
        repaired = repair([USER, call("a"), DONE])
        closing = repaired[2].tool_results
        assert closing == (ToolResult(tool_use_id="a", content=INTERRUPTED, is_error=True),)
        assert closing[0].text == INTERRUPTED


def _structure(messages: Sequence[Message]) -> Structure:
    return Structure.of(messages)


EXAMPLE = [
    SYSTEM,  # 0
    USER,  # 1
    call("a", "b"),  # 2
    result("a"),  # 3
    Message.system("note"),  # 4
    result("b"),  # 5
    DONE,  # 6
    Message.user("more"),  # 7
    call("c"),  # 8
]


class TestStructure:
    """Structure: exchanges and safe cuts."""

    def test_exchanges(self) -> None:
        """Each assistant message with tool uses starts an exchange ending at its last result."""
        assert _structure(EXAMPLE).exchanges == (Exchange(2, 6, (3, 5)), Exchange(8, 9, ()))

    def test_exchange_without_results(self) -> None:
        """An exchange without tool messages stops right after its assistant message."""
        assert _structure([USER, call("a"), DONE]).exchanges == (Exchange(1, 2, ()),)

    def test_trailing_system_is_not_part_of_the_exchange(self) -> None:
        """A system message after the last result is outside the exchange."""
        messages = [USER, call("a"), result("a"), Message.system("s"), DONE]
        assert _structure(messages).exchanges == (Exchange(1, 3, (2,)),)

    @pytest.mark.parametrize(
        ("index", "expected"),
        [(-5, 0), (0, 0), (1, 1), (2, 2), (3, 6), (4, 6), (5, 6), (6, 6), (7, 7), (8, 8), (9, 9)],
    )
    def test_safe_cut(self, index: int, expected: int) -> None:
        """A cut inside an exchange moves forward to the first message after it."""
        assert _structure(EXAMPLE).safe_cut(index) == expected

    def test_safe_cut_clamps(self) -> None:
        """A cut past the end is the end."""
        assert _structure(EXAMPLE).safe_cut(100) == len(EXAMPLE)

    def test_tool_message_is_never_a_safe_cut(self) -> None:
        """A leading orphan tool message is skipped."""
        assert _structure([result("x"), USER]).safe_cut(0) == 1

    @pytest.mark.parametrize(
        ("n", "expected"),
        [(0, 9), (1, 8), (2, 7), (3, 6), (4, 6), (5, 6), (6, 2), (7, 1), (8, 0), (100, 0)],
    )
    def test_cut_keeping_last(self, n: int, expected: int) -> None:
        """The cut keeps at most the last n non-system messages and never splits an exchange."""
        assert _structure(EXAMPLE).cut_keeping_last(n) == expected

    def test_cut_keeping_last_skips_summaries(self) -> None:
        """With skip_summaries, a summary message does not count toward n."""
        summary = Message(role=Role.USER, content=(Compaction(content="earlier"),))
        messages = [USER, DONE, summary, Message.user("q"), Message.assistant("a")]
        assert _structure(messages).cut_keeping_last(3) == 2
        assert _structure(messages).cut_keeping_last(3, skip_summaries=True) == 1

    def test_tool_use_for(self) -> None:
        """A result is matched to the tool use of its exchange."""
        structure = _structure(EXAMPLE)
        found = structure.tool_use_for(5, EXAMPLE[5].tool_results[0])
        assert found == ToolUse(id="b", name="get_time")

    def test_tool_use_for_orphan(self) -> None:
        """An orphan result has no tool use."""
        messages = [USER, call("a"), result("a"), USER, result("a")]
        assert _structure(messages).tool_use_for(4, messages[4].tool_results[0]) is None
        assert _structure(messages).tool_use_for(2, ToolResult(tool_use_id="zz")) is None

    def test_empty(self) -> None:
        """An empty conversation has no exchanges and one safe cut."""
        structure = _structure([])
        assert structure.exchanges == ()
        assert structure.safe_cut(0) == 0
        assert structure.cut_keeping_last(3) == 0

    def test_exchange_at(self) -> None:
        """Each message of an exchange, and only those, belongs to it."""
        structure = _structure(EXAMPLE)
        first = Exchange(2, 6, (3, 5))
        assert [structure.exchange_at(i) for i in range(2, 6)] == [first] * 4
        assert structure.exchange_at(1) is None
        assert structure.exchange_at(6) is None
        assert structure.exchange_at(8) == Exchange(8, 9, ())
        assert structure.exchange_at(-1) is None
        assert structure.exchange_at(100) is None

    def test_caller_of(self) -> None:
        """A tool message is answered by the assistant message opening its exchange."""
        structure = _structure(EXAMPLE)
        assert structure.caller_of(5) == 2
        assert structure.caller_of(1) is None
        assert _structure([USER, result("x")]).caller_of(1) is None


class TestEdits:
    """Structure.without_calls: calls removed with their results."""

    def test_removes_a_call_and_its_result(self) -> None:
        """One call of two goes with its result; the rest is untouched."""
        output = _structure(EXAMPLE).without_calls({2: {"a"}})
        assert output == [
            SYSTEM,
            USER,
            call("b"),
            Message.system("note"),
            result("b"),
            DONE,
            Message.user("more"),
            call("c"),
        ]
        validate(output)

    def test_drops_an_assistant_message_left_empty(self) -> None:
        """Removing every call of a text-less message removes the message."""
        output = _structure(EXAMPLE).without_calls({2: {"a", "b"}})
        assert output == [SYSTEM, USER, Message.system("note"), DONE, *EXAMPLE[7:]]

    def test_keeps_the_text_of_an_assistant_message(self) -> None:
        """An assistant message with text keeps it when its calls go."""
        messages = [USER, call("a", text="Looking."), result("a"), DONE]
        output = _structure(messages).without_calls({1: ["a"]})
        assert output == [USER, Message.assistant("Looking."), DONE]

    def test_ids_are_matched_within_their_exchange(self) -> None:
        """A reused id in a later exchange is not removed."""
        messages = [USER, call("a"), result("a"), USER, call("a"), result("a")]
        output = _structure(messages).without_calls({1: ["a"]})
        assert output == [USER, USER, call("a"), result("a")]

    def test_not_an_exchange_start_changes_nothing(self) -> None:
        """An index that opens no exchange is ignored, and the input is not mutated."""
        messages = list(EXAMPLE)
        assert _structure(messages).without_calls({3: ["a"], 1: ["a"]}) == EXAMPLE
        assert messages == EXAMPLE
