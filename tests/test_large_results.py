"""TruncateLargeResultsStrategy: large results nobody refers to lately keep head and tail."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuron_context import (
    ConfigurationError,
    Image,
    Message,
    Text,
    TokenCounter,
    ToolResult,
    ToolUse,
    validate,
)
from neuron_context.strategies import TruncateLargeResultsStrategy

LOG = "".join(f"PASSED tests/test_mod_{i:03}.py::test_case\n" for i in range(400))
COUNTER = TokenCounter()


def run_tests(use_id: str, output: str = LOG) -> list[Message]:
    """A ``bash`` call and its output."""
    use = ToolUse(id=use_id, name="bash", input={"command": "pytest"})
    return [Message.assistant(tool_uses=[use]), Message.tool_result(use_id, output)]


class TestTruncateLargeResultsStrategy:
    """Behaviour of TruncateLargeResultsStrategy."""

    def test_an_unreferenced_large_result_keeps_its_head_and_tail(self) -> None:
        """The old result is cut to max_result_tokens around a marker; the newest stays."""
        messages = [
            Message.user("run the tests"),
            *run_tests("t1"),
            Message.assistant("All passed."),
            *run_tests("t2", "2 passed"),
        ]
        strategy = TruncateLargeResultsStrategy(max_result_tokens=200, recent_turns=1)
        output = strategy.apply(messages)
        validate(output)
        (result,) = output[2].tool_results
        text = result.text
        assert COUNTER.estimate_text(text) <= 200
        assert text.startswith("PASSED tests/test_mod_000.py")
        assert text.rstrip().endswith("tests/test_mod_399.py::test_case")
        assert re.search(
            r"\[\.\.\. [\d,]+ lines \([\d,]+ characters, about [\d,]+ tokens\) cut", text
        )
        assert output[4] is messages[4]

    def test_a_recent_reference_protects_a_result(self) -> None:
        """A distinctive word of the result in a recent assistant message keeps it whole."""
        messages = [
            Message.user("run the tests"),
            *run_tests("t1"),
            Message.assistant("Look at tests/test_mod_123.py next."),
            *run_tests("t2", "ok"),
        ]
        referencing = TruncateLargeResultsStrategy(max_result_tokens=200, recent_turns=3)
        assert referencing.apply(messages) == messages
        plain = [*messages[:3], Message.assistant("The tests passed."), *messages[4:]]
        assert referencing.apply(plain) != plain

    def test_keep_recent_and_small_results(self) -> None:
        """The newest keep_recent results, and results under the limit, are never cut."""
        messages = [Message.user("go"), *run_tests("t1"), *run_tests("t2", "tiny")]
        assert TruncateLargeResultsStrategy(keep_recent=2, recent_turns=0).apply(messages) == (
            messages
        )
        assert TruncateLargeResultsStrategy(recent_turns=0).apply(messages) != messages
        assert TruncateLargeResultsStrategy(max_result_tokens=10**6).apply(messages) == messages

    def test_images_are_kept_and_the_ids_too(self) -> None:
        """Texts are cut around an image; the result keeps id, flag and image."""
        image = Image(media_type="image/png", data="aGVsbG8=")
        use = ToolUse(id="s1", name="shot", input={})
        result = ToolResult(tool_use_id="s1", content=[Text(text=LOG), image], is_error=True)
        messages = [
            Message.user("go"),
            Message.assistant(tool_uses=[use]),
            Message(role="tool", content=(result,)),
            Message.assistant("ok"),
        ]
        strategy = TruncateLargeResultsStrategy(
            max_result_tokens=500, keep_recent=0, recent_turns=0
        )
        (cut,) = strategy.apply(messages)[2].tool_results
        assert cut.tool_use_id == "s1"
        assert cut.is_error
        assert cut.content[1] == image
        assert COUNTER.estimate_content(cut.content) <= 500

    def test_a_cut_result_is_not_cut_again(self) -> None:
        """A second pass leaves a cut result as it is, even below the marker's own cost."""
        messages = [Message.user("go"), *run_tests("t1"), Message.assistant("done")]
        strategy = TruncateLargeResultsStrategy(max_result_tokens=1, keep_recent=0)
        once = strategy.apply(messages)
        assert once != messages
        assert strategy.apply(once) == once

    @pytest.mark.parametrize(
        "marker",
        [
            "[... 212 lines (41,802 characters, about 10,450 tokens) cut, naming 2: src/b.py, "
            "HAT170 ...]",
            "[... 41,802 characters (about 10,450 tokens) cut; it mentions src/b.py ...]",
            "[... 11 lines (about 209 tokens) cut, naming 12: 6700049080 and 11 more ...]",
            "[condensed: about 649 tokens as an index]",
        ],
    )
    def test_a_result_cut_with_a_note_is_not_cut_again(self, marker: str) -> None:
        """A result default_stack cut (its marker names what the cut part held; an older
        marker said what it mentioned) is recognised as cut too."""
        use = ToolUse(id="t1", name="run_tests", input={})
        text = f"head\n{marker}\n"
        messages = [
            Message.user("go"),
            Message.assistant(tool_uses=[use]),
            Message.tool_result("t1", text + "tail " * 400),
            Message.assistant("done"),
        ]
        strategy = TruncateLargeResultsStrategy(max_result_tokens=10, keep_recent=0)
        assert strategy.apply(messages) == messages

    def test_configuration(self) -> None:
        """Options are keyword-only and validated."""
        assert TruncateLargeResultsStrategy().max_result_tokens == 2000
        with pytest.raises(
            ConfigurationError, match=r"TruncateLargeResultsStrategy\.max_result_tokens"
        ):
            TruncateLargeResultsStrategy(max_result_tokens=0)
        with pytest.raises(ConfigurationError, match=r"TruncateLargeResultsStrategy\.keep_recent"):
            TruncateLargeResultsStrategy(keep_recent=-1)


TABLE = "".join(f"{4_859_937_227 + i * 7_919}|5K|silver|{100 + i * 1.37:.2f}\n" for i in range(300))


class TestCutText:
    """How a text is cut: at line ends, with markers that leave room for the text."""

    @staticmethod
    def cut(space: int) -> tuple[TruncateLargeResultsStrategy, list[Message]]:
        """A listing's result cut to ``space`` tokens, and the strategy that cut it."""
        messages = [Message.user("go"), *run_tests("t1", TABLE), Message.assistant("done")]
        strategy = TruncateLargeResultsStrategy(max_result_tokens=space, keep_recent=0)
        return strategy, strategy.apply(messages)

    @pytest.mark.parametrize("space", [40, 60, 100, 200, 400, 1_000])
    def test_rows_are_kept_whole(self, space: int) -> None:
        """A listing keeps whole rows around the marker: no id is cut in two, to read
        as another one."""
        _, output = self.cut(space)
        (result,) = output[2].tool_results
        assert COUNTER.estimate_text(result.text) <= space
        rows = set(TABLE.splitlines())
        kept = [line for line in result.text.splitlines() if line and line[0] != "["]
        assert kept
        assert all(line in rows for line in kept), kept

    def test_a_tight_cut_has_short_markers(self) -> None:
        """Cut to a few dozen tokens, the marker drops the character count (every token
        it takes is one less of the text) and is still recognised: a cut result is not
        cut again."""
        strategy, tight = self.cut(60)
        text = tight[2].tool_results[0].text
        assert re.search(r"\[\.\.\. [\d,]+ lines \(about [\d,]+ tokens\) cut", text)
        assert "characters" not in text
        assert strategy.apply(tight) == tight
        _, roomy = self.cut(1_000)
        assert re.search(
            r"\([\d,]+ characters, about [\d,]+ tokens\) cut", roomy[2].tool_results[0].text
        )

    @given(
        rows=st.lists(
            st.text(st.sampled_from("abcXYZ019_.,:|=-/"), max_size=60),
            min_size=2,
            max_size=200,
        ),
        space=st.integers(1, 200),
    )
    def test_any_listing_is_cut_at_row_ends(self, rows: list[str], space: int) -> None:
        """For any listing of rows shorter than 80 characters: within the space, the
        head ends at a row's end and the tail starts at a row's start, or is empty: no
        part of a row is shown alone (a piece of an id reads as another value)."""
        listing = "\n".join(rows) + "\n"
        messages = [Message.user("go"), *run_tests("t1", listing), Message.assistant("done")]
        output = TruncateLargeResultsStrategy(max_result_tokens=space, keep_recent=0).apply(
            messages
        )
        text = output[2].tool_results[0].text
        if text == listing or not text:
            return
        assert COUNTER.estimate_text(text) <= space
        start = text.index("\n[... ")
        end = text.index(" ...]\n", start) + len(" ...]\n")
        head, tail = text[:start], text[end:]
        assert listing.startswith(head)
        assert listing.endswith(tail)
        if head:
            assert listing[len(head)] == "\n"  # the head ends where a row does
        if tail:
            assert listing[-len(tail) - 1] == "\n"  # the tail starts where a row does

    @pytest.mark.parametrize("title", ["title line\n", ""])
    @pytest.mark.parametrize("space", [16, 20, 30, 40, 50])
    def test_no_piece_of_a_row_at_a_tight_cut(self, space: int, title: str) -> None:
        """Cut so far that the tail's share is shorter than the last row, the tail is
        not a piece of it (``665742|gas|...`` for ``6589665742|gas|...``): the head
        takes its share, and where the head would be one too, only the marker is left."""
        listing = "".join(
            f"{6_589_665_742 + i}|gas|large|rotisserie|false|{900 + i}.17\n" for i in range(40)
        )
        table = f"{title}{listing}"
        messages = [Message.user("go"), *run_tests("t1", table), Message.assistant("done")]
        strategy = TruncateLargeResultsStrategy(max_result_tokens=space, keep_recent=0)
        (result,) = strategy.apply(messages)[2].tool_results
        assert COUNTER.estimate_text(result.text) <= space
        rows = set(table.splitlines())
        kept = [line for line in result.text.splitlines() if line and line[0] != "["]
        assert all(line in rows for line in kept), kept


class TestCutLongLines:
    """A row end near the cut ends the head only when the line cut is a row: a part of
    a long line (a paragraph, a one-line JSON value) is kept, not the whole head lost."""

    @pytest.mark.parametrize(
        ("text", "head", "tail"),
        [
            (
                "Report\n" + " ".join(f"sentence {i} says a thing." for i in range(500)) + "\nEND",
                "sentence 0 says",
                "sentence 499 says",
            ),
            (
                "{\n" + '  "d": "' + " ".join(f"word{i}" for i in range(2000)) + '"\n}',
                "word0 word1",
                "word1998 word1999",
            ),
            ("\n\n" + " ".join(f"v{i}" for i in range(3000)) + "\n", "v0 v1 v2", "v2998 v2999"),
        ],
        ids=["title", "json", "blank-lines"],
    )
    def test_a_long_line_keeps_its_head_and_tail(self, text: str, head: str, tail: str) -> None:
        messages = [Message.user("go"), *run_tests("t1", text), Message.assistant("done")]
        strategy = TruncateLargeResultsStrategy(max_result_tokens=30, keep_recent=0)
        (result,) = strategy.apply(messages)[2].tool_results
        assert COUNTER.estimate_text(result.text) <= 30
        assert head in result.text
        assert tail in result.text
