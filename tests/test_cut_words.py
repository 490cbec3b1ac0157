"""A user's words cut to a goal, as the last resort of ``default_stack`` cuts a pinned
request: the words come before a marker's names, a bigger goal keeps no fewer of them
than the middle cut itself does, and a text an earlier cut left keeps each of its
markers whole or cuts it whole, counted in the new marker."""

from __future__ import annotations

import itertools
import string

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from request_support import exchanges
from strategies import listings, long_texts, texts

from neuron_context import Message, TokenCounter
from neuron_context._messages.markers import marker, said_size, stands_for
from neuron_context._messages.truncation import truncate_message
from neuron_context._strategies.default.clauses import by_content
from neuron_context._strategies.default.earlier_markers import marker_alone
from neuron_context._strategies.default.said import alone, blank, cut_said
from neuron_context._strategies.default.words import cut_words

COUNTER = TokenCounter()

CODE_LINE = "def f(a_1, b_2): return {'id': 'EHGLP3', 'user': 'mia_li_3668', 'n': [1, 2, 3]}; " * 6
MARKDOWN_LINE = (
    "**Please** cancel `EHGLP3` for _mia_li_3668_, [link](http://x.io/a_1), then refund; " * 6
)
REQUIREMENTS = "\n".join(
    f"Requirement {i}: the function parse_{i} must handle input file data_{i}.csv correctly."
    for i in range(120)
)
REQUEST = (
    "Please change my reservation YAX4DR to flight HAT235 on 2024-05-18 and pay with "
    "credit_card_4421. "
) * 8


WITH_KEY = (
    "Head words here and more words.\n"
    + marker(5_000, 1_200, lines=40, reference="recall: 0123456789abcdef").strip()
    + "\nTail words are here and some more.\n"
    + "\n".join(f"more line {i} with words" for i in range(20))
)
PARAGRAPH = (
    "We need to refactor the billing module so that invoices are computed lazily, "
    "and every currency conversion goes through the rates service. "
) * 30
ROWS = "\n".join("数据处理模块需要重构" * 3 for _ in range(12))


def words(message: Message) -> int:
    """How many characters of ``message``'s text are the user's words (not a cut's
    marker lines)."""
    return sum(len(line) for line in message.text.split("\n") if not stands_for(line))


def markers(text: str) -> list[str]:
    """The lines of ``text`` a cut wrote."""
    return [line for line in text.split("\n") if stands_for(line)]


def lines_stood_for(text: str) -> int:
    """How many lines ``text`` stands for: its own, each marker's as many as it says."""
    return sum(stands_for(line) or 1 for line in text.split("\n") if line.strip())


class TestWords:
    """The words come first, and more room keeps no fewer of them (but where the middle
    cut itself keeps fewer)."""

    def test_words_before_names(self) -> None:
        """A long request cut to 60 tokens keeps its first requirement whole, and its
        marker names nothing (before: a list of file names and a piece of the last
        line)."""
        cut = cut_words(Message.user(REQUIREMENTS), 60, COUNTER)
        assert COUNTER.estimate_message(cut) <= 60
        assert cut.text.startswith(REQUIREMENTS.split("\n")[0] + "\n")
        assert "naming" not in cut.text

    @given(
        text=st.one_of(listings(), long_texts(), texts(max_size=400)),
        first=st.integers(0, 200),
        goal=st.integers(1, 300),
        more=st.integers(1, 40),
    )
    @example(text=REQUIREMENTS, first=0, goal=51, more=9)  # names took the words' room
    @example(text=REQUEST, first=0, goal=193, more=1)  # the marker's full form
    @example(text=REQUIREMENTS, first=51, goal=35, more=1)  # a re-cut keeping words
    @example(text=WITH_KEY, first=0, goal=34, more=1)  # 31 chars at 34, none at 35
    @example(text=PARAGRAPH, first=0, goal=194, more=1)  # truncation's own: 711 -> 707
    @example(text=ROWS, first=150, goal=112, more=1)  # truncation's own: 120 -> 90
    @example(text=CODE_LINE, first=0, goal=21, more=1)  # by content 59 chars, middle 27
    @example(text=MARKDOWN_LINE, first=0, goal=33, more=1)  # by content 108, middle 76
    def test_monotone_in_its_goal(self, text: str, first: int, goal: int, more: int) -> None:
        """A bigger goal never keeps fewer of the user's words (of the text, or of the
        text already cut to ``first`` tokens), and each cut is within its goal. Two
        exceptions: where the middle cut itself (``truncate_message``, whose tries
        shrink the head and tail by their overshoot in steps) keeps fewer characters at
        the bigger goal, the words cut may too; and where either cut is the by-content
        cut of a one-line text (``by_content``), taken at its goal for the names it
        holds (then its characters) over the middle cut: which of the two a goal takes
        can change from one goal to the next (neither holds more names at every bigger
        goal), so the bigger goal may keep fewer characters."""
        message = Message.user(text)
        if first:
            message = cut_words(message, first, COUNTER)
        smaller = cut_words(message, goal, COUNTER)
        bigger = cut_words(message, goal + more, COUNTER)
        if words(bigger) < words(smaller):
            middle = [truncate_message(message, g, COUNTER) for g in (goal, goal + more)]
            by_goal = ((smaller, goal), (bigger, goal + more))
            traded = any(cut == by_content(message, g, COUNTER) for cut, g in by_goal)
            assert traded or words(middle[1]) < words(middle[0]), (words(bigger), words(smaller))
        empty = COUNTER.estimate_message(Message.user(""))
        for cut, room in ((smaller, goal), (bigger, goal + more)):
            assert COUNTER.estimate_message(cut) <= max(room, empty)


class TestByContent:
    """A one-line request cut by content spends its room on what it says once."""

    def test_no_clause_twice(self) -> None:
        """A task that repeats its clause keeps it once, and no ``Hi!`` of no worth
        (before: the clause twice and four ``Hi! …``)."""
        clause = "My reservation is EHGLP3 and user id mia_li_3668."
        task = f"Hi! I'm hoping to cancel a flight and get a refund. {clause} " * 4
        cut = cut_words(Message.user(task), 40, COUNTER)
        assert cut.text.count(clause) == 1, cut.text
        assert "Hi!" not in cut.text, cut.text

    @pytest.mark.parametrize("goal", [20, 26, 32])
    def test_no_backtick_span_left_open(self, goal: int) -> None:
        """The clauses inside inline code are not pieces: a cut keeps the span whole or
        leaves it out (before: ``Please run `python -c "import app; …`` at 32 tokens)."""
        text = (
            "Please run `python -c \"import app; app.migrate(db_url, schema='billing_v2', "
            "dry_run=True); app.check(user_id=4421, order='ORD-7788')\"` and then fix "
            "test_billing.py, test_orders.py, test_users.py; after that deploy to "
            "staging-eu-1, staging-us-2 and report the ids."
        )
        cut = cut_words(Message.user(text), goal, COUNTER)
        assert cut.text.count("`") % 2 == 0, cut.text


class TestEarlierMarkers:
    """A text an earlier cut left keeps that cut's markers whole, and counts them."""

    @pytest.mark.parametrize(
        "alone",
        [
            "[... 400 lines (4,693 characters, about 1,162 tokens) cut; "
            "recall: 0123456789abcdef ...]",
            "[... 12 lines (about 300 tokens) cut; recall: 9f8e7d6c5b4a3210 ...]",
        ],
    )
    def test_keyed_marker_alone(self, alone: str) -> None:
        """A request that is an earlier cut's keyed marker alone, cut to any goal, keeps
        it whole or in a marker of its own, never pieces of it (before: its clauses cut
        by content, ``[... … recall: 0123456789abcdef ...]``)."""
        message = Message.user(alone)
        for goal in range(1, COUNTER.estimate_message(message) + 1):
            for line in cut_words(message, goal, COUNTER).text.split("\n"):
                assert not ("[..." in line or "...]" in line) or stands_for(line), (goal, line)

    @given(first=st.integers(30, 120), goal=st.integers(10, 120))
    @example(first=30, goal=22)  # "[... 120 lines (about 2,51" kept as words
    @example(first=51, goal=48)  # the two markers in a row
    def test_no_piece_of_a_marker(self, first: int, goal: int) -> None:
        """Cut again, a cut request shows each earlier marker whole or not at all: no
        line is a piece of one (before: ``[... 119 l`` read as the user's words), and
        no two markers stand in a row."""
        once = cut_words(Message.user(REQUIREMENTS), first, COUNTER)
        twice = cut_words(once, goal, COUNTER)
        earlier = markers(once.text)
        lines = twice.text.split("\n")
        for line in lines:
            if line and line not in earlier:
                assert not any(m.startswith(line) or m.endswith(line) for m in earlier), line
        assert all(
            not (stands_for(one) and stands_for(other)) for one, other in itertools.pairwise(lines)
        )

    @given(first=st.integers(30, 120), goal=st.integers(10, 120))
    @example(first=51, goal=40)  # '[... 3 lines (about 26 tokens) cut ...]'
    @example(first=30, goal=15)  # a marker alone: the counting one does not fit
    def test_counts_what_they_stood_for(self, first: int, goal: int) -> None:
        """The markers of a request cut again stand for at least the lines the request
        stood for, and say at least the tokens the earlier markers said (before: a re-cut
        marker counted only the lines and tokens it cut itself), except where a marker
        counting all of it would not fit beside the words kept (or alone): a request
        keeps its words, and is never left empty, before its marker counts everything,
        so the marker then counts what this cut removed."""
        once = cut_words(Message.user(REQUIREMENTS), first, COUNTER)
        twice = cut_words(once, goal, COUNTER)
        if twice.text == once.text or not twice.text:
            return
        words = "\n".join(line for line in twice.text.split("\n") if not stands_for(line))
        tokens = COUNTER.estimate_text(once.text)
        tokens += sum(said_size(line)[1] for line in markers(once.text))
        counting = marker(0, tokens, lines=lines_stood_for(once.text), short=True)
        if COUNTER.estimate_message(Message.user(counting + words)) > goal:
            return  # words first: the marker then counts what this cut removed
        assert lines_stood_for(twice.text) >= lines_stood_for(once.text)
        said = sum(said_size(line)[1] for line in markers(twice.text))
        assert said >= sum(said_size(line)[1] for line in markers(once.text))

    @given(goal=st.integers(12, 60))
    def test_keeps_their_keys(self, goal: int) -> None:
        """A marker that shows where the whole text is (``recall: <key>``) and is cut
        whole leaves its key in the new marker: what it stood for can still be read. The
        key gives way only to words (a cut with words and the key does not fit), or
        where the marker showing it does not fit alone."""
        key = "0123456789abcdef"
        line = marker(5_000, 1_200, lines=40, reference=f"recall: {key}").strip()
        text = f"Head words here and more words.\n{line}\nTail words are here and some more."
        cut = cut_words(Message.user(text), goal, COUNTER)
        assert COUNTER.estimate_message(cut) <= goal
        if f"recall: {key}" not in cut.text:
            alone = Message.user(marker_alone(text, goal, COUNTER))
            assert words(cut) or COUNTER.estimate_message(alone) > goal

    @given(
        head=st.text(string.ascii_letters + " ", max_size=200),
        tail=st.text(string.ascii_letters + " ", max_size=200),
        keyed=st.booleans(),
        goal=st.integers(5, 80),
    )
    @example(head="please keep going", tail="and finish", keyed=True, goal=15)
    def test_never_empty(self, head: str, tail: str, keyed: bool, goal: int) -> None:
        """A request holding an earlier marker is cut within its goal, never to an empty
        text where a plain cut's marker alone fits (before: the keyed marker that counts
        the earlier one cost more than the room, and the text went empty)."""
        reference = "recall: 0123456789abcdef" if keyed else ""
        line = marker(4_693, 1_162, lines=400, reference=reference).strip()
        text = f"{head}\n{line}\n{tail}"
        cut = cut_words(Message.user(text), goal, COUNTER)
        assert COUNTER.estimate_message(cut) <= goal
        plain = marker(len(text), COUNTER.estimate_text(text), lines=3, short=True)
        if COUNTER.estimate_message(Message.user(plain)) <= goal:
            assert cut.text.strip(), goal

    def test_short_earlier_marker_keeps_it_short(self) -> None:
        """A marker that replaces an earlier one giving tokens alone gives tokens alone:
        a count of characters would leave out what that one stood for (on wp-edges:
        ``[... 497 lines (4,693 characters, about 13,162 tokens) cut ...]``)."""
        short = marker(50_000, 12_000, lines=400, short=True).strip()
        body = "\n".join(f"line {i} of the request with several words in it" for i in range(60))
        cut = cut_words(Message.user(f"{body}\n{short}\n{body}"), 300, COUNTER)
        (line,) = markers(cut.text)
        assert "characters" not in line, line
        assert said_size(line)[1] >= 12_000


class TestCutSaid:
    """A user's words cut below the cost of their marker."""

    @given(text=texts(max_size=400), goal=st.integers(1, 60))
    def test_never_empty_where_a_marker_fits(self, text: str, goal: int) -> None:
        """The cut is never empty where a ``…`` fits the goal, and it fits the goal
        wherever the cut of :func:`cut_words` did."""
        message = Message.user(text)
        assume(not blank(message))
        cut = cut_said(message, goal, COUNTER)
        plain = cut_words(message, goal, COUNTER)
        if COUNTER.estimate_message(alone(message, COUNTER)[-1]) <= goal:
            assert not blank(cut)
        if COUNTER.estimate_message(plain) <= goal:
            assert COUNTER.estimate_message(cut) <= goal
        if not blank(plain):
            assert cut == plain

    def test_twelve_tokens(self) -> None:
        """A request cut to 12 tokens, where its marker costs more, is its marker
        alone in a shorter form, not an empty text."""
        message = exchanges()[-1]
        assert blank(cut_words(message, 12, COUNTER))
        cut = cut_said(message, 12, COUNTER)
        assert cut.text == "[... 1 line cut ...]"
        assert COUNTER.estimate_message(cut) <= 12
