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
        messages = [
            Message.system("You are an agent."),
            previous(summary),
            Message.assistant("Done with the fix."),
            Message.user("Now run the tests please."),
        ]
        output = anyio.run(default_stack(150, counter=TokenCounter()).compact, messages)
        (cut,) = [m.text for m in output if m.is_compaction]
        assert " cut ...]" in cut
        depth = 0
        for line in cut.split("\n"):
            depth += (line == OPEN) - (line == CLOSE)
            assert depth in (0, 1)
        assert depth == 0
        for quote in quotes(cut):
            assert sum(line.startswith("```") for line in quote.split("\n")) % 2 == 0
        assert cut.endswith("status=shipped")
