"""What an extractive summary chooses to hold in its space (issue 32: selection by content)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import record_lists, well_formed_conversations

from neuron_context import (
    CompletionRequest,
    ConfigurationError,
    ExtractiveSummarizer,
    Message,
    TokenCounter,
    TokenizerCounter,
    ToolUse,
)


def summarize(messages: Sequence[Message], max_tokens: int) -> str:
    """The extractive summary of ``messages`` (handed to it as they are)."""
    request = CompletionRequest(list(messages), max_tokens=max_tokens)
    return ExtractiveSummarizer().summarize(request)


def call(use_id: str, name: str, **arguments: object) -> Message:
    """An assistant message calling ``name`` once."""
    return Message.assistant(tool_uses=[ToolUse(id=use_id, name=name, input=arguments)])


class TestQueries:
    def test_a_call_of_a_few_short_values_is_indexed_by_all_of_them(self) -> None:
        """A search by origin, destination and date touched all three: the facts'
        label and the index line name each of them with its key (the last action,
        which would only say it again beside either, is left out)."""
        session = [
            Message.user("Find me a flight from Chicago to Philadelphia on May 10."),
            call("s1", "search_direct_flight", origin="ORD", destination="PHL", date="2024-05-10"),
            Message.tool_result("s1", json.dumps([{"flight_number": "HAT271", "price": 155}])),
            Message.assistant("HAT271 is available."),
        ]
        text = summarize(session, 1_000)
        query = "origin=ORD, destination=PHL, date=2024-05-10"
        assert f"- search_direct_flight {query}: flight_number=HAT271" in text
        assert "Last action" not in text
        session[2] = Message.tool_result("s1", "no flights")
        text = summarize(session, 1_000)
        assert f"- {query}: search_direct_flight" in text
        assert "Last action" not in text

    def test_other_calls_keep_their_key_argument(self) -> None:
        """A call with a path, or with a long or nested argument, is indexed as before:
        by its key argument, or its first argument."""
        session = [
            Message.user("Fix the config and tell Bob."),
            call("r1", "read_file", path="conf/a.toml", encoding="utf-8"),
            Message.tool_result("r1", "port = 8081\n"),
            call(
                "m1",
                "send_message",
                to="bob",
                text="The config on alpha now listens on port 8081, as agreed.",
            ),
            Message.tool_result("m1", "sent"),
            call("b1", "book", user_id="mia_li_3668", flights=[{"number": "HAT170"}]),
            Message.tool_result("b1", "booked"),
            Message.assistant("Done."),
        ]
        text = summarize(session, 1_000)
        assert "- conf/a.toml: read_file" in text or "read_file conf/a.toml:" in text
        assert "to=bob: send_message" in text
        assert "text=" not in text.split("## Artifacts")[1].split("\n\n")[0]
        assert "user_id=mia_li_3668: book" in text

    def test_a_prose_argument_does_not_name_what_a_call_touched(self) -> None:
        """A thought or a message handed to a tool is words, not a name: the call is
        indexed by its tool alone, not by the start of its prose."""
        thought = "The reservation is in economy class, and the user wants to upgrade it."
        session = [
            Message.user("Upgrade reservation YAX4DR, please."),
            call("t1", "think", thought=thought),
            Message.tool_result("t1", ""),
            call("s1", "send_message", text="Hi"),
            Message.tool_result("s1", "sent"),
            Message.assistant("Done."),
        ]
        index = summarize(session, 1_000).split("## Artifacts")[1].split("\n\n")[0]
        assert "thought=" not in index
        assert "- think" in index
        assert "text=Hi: send_message" in index  # a short one still names it

    def test_a_call_s_chosen_values_are_noted(self) -> None:
        """A call that sends values (a booking's flights and payment) is noted with
        them, under its call, beside the error its result was: what a retry sends
        again is in the summary."""
        flights = [
            {"flight_number": "HAT030", "date": "2024-05-13"},
            {"flight_number": "HAT223", "date": "2024-05-14"},
        ]
        session = [
            Message.user("Change my flight, please."),
            call(
                "u1",
                "update_reservation_flights",
                reservation_id="XEWRD9",
                cabin="economy",
                flights=flights,
                payment_id="gift_card_4643416",
            ),
            Message.tool_result("u1", "Error: flight HAT030 not available", is_error=True),
            Message.assistant("That flight is not available."),
        ]
        text = summarize(session, 1_000)
        line = next(x for x in text.split("\n") if x.startswith("- called "))
        assert line.startswith("- called update_reservation_flights reservation_id=XEWRD9 with:")
        assert "flights: flight_number|date; HAT030|2024-05-13; HAT223|2024-05-14" in line
        assert "payment_id=gift_card_4643416" in line

    def test_a_call_on_a_path_or_a_plan_is_not_noted_by_its_values(self) -> None:
        """A call on a path or a command is said by its key argument (the rest are its
        options or the text it writes), and a plan by the plan section: neither gets
        a line of its values."""
        session = [
            Message.user("Fix it."),
            call("e1", "edit", path="src/app.py", old="x = 1", new="x = 2", count=1),
            Message.tool_result("e1", "edited"),
            call("g1", "grep", pattern="load_config", glob="*.py", context=2),
            Message.tool_result("g1", "src/app.py:3: load_config()"),
            Message.assistant(
                tool_uses=[
                    ToolUse(
                        id="t1",
                        name="TodoWrite",
                        input={"todos": [{"content": "fix x", "status": "pending"}]},
                    )
                ]
            ),
            Message.tool_result("t1", "ok"),
            Message.assistant("Done."),
        ]
        assert "- called " not in summarize(session, 1_000)


class TestFilling:
    def test_an_older_result_is_read_beside_a_long_newer_one(self) -> None:
        """A long listing's facts alone would fill the summary, but a summary takes the
        first chunks of the results before it ahead of the listing's further chunks: the
        older result is read, and its first facts make it."""
        listing = "\n".join(
            f"{n:>6}\u2192def handler_{n}(request_{n}): pass" for n in range(1, 400)
        )
        session = [
            Message.user("Where is the reservation handled?"),
            call("u1", "get_user_details", user_id="mia_li_3668"),
            Message.tool_result("u1", json.dumps({"user_id": "mia_li_3668", "membership": "gold"})),
            call("r1", "read_file", path="app/handlers.py"),
            Message.tool_result("r1", listing),
            Message.assistant("Reading done."),
        ]
        text = summarize(session, 600)
        assert "membership=gold" in text

    def test_a_facts_line_takes_the_place_of_its_index_line(self) -> None:
        """Where a result's facts line does not fit beside its call's index line, it
        takes that line's place: it says all the index line says, and its facts."""
        session = [
            Message.user("Look me up."),
            call("u1", "get_user_details", user_id="mohamed_silva_9265"),
            Message.tool_result(
                "u1",
                json.dumps({"email": "mohamed.silva9198@example.com", "dob": "1960-11-26"}),
            ),
            Message.assistant("Found you."),
        ]
        text = summarize(session, 48)
        assert "- get_user_details user_id=mohamed_silva_9265: email=" in text
        assert "- user_id=mohamed_silva_9265: get_user_details" not in text

    def test_a_call_without_arguments_is_not_indexed_beside_its_facts(self) -> None:
        """A call without arguments is indexed by its tool's name alone; beside its
        result's facts line, which starts with that name, the index line says nothing
        more and is left out, whatever the room."""
        session = [
            Message.user("Which airports do you serve?"),
            call("a1", "list_all_airports"),
            Message.tool_result(
                "a1", json.dumps({"SFO": "San Francisco", "JFK": "New York", "LAX": "Los Angeles"})
            ),
            Message.user("Thanks."),
        ]
        for budget in (100, 400):
            text = summarize(session, budget)
            assert "- list_all_airports: SFO=San Francisco" in text
            assert "- list_all_airports\n" not in text

    def test_values_every_row_holds_stand_with_the_table(self) -> None:
        """A value every row of a table holds (``status=available``), written once
        before the table, is not a chunk of its own: it comes with the table's header
        and first row, not as a line that says nothing of which rows it belongs to."""
        rows = [
            {
                "flight_number": f"HAT{n:03d}",
                "status": "available",
                "scheduled_departure_time_est": f"{n % 24:02d}:00:00",
                "scheduled_arrival_time_est": f"{n % 24 + 2:02d}:00:00",
                "available_seats": {"basic_economy": n % 7, "economy": n % 11, "business": 3},
                "prices": {"basic_economy": n - 100, "economy": n, "business": n + 200},
            }
            for n in range(169, 175)
        ]
        session = [
            Message.user("Find flights."),
            call("s1", "search_direct_flight", origin="DTW", destination="JFK", date="2024-05-17"),
            Message.tool_result("s1", json.dumps(rows)),
            Message.assistant("Here they are."),
        ]
        shown = 0
        for budget in range(40, 300, 4):
            text = summarize(session, budget)
            if "status=available" in text:
                shown += 1
                assert "HAT169" in text, budget
        assert shown

    def test_a_condensed_table_read_again_keeps_its_header_with_a_row(self) -> None:
        """A result an earlier compaction condensed to the index of its values (a table
        as ``key: column|column`` over its rows) is read again as that table: its header
        is noted with its first row, never alone (column names say nothing without a
        row), and the rows follow under it."""
        header = "items: flight_number|departure|arrival|basic_economy|economy|business"
        index = "\n".join(
            [
                "[condensed: 944 characters (about 326 tokens) shown as an index of their values]",
                "origin=ORD, destination=PHL, status=available",
                header,
                "HAT139|17:00:00|19:00:00|65|114|395",
                "HAT271|19:00:00|21:00:00|83|174|338",
                "HAT289|05:00:00|07:00:00|83|161|253",
            ]
        )
        session = [
            Message.user("Find me a flight from ORD to PHL on 2024-05-26."),
            call("s1", "search_direct_flight", origin="ORD", destination="PHL", date="2024-05-26"),
            Message.tool_result("s1", index),
            Message.user("Thanks."),
        ]
        held = 0
        for budget in range(30, 200, 5):
            text = by_content(session, budget, newest_kept=True)
            if header in text:
                held += 1
                assert f"{header}\n  HAT139|17:00:00|19:00:00|65|114|395" in text
        assert held
        assert "HAT289|05:00:00|07:00:00|83|161|253" in by_content(session, 200, newest_kept=True)

    @given(lists=record_lists(), budget=st.integers(20, 200))
    def test_a_condensed_table_s_header_never_stands_alone(
        self, lists: list[list[dict[str, object]]], budget: int
    ) -> None:
        """Whatever a condensed table holds and whatever the space, a summary that
        shows its header shows a row of it on the next line."""
        records = [record for inner in lists for record in inner]
        columns = list(records[0])
        header = "items: " + "|".join(f"{column}_of_flight" for column in columns)  # names
        rows = ["|".join(str(record[column]) for column in columns) for record in records]
        index = "\n".join(["[condensed: about 300 tokens as an index]", header, *rows])
        session = [
            Message.user("Search, please."),
            call("s1", "search", origin="JFK"),
            Message.tool_result("s1", index),
            Message.user("Thanks."),
        ]
        lines = by_content(session, budget, newest_kept=True).split("\n")
        for at, line in enumerate(lines):
            if line.endswith(header):
                assert at + 1 < len(lines)
                assert lines[at + 1].removeprefix("  ") in rows

    def test_an_item_too_big_for_the_room_left_is_passed_over(self) -> None:
        """When a section's next item does not fit in the room left, a smaller one after
        it still may: the space is filled, not left empty."""
        wide = ", ".join(f"field_{n}=VALUE{n:03d}X" for n in range(12))
        session = [
            Message.user("Look both up."),
            call("a1", "lookup", key="small"),
            Message.tool_result("a1", "code: ZX81Q"),
            call("b1", "lookup", key="wide"),
            Message.tool_result("b1", "\n".join(wide.split(", "))),
            Message.assistant("Both looked up."),
        ]
        full = summarize(session, 2_000)
        assert "field_0=VALUE000X" in full
        assert "code=ZX81Q" in full
        # Room for the small result's facts, not for the wide one's first chunk.
        text = summarize(session, 60)
        assert "field_0=VALUE000X" not in text
        assert "code=ZX81Q" in text


def weigh_ids(text: str) -> dict[str, float]:
    """What an agent reuses of ``text``, as a test weighs it: its words of four or more
    characters that hold a digit (ids, card numbers, dates)."""
    return dict.fromkeys(re.findall(r"\b(?=\w*\d)\w{4,}\b", text), 1.0)


def by_content(messages: Sequence[Message], max_tokens: int, **options: object) -> str:
    """The extractive summary of ``messages`` chosen by content (``weigh_ids``), the
    task kept beside it, as ``default_stack`` asks for it."""
    request = CompletionRequest(list(messages), max_tokens=max_tokens)
    kept = {"weigh": weigh_ids, "task_kept": True, **options}
    return ExtractiveSummarizer().summarize(request, **kept)  # type: ignore[arg-type]


CHIT_CHAT = "That sounds good, but I am not sure about it yet. Let me think about what I want."


class TestByContent:
    def test_the_first_request_summarized_is_not_the_task_when_it_is_kept(self) -> None:
        """Where the task is kept beside the summary, the oldest request summarized is
        one of the others: it does not take the space of the facts for being first."""
        profile = {"payment_id": "credit_card_4421486", "reservations": ["NO6JO3", "AIXC49"]}
        session = [
            Message.user(CHIT_CHAT),
            Message.assistant("Take your time."),
            Message.user("Fine, please look me up."),
            call("u1", "get_user_details", user_id="mia_li_3668"),
            Message.tool_result("u1", json.dumps(profile)),
        ]
        request = CompletionRequest(session, max_tokens=70)
        as_task = ExtractiveSummarizer().summarize(request)
        assert CHIT_CHAT in as_task
        assert "AIXC49" not in as_task
        text = ExtractiveSummarizer().summarize(request, task_kept=True)
        assert "reservations=[NO6JO3, AIXC49]" in text
        assert CHIT_CHAT not in text
        assert "<user_request>\nFine, please look me up.\n</user_request>" in text  # the newest

    def test_words_that_hold_nothing_wait_for_the_facts(self) -> None:
        """A request that holds nothing an agent reuses takes its turn only after every
        item that holds something: the ids of the older result make the summary."""
        flights = [
            {"flight_number": f"HAT{n:03d}", "date": f"2024-05-{n:02d}"} for n in range(10, 16)
        ]
        session = [
            Message.user(CHIT_CHAT),
            call("u1", "get_user_details", user_id="mia_li_3668"),
            Message.tool_result(
                "u1",
                json.dumps(
                    {"payment_id": "credit_card_4421486", "reservations": ["NO6JO3", "AIXC49"]}
                ),
            ),
            call("r1", "get_reservation_details", reservation_id="NO6JO3"),
            Message.tool_result("r1", json.dumps({"reservation_id": "NO6JO3", "flights": flights})),
            Message.user("Thanks."),
        ]
        by_turns = by_content(session, 120, weigh=None)
        # One of the profile's reservations looked up since (NO6JO3): the list may be
        # walked, so it is noted after the newest result's facts even by turns, and the
        # words come only with more room (a choice read as a walk: tests/test_walked.py).
        assert "reservations=[NO6JO3, AIXC49]" in by_turns
        assert CHIT_CHAT not in by_turns
        text = by_content(session, 120)
        assert "AIXC49" in text
        assert CHIT_CHAT not in text
        # With room for both, the words still come.
        assert CHIT_CHAT in by_content(session, 400)

    def test_a_small_summary_still_quotes_words_that_hold_nothing(self) -> None:
        """A request that holds no id or number (a user's constraint) still comes in a
        small summary after the facts, where room is left: such words bind every later
        step though an agent copies nothing from them."""
        constraint = "Please don't use my credit card for this."
        session = [
            Message.user(constraint),
            call("r1", "get_reservation_details", reservation_id="NO6JO3"),
            Message.tool_result("r1", json.dumps({"payment_id": "credit_card_4421486"})),
            Message.user("Thanks."),
        ]
        small = by_content(session, 110)
        assert "payment_id=credit_card_4421486" in small
        assert constraint in small

    def test_a_small_summary_takes_a_result_s_facts_first(self) -> None:
        """Where one item fits, it is the newest result's facts, not an earlier
        request quoted (every section starts even, so the order on ties chooses); the
        newest request is kept beside the summary, as ``default_stack`` keeps it."""
        session = [
            Message.user("My user ID is mia_li_3668, and my reservation is NO6JO3."),
            call("r1", "get_reservation_details", reservation_id="NO6JO3"),
            Message.tool_result(
                "r1", json.dumps({"payment_id": "credit_card_4421486", "date": "2024-05-20"})
            ),
            Message.user("Thanks."),
        ]
        text = by_content(session, 40, newest_kept=True)
        assert "payment_id=credit_card_4421486" in text
        assert "mia_li_3668" not in text

    def test_the_newest_request_summarized_is_not_pinned_when_the_newest_is_kept(
        self,
    ) -> None:
        """Where the conversation's newest request is kept beside the summary, the
        newest one summarized is an earlier request: one that holds nothing an agent
        reuses waits for the facts, and no line calls it unanswered."""
        upgrade = "I would like to upgrade the class to business for both of us, if possible."
        session = [
            Message.user("Sure! My reservation ID is YAX4DR."),
            call("r1", "get_reservation_details", reservation_id="YAX4DR"),
            Message.tool_result(
                "r1",
                json.dumps({"reservation_id": "YAX4DR", "payment_id": "credit_card_4938634"}),
            ),
            Message.user(upgrade),
        ]
        pinned = by_content(session, 55)
        assert upgrade in pinned
        assert "credit_card_4938634" not in pinned
        text = by_content(session, 55, newest_kept=True)
        assert "payment_id=credit_card_4938634" in text
        assert upgrade not in text
        assert "Unanswered user request" not in by_content(session, 400, newest_kept=True)
        assert "Unanswered user request" in by_content(session, 400)

    def test_a_long_request_keeps_its_lines_that_hold_ids(self) -> None:
        """A request too long for its space keeps the line that holds what an agent
        reuses, whole, where its head and tail hold nothing."""
        numbers = ("one", "two", "three", "four", "five", "six")
        chat = [
            f"I have been thinking about this trip for a while, and thought number {n} is long."
            for n in numbers
        ]
        said = "My reservation is NO6JO3 and the card is credit_card_4421486."
        session = [Message.user("\n".join([*chat[:3], said, *chat[3:]]))]
        request = CompletionRequest(session, max_tokens=200)
        assert "NO6JO3" not in ExtractiveSummarizer().summarize(request)
        text = by_content(session, 200)
        assert said in text
        assert TokenCounter().estimate_text(text) <= 200

    def test_a_one_line_request_keeps_its_sentence_that_holds_an_id(self) -> None:
        """A request of one line too long for its space keeps the sentence that holds
        the user's id, whole, with the words that say what it is (a cut in the middle
        keeps its head and tail, and the id between them is lost)."""
        said = (
            "Hello again, I have been waiting for quite a while now on this call today. "
            "My user ID is aarav_garcia_1177, if that helps. "
            "Unfortunately I do not have the reservation number handy right now, sorry."
        )
        session = [Message.user(said)]
        request = CompletionRequest(session, max_tokens=100)
        assert "aarav_garcia_1177" not in ExtractiveSummarizer().summarize(request)
        text = by_content(session, 100)
        assert "My user ID is aarav_garcia_1177," in text
        assert "…" in text  # the cut says so
        assert TokenCounter().estimate_text(text) <= 100

    def test_a_request_of_lines_keeps_whole_lines(self) -> None:
        """A request of several lines keeps whole lines where one holding something
        fits: a date of birth stays with the name it belongs to."""
        said = "Sure, here are the details of the two of us:\n" + "\n".join(
            f"{n}. First Name - {first}, Last Name - Smith, Date of Birth - {born}"
            for n, first, born in ((1, "Emily", "1988-04-10"), (2, "John", "1990-11-22"))
        )
        text = by_content([Message.user(said)], 90)
        assert "1. First Name - Emily, Last Name - Smith, Date of Birth - 1988-04-10" in text

    @given(
        said=st.text(st.sampled_from("ab1 .,;\n\t\r"), max_size=300),
        budget=st.integers(20, 120),
    )
    def test_a_quote_cut_by_content_is_verbatim(self, said: str, budget: int) -> None:
        """Any request quoted by content keeps pieces of its words as they stand (their
        spaces, indents and line ends too), in order, a gap between them, within the
        budget."""
        text = by_content([Message.user(said)], budget)
        assert TokenCounter().estimate_text(text) <= budget
        if "<user_request>" in text and "…" in text.split("</user_request>")[0]:
            quote = text.split("<user_request>\n", 1)[1].split("\n</user_request>")[0]
            at = 0
            # each piece without the gap's own space and line end
            for piece in (p.strip(" \n") for p in quote.split("\u2026")):
                if piece:
                    found = said.find(piece, at)
                    assert found >= 0, (piece, said)
                    at = found + len(piece)

    def test_an_indented_request_keeps_its_indents(self) -> None:
        """A request holding code, cut by content, keeps each kept line as it stands,
        its indent too, and marks what it left out."""
        code = (
            "Fix load_config in src/app/config.py:\n\n"
            "def load_config(path):\n"
            "    with open(path) as handle:\n"
            "        data = load(handle, 'mia_li_3668')\n"
            "        if 'user_id' not in data:\n"
            "            raise KeyError('user_id')\n"
            "    return data\n"
        )
        chosen = 0
        for budget in range(60, 200, 5):
            text = by_content([Message.user(code)], budget)
            if "<user_request>" not in text:
                continue
            quote = text.split("<user_request>\n", 1)[1].split("\n</user_request>")[0]
            if "\n…\n" in f"\n{quote}\n":  # chosen by its lines
                chosen += 1
                for line in quote.split("\n"):
                    assert line == "…" or line in code.split("\n"), line
        assert chosen

    def test_a_pasted_file_is_weighed_within_a_bound(self) -> None:
        """A request far longer than the summary (a pasted log) is cut in the middle,
        not weighed line by line: what ``weigh`` reads is bounded by the space, not by
        the request."""
        log = "\n".join(f"2024-05-01 worker_{i} connected to shard-{i}" for i in range(40_000))
        read = []

        def counting(text: str) -> dict[str, float]:
            read.append(len(text))
            return weigh_ids(text)

        text = by_content([Message.user(f"Why does this fail?\n{log}")], 200, weigh=counting)
        assert "<user_request>" in text
        assert sum(read) <= 64 * 200 * 4

    def test_weigh_and_task_kept_are_checked(self) -> None:
        """``weigh`` must be callable and ``task_kept`` and ``newest_kept`` bools: a
        clear error at the call, even for a summary that quotes no request."""
        request = CompletionRequest([Message.assistant("Done.")], max_tokens=100)
        summarizer = ExtractiveSummarizer()
        with pytest.raises(ConfigurationError, match="weigh"):
            summarizer.summarize(request, weigh=42)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="task_kept"):
            summarizer.summarize(request, task_kept="no")  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="newest_kept"):
            summarizer.summarize(request, newest_kept=1)  # type: ignore[arg-type]

    def test_a_request_is_never_quoted_by_its_marker_alone(self) -> None:
        """Where a request's cut would keep nothing of it but the marker, it is not
        quoted as an empty cut (a quote that says nothing of the user's words)."""
        counter = TokenizerCounter.from_encoding("o200k_base")
        said = "Sure, here are the details:\n\n" + "\n".join(
            f"{n}. Passenger {word}: First Name - {first}, Last Name - {last}, "
            f"Date of Birth - {born}"
            for n, word, first, last, born in (
                (1, "One", "Emily", "Smith", "1988-04-10"),
                (2, "Two", "John", "Smith", "1990-11-22"),
                (3, "Three", "Sarah", "Johnson", "1995-07-15"),
            )
        )
        for budget in (83, 84):
            request = CompletionRequest([Message.user(said)], max_tokens=budget)
            text = ExtractiveSummarizer(counter=counter).summarize(request)
            assert "<user_request>\n\n[..." not in text
            assert counter.estimate_text(text) <= budget

    @given(messages=well_formed_conversations(max_turns=14), budget=st.integers(1, 400))
    def test_always_within_budget(self, messages: list[Message], budget: int) -> None:
        """Any conversation gives a deterministic summary by content within its budget."""
        text = by_content(messages, budget)
        assert TokenCounter().estimate_text(text) <= budget
        assert by_content(messages, budget) == text
