"""The facts of a JSON tool result, as a summary notes them and as ``default_stack``
condenses a recent one: a list of lists of objects is one table under one header, a
value every row of a table holds is written once, the fields an agent passes on (ids,
amounts, dates) come before the words (a name, an address), and a table's header
stands before its kept rows."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from strategies import record_lists

from neuron_context import (
    ExtractiveSummarizer,
    Message,
    SummarizationStrategy,
    TokenCounter,
    ToolUse,
    default_stack,
)

_COLUMNS = "flight_number|origin|destination|price"


def _flight(number: int, origin: str, destination: str) -> dict[str, object]:
    return {
        "flight_number": f"HAT{number:03d}",
        "origin": origin,
        "destination": destination,
        "date": "2024-05-20",
        "status": "available",
        "price": 100 + number,
    }


ITINERARIES = [
    [_flight(57, "JFK", "ATL"), _flight(39, "ATL", "SEA")],
    [_flight(136, "JFK", "ATL"), _flight(39, "ATL", "SEA")],
    [_flight(218, "JFK", "ORD"), _flight(41, "ORD", "SEA")],
]
"""A one-stop search: a list of itineraries, each a list of flights."""

USER = {
    "name": {"first_name": "Mia", "last_name": "Li"},
    "address": {
        "address1": "975 Sunset Drive",
        "address2": "Suite 217",
        "city": "Austin",
        "country": "USA",
        "zip": "78750",
    },
    "email": "mia.li3818@example.com",
    "dob": "1990-04-05",
    "payment_methods": {
        "credit_card_4421486": {"source": "credit_card", "id": "credit_card_4421486"},
        "certificate_7504069": {
            "source": "certificate",
            "id": "certificate_7504069",
            "amount": 250,
        },
    },
    "membership": "gold",
    "reservations": ["NO6JO3", "AIXC49"],
}
"""A user's details: words first in the document, then what a booking reuses."""


def _session(name: str, result: object, **arguments: str) -> list[Message]:
    use = ToolUse(id="r1", name=name, input=arguments)
    return [
        Message.user("Book me a flight."),
        Message.assistant(tool_uses=[use]),
        Message.tool_result("r1", json.dumps(result)),
        Message.assistant("Done."),
    ]


def _facts(
    messages: list[Message], *, max_tokens: int = 2_000, shown: frozenset[str] = frozenset()
) -> str:
    """The facts section of the extractive summary of ``messages``."""
    strategy = SummarizationStrategy(ExtractiveSummarizer(), 0, max_summary_tokens=max_tokens)
    request = strategy.summary_request(messages)
    assert request is not None
    summary = ExtractiveSummarizer().summarize(request, shown=shown)
    return summary.partition("## Facts\n")[2].split("\n\n", 1)[0]


class TestTables:
    """A collection of objects is a table: keys once, a row each."""

    def test_a_list_of_lists_is_one_table_under_one_header(self) -> None:
        """Each inner list's rows carry its position in a ``group`` column, under one
        header (not a header per inner list)."""
        facts = _facts(_session("search_onestop_flight", ITINERARIES, origin="JFK"))
        assert facts.count("flight_number") == 1
        assert f"items: group|{_COLUMNS}; " in facts
        for group, rows in enumerate(ITINERARIES, start=1):
            for row in rows:
                cells = [str(group), *(str(row[c]) for c in _COLUMNS.split("|"))]
                assert "|".join(cells) in facts

    def test_a_value_every_row_holds_is_written_once(self) -> None:
        """A column with one value in every row is a pair before the table, not a cell
        of each row; a number is left in its rows (the same count in a few rows says
        nothing of the rest)."""
        rows = [{"id": f"W{i}", "status": "pending", "quantity": 2} for i in range(4)]
        facts = _facts(_session("list_orders", {"orders": rows}, user="mia"))
        assert "status=pending; orders: id|quantity; W0|2; W1|2; W2|2; W3|2" in facts
        assert facts.count("pending") == 1

    @pytest.mark.anyio
    async def test_a_condensed_result_writes_its_header_once(self) -> None:
        """A recent search result that ``default_stack`` condenses writes its header
        once, each row with its group, and the values every row holds once before it."""
        use = ToolUse(id="s1", name="search_onestop_flight", input={"origin": "JFK"})
        messages = [
            Message.user("Find me a flight."),
            Message.assistant(tool_uses=[use]),
            Message.tool_result("s1", json.dumps(ITINERARIES)),
        ]
        counter = TokenCounter()
        budget = counter.estimate_messages(messages) * 4 // 5
        output = await default_stack(budget, counter=counter).compact(messages)
        kept = output[-1].tool_results[0].text
        assert kept.split("\n", 1)[1] == (
            "date=2024-05-20, status=available\n"
            f"items: group|{_COLUMNS}\n"
            "1|HAT057|JFK|ATL|157\n1|HAT039|ATL|SEA|139\n"
            "2|HAT136|JFK|ATL|236\n2|HAT039|ATL|SEA|139\n"
            "3|HAT218|JFK|ORD|318\n3|HAT041|ORD|SEA|141"
        )

    @given(record_lists())
    def test_a_list_of_lists_reads_back_as_its_records(
        self, lists: list[list[dict[str, object]]]
    ) -> None:
        """Any list of lists of records reads back from its summary line, record by
        record with its group (none where each list holds one record): the values every
        row holds from the pairs before the table, the others from the row under the
        one header."""
        facts = _facts(_session("search", lists, q="x"), max_tokens=4_000)
        grouped = any(len(inner) > 1 for inner in lists)  # else each row is its list
        assert facts.count("items: group|" if grouped else "items: ") == 1
        body = facts.split(": ", 1)[1]
        head, _, table = body.partition("items: ")
        fixed = dict(pair.split("=", 1) for pair in head.rstrip("; ").split(", ") if pair)
        header, *rows = table.split("; ")
        columns = header.split("|")
        found = [dict(zip(columns, row.split("|"), strict=True)) for row in rows]
        expected = [
            {"group": str(group), **{k: str(v) for k, v in record.items()}}
            if grouped
            else {k: str(v) for k, v in record.items()}
            for group, inner in enumerate(lists, start=1)
            for record in inner
        ]
        assert [{**fixed, **row} for row in found] == expected


class TestOrder:
    """What an agent passes on is noted first."""

    def test_ids_amounts_and_dates_come_before_words(self) -> None:
        """The fields of a result that hold ids, amounts and dates are noted before
        those that hold words, each part in document order."""
        facts = _facts(_session("get_user_details", USER, user_id="mia_li_3668"))
        order = [
            "email=",
            "dob=1990-04-05",
            "credit_card_4421486",
            "certificate_7504069|250",
            "reservations=[NO6JO3, AIXC49]",
            "name={first_name=Mia",
            "address={address1=975 Sunset Drive",
            "membership=gold",
        ]
        at = [facts.index(part) for part in order]
        assert at == sorted(at)

    def test_a_small_summary_keeps_the_ids(self) -> None:
        """Where a result's facts are cut, its ids and dates stay and its address goes."""
        facts = _facts(_session("get_user_details", USER, user_id="mia_li_3668"), max_tokens=90)
        assert "dob=1990-04-05" in facts
        assert "credit_card_4421486" in facts
        assert "Sunset" not in facts


class TestHeaders:
    """A table's header stands before the rows a summary keeps."""

    def test_a_header_the_request_shows_stays_before_its_rows(self) -> None:
        """Column names the rest of the request shows (another search's table) do not
        take the header from the rows it labels."""
        rows = [{"flight_number": f"HAT{i}", "price": 100 + i} for i in range(3)]
        shown = frozenset({"items", "flight_number", "price"})
        facts = _facts(_session("search_direct_flight", rows, origin="JFK"), shown=shown)
        assert "items: flight_number|price; HAT0|100; HAT1|101; HAT2|102" in facts

    def test_a_header_whose_rows_are_all_shown_goes(self) -> None:
        """A header with no row of its own left says nothing, and is left out."""
        rows = [{"flight_number": f"HAT{i}", "price": 100 + i} for i in range(3)]
        shown = frozenset({"items", "flight_number", "price", "HAT0", "HAT1", "HAT2"})
        shown |= {"100", "101", "102"}
        facts = _facts(_session("search_direct_flight", rows, origin="JFK"), shown=shown)
        assert "flight_number" not in facts
