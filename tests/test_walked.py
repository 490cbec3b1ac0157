"""The list an agent walks: a summary keeps the list whose items later calls take one by
one, so the next step finds the next item (issue 32)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import hostile_texts

from neuron_context import (
    Compaction,
    CompletionRequest,
    ExtractiveSummarizer,
    Message,
    Role,
    TokenizerCounter,
    ToolUse,
    default_stack,
)

RESERVATIONS = ["GXWCPN", "DQST39", "BSSSM3", "RVQC22", "P824NH", "3HE6QG"]


def call(use_id: str, name: str, **arguments: object) -> Message:
    """An assistant message calling ``name`` once."""
    return Message.assistant(tool_uses=[ToolUse(id=use_id, name=name, input=arguments)])


def profile(reservations: Sequence[str]) -> str:
    """A user's profile: its payment methods (ids and amounts: what a summary notes
    first) before its reservations."""
    methods = {
        f"certificate_{n}": {"source": "certificate", "amount": n % 500, "id": f"certificate_{n}"}
        for n in (5449394, 7365778, 2942955, 6012237, 8818301)
    }
    return json.dumps(
        {
            "email": "ethan.martin2913@example.com",
            "dob": "1963-05-18",
            "payment_methods": methods,
            "reservations": list(reservations),
        }
    )


def reservation(code: str, number: int) -> str:
    """A reservation's details: its flights, several ids and amounts each."""
    flights = [
        {
            "origin": "ORD",
            "destination": "IAH",
            "flight_number": f"HAT{100 + number * 10 + leg}",
            "date": f"2024-05-{10 + leg:02d}",
            "price": 1000 + 37 * leg + number,
        }
        for leg in range(4)
    ]
    return json.dumps({"reservation_id": code, "cabin": "business", "flights": flights})


def walking(walked: int, reservations: Sequence[str] = RESERVATIONS) -> list[Message]:
    """A session: the user's profile looked up, then the first ``walked`` of its
    reservations looked up in turn (each result full of facts of its own)."""
    session = [
        Message.user("Which of my trips can be refunded?"),
        call("u", "get_user_details", user_id="ethan_martin_2396"),
        Message.tool_result("u", profile(reservations)),
    ]
    for number, code in enumerate(reservations[:walked]):
        session += [
            call(f"r{number}", "get_reservation_details", reservation_id=code),
            Message.tool_result(f"r{number}", reservation(code, number)),
        ]
    return session


def summarize(
    messages: Sequence[Message], max_tokens: int, shown: frozenset[str] = frozenset()
) -> str:
    """The offline summary of ``messages`` in ``max_tokens``, the task and the newest
    request kept beside it (no request quoted first for being first or newest)."""
    request = CompletionRequest(list(messages), max_tokens=max_tokens)
    summarizer = ExtractiveSummarizer()
    return summarizer.summarize(request, shown=shown, task_kept=True, newest_kept=True)


def summary(text: str) -> Message:
    """A summary message holding ``text``."""
    return Message(role=Role.USER, content=(Compaction(content=text),))


class TestNewResults:
    def test_a_walked_list_leads_the_facts(self) -> None:
        """Two of six reservations looked up in turn: the profile's list comes before
        the newer results' facts, so the next reservation (BSSSM3) is in a summary
        that has room for little more than that line."""
        text = summarize(walking(2), 90)
        assert "reservations=[GXWCPN, DQST39, BSSSM3, RVQC22, P824NH, 3HE6QG]" in text
        assert "get_user_details user_id=ethan_martin_2396: reservations=[" in text
        assert "HAT11" not in text  # the newer result's facts wait their turn

    def test_a_list_not_walked_keeps_its_place(self) -> None:
        """No call took an item of the list: the profile's facts come in their turn,
        the newest results' first (at the same space, the list is not there)."""
        session = walking(2, ["K1NW8N", "M05KNL", "LU15PA", "OWZ4XL"])
        session[3:] = walking(2)[3:]  # the lookups are of other reservations
        assert "K1NW8N" not in summarize(session, 90)

    def test_a_list_walked_to_its_end_keeps_its_place(self) -> None:
        """Every item taken: nothing is left to walk, the list is a fact as any."""
        session = walking(3, RESERVATIONS[:3])
        assert "reservations=[GXWCPN" not in summarize(session, 90)

    def test_the_rest_of_the_request_walks_a_list(self) -> None:
        """The calls that took the items are in the kept part (the words the rest of
        the request shows): the list is being walked all the same."""
        session = walking(0)
        shown = frozenset({"GXWCPN", "DQST39", "get_reservation_details", "reservation_id"})
        assert "reservations=[" not in summarize(session, 40)
        assert "BSSSM3" in summarize(session, 40, shown=shown)

    def test_a_call_before_the_result_does_not_walk_it(self) -> None:
        """A call older than the list (the id the user gave first) did not take it from
        the list: the list is not being walked for it."""
        session = [
            Message.user("Which of my trips can be refunded?"),
            call("r", "get_reservation_details", reservation_id="GXWCPN"),
            Message.tool_result("r", reservation("GXWCPN", 9)),
            *walking(0)[1:],
            call("f", "search_direct_flight", origin="ORD", destination="IAH"),
            Message.tool_result("f", reservation("ZZZZZ1", 8)),
        ]
        assert "BSSSM3" not in summarize(session, 90)

    @pytest.mark.parametrize(
        ("options", "argument"),
        [([True, False, False], {"confirm": True}), ([100, 250, 500], {"limit": 100})],
    )
    def test_a_flag_or_a_short_number_passed_walks_nothing(
        self, options: list[object], argument: dict[str, object]
    ) -> None:
        """A later call passing ``true`` or ``100`` took no item of a list of flags or
        page sizes: the list does not lead the facts, the newest result's come first."""
        session = [
            Message.user("Cancel my pending order."),
            call("c", "get_settings", user_id="yusuf_rossi_9620"),
            Message.tool_result(
                "c", json.dumps({"user_id": "yusuf_rossi_9620", "options": options})
            ),
            call("x", "cancel_pending_order", order_id="W8732376", **argument),
            Message.tool_result(
                "x",
                json.dumps(
                    {"order_id": "W8732376", "refund": 1270.43, "payment_id": "paypal_3910135"}
                ),
            ),
        ]
        for budget in (40, 60):
            assert "paypal_3910135" in summarize(session, budget)

    def test_one_item_taken_gives_way_to_the_newest_result(self) -> None:
        """One option of a list taken (a cabin booked) may be a choice as well as a
        walk: the list comes after the newest result's first chunk (the new booking's
        id), before older results' only."""
        cabins = {"cabin_classes": ["basic_economy", "economy", "business"], "bags": 2}
        booked = {"reservation_id": "Q69X3R", "status": "confirmed", "total": 236}
        session = [
            Message.user("Book me the cheapest flight to Houston."),
            call("p", "get_policy", topic="cabins"),
            Message.tool_result("p", json.dumps(cabins)),
            call("b", "book_reservation", flight_number="HAT170", cabin="economy"),
            Message.tool_result("b", json.dumps(booked)),
        ]
        for budget in (45, 55):
            assert "Q69X3R" in summarize(session, budget)

    def test_a_pretty_printed_list_beyond_the_facts_is_walked(self) -> None:
        """A profile written with an item a line, older than results whose facts fill
        the summary: its walked list is still found, and the next item kept."""
        prof = {"email": "e.m@example.com", "reservations": RESERVATIONS}
        session = [
            Message.user("Which trips can be refunded?"),
            call("u", "get_user_details", user_id="ethan_2396"),
            Message.tool_result("u", json.dumps(prof, indent=2)),
        ]
        for number, code in enumerate(RESERVATIONS[:2]):
            session += [
                call(f"r{number}", "get_reservation_details", reservation_id=code),
                Message.tool_result(
                    f"r{number}", json.dumps(json.loads(reservation(code, number)), indent=2)
                ),
            ]
        for number in range(8):
            found = [
                {"flight_number": f"HAT{300 + number * 10 + n}", "price": 200 + n} for n in range(6)
            ]
            session += [
                call(f"x{number}", "search_direct_flight", destination=f"D{number:02d}X"),
                Message.tool_result(f"x{number}", json.dumps(found, indent=2)),
            ]
        assert "BSSSM3" in summarize(session, 90)


METHODS = [
    {"source": "certificate", "amount": 100 + n, "id": f"certificate_{4856380 + n}"}
    for n in range(6)
]


class TestTables:
    def session(self, paid: int) -> list[Message]:
        """A profile whose payment methods (a table) the first ``paid`` refunds walk,
        each refund's result full of facts of its own."""
        session = [
            Message.user("Refund each of my certificates, please."),
            call("u", "get_user_details", user_id="mia_li_3668"),
            Message.tool_result("u", json.dumps({"payment_methods": METHODS})),
        ]
        for number, method in enumerate(METHODS[:paid]):
            session += [
                call(f"p{number}", "refund", payment_id=method["id"], order=f"W{number}"),
                Message.tool_result(f"p{number}", reservation(f"W{number}", number)),
            ]
        return session

    def test_a_walked_column_leads_the_facts(self) -> None:
        """Two certificates of six refunded in turn: the table leads the facts, under
        its header, the next certificate's row first."""
        text = summarize(self.session(2), 100)
        assert "payment_methods: amount|id; 102|certificate_4856382; 103|" in text

    def test_one_row_taken_is_a_choice_not_a_walk(self) -> None:
        """One row taken (a flight booked out of a search) is a choice: the table keeps
        its place among the facts."""
        assert "certificate_4856382" not in summarize(self.session(1), 100)


class TestCutResults:
    def test_a_cut_results_list_is_walked(self) -> None:
        """A profile an earlier compaction cut (its head and tail, not JSON any more)
        still holds its list whole: read as a list, walked, it leads the facts."""
        whole = profile(RESERVATIONS)
        tail = whole[whole.index('"reservations') :]
        cut = f"{whole[:120]}\n[... 4 items cut ...]\n{tail}"
        session = walking(2)
        session[2] = Message.tool_result("u", cut)
        text = summarize(session, 90)
        assert "reservations=[GXWCPN, DQST39, BSSSM3, RVQC22, P824NH, 3HE6QG]" in text

    def test_a_cut_results_list_is_noted_as_a_list(self) -> None:
        """Walked or not, a list of scalars in a cut JSON result is noted under its key
        once, bracketed, not as the segments of its line."""
        text = '{"user_id": "mia_li_3668", …\n"reservations": ["NO6JO3", "AIXC49", 7], "x": 1'
        session = [
            Message.user("Look me up."),
            call("u", "get_user_details", user_id="mia_li_3668"),
            Message.tool_result("u", text),
        ]
        assert "reservations=[NO6JO3, AIXC49, 7]" in summarize(session, 400)

    def test_a_list_every_log_line_holds_is_noted_once(self) -> None:
        """A log of JSON lines whose every line holds the same list notes it once, as a
        key whose every pair holds one value is, so the room goes to the events."""
        log = "\n".join(
            json.dumps({"event": f"ev_{n}", "tags": ["prod-eu1", "svc-auth7"]}) for n in range(40)
        )
        session = [
            Message.user("Why did the auth service fail?"),
            call("l", "read_log", path="/var/log/auth.jsonl"),
            Message.tool_result("l", log),
        ]
        text = summarize(session, 400)
        assert text.count("tags=[prod-eu1, svc-auth7]") == 1
        assert len(set(re.findall(r"ev_\d+", text))) == 40

    def test_a_source_files_list_literals_wait_for_its_definitions(self) -> None:
        """A source file's ``"key": [...]`` literals are not a cut JSON result's lists:
        its definitions come first."""
        cases = "".join(f'    "case_{n}": ["input_{n}a", "input_{n}b"],\n' for n in range(40))
        checks = "".join(f"def check_{n}(value):\n    return value\n\n" for n in range(12))
        session = [
            Message.user("What does the test data module define?"),
            call("c", "read_file", path="tests/data.py"),
            Message.tool_result("c", f"CASES = {{\n{cases}}}\n\n{checks}"),
        ]
        text = summarize(session, 160)
        assert "case_0=[" not in text
        assert len(set(re.findall(r"check_\d+", text))) == 12


class TestAStepCut:
    @pytest.mark.parametrize("budget", range(120, 400, 20))
    def test_a_cut_list_keeps_its_first_item(self, budget: int) -> None:
        """The newest result, a profile whose list of reservations does not fit, is cut
        to its segments: wherever the cut keeps items of the list, it keeps its first
        (the next step looks up the first reservation), whatever each costs in tokens."""
        ids = [*RESERVATIONS, "NTIRXF", "HG8X9P", *(f"R{n:02d}A{n:02d}" for n in range(20))]
        session = walking(0, ids)
        counter = TokenizerCounter.from_encoding("o200k_base")
        output = anyio.run(default_stack(budget, counter=counter).compact, session)
        cut = output[-1].tool_results[0].text
        assert ids[0] in cut or not any(item in cut for item in ids)


class TestCarriedLines:
    LINE = (
        "- get_user_details user_id=ethan_martin_2396: email=ethan.martin2913@example.com, "
        "dob=1963-05-18; payment_methods: source|amount|id; certificate|394|certificate_5449394; "
        "certificate|278|certificate_7365778, reservations=[GXWCPN, DQST39, BSSSM3, RVQC22]"
    )

    def test_a_merge_keeps_a_walked_list(self) -> None:
        """An earlier summary's facts line ends in a list the newer calls walk: a merge
        carries the list first, ahead of the newer results' facts, under its call."""
        session = [summary(f"## Facts\n{self.LINE}"), *walking(2)[3:]]
        text = summarize(session, 80)
        assert (
            "get_user_details user_id=ethan_martin_2396: reservations=[GXWCPN, DQST39, BSSSM3"
            in text
        )
        assert "certificate_5449394" not in text  # the line's other facts wait their turn

    def test_a_carried_line_not_walked_is_verbatim(self) -> None:
        """With room for all, a carried line whose list no newer call walks is carried
        as it was."""
        session = [
            summary(f"## Facts\n{self.LINE}"),
            Message.user("thanks"),
            Message.assistant("ok"),
        ]
        assert self.LINE in summarize(session, 400)

    def test_a_walked_line_keeps_every_fact_with_room(self) -> None:
        """With room for all, a walked line keeps each of its facts: the list first."""
        session = [summary(f"## Facts\n{self.LINE}"), *walking(1)[3:]]
        text = summarize(session, 1_000)
        for fact in ("email=ethan.martin2913@example.com", "certificate|278|certificate_7365778"):
            assert fact in text
        assert text.count("reservations=[") == 1

    def test_a_walk_paused_for_a_span_is_kept(self) -> None:
        """The lookups that walked the list are the earlier summary's lines (their
        labels name the items taken); the new span only answers a question: a merge
        still carries the list first, the next item with it."""
        lines = [
            "- get_reservation_details reservation_id=DQST39: flights: HAT110|2024-05-10",
            "- get_reservation_details reservation_id=GXWCPN: flights: HAT100|2024-05-10",
            "- get_user_details user_id=ethan_2396: reservations=[GXWCPN, DQST39, BSSSM3, "
            "RVQC22, P824NH, 3HE6QG], email=e.m@example.com, dob=1963-05-18",
        ]
        policy = {"cabin": "business", "free_bags": 2, "fee": 50, "policy_id": "BAG-2024-07"}
        session = [
            summary("## Facts\n" + "\n".join(lines)),
            Message.user("Before you go on: what is the baggage allowance?"),
            call("b", "get_baggage_policy", cabin="business"),
            Message.tool_result("b", json.dumps(policy)),
        ]
        for budget in (60, 90):
            assert "BSSSM3" in summarize(session, budget)

    def test_a_label_holding_a_colon_stays_whole(self) -> None:
        """A grep whose pattern holds ``": "``: the walked list is written under the
        whole label, the rest of the line after it."""
        files = "src/alpha_mod.py, src/beta_mod.py, src/gamma_mod.py, src/delta_mod.py"
        line = f"- grep pattern=TODO: fix: matches=[{files}], total=4"
        session = [summary(f"## Facts\n{line}"), Message.user("go on")]
        for number, path in enumerate(["src/alpha_mod.py", "src/beta_mod.py"]):
            session += [
                call(f"o{number}", "open_file", path=path),
                Message.tool_result(f"o{number}", json.dumps({"path": path, "lines": 300})),
            ]
        text = summarize(session, 200)
        assert f"- grep pattern=TODO: fix: matches=[{files}], total=4" in text


class TestThroughTheStack:
    def test_compact_keeps_the_next_item(self) -> None:
        """``default_stack`` summarizing the profile and the first lookups keeps the
        profile's list, so the next call finds the next reservation."""
        session = walking(4)
        session.append(Message.assistant("Let me check the next one."))
        stack = default_stack(420)
        out = anyio.run(stack.compact, session)
        text = "\n".join(m.text for m in out)
        assert "P824NH" in text
        assert "get_reservation_details" in text


@settings(max_examples=60, deadline=None)
@given(
    items=st.lists(
        st.from_regex(r"[A-Z][A-Z0-9]{5}", fullmatch=True), min_size=2, max_size=12, unique=True
    ),
    data=st.data(),
)
def test_a_walked_list_keeps_every_item_with_room(items: list[str], data: st.DataObject) -> None:
    """Whatever the list and however far it was walked, a summary with room for its
    line (the heading, the call and the list) holds every item not yet walked, and
    the ones walked too."""
    walked = data.draw(st.integers(min_value=1, max_value=len(items) - 1))
    session = walking(walked, items)
    line = f"- get_user_details user_id=ethan_martin_2396: reservations=[{', '.join(items)}]\n"
    estimate = ExtractiveSummarizer().counter.estimate_text
    budget = estimate("\n## Facts\n") + estimate(line)
    text = summarize(session, budget)
    assert all(item in text for item in items)


@settings(max_examples=60, deadline=None)
@given(
    items=st.lists(
        st.from_regex(r"[A-Z][A-Z0-9]{5}", fullmatch=True), min_size=2, max_size=12, unique=True
    ),
    before=st.lists(st.from_regex(r"[a-z]{3,8}=[a-z0-9]{1,12}", fullmatch=True), max_size=6),
    data=st.data(),
)
def test_a_merge_keeps_every_item_of_a_walked_list_with_room(
    items: list[str], before: list[str], data: st.DataObject
) -> None:
    """An earlier summary's facts line holds a list among other facts; the calls of the
    span summarized now walk it: a merge with room for the call's label and the list
    holds every item of it, whatever stood before it on the line."""
    walked = data.draw(st.integers(min_value=1, max_value=len(items) - 1))
    label = "get_user_details user_id=ethan_martin_2396"
    listed = f"reservations=[{', '.join(items)}]"
    line = f"- {label}: {', '.join([*before, listed])}"
    session = [summary(f"## Facts\n{line}"), *walking(walked, items)[3:]]
    estimate = ExtractiveSummarizer().counter.estimate_text
    budget = estimate("\n## Facts\n") + estimate(f"- {label}: {listed}\n")
    text = summarize(session, budget)
    assert f"{label}: {listed}" in text


@settings(max_examples=80, deadline=None)
@given(
    around=st.lists(hostile_texts(), min_size=2, max_size=2),
    items=st.lists(st.sampled_from([*RESERVATIONS, "a, b", "[x]", "", "12"]), max_size=8),
    walked=st.integers(min_value=0, max_value=4),
    budget=st.integers(min_value=1, max_value=400),
)
def test_any_carried_line_is_read(
    around: list[str], items: list[str], walked: int, budget: int
) -> None:
    """Whatever an earlier summary's facts line holds around a list (brackets, commas,
    separators, lone surrogates), a merge that walks it reads it without failing and
    fits its space, a list it takes first is one the line held, and a line it writes
    keeps the call's label whole (``": "`` in it included)."""
    listed = f"reservations=[{', '.join(items)}]"
    line = f"- get_user_details{around[0]}: {listed}{around[1]}"
    session = [summary(f"## Facts\n{line}"), *walking(walked)[3:]]
    text = summarize(session, budget)
    counter = ExtractiveSummarizer().counter
    assert counter.estimate_text(text) <= budget
    for found in re.findall(r"reservations=\[[^\]\n]*\]", text):
        assert found in line
    label = f"- get_user_details{around[0]}: "
    if not re.search(r"[\n\[\]=…]", around[0]):  # the label as written, whole
        for kept in re.findall(r"^- get_user_details.*reservations=\[", text, re.M):
            assert kept.startswith(label), (kept, label)


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(min_value=3, max_value=8), data=st.data())
def test_a_walked_table_keeps_its_next_row_with_room(rows: int, data: st.DataObject) -> None:
    """However far a table's id column was walked (two rows or more), a summary with
    room for the table's line holds the next row under its header, and the rows after
    it that share its chunk of the facts (the
    refunds' results say little: a table is found among the results read while the
    facts found fit the budget, where a list is found beyond them too)."""
    paid = data.draw(st.integers(min_value=2, max_value=rows - 1))
    methods = [
        {"amount": 100 + n, "id": f"gift_card_{7001000 + n}", "kind": f"k{n}"} for n in range(rows)
    ]
    session = [
        Message.user("Refund each of my gift cards, please."),
        call("u", "get_user_details", user_id="mia_li_3668"),
        Message.tool_result("u", json.dumps({"payment_methods": methods})),
    ]
    for number, method in enumerate(methods[:paid]):
        session += [
            call(f"p{number}", "refund", payment_id=method["id"]),
            Message.tool_result(f"p{number}", "ok"),
        ]
    cells = "; ".join(f"{m['amount']}|{m['id']}|{m['kind']}" for m in methods)
    line = f"- get_user_details user_id=mia_li_3668: payment_methods: amount|id|kind; {cells}\n"
    estimate = ExtractiveSummarizer().counter.estimate_text
    text = summarize(session, estimate("\n## Facts\n") + estimate(line))
    nxt = methods[paid]
    assert f"payment_methods: amount|id|kind; {nxt['amount']}|{nxt['id']}|{nxt['kind']}" in text
