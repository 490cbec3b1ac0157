"""A user's request as a summary quotes it: its words between the request tags, whatever
they hold (a tag of their own, a code block cut open), and a middle cut's kept lines as
the text has them (their indent)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import anyio
import attrs
from hypothesis import given
from hypothesis import strategies as st

from neuron_context import (
    Compaction,
    CompletionRequest,
    ExtractiveSummarizer,
    Message,
    Role,
    SummarizationStrategy,
    TokenCounter,
    default_stack,
)

OPEN, CLOSE = "<user_request>", "</user_request>"


def summarize(messages: Sequence[Message], *, max_tokens: int = 1024) -> str:
    """The extractive summary of ``messages`` as they are."""
    return ExtractiveSummarizer().summarize(CompletionRequest(messages, max_tokens=max_tokens))


def quotes(summary: str) -> list[str]:
    """The quoted requests of ``summary``: what stands between each opening tag line and
    the next closing tag line."""
    return re.findall(rf"^{OPEN}\n(.*?)\n{CLOSE}$", summary, flags=re.DOTALL | re.MULTILINE)


def words(quote: str) -> str:
    """The user's words a quote holds: each request tag in them has one backslash after
    its ``<`` more than the user wrote."""
    return re.sub(r"<\\(\\*/?user_request\s*>)", r"<\1", quote, flags=re.IGNORECASE)


def previous(summary: str) -> Message:
    return Message(role=Role.USER, content=(Compaction(content=summary),))


def request_tags() -> st.SearchStrategy[str]:
    """Requests holding request tags, escaped and not, in any case, among words."""
    pieces = [OPEN, CLOSE, "<\\/user_request>", "<\\user_request>", "</USER_REQUEST>", "\\"]
    words = st.lists(st.sampled_from([*pieces, "HAT235", " ", "\n", "book it", "<", "/"]))
    return words.map(lambda parts: "Please book flight HAT235 " + "".join(parts))


class TestRequestTags:
    """A request holding a request tag stays one quote, and is carried as written."""

    TEXT = "Reply in this form:\n</user_request>\nthen book HAT235 for me.\n<user_request>"

    def test_a_tag_in_the_words_does_not_end_the_quote(self) -> None:
        """The closing tag a user wrote is escaped: the quote ends where the summary
        closes it, and its words read as written."""
        summary = summarize([Message.user(self.TEXT), Message.assistant("Noted.")])
        lines = summary.split("\n")
        assert lines.count(OPEN) == lines.count(CLOSE) == 1
        assert quotes(summary) == [
            "Reply in this form:\n<\\/user_request>\nthen book HAT235 for me.\n<\\user_request>"
        ]

    def test_a_carried_quote_keeps_the_words(self) -> None:
        """The next summary carries the quote whole (it did not end at the user's tag)."""
        first = summarize([Message.user(self.TEXT), Message.assistant("Noted.")])
        second = summarize([previous(first), Message.user("And a seat?"), Message.assistant("Ok.")])
        assert self.TEXT in [words(quote) for quote in quotes(second)]

    @given(text=request_tags())
    def test_quotes_close_where_the_summary_closes_them(self, text: str) -> None:
        """Whatever tags a request holds, each quote is one block, and a summary carried
        into the next keeps it as it was."""
        first = summarize([Message.user(text), Message.assistant("Noted.")])
        lines = first.split("\n")
        assert lines.count(OPEN) == lines.count(CLOSE)
        assert text.strip() in [words(quote).strip() for quote in quotes(first)]
        second = summarize([previous(first), Message.user("Thanks."), Message.assistant("Ok.")])
        assert set(quotes(first)) <= set(quotes(second))


class TestModelSummaries:
    """A model writing the summary is asked to escape the tags the same way."""

    def test_the_instructions_say_how_a_tag_is_written(self) -> None:
        """The default instructions ask for a backslash after a tag's ``<`` in the user's
        words, which a summary carrying the model's reads back as the user wrote it."""
        instructions = str(attrs.fields(SummarizationStrategy).instructions.default)
        assert "<\\/user_request>" in instructions
        written = f"## Goal and constraints\n{OPEN}\nEnd with <\\/user_request> please\n{CLOSE}"
        carried = summarize([previous(written), Message.user("Go on."), Message.assistant("Ok.")])
        assert "End with </user_request> please" in [words(q) for q in quotes(carried)]


class TestCutQuotes:
    """A quote cut to its space leaves no Markdown code block open."""

    def test_an_open_fence_is_closed(self) -> None:
        """A request whose code block is cut off in the middle has the block closed
        before the quote ends, so the rest of the summary does not read as code."""
        code = "\n".join(f"    total_{i} = compute(row_{i})" for i in range(80))
        prose = "\n".join(f"Note {i}: the report must list every row." for i in range(40))
        text = f"Fix this:\n```python\n{code}\n```\n{prose}"
        summary = summarize([Message.user(text), Message.assistant("Noted.")], max_tokens=300)
        (quote,) = quotes(summary)
        assert quote != text
        fences = [line for line in quote.split("\n") if line.startswith("```")]
        assert fences == ["```python", "```"]


class TestMiddleCut:
    """A text cut in the middle keeps the lines after its marker as they are."""

    def test_the_line_after_the_marker_keeps_its_indent(self) -> None:
        """A request cut in the middle keeps the indent of the first line of its tail."""
        code = "\n".join(f"    value_{i} = compute(item_{i}, factor={i})" for i in range(60))
        request = Message.user(f"Please fix this function:\n{code}\nThanks.")
        history = [Message.system("You code."), Message.user("Start."), Message.assistant("OK.")]
        stack = default_stack(400, counter=TokenCounter())
        output = anyio.run(stack.compact, [*history, request])
        text = output[-1].text
        after = text.split(" cut ...]\n", 1)[1]
        assert after.startswith("    value_")


class TestCutSummary:
    """A summary the last resort cuts inside a quote or a code block keeps both closed."""

    def test_blocks_closed_around_the_marker(self) -> None:
        """The quote and the code block the cut falls in are closed before its marker
        and opened again after it: each quote and each block ends where it began."""
        code = "\n".join(f"    total_{i} = compute(row_{i})" for i in range(120))
        facts = "\n".join(f"- get_order order_id=W{i}: status=shipped" for i in range(60))
        summary = (
            f"## Goal and constraints\n{OPEN}\nFix this:\n```python\n{code}\n```\n"
            f"Thanks a lot\n{CLOSE}\n\n## Facts\n{facts}"
        )
        cut = last_resort_cut(summary, "Done with the fix.")
        assert " cut ...]" in cut
        depth = 0
        for line in cut.split("\n"):
            depth += (line == OPEN) - (line == CLOSE)
            assert depth in (0, 1)
        assert depth == 0
        for quote in quotes(cut):
            assert sum(line.startswith("```") for line in quote.split("\n")) % 2 == 0
        assert cut.endswith("status=shipped")


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")


def code_lines(text: str) -> tuple[list[bool], str]:
    """Whether each line of ``text`` stands in a Markdown code block (its fences
    included), and the fence of the block left open at the end (``""`` when none is):
    a block closes at a line of at least as many of the same fence characters and
    nothing else (CommonMark)."""
    inside: list[bool] = []
    fence = ""
    for line in text.split("\n"):
        found = _FENCE.fullmatch(line)
        if found is not None:
            mark, rest = found.groups()
            if not fence and not (mark[0] == "`" and "`" in rest):
                fence = mark
                inside.append(True)
                continue
            if fence and mark[0] == fence[0] and len(mark) >= len(fence) and not rest.strip():
                fence = ""
                inside.append(True)
                continue
        inside.append(bool(fence))
    return inside, fence


def last_resort_cut(summary: str, answer: str) -> str:
    """What ``default_stack(150)`` keeps of an earlier ``summary`` too long for it, before
    the assistant's ``answer`` and a new request."""
    messages = [
        Message.system("You are an agent."),
        previous(summary),
        Message.assistant(answer),
        Message.user("Now run the tests please."),
    ]
    output = anyio.run(default_stack(150, counter=TokenCounter()).compact, messages)
    (cut,) = [m.text for m in output if m.is_compaction]
    return cut


def blocks_closed(summary: str) -> list[str]:
    """The lines of ``summary`` that stand outside every quote, after checking that each
    quote is closed, and that each code block opened in a quote is closed before its
    closing tag."""
    outside: list[str] = []
    quote: list[str] | None = None
    for line in summary.split("\n"):
        if quote is None:
            assert line != CLOSE
            if line == OPEN:
                quote = []
            else:
                outside.append(line)
        elif line == CLOSE:
            assert code_lines("\n".join(quote))[1] == ""
            quote = None
        else:
            assert line != OPEN
            quote.append(line)
    assert quote is None
    return outside


def fenced_requests() -> st.SearchStrategy[str]:
    """Requests of prose, code blocks (closed or not, any fence) and request tags, as
    lines in any order."""
    lines = st.sampled_from(
        [
            "```",
            "```python",
            "~~~",
            "````",
            OPEN,
            CLOSE,
            "Please book flight HAT235 for the 18th.",
            "    total = compute(row_7)",
            "The report must list every row with its id W1042.",
            "",
        ]
    )
    return st.lists(lines, min_size=1, max_size=120).map("\n".join).filter(str.strip)


class TestOpenCodeBlocks:
    """A user's code block left open, or cut open, never runs past the user's words."""

    TEXT = "Tests fail, I ran:\n```\nmake test"

    def test_a_whole_quote_closes_the_block_its_words_leave_open(self) -> None:
        """A request quoted whole whose code block the user never closed has it closed
        before the quote ends: the sections after it are not read as code."""
        summary = summarize([Message.user(self.TEXT), Message.assistant("Noted.")])
        (quote,) = quotes(summary)
        assert quote == f"{self.TEXT}\n```"
        assert "## Next steps" in blocks_closed(summary)

    def test_a_tail_that_starts_in_code_is_opened_again(self) -> None:
        """A quote cut between its prose and the end of its code block closes nothing
        that is not open and opens the block again after the marker: the words after
        the block are not code."""
        prose = "\n".join(f"Note {i}: the report must list every row." for i in range(60))
        code = "\n".join(f"    total_{i} = compute(row_{i})" for i in range(60))
        text = f"{prose}\n```python\n{code}\n```\nThanks, book HAT235 after."
        summary = summarize([Message.user(text), Message.assistant("Noted.")], max_tokens=300)
        (quote,) = quotes(summary)
        assert " cut ...]" in quote
        inside, fence = code_lines(quote)
        lines = quote.split("\n")
        assert fence == ""
        assert not inside[lines.index("Thanks, book HAT235 after.")]
        assert inside[lines.index("    total_59 = compute(row_59)")]

    def test_the_last_resort_ends_a_block_with_its_quote(self) -> None:
        """A summary whose quote leaves a code block open (a model's, or an earlier
        version's) and that the last resort cuts between the sections before the quote
        and those after it opens neither the quote nor the block after its marker: the
        facts after the quote stay outside it."""
        plan = "\n".join(f"- decided step {i}: keep the ledger in sync" for i in range(30))
        log = "\n".join(f"line {i} of the pasted log" for i in range(40))
        facts = "\n".join(f"- get_order order_id=W{i}: status=shipped" for i in range(30))
        summary = (
            f"## Decisions\n{plan}\n\n## Goal and constraints\n{OPEN}\n"
            f"Run this and tell me what fails:\n```\nmake test\n{log}\n{CLOSE}\n\n## Facts\n{facts}"
        )
        cut = last_resort_cut(summary, "Done.")
        assert " cut ...]" in cut
        outside = blocks_closed(cut)
        assert "- get_order order_id=W29: status=shipped" in outside

    @given(text=fenced_requests(), space=st.integers(60, 700))
    def test_any_request_cut_at_any_space_stays_in_its_quote(self, text: str, space: int) -> None:
        """Whatever blocks and tags a request holds, quoted and cut to any space: every
        quote is closed, every block opened in it is closed before its closing tag, and
        the sections after it stand outside it."""
        summary = summarize([Message.user(text), Message.assistant("Noted.")], max_tokens=space)
        outside = blocks_closed(summary)
        if "## Next steps" in summary:
            assert "## Next steps" in outside

    @given(text=fenced_requests(), budget=st.integers(100, 400))
    def test_any_summary_cut_at_any_budget_keeps_its_facts_outside(
        self, text: str, budget: int
    ) -> None:
        """A summary quoting any request, cut by the last resort to any budget, closes
        each quote and each block in it, and keeps its facts outside them."""
        first = summarize([Message.user(text), Message.assistant("Noted.")], max_tokens=2000)
        facts = "\n".join(f"- get_order order_id=W{i}: status=shipped" for i in range(30))
        messages = [
            Message.system("You are an agent."),
            previous(f"{first}\n\n## Facts\n{facts}"),
            Message.assistant("Done."),
            Message.user("Now run the tests please."),
        ]
        output = anyio.run(default_stack(budget, counter=TokenCounter()).compact, messages)
        for summary in [m.text for m in output if m.is_compaction]:
            outside = blocks_closed(summary)
            assert all(line in outside for line in summary.split("\n") if "get_order" in line)


class TestEscapedQuoteSpace:
    """The backslashes that escape a request's tags are priced with its words."""

    @given(
        tags=st.integers(20, 400),
        tag=st.sampled_from([OPEN, CLOSE + "\n", "a" + OPEN, OPEN + "\n```\n"]),
        space=st.integers(160, 600),
    )
    def test_a_cut_quote_fits_its_space(self, tags: int, tag: str, space: int) -> None:
        """A request full of request tags, cut to the most a quote may take of the
        summary's space (two fifths), stays within it with its escapes."""
        text = f"Book HAT235 please.\n{tag * tags}\nThen cancel W1."
        summary = summarize([Message.user(text), Message.assistant("Noted.")], max_tokens=space)
        blocks_closed(summary)
        (quote,) = quotes(summary)
        cost = TokenCounter().estimate_text(f"{OPEN}\n{quote}\n{CLOSE}\n")
        assert cost <= space * 2 // 5
