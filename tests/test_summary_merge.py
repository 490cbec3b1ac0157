"""What a summary keeps of earlier summaries and of the results it reads (issue 32)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from neuron_context import (
    Compaction,
    CompletionRequest,
    ExtractiveSummarizer,
    Message,
    Role,
    TokenCounter,
    ToolUse,
    default_stack,
)

FACTS = "## Facts"


def summary(text: str) -> Message:
    """A summary message holding ``text``."""
    return Message(role=Role.USER, content=(Compaction(content=text),))


def read(use_id: str, path: str, result: str) -> list[Message]:
    """A ``read_file`` call on ``path`` and its ``result``."""
    call = ToolUse(id=use_id, name="read_file", input={"path": path})
    return [Message.assistant(tool_uses=[call]), Message.tool_result(use_id, result)]


def summarize(
    messages: Sequence[Message], max_tokens: int, shown: frozenset[str] = frozenset()
) -> str:
    """The offline summary of ``messages`` in ``max_tokens``."""
    request = CompletionRequest(list(messages), max_tokens=max_tokens)
    if not shown:
        return ExtractiveSummarizer().summarize(request)
    return ExtractiveSummarizer().summarize(request, shown=shown)


def facts_of(text: str) -> str:
    """The facts section of a summary (``""``: none)."""
    if FACTS not in text:
        return ""
    return text.split(FACTS, 1)[1].split("\n## ", 1)[0]


def listing(name: str, functions: int) -> str:
    """A numbered listing defining ``functions`` functions of module ``name``."""
    lines = []
    for number in range(functions):
        at = 1 + 3 * number
        lines += [
            f"{at:>6}→def {name}_step_{number}(value_{number}):",
            f"{at + 1:>6}→    return helper_{name}_{number}(value_{number})",
            f"{at + 2:>6}→",
        ]
    return "\n".join(lines)


class TestCarriedFacts:
    """An earlier summary's facts lines, carried into the next summary."""

    def test_segments_stay_under_their_result(self) -> None:
        """A carried facts line keeps the segments indented under it, verbatim and in
        their place (not as lines of their own, cut from their call)."""
        earlier = summary(
            "## Facts\n- Read src/app.py: 12→def load_config(path):\n"
            "  40→class ConfigError(Exception):\n  77→MAX_RETRIES = 5"
        )
        text = summarize([earlier, Message.user("go on"), Message.assistant("ok")], 400)
        assert (
            "- Read src/app.py: 12→def load_config(path):\n"
            "  40→class ConfigError(Exception):\n  77→MAX_RETRIES = 5"
        ) in text

    def test_the_newest_summary_comes_first(self) -> None:
        """Of two earlier summaries, the newer one's facts are carried first: where
        only one line fits, it is the newer one's."""
        older = summary("## Facts\n- get_order order_id=W100: status=shipped, total=120.50")
        newer = summary("## Facts\n- get_order order_id=W200: status=pending, total=80.25")
        messages = [older, newer, Message.user("and now?"), Message.assistant("checking")]
        alone = [
            facts_of(text)
            for text in (summarize(messages, budget) for budget in range(20, 80))
            if ("W100" in text) != ("W200" in text)
        ]
        assert alone
        assert all("W200" in facts for facts in alone)

    @settings(max_examples=50, deadline=None)
    @given(
        lines=st.lists(
            st.tuples(
                st.from_regex(r"[a-z_]{3,12} [a-z_]{3,12}=[A-Z0-9]{4,8}", fullmatch=True),
                st.lists(
                    st.from_regex(r"[0-9]{1,3}→[a-z_(): ]{4,30}[a-z)]", fullmatch=True),
                    max_size=3,
                ),
            ),
            min_size=1,
            max_size=8,
        ),
        budget=st.integers(min_value=20, max_value=600),
    )
    def test_a_carried_line_is_verbatim(
        self, lines: list[tuple[str, list[str]]], budget: int
    ) -> None:
        """Whatever the space, each facts line carried from an earlier summary is one
        of its lines or segments as it was, and the summary fits."""
        earlier = "\n".join(
            f"- {head}" + "".join(f"\n  {segment}" for segment in segments)
            for head, segments in lines
        )
        pieces = {head for head, _ in lines} | {s for _, segments in lines for s in segments}
        text = summarize([summary(f"{FACTS}\n{earlier}"), Message.user("next")], budget)
        assert TokenCounter().estimate_text(text) <= budget
        for line in facts_of(text).strip("\n").split("\n"):
            if line:
                assert line.removeprefix("- ").removeprefix("  ") in pieces


class TestTables:
    """A JSON result's list of objects, noted as a table."""

    def test_a_header_is_never_alone(self) -> None:
        """A table's header comes with its first row, whatever the space: columns
        without a row say nothing."""
        columns = [f"scheduled_column_number_{i}" for i in range(8)]
        rows = [{c: f"V{i}{j}X" for j, c in enumerate(columns)} for i in range(5)]
        result = json.dumps({"flights": rows})
        messages = [Message.user("Find flights."), *read("c1", "flights.json", result)]
        header = "flights: " + "|".join(columns)
        for budget in range(60, 400, 20):
            text = summarize(messages, budget)
            if header in text:
                assert re.search(re.escape(header) + r"; V0", text), budget

    def test_a_row_keeps_its_header_when_the_request_shows_the_columns(self) -> None:
        """A row noted in the summary comes under its header even when the rest of the
        request shows every word of the header (another result with the same keys):
        cells without their columns say nothing."""
        columns = ["flight_number", "origin", "destination", "price"]
        rows = [  # no column holds one value throughout (that would be written once)
            dict(zip(columns, [f"HAT{i}07", f"JF{i}", f"SF{i}", 100 + i], strict=True))
            for i in range(3)
        ]
        result = json.dumps({"flights": rows})
        messages = [Message.user("Find flights."), *read("c1", "flights.json", result)]
        shown = frozenset({"flights", *columns})
        text = summarize(messages, 400, shown=shown)
        header = "flights: " + "|".join(columns)
        assert re.search(re.escape(header) + r"; HAT007\|", text), text

    @settings(max_examples=60, deadline=None)
    @given(
        cells=st.lists(
            st.tuples(st.from_regex(r"[A-Z]{2}[0-9]{3}", fullmatch=True), st.integers(100, 999)),
            min_size=2,
            max_size=8,
            unique_by=lambda cell: cell[0],
        ),
        shown=st.sets(st.sampled_from(["flights", "flight_number", "price", "JFK", "100"])),
        budget=st.integers(min_value=40, max_value=400),
    )
    def test_every_row_stands_under_its_header(
        self, cells: list[tuple[str, int]], shown: set[str], budget: int
    ) -> None:
        """Whatever the request shows and the space, a table's row in a summary stands
        after its header on the same line, and a header is followed by a row."""
        rows = [{"flight_number": code, "price": price, "origin": "JFK"} for code, price in cells]
        result = json.dumps({"flights": rows})
        messages = [Message.user("Find flights."), *read("c1", "flights.json", result)]
        text = summarize(messages, budget, shown=frozenset(shown))
        header = "flights: flight_number|price|origin"
        for code, price in cells:
            row = f"{code}|{price}|JFK"
            for line in text.split("\n"):
                if row in line:
                    assert header in line.split(row, 1)[0], line
        for line in text.split("\n"):
            if header in line:
                assert re.search(re.escape(header) + r"; [A-Z]{2}[0-9]{3}\|", line), line

    def test_a_header_whose_rows_are_all_shown_is_left_out(self) -> None:
        """A header whose every row the request shows is not noted: columns without a
        row say nothing."""
        columns = ["flight_number", "origin", "destination"]
        rows = [dict(zip(columns, [f"HAT{i}07", "JFK", "SFO"], strict=True)) for i in range(3)]
        result = json.dumps({"flights": rows, "note": "ORDER_7731"})
        messages = [Message.user("Find flights."), *read("c1", "flights.json", result)]
        shown = frozenset({"HAT007", "HAT107", "HAT207", "JFK", "SFO"})
        text = summarize(messages, 400, shown=shown)
        assert "ORDER_7731" in text
        assert "origin|destination" not in text

    def test_a_carried_row_keeps_its_header_when_the_request_shows_the_columns(self) -> None:
        """An earlier summary's table, carried into the next: its header comes with
        the first of its rows carried even when the rest of the request shows every
        word of the header, and a header whose rows are all shown is left out."""
        carried = (
            "## Facts\n- get_reservation_details reservation_id=I6M8JQ: date=2024-05-09\n"
            "  flights: origin|destination|flight_number|price\n"
            "  LAS|MIA|HAT115|153\n"
            "  MIA|EWR|HAT192|193"
        )
        messages = [summary(carried), Message.user("ok"), Message.assistant("fine")]
        columns = frozenset({"flights", "origin", "destination", "flight_number", "price"})
        text = facts_of(summarize(messages, 300, shown=columns))
        header = "  flights: origin|destination|flight_number|price\n"
        assert f"{header}  LAS|MIA|HAT115|153\n" in text
        first_shown = columns | {"LAS", "MIA", "HAT115", "153"}
        text = facts_of(summarize(messages, 300, shown=first_shown))
        assert f"{header}  MIA|EWR|HAT192|193" in text
        all_shown = first_shown | {"EWR", "HAT192", "193"}
        assert "origin|destination" not in summarize(messages, 300, shown=all_shown)

    @settings(max_examples=60, deadline=None)
    @given(
        codes=st.lists(
            st.from_regex(r"HAT[0-9]{3}", fullmatch=True), min_size=1, max_size=6, unique=True
        ),
        shown=st.sets(st.sampled_from(["flights", "origin", "flight_number", "HAT100", "LAS"])),
        budget=st.integers(min_value=30, max_value=300),
    )
    def test_every_carried_row_stands_under_its_header(
        self, codes: list[str], shown: set[str], budget: int
    ) -> None:
        """Whatever the request shows and the space, a row carried from an earlier
        summary's table stands under the table's header, and a header is followed by
        a row."""
        header = "flights: origin|flight_number"
        rows = [f"LAS|{code}" for code in codes]
        carried = "\n".join(
            ["## Facts", "- get_reservation_details reservation_id=I6M8JQ: date=2024-05-09"]
            + [f"  {line}" for line in [header, *rows]]
        )
        messages = [summary(carried), Message.user("ok"), Message.assistant("fine")]
        lines = facts_of(summarize(messages, budget, shown=frozenset(shown))).split("\n")
        for at, line in enumerate(lines):
            if line.strip() in rows:
                above = [x.strip() for x in lines[:at]]
                assert header in above, lines
            if line.strip() == header:
                assert at + 1 < len(lines), lines
                assert lines[at + 1].strip() in rows, lines

    def test_a_line_shaped_like_a_header_is_carried(self) -> None:
        """A carried line that holds ``: `` and then ``|`` (a compiler's union type, a
        grep hit) is a line of its result, not a table's header: it is carried as
        every line is, not left out for want of a row under it."""
        lines = [
            "src/api.py:12: error: Argument 1 has type: str|None",
            "src/db.py:40: note: expected: int|float",
            "api.py: str|None",
            "db.py: int|float",
        ]
        carried = "\n".join(
            ["## Facts", "- run cmd=mypy src: 3 errors"] + [f"  {x}" for x in lines]
        )
        messages = [summary(carried), Message.assistant("fixing"), Message.user("go on")]
        text = facts_of(summarize(messages, 2000))
        for line in lines:
            assert f"  {line}\n" in text, text

    @settings(max_examples=60, deadline=None)
    @given(
        lines=st.lists(
            st.one_of(
                st.from_regex(
                    r"[a-z]{1,6}/[a-z_]{1,6}\.py:[0-9]{1,3}: (error|note): [A-Z][a-z]{1,6}"
                    r"( [a-z]{1,6}){0,3}: [a-z]{1,5}(\|[A-Z][a-z]{1,5}){1,3}",
                    fullmatch=True,
                ),
                st.from_regex(
                    r"[a-z_]{1,6}\.py: [a-z]{1,5}(\|[A-Z][a-z]{1,5}){1,3}", fullmatch=True
                ),
            ),
            min_size=1,
            max_size=5,
            unique=True,
        ),
        codes=st.lists(
            st.from_regex(r"HAT[0-9]{3}", fullmatch=True), min_size=1, max_size=3, unique=True
        ),
        at=st.integers(min_value=0, max_value=5),
    )
    def test_every_carried_line_is_kept_beside_a_table(
        self, lines: list[str], codes: list[str], at: int
    ) -> None:
        """Whatever lines shaped ``key: a|b`` an earlier summary's facts line holds, and
        wherever a table stands among them, each is carried where the space allows all,
        and each of the table's rows stands under its header."""
        header = "flights: origin|flight_number"
        rows = [f"LAS|{code}" for code in codes]
        segments = [*lines[:at], header, *rows, *lines[at:]]
        carried = "\n".join(
            ["## Facts", "- run cmd=mypy src: 3 errors"] + [f"  {x}" for x in segments]
        )
        messages = [summary(carried), Message.assistant("fixing"), Message.user("go on")]
        shown = facts_of(summarize(messages, 2000)).split("\n")
        kept = [x.strip() for x in shown]
        for line in [*lines, *rows]:
            assert line in kept, shown
        for row in rows:
            assert header in kept[: kept.index(row)], shown


class TestCutMarkers:
    """A result cut earlier holds its cut's marker: a list of names without what they
    are."""

    def test_a_markers_names_are_not_noted(self) -> None:
        """The names a cut's marker lists are not facts of the result (they stand
        without their lines); the lines kept around it are."""
        kept = [f"{n}→    limit_{n:03d} = compute_{n:03d}(rate_{n:03d})" for n in (1, 2, 99)]
        marker = (
            "[... 96 lines (4,120 characters, about 1,030 tokens) cut, naming 3: "
            "23→    ceiling_023 · 47→    floor_047 · HAT7734 ...]"
        )
        result = "\n".join([*kept[:2], marker, kept[2]])
        messages = [Message.user("Check the limits."), *read("c1", "src/limits.py", result)]
        text = summarize(messages, 2000)
        for name in ("ceiling_023", "floor_047", "HAT7734"):
            assert name not in text
        for name in ("limit_001", "limit_002", "limit_099"):
            assert name in text


class TestShown:
    """Facts the rest of the request already shows are not repeated."""

    def test_a_shown_fact_is_left_out(self) -> None:
        """A line of a result whose every telling word the request shows elsewhere is
        left out; a line with one new word stays."""
        result = "10→    total = compute_total(order_items)\n11→    tax = apply_tax(total_2024)"
        messages = [Message.user("Check the totals."), *read("c1", "src/bill.py", result)]
        plain = summarize(messages, 400)
        assert "compute_total(order_items)" in plain
        shown = frozenset({"compute_total", "order_items", "apply_tax"})
        text = summarize(messages, 400, shown=shown)
        assert "compute_total(order_items)" not in text
        assert "apply_tax(total_2024)" in text

    def test_a_kept_result_is_not_summarized_again(self) -> None:
        """``default_stack``: a listing read again in the kept part is not repeated in
        the summary of the older read."""
        code = listing("billing", 30)
        messages: list[Message] = [Message.system("You code."), Message.user("Fix billing.")]
        messages += read("c1", "src/billing.py", code)
        for number in range(2, 12):
            messages += read(f"c{number}", f"docs/page_{number}.md", "notes " * 150)
        messages += read("c99", "src/billing.py", code)
        stack = default_stack(4000, counter=TokenCounter(), target=0.5)
        output = anyio.run(stack.compact, messages)
        (written,) = [m for m in output if m.is_compaction]
        assert messages[-1] in output
        assert "billing_step_" not in written.text
