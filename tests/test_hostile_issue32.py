"""Hostile tool results against what issue 32 added: the segment choice of a recent JSON
result, the index lines with facts, the roll-up of an index (its directory), through
default_stack and a store (public API): outputs within the budget, well formed, on a user
message, every scan linear in the text, and a store that keeps what was cut."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import anyio
from hypothesis import example, given, settings
from hypothesis import strategies as st
from strategies import hostile_texts, surrogate_texts

from neuron_context import (
    Compaction,
    CompletionRequest,
    ExtractiveSummarizer,
    Message,
    NeuronContextError,
    Role,
    TokenCounter,
    ToolUse,
    default_stack,
    validate,
)
from neuron_context.stores import MemoryStore
from neuron_context.strategies import TruncateLargeResultsStrategy

if TYPE_CHECKING:
    from neuron_context.counting import BaseCounter

HEURISTIC = TokenCounter()
_KEY = re.compile(r"recall: ([0-9a-f]{16})")


def _conversation(result: str) -> list[Message]:
    """A task, a small exchange, a big result, a last exchange and a new request."""
    small = ToolUse(id="a", name="lookup", input={"q": "user"})
    big = ToolUse(id="b", name="get_reservations", input={"user": "mia_li_3668"})
    last = ToolUse(id="c", name="noop", input={})
    return [
        Message.user("the task: book the cheapest flight"),
        Message.assistant("looking", tool_uses=[small]),
        Message.tool_result("a", "user mia_li_3668 id=AB12CD"),
        Message.assistant("fetching", tool_uses=[big]),
        Message.tool_result("b", result),
        Message.assistant("ok", tool_uses=[last]),
        Message.tool_result("c", "done"),
        Message.user("and now?"),
    ]


def _compact(
    budget: int, messages: list[Message], counter: BaseCounter = HEURISTIC, **options: Any
) -> list[Message]:
    stack = default_stack(budget, counter=counter, **options)
    result: list[Message] = anyio.run(stack.compact, messages)
    return result


class _Tally(TokenCounter):
    """The heuristic, adding up the characters it is asked to price (``PRICED``): a
    count of the work a compaction gives its counter, the same on any machine."""

    def estimate_text(self, text: str) -> int:
        PRICED[0] += len(text)
        return super().estimate_text(text)


PRICED = [0]

_LINEAR = 8
"""The most four times the input may cost in characters priced against the input: linear
work prices about 4x (4.1 and 4.5 here), quadratic 16x (11.6 and 14.9 before the fixes).
The time these cases take is in benches/test_bench_linear.py."""


def _priced(budget: int, text: str, **options: Any) -> int:
    PRICED[0] = 0
    _compact(budget, _conversation(text), _Tally(), **options)
    return PRICED[0]


def _texts(messages: list[Message]) -> str:
    return "\n".join(
        [m.text for m in messages] + [r.text for m in messages for r in m.tool_results]
    )


class TestLinear:
    def test_one_line_json_result_offloaded_in_linear_work(self) -> None:
        """A one-line JSON result four times as long costs about four times as much to
        price when compacted with a store (its page-sized pieces were each priced on
        the rest of the line: quadratic)."""

        def result(n: int) -> str:
            return json.dumps([{"reservation_id": f"R{i:06d}", "price": i} for i in range(n)])

        small, large = result(4_000), result(16_000)
        assert 3.9 < len(large) / len(small) < 4.1
        ratio = _priced(2_000, large, store=MemoryStore()) / _priced(
            2_000, small, store=MemoryStore()
        )
        assert ratio < _LINEAR, ratio

    def test_many_quoted_references_roll_up_in_linear_work(self) -> None:
        """A result quoting four times as many recall references the store holds costs
        about four times as much to price when indexed (the roll-up tried each split of
        the index in turn, each try pricing the whole index: quadratic)."""

        def priced(n: int) -> int:
            store = MemoryStore()
            keys = [store.put(f"an earlier entry {i}") for i in range(n)]
            text = json.dumps([{"note": f"recall: {k}", "id": i} for i, k in enumerate(keys)])
            return _priced(500, text, store=store)

        ratio = priced(4_000) / priced(1_000)
        assert ratio < _LINEAR, ratio


class TestQuotedReferences:
    def test_cut_result_is_stored_despite_keys_it_quotes(self) -> None:
        """A result that quotes recall keys the store does not hold (a log of an earlier
        run, an adversary) still has what was cut put in the store, behind a key the
        output shows (the roll-up gave up on an unreadable key: nothing was stored)."""
        quoted = {f"{i:016x}" for i in range(3_000)}
        text = json.dumps([{"note": f"recall: {k}", "id": f"ID{i}"} for i, k in enumerate(quoted)])
        store = MemoryStore()
        out = _compact(500, _conversation(text), store=store)
        shown = set(_KEY.findall(_texts(out))) - quoted
        assert shown
        assert all(store.get(key) is not None for key in shown)
        stored = "\n".join(str(store.get(key)) for key in store)
        assert "ID2999" in stored

    def test_a_quoted_key_the_store_lacks_gets_no_index_line(self) -> None:
        """An index shows a line for a key a removed result quotes only where the store
        holds it: a dead key (a log of an earlier run) read back nothing from its line."""
        store = MemoryStore()
        live = store.put("what an earlier compaction offloaded: order W100")
        dead = "0123456789abcdef"
        messages = [Message.user("the task")]
        for i in range(6):
            use = ToolUse(id=f"c{i}", name="read_log", input={"n": i})
            quoted = f"a log of an earlier run: recall: {dead}\nand recall: {live}\n"
            body = (quoted if i == 0 else "") + f"line {i} of the log\n" * 60
            messages += [
                Message.assistant(f"step {i}", tool_uses=[use]),
                Message.tool_result(use.id, body),
            ]
        messages.append(Message.user("next"))
        out = _compact(400, messages, store=store)
        lines = re.findall(r"^- .+ — recall: ([0-9a-f]{16})$", _texts(out), re.MULTILINE)
        assert live in lines
        assert dead not in lines
        assert all(store.get(key) is not None for key in lines)


_MARKER_LIKE = st.sampled_from(
    [
        "[... 12 items cut ...]",
        "[... 3 lines cut; recall: 0123456789abcdef ...]",
        "recall: fedcba9876543210",
        "## Summary of earlier conversation\n## Facts",
        "- x (12 tokens) — recall: 00000000000000ff",
        "\r\n",
        "\x00",
        "\u202eRTL",
    ]
)
_VALUES = st.one_of(
    hostile_texts(),
    surrogate_texts(),
    _MARKER_LIKE,
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**30), 10**30),
)


@st.composite
def _results(draw: st.DrawFn) -> str:
    """A JSON tool result of hostile records (keys that look like markers, values of any
    code point, NaN and infinities as ``json.dumps`` writes them), repeated to size."""
    keys = draw(st.lists(st.one_of(_MARKER_LIKE, st.text(max_size=8)), min_size=1, max_size=4))
    record = {key: draw(_VALUES) for key in keys}
    count = draw(st.integers(1, 400))
    return json.dumps([{**record, "id": f"R{i}"} for i in range(count)], ensure_ascii=False)


class TestHostileResults:
    @settings(max_examples=25, deadline=None)
    @given(result=_results(), budget=st.integers(1, 3_000), stored=st.booleans())
    def test_promises_hold(self, result: str, budget: int, stored: bool) -> None:
        """Whatever a JSON result holds, default_stack raises nothing but its own errors,
        keeps the output well formed and on a user message, within the budget when the
        task and the new request fit, and every key it shows (not quoted from the input)
        reads back."""
        messages = _conversation(result)
        store = MemoryStore() if stored else None
        try:
            out = _compact(budget, messages, store=store)
        except NeuronContextError:
            return
        validate(out)
        assert next(m for m in out if m.role is not Role.SYSTEM).role is Role.USER
        floor = HEURISTIC.estimate_messages([messages[0], messages[-1]])
        if budget >= 4 * floor:
            assert HEURISTIC.estimate_messages(out) <= budget
        if store is not None:
            quoted = set(_KEY.findall(result))
            for key in set(_KEY.findall(_texts(out))) - quoted:
                assert store.get(key) is not None, key


_ORACLE = re.compile(
    r"\[condensed: [\d,]+ characters \(about [\d,]+ tokens\) shown as an index of their values\]|"
    r"\[condensed: about [\d,]+ tokens as an index\]|"
    r"\[\.\.\. (?:[\d,]+ lines? )?\((?:[\d,]+ characters, )?about [\d,]+ tokens\) cut"
    r"(?:, naming [^\n]*)?(?:; [^\n]*)? \.\.\.\]"
    r"|\[\.\.\. [\d,]+ characters \(about [\d,]+ tokens\) cut(?:;[^\n]*)? \.\.\.\]"
    r"|\[\.\.\. [\d,]+ (?:lines?|items?) cut(?:; [^\n]*)? \.\.\.\]"
)
"""The markers as one pattern (quadratic on a line of heads): the reading to keep."""
_MARKER_PIECES = (
    "[... ",
    "12 ",
    "1,204 ",
    "lines ",
    "line ",
    "items ",
    "item ",
    "(",
    "about 5 tokens) ",
    "41 characters, ",
    "41 characters ",
    "cut",
    ", naming ",
    "; ",
    ";",
    " ...]",
    "...]",
    "\n",
    "x",
    "[condensed: about 7 tokens as an index]",
    "[condensed: 9 characters (about 3 tokens) shown as an index of their values]",
)


class TestMarkerLookalikes:
    def test_a_line_of_marker_heads_is_truncated(self) -> None:
        """A result holding marker heads with no end on one line (``[... 1 lines cut;``
        repeated, 360 KB) is not a cut text, so it is truncated (checking it took 35 s
        when the one pattern scanned to the line's end from each head; the time of four
        times the input against the input is in benches/test_bench_linear.py)."""
        text = "[... 1 lines cut; " * 20_000
        messages = _conversation(text)
        strategy = TruncateLargeResultsStrategy(max_result_tokens=100, keep_recent=0)
        out: list[Message] = anyio.run(strategy.compact, messages)
        validate(out)
        assert len(out[4].tool_results[0].text) < len(text) // 10

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.sampled_from(_MARKER_PIECES), max_size=12).map("".join))
    @example("[... 12 items cut ...]")
    @example("x[... 1,204 lines cut; recall: 0123456789abcdef ...]y")
    @example("[... 3 lines (41 characters, about 5 tokens) cut, naming a; b ...] ...]")
    @example("[... 41 characters (about 5 tokens) cut;x ...]")
    @example("[... 3 items cut; no end\n ...]")
    @example("[... 1 lines cut; " * 50 + " ...]")
    def test_marker_lookalikes_read_as_before(self, text: str) -> None:
        """A text built of marker pieces is a cut text exactly when the one-pattern
        reading (the oracle below) says so: the linear scan changes no answer."""
        strategy = TruncateLargeResultsStrategy(max_result_tokens=1, keep_recent=0)
        messages = _conversation(text + " padding" * 4)
        out: list[Message] = anyio.run(strategy.compact, messages)
        untouched = out[4].tool_results[0].text == messages[4].tool_results[0].text
        assert untouched == (_ORACLE.search(text) is not None)


_GAP = re.compile(
    r"^(?:\[\.\.\. [\d,]+ (?:lines?|items?) cut(?:; [^\n]*)? \.\.\.\]|…)$", re.MULTILINE
)
"""A gap of a choice of segments: the largest gap's marker, or a short gap (``…``)."""


class TestChosenSegments:
    @settings(max_examples=15, deadline=None)
    @given(
        values=st.lists(_VALUES, min_size=1, max_size=6),
        count=st.integers(20, 600),
        indent=st.sampled_from([None, 2]),
        ascii_only=st.booleans(),
        budget=st.sampled_from([400, 1_000, 3_000]),
    )
    def test_kept_segments_are_verbatim_and_in_order(
        self,
        values: list[Any],
        count: int,
        indent: int | None,
        ascii_only: bool,
        budget: int,
    ) -> None:
        """A recent JSON result of hostile records cut to a choice of its segments keeps
        each verbatim and in its order, whatever the records hold."""
        records = [
            {"[... 3 items cut ...]": values[i % len(values)], "id": f"ID{i}", "n": {"v": i}}
            for i in range(count)
        ]
        text = json.dumps({"reservations": records}, indent=indent, ensure_ascii=ascii_only)
        out = _compact(budget, _conversation(text))
        (kept,) = [r.text for m in out for r in m.tool_results if r.tool_use_id == "b"] or [text]
        if kept == text or not _GAP.search(kept) or kept.startswith("[condensed"):
            return  # whole, or cut in the middle: not a choice of segments
        position = 0
        for part in _GAP.split(kept):
            piece = part.strip("\n")
            if piece:
                found = text.find(piece, position)
                assert found >= 0, piece[:80]
                position = found + len(piece)


class TestScopedLoop:
    @settings(max_examples=10, deadline=None)
    @given(
        results=st.lists(st.one_of(_results(), hostile_texts()), min_size=3, max_size=25),
        budget=st.sampled_from([300, 800, 2_000]),
    )
    def test_every_key_shown_reads_back_in_its_scope_only(
        self, results: list[str], budget: int
    ) -> None:
        """A loop compacting a conversation into a scoped store shows only keys its own
        scope reads back, none of which another scope can read, whatever its tools
        returned (keys that look like markers, quoted references, any code point)."""
        base = MemoryStore()
        mine, other = base.scoped("mine"), base.scoped("other")
        stack = default_stack(budget, counter=HEURISTIC, store=mine)
        history = [Message.user("the task")]
        quoted: set[str] = set()
        for number, result in enumerate(results):
            use = ToolUse(id=f"c{number}", name="get", input={"n": number})
            history += [Message.assistant("", tool_uses=[use]), Message.tool_result(use.id, result)]
            quoted.update(_KEY.findall(result))
            if HEURISTIC.estimate_messages(history) > budget:
                history = anyio.run(stack.compact, history)
                validate(history)
                for key in set(_KEY.findall(_texts(history))) - quoted:
                    assert mine.get(key) is not None, key
                    assert other.get(key) is None, key
        assert list(other) == []


class TestEarlierSummaries:
    def test_a_facts_line_of_many_segments_is_carried(self) -> None:
        """An earlier summary whose facts line has 240,000 segments under it is carried
        within the budget, its facts line first (each segment was appended to the line
        read so far: quadratic, 41 s for 400,000; the time of four times the input
        against the input is in benches/test_bench_linear.py)."""
        lines = "".join(f"\n  seg ID{i} x" for i in range(240_000))
        earlier = Message(
            role=Role.USER, content=(Compaction(content=f"## Facts\n- get: a=1{lines}"),)
        )
        conversation = _conversation('{"a": 1}')
        out = _compact(3_000, [conversation[0], earlier, *conversation[1:]])
        validate(out)
        assert HEURISTIC.estimate_messages(out) <= 3_000
        assert "get: a=1" in _texts(out) + "".join(
            b.content for m in out for b in m.content if isinstance(b, Compaction)
        )

    def test_many_quoted_requests_are_fitted(self) -> None:
        """An earlier summary quoting 240,000 user requests is summarized again within
        its budget, the newest request kept (each request pinned first was removed from
        its section's list one by one: quadratic; the time of four times the input
        against the input is in benches/test_bench_linear.py)."""
        text = "".join(
            f"<user_request>\nplease do ID{i}\n</user_request>\n" for i in range(240_000)
        )
        earlier = Message(role=Role.USER, content=(Compaction(content=text),))
        request = CompletionRequest([earlier, Message.user("next")], max_tokens=1_500)
        summary = ExtractiveSummarizer().summarize(request)
        assert HEURISTIC.estimate_text(summary) <= 1_500
        assert "ID239999" in summary


_LINES = re.compile(r"lines? ([\d,]+)(?:-([\d,]+))? of ([\d,]+)")


class TestIndexLines:
    @settings(max_examples=10, deadline=None)
    @given(separator=st.sampled_from(["\r", "\u2028", "\x0c", "\x85", "\x1c", "\r\n", "\n"]))
    def test_line_numbers_are_within_the_text(self, separator: str) -> None:
        """The index lines of a long result name lines within it, numbered as recall and
        search number them (at "\\n"): a progress bar's "\\r"-separated output read "lines
        1-258 of 2" (its segments were numbered by ``splitlines``)."""
        text = separator.join(f"downloading {i}% of pkg{i}" for i in range(3_000)) + "\ndone\n"
        messages = [Message.user("the task")]
        use = ToolUse(id="x", name="pip_install", input={"package": "a"})
        messages += [Message.assistant("", tool_uses=[use]), Message.tool_result("x", text)]
        for number in range(6):
            use = ToolUse(id=f"y{number}", name="read", input={"n": number})
            messages += [
                Message.assistant("", tool_uses=[use]),
                Message.tool_result(use.id, "small " * 300),
            ]
        messages.append(Message.user("next"))
        out = _compact(3_000, messages, store=MemoryStore())
        total = text.count("\n")
        found = _LINES.findall(_texts(out))
        assert found
        for first, last, of in found:
            assert int(of.replace(",", "")) == total
            assert int((last or first).replace(",", "")) <= total
