"""A table an earlier compaction condensed (``key: column|column`` over its rows), read
again by an extractive summary: its header never stands without a row, nor a row
without its header, in a fresh summary or an updated one."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import record_lists

from neuron_context import (
    Compaction,
    CompletionRequest,
    ExtractiveSummarizer,
    Message,
    Role,
    ToolUse,
)

MARK = "[condensed: 944 characters shown as an index of their values]"


def call(use_id: str, name: str, **arguments: object) -> Message:
    """An assistant message calling ``name`` once."""
    return Message.assistant(tool_uses=[ToolUse(id=use_id, name=name, input=arguments)])


def kept_beside(messages: list[Message], max_tokens: int) -> str:
    """The summary of ``messages`` as ``default_stack`` asks for it: the task and the
    newest request kept beside it."""
    request = CompletionRequest(messages, max_tokens=max_tokens)
    return ExtractiveSummarizer().summarize(request, task_kept=True, newest_kept=True)


def headers_alone(summary: str, header: str) -> list[int]:
    """The lines of ``summary`` that end in ``header`` with no row on the next line."""
    lines = summary.split("\n")
    return [
        at
        for at, line in enumerate(lines)
        if line.endswith(header) and not (at + 1 < len(lines) and "|" in lines[at + 1])
    ]


def condensed_table(lists: list[list[dict[str, object]]]) -> tuple[str, str, list[str], str]:
    """``lists``' records as the facts index condenses them (the values every record
    holds on a line of pairs, then a table of the others), with the table's header, its
    rows and that line of pairs."""
    records = [record for inner in lists for record in inner]
    names = [name for name in records[0] if name != "id"]
    fixed = [n for n in names if len({str(record[n]) for record in records}) == 1]
    varying = ["id", *(n for n in names if n not in fixed), "seq"]
    header = "items: " + "|".join(f"{name}_of_flight" for name in varying)
    rows = [
        "|".join(str(record.get(name, at)) for name in varying) for at, record in enumerate(records)
    ]
    pairs = ", ".join(f"{name}={records[0][name]}" for name in fixed)
    index = "\n".join([MARK, *([pairs] if pairs else []), header, *rows])
    return index, header, rows, pairs


def together(summary: str, header: str, rows: list[str], pairs: str) -> None:
    """Assert that ``summary`` shows the header over a row, each row under its header
    or the row before it, and the values every row holds over the header."""
    lines = [line.strip() for line in summary.split("\n")]
    for at, line in enumerate(lines):
        below = lines[at + 1] if at + 1 < len(lines) else ""
        if line.endswith(header):
            assert below in rows, lines
        if line in rows:
            above = lines[at - 1]
            assert above.endswith(header) or above in rows, lines
        if pairs and line.endswith(pairs):
            assert below == header, lines


class TestUpdated:
    def test_a_table_that_is_a_result_s_first_chunk_keeps_its_row_on_update(self) -> None:
        """A summary writes a table that is its result's first chunk on the result's own
        line (``- search ...: items: a|b``) with its first row under it; a summary that
        carries that line keeps the header with that row, never alone."""
        header = "items: flight_number|departure|arrival|economy"
        index = "\n".join(
            [MARK, header, "HAT139|17:00:00|19:00:00|114", "HAT271|19:00:00|21:00:00|174"]
        )
        first = ExtractiveSummarizer().summarize(
            CompletionRequest(
                [
                    Message.user("Find me a flight from ORD to PHL on 2024-05-26."),
                    call("s1", "search_direct_flight", origin="ORD", destination="PHL"),
                    Message.tool_result("s1", index),
                    Message.user("Thanks."),
                ],
                max_tokens=200,
            )
        )
        assert f": {header}\n  HAT139|17:00:00|19:00:00|114" in first
        later = [
            Message(role=Role.USER, content=(Compaction(content=first),)),
            call("u1", "get_user_details", user_id="mia_li_3668"),
            Message.tool_result("u1", json.dumps({"user_id": "mia_li_3668", "tier": "gold"})),
        ]
        held = 0
        for budget in range(30, 200, 2):
            summary = kept_beside(later, budget)
            held += header in summary
            assert not headers_alone(summary, header), (budget, summary)
        assert held

    @pytest.mark.parametrize("above", [[], ["reservation_id=NO6JO3, user_id=mia_li_3668"]])
    def test_the_values_every_row_holds_stay_with_their_table_on_update(
        self, above: list[str]
    ) -> None:
        """The values every row of a condensed table holds, on the line above its header
        (on its result's own line when they are its first chunk), are carried with the
        header and its first row, never as a line of their own."""
        table = ["items: flight_number|price", "HAT139|239", "HAT271|371"]
        index = "\n".join([MARK, *above, "status=available, cabin=economy", *table])
        first = facts_of(index, 300)
        assert "status=available, cabin=economy\n  items: flight_number|price" in first
        later = [
            Message(role=Role.USER, content=(Compaction(content=f"## Facts\n{first}"),)),
            call("u1", "get_user_details", user_id="mia_li_3668"),
            Message.tool_result("u1", json.dumps({"user_id": "mia_li_3668", "tier": "gold"})),
        ]
        held = 0
        for budget in range(30, 200, 2):
            lines = kept_beside(later, budget).split("\n")
            for at, line in enumerate(lines):
                if line.endswith("status=available, cabin=economy"):
                    held += 1
                    assert lines[at + 1].strip() == "items: flight_number|price", (budget, lines)
        assert held

    @given(
        lists=record_lists(),
        first=st.integers(60, 300),
        budget=st.integers(30, 200),
        shown=st.booleans(),
    )
    def test_an_updated_summary_keeps_every_table_together(
        self, lists: list[list[dict[str, object]]], first: int, budget: int, shown: bool
    ) -> None:
        """Whatever a condensed table holds, whatever the spaces and whether the request
        shows its first row, a summary that carries an earlier one's table shows its
        header over a row, its rows under their header, and the values every row holds
        over the header."""
        index, header, rows, pairs = condensed_table(lists)
        earlier = facts_of(index, first)
        later = [
            Message(role=Role.USER, content=(Compaction(content=f"## Facts\n{earlier}"),)),
            call("u1", "get_user_details", user_id="mia_li_3668"),
            Message.tool_result("u1", json.dumps({"user_id": "mia_li_3668", "tier": "gold"})),
        ]
        request = CompletionRequest(later, max_tokens=budget)
        seen = frozenset(rows[0].split("|")) if shown else frozenset()
        summary = ExtractiveSummarizer().summarize(
            request, shown=seen, task_kept=True, newest_kept=True
        )
        together(summary, header, rows, pairs)


class TestFresh:
    @given(lists=record_lists(), budget=st.integers(20, 300), shown=st.booleans())
    def test_a_summary_keeps_every_condensed_table_together(
        self, lists: list[list[dict[str, object]]], budget: int, shown: bool
    ) -> None:
        """Whatever a condensed table holds, whatever the space and whether the request
        shows its first row, a summary of it shows its header over a row, its rows
        under their header, and the values every row holds over the header."""
        index, header, rows, pairs = condensed_table(lists)
        session = [
            Message.user("Find me a flight from ORD to PHL."),
            call("s1", "search_direct_flight", origin="ORD", destination="PHL"),
            Message.tool_result("s1", index),
            Message.user("Thanks."),
        ]
        request = CompletionRequest(session, max_tokens=budget)
        seen = frozenset(rows[0].split("|")) if shown else frozenset()
        summary = ExtractiveSummarizer().summarize(
            request, shown=seen, task_kept=True, newest_kept=True
        )
        together(summary, header, rows, pairs)

    def test_a_further_row_stands_only_under_its_header(self) -> None:
        """A condensed table that is not its result's first chunk: a further row is
        placed only after the chunk before it (the header with the first row), never
        alone."""
        rows = [f"HAT{n:03d}|2024-05-{n:02d}|{100 + n}" for n in range(10, 14)]
        index = "\n".join(
            [
                MARK,
                "reservation_id=NO6JO3, user_id=mia_li_3668, origin=JFK, destination=SEA",
                "flights: flight_number|date|price",
                *rows,
            ]
        )
        session = [
            Message.user("Hi, change my reservation."),
            call("r1", "get_reservation_details", reservation_id="NO6JO3"),
            Message.tool_result("r1", index),
        ]
        for budget in range(30, 300, 3):
            lines = kept_beside(session, budget).split("\n")
            for at, line in enumerate(lines):
                if line.strip() in rows:
                    before = lines[at - 1].strip()
                    assert before.endswith("flights: flight_number|date|price") or (
                        before in rows and rows.index(before) == rows.index(line.strip()) - 1
                    ), (budget, lines)


def facts_of(index: str, max_tokens: int = 400) -> str:
    """The summary's facts of one search whose result is ``index``."""
    session = [
        Message.user("Find me a flight from ORD to PHL."),
        call("s1", "search_direct_flight", origin="ORD", destination="PHL"),
        Message.tool_result("s1", index),
        Message.user("Thanks."),
    ]
    summary = kept_beside(session, max_tokens)
    return summary.split("## Facts")[1].split("\n\n")[0]


class TestRead:
    def test_the_values_every_row_holds_stand_with_the_table(self) -> None:
        """The pairs the facts index writes once above a table (the values every row
        holds) are read again with the table, before its header, as a JSON result's
        are: a condensed search keeps ``status=available``."""
        index = "\n".join(
            [
                MARK,
                "status=available, cabin=economy",
                "items: flight_number|price",
                "HAT139|239",
                "HAT271|371",
            ]
        )
        held = facts_of(index)
        assert "status=available, cabin=economy\n  items: flight_number|price\n  HAT139|239" in (
            held
        )

    def test_a_header_over_a_row_too_long_to_read_whole_is_not_lost(self) -> None:
        """A header whose first row is too long to be read whole is no table's header:
        its line is read for its names, as any line is, not dropped as a header with
        no row noted."""
        index = "\n".join([MARK, "items: flight_number|price", "HAT123|" + "x" * 400, "HAT124|99"])
        assert "items: flight_number|price" in facts_of(index)

    def test_a_table_repeated_in_one_result_is_noted_once(self) -> None:
        """Each fact is noted once: a table a result holds twice (a log that printed
        it again) is noted once, its header with its rows."""
        table = ["items: flight_number|price", "HAT139|239", "HAT271|371"]
        held = facts_of("\n".join([MARK, *table, "searched again", *table]))
        assert held.count("HAT139|239") == 1
        assert held.count("items: flight_number|price") == 1
