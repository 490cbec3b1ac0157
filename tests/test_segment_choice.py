"""A recent tool result too big for its share: ``default_stack`` keeps the segments of a
JSON result an agent reuses (records with their keys, or rows under their header), and
the lines of a text (a definition with its body, a row, an error) unless its cut in the
middle names more, in their order, with a marker in each gap, and never more than its
cap."""

from __future__ import annotations

import itertools
import json
import re
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import counters, json_values, listings, tables, texts

from neuron_context import (
    BaseCounter,
    Message,
    TokenCounter,
    ToolUse,
    default_stack,
    validate,
)
from neuron_context._messages import segments
from neuron_context._messages.markers import is_truncated
from neuron_context._messages.partition import Partition, partition
from neuron_context._messages.segments import choose_segments
from neuron_context._strategies.default.reuse import reuse

_MARKER = re.compile(
    r"\n?\[\.\.\. [^\n]* cut[^\n]* \.\.\.\]\n?|\[condensed: [^\n]*\]\n|(?:\n|\A)…(?:\n|\Z)"
)
"""Any marker a cut writes (a gap's, a cut in the middle's, a condensed rendering's, the
short gap between kept lines)."""


_LONG = 64
"""The shortest line a choice may keep in pieces (with its line end, the least split
of a text's lines)."""


def _step(result: str) -> list[Message]:
    use = ToolUse(id="p1", name="get_details", input={"id": "3377618313"})
    return [
        Message.user("Look it up."),
        Message.assistant(tool_uses=[use]),
        Message.tool_result("p1", result),
    ]


async def _cut(result: str, budget: int, counter: BaseCounter | None = None) -> str:
    """``result`` as ``default_stack`` keeps it as the step in progress in ``budget``."""
    counter = counter or TokenCounter()
    messages = _step(result)
    output = await default_stack(budget, counter=counter).compact(messages)
    assert counter.estimate_messages(output) <= budget
    validate(output)
    assert output[-2] == messages[-2]  # the call, its id and input untouched
    assert output[-1].tool_results[0].tool_use_id == "p1"
    return output[-1].tool_results[0].text


def _pieces(cut: str) -> list[str]:
    return [piece for piece in _MARKER.split(cut) if piece.strip()]


def _row_piece(line: str, rows: list[str]) -> bool:
    """Whether ``line`` (a line of a cut) is a row of ``rows`` or a piece of one."""
    return bool(line.strip()) and any(line in row for row in rows)


def _in_order(pieces: list[str], text: str) -> bool:
    position = 0
    for piece in pieces:
        found = text.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    return True


def _starts(cut: str, text: str) -> list[int]:
    """Where each piece ``cut`` keeps starts in ``text`` (in order)."""
    found: list[int] = []
    position = 0
    for piece in _pieces(cut):
        position = text.index(piece.strip("\n"), position)
        found.append(position)
        position += len(piece.strip("\n"))
    return found


def _labelled(cut: str, key: str, value: object) -> bool:
    """Whether ``cut`` shows ``value`` under ``key``: a JSON pair, a ``key=value`` of an
    index, or a cell of a row under a header naming ``key``."""
    if f'"{key}": {json.dumps(value)}' in cut or f"{key}={value}" in cut:
        return True
    header = ""
    for line in cut.split("\n"):
        if "|" in line and ": " in line.split("|")[0]:
            header = line.split(": ", 1)[1]
        elif "|" in line and header and str(value) in line.split("|"):
            return key in header.split("|")
    return False


class TestSegmentChoice:
    """The cut of a recent JSON result keeps whole records with their keys."""

    @pytest.mark.anyio
    async def test_a_record_in_the_middle_is_kept_with_its_keys(self) -> None:
        """A record holding ids and prices, in the middle of records that hold none, is
        kept with its keys (a pair, or a row under its header), never as a bare value:
        a cut in the middle keeps the head and the tail and only names it."""
        bland = [{"note": "nothing here", "kind": "plain", "flag": False} for _ in range(60)]
        found = {
            "reservation_id": "MFRB94",
            "flight_number": "HAT170",
            "price": 1286,
            "date": "2024-05-16",
            "legs": [{"origin": "JFK", "destination": "LAX"}],
        }
        value = {"user_id": "mia_li_3668", "items": [*bland[:30], found, *bland[30:]]}
        cut = await _cut(json.dumps(value), 300)
        assert _labelled(cut, "reservation_id", "MFRB94"), cut
        assert _labelled(cut, "price", 1286), cut
        assert "naming" not in cut

    @pytest.mark.anyio
    async def test_a_nested_result_is_cut_at_its_records(self) -> None:
        """In a nested JSON result, a kept record stands whole after the key that holds
        its list (``"reservations": [``), each gap a short marker."""
        reservations = [
            {"reservation_id": f"R{i:05d}X", "status": "confirmed", "price": 1000 + i}
            for i in range(80)
        ]
        text = json.dumps({"user": {"user_id": "mia_li_3668"}, "reservations": reservations})
        cut = await _cut(text, 300)
        if not cut.startswith("[condensed"):
            assert '"reservations": [' in cut
            kept = re.findall(r'\{"reservation_id": [^}]*\}', cut)
            assert kept
            assert all(json.loads(record) in reservations for record in kept)
        assert re.search(r"\[\.\.\. [\d,]+ (?:items|lines) cut \.\.\.\]", cut), cut

    @pytest.mark.anyio
    async def test_every_kept_value_keeps_its_key(self) -> None:
        """Of an object of 300 fields, every number kept is whole and beside its key."""
        value = {f"field_{i}": 6_589_665_742 + i * 7_919 for i in range(300)}
        cut = await _cut(json.dumps(value), 400)
        shown = re.findall(r"(?<![\w.])\d{10}(?!\w)", cut)
        assert len(shown) > 20
        for number in shown:
            field = (int(number) - 6_589_665_742) // 7_919
            assert _labelled(cut, f"field_{field}", int(number)), number

    @pytest.mark.anyio
    async def test_rows_are_kept_whole_in_order_under_their_header(self) -> None:
        """A list of records of one shape is kept as whole records or as whole rows
        under their header, in the order of the result, the first and the last kept."""
        orders = [
            {"order_id": f"#W{4_000_000 + i}", "address": f"{100 + i} Oak St, Austin, TX"}
            for i in range(60)
        ]
        cut = await _cut(json.dumps({"user_id": "mia_li_3668", "orders": orders}), 400)
        kept = [int(n) for n in re.findall(r"#W(\d{7})", cut)]
        assert kept == sorted(kept)
        assert kept[0] == 4_000_000
        assert kept[-1] == 4_000_059
        for number in kept:
            address = f"{100 + number - 4_000_000} Oak St, Austin, TX"
            assert _labelled(cut, "order_id", f"#W{number}") or f"#W{number}|{address}" in cut
            assert address in cut
        assert "naming" not in cut

    @pytest.mark.anyio
    async def test_a_listing_keeps_a_definition_as_its_lines(self) -> None:
        """Of a numbered listing whose only names stand in a definition in its middle,
        the definition is kept as whole lines, its body with its header, and the gaps
        are marked (the largest in full, the others short); no marker names it."""
        body = [f"{i + 1:>6}→    total = total + 1" for i in range(300)]
        definition = [
            "   151→def make_pattern_type(reservation_id):",
            "   152→    price = lookup_price('HAT170', 1286)",
            "   153→    return PatternType(reservation_id, price)",
        ]
        body[150:153] = definition
        cut = await _cut("\n".join(body), 300)
        assert "\n".join(definition) in cut
        assert "naming" not in cut
        assert len(re.findall(r"\[\.\.\. [\d,]+ lines cut \.\.\.\]", cut)) == 1
        assert cut.startswith(body[0])
        assert cut.endswith(body[-1])

    @pytest.mark.anyio
    async def test_a_blank_line_is_not_kept_for_itself(self) -> None:
        """A blank line, or a listing's line number alone, holds no fact: it is kept
        beside a kept line, never alone between two gaps."""
        body = [
            f"{i + 1:>6}→" if i % 3 == 2 else f"{i + 1:>6}→    step_{i} = run('W{i:05d}')"
            for i in range(300)
        ]
        for text in ("\n".join(body), "\n".join(line.split("→", 1)[1] for line in body)):
            cut = await _cut(text, 300)
            assert "naming" not in cut
            assert not re.search(r"(?:…|\.\.\.\])\n(?:\s*\d+→)?\n(?:…|\[\.\.\. )", cut), cut

    @pytest.mark.anyio
    async def test_a_listing_cut_again_counts_what_was_cut_before(self) -> None:
        """A listing cut to its lines and then cut again to a smaller cap has no two
        markers in a row, and its gaps count the lines the first cut left out."""
        lines = [
            f'{i + 1:>6}→    total_{i} = lookup("HAT{i:03d}", {i * 7_919})' for i in range(300)
        ]
        first = await _cut("\n".join(lines), 600)
        assert "naming" not in first
        again = await _cut(first, 250)
        assert not re.search(r"(?:…|\.\.\.\])\n(?:…|\[\.\.\. )", again), again
        kept = [line for line in again.split("\n") if line in lines]
        counted = sum(int(n) for n in re.findall(r"\[\.\.\. (\d+) lines cut", again))
        assert kept
        assert counted + len(kept) + again.count("\n…") <= len(lines)
        assert counted + len(kept) + 2 * again.count("\n…") >= len(lines) - 150

    @pytest.mark.anyio
    async def test_a_text_whose_cut_in_the_middle_names_more_keeps_it(self) -> None:
        """Long lines of prose each naming one path: a few whole lines would keep a few
        paths, the cut in the middle names many, so the text is cut in the middle."""
        pad = "the team talked about the change at length before it was merged " * 3
        lines = [f"{pad}see src/module_{i}/handlers/file_{i}.py {pad}" for i in range(60)]
        cut = await _cut("\n".join(lines), 300)
        assert "naming" in cut
        assert sum(f"src/module_{i}/handlers/file_{i}.py" in cut for i in range(60)) > 5

    @pytest.mark.anyio
    async def test_a_log_in_brackets_is_text(self) -> None:
        """A text that starts like JSON but is not (a log of ``[branch sha]`` lines) is
        cut as a text (its lines or its middle), never as JSON items."""
        lines = [
            f"[main {i * 2_654_435_761 % 16**7:07x}] fix order W{i} total {i * 7}"
            for i in range(300)
        ]
        cut = await _cut("\n".join(lines), 400)
        assert cut.startswith(lines[0])
        assert not re.search(r"\[\.\.\. \d+ items? cut", cut)


class TestSegmentChoiceProperties:
    """Whatever the text and the budget, the cut fits and keeps the text verbatim."""

    @pytest.mark.anyio
    @given(
        lines=st.lists(texts(max_size=60), max_size=80),
        budget=st.integers(min_value=120, max_value=800),
    )
    async def test_a_text_keeps_verbatim_pieces_in_order(
        self, lines: list[str], budget: int
    ) -> None:
        """Any text, any budget: the cut costs no more than the budget allows, and
        what it keeps is the text's own, in its order."""
        text = "\n".join(lines)
        cut = await _cut(text, budget)
        assert _in_order(_pieces(cut), text)

    @pytest.mark.anyio
    @given(text=listings(), budget=st.integers(min_value=120, max_value=800))
    async def test_a_listing_fits_and_keeps_its_lines_whole(self, text: str, budget: int) -> None:
        """Any listing (code, logs, rows holding names), any budget: the cut costs no
        more than the budget allows and keeps the text's own pieces in order; a cut
        that chose lines keeps each line whole (but a line too long for a quarter of
        the space, kept in pieces)."""
        cut = await _cut(text, budget)
        assert _in_order(_pieces(cut), text)
        if "naming" not in cut and " characters" not in cut and "tokens)" not in cut:
            lines = text.split("\n")
            for piece in _pieces(cut):
                for kept in piece.strip("\n").split("\n"):
                    assert any(
                        kept == line or (kept in line and len(line) >= _LONG) for line in lines
                    ), kept

    @pytest.mark.anyio
    @given(
        value=st.lists(json_values(), max_size=60)
        | st.dictionaries(st.text(max_size=8), json_values(), max_size=60),
        indent=st.sampled_from([None, 1]),
        budget=st.integers(min_value=120, max_value=800),
    )
    async def test_a_json_result_fits(self, value: object, indent: int | None, budget: int) -> None:
        """Any JSON result, compact or indented, any budget: the output fits and stays
        well formed, and a cut that is not condensed keeps the text's own pieces."""
        text = json.dumps(value, indent=indent)
        cut = await _cut(text, budget)
        if not cut.startswith("[condensed"):
            assert _in_order(_pieces(cut), text)


def _plain(line: str) -> str:
    """``line`` on one line and without a table's cells (``|``, tabs)."""
    return re.sub(r"[\n\r|\t\x0b\x0c\x1c-\x1e\x85\u2028\u2029]", " ", line)


def _words(segment: str) -> dict[str, float]:
    return {word: 1.0 for word in segment.split() if any(c.isdigit() for c in word)}


class TestChooseSegments:
    """The choice itself, on any text: within its cap, verbatim, in order."""

    @given(
        text=st.lists(texts(max_size=80), max_size=60).map("\n".join)
        | json_values().map(json.dumps)
        | st.lists(json_values(), max_size=40).map(lambda v: json.dumps(v, indent=2)),
        cap=st.integers(min_value=0, max_value=400),
        counter=counters(),
    )
    def test_within_its_cap_verbatim_in_order(
        self, text: str, cap: int, counter: TokenCounter
    ) -> None:
        """Any text, any cap: the choice costs at most the cap, and between its
        markers is the text's own, in its order."""
        chosen = choose_segments(text, cap, counter, weigh=_words)
        assert counter.estimate_text(chosen.text) <= cap
        assert _in_order(_pieces(chosen.text), text)

    @given(
        before=st.lists(texts(max_size=40), max_size=4),
        code=st.lists(st.tuples(st.integers(0, 12), texts(max_size=40)), min_size=2, max_size=40),
        after=st.lists(texts(max_size=40), max_size=4),
        first=st.integers(1, 9_000),
        gutter=st.sampled_from([":", "→", "\t"]),
    )
    def test_an_editor_s_lines_never_stand_over_a_file_s(
        self,
        before: list[str],
        code: list[tuple[int, str]],
        after: list[str],
        first: int,
        gutter: str,
    ) -> None:
        """In any editor's view (its own lines, then a file's numbered lines at any
        indent, then its own again), a file's line stands under another of the file's
        lines or under none, never under a line the editor wrote around them, and the
        editor's lines after them never stand under a file's line."""
        head = [_plain(line).lstrip("0123456789 ") for line in before]
        tail = [_plain(line).lstrip("0123456789 ") for line in after]
        body = [
            f"{first + n}{gutter}{' ' * indent}x{_plain(line)}"
            for n, (indent, line) in enumerate(code)
        ]
        text = "\n".join([*head, *body, *tail])
        parts = partition(text, 10_000)
        offset = sum(len(line) + 1 for line in head)
        numbered = set()
        for line in body:
            numbered.add(parts.starts.index(offset))
            offset += len(line) + 1
        for index in numbered:
            parent = parts.parents[index]
            assert parent < 0 or parent in numbered, (index, parent, text)
        for line in tail:
            if offset < len(text):
                index = parts.starts.index(offset)
                assert parts.parents[index] not in numbered, (index, text)
            offset += len(line) + 1

    @pytest.mark.parametrize("end", ["\n", "\r\n"])
    def test_a_colon_numbered_listing_keeps_a_body_line_with_its_header(self, end: str) -> None:
        """SWE-agent numbers a listing's lines ``1475:`` and the code's indent follows
        the colon (with ``\\r\\n`` line ends from its terminal): a kept body line keeps
        the definition it is indented in, and a numbered blank line (``140:``) is not a
        line at the margin that the lines after it would stand under."""
        lines = [f"{i + 1}:        total = total + step" for i in range(300)]
        lines[139] = "140:"
        lines[149] = "150:    def run(self):"
        lines[151] = "152:        step = lookup('W00151', 1151)"

        def names(segment: str) -> dict[str, float]:  # the line's words after its number
            return _words(segment.partition(":")[2])

        chosen = choose_segments(end.join(lines), 60, TokenCounter(), weigh=names)
        assert lines[151] in chosen.text
        assert lines[149] in chosen.text
        assert "140:" not in chosen.text

    def test_a_file_s_lines_do_not_stand_under_the_editor_s(self) -> None:
        """An editor's view opens with its own lines (``[File: ...]``, ``(1456 more lines
        above)``) before the file's numbered lines: a kept body line keeps its
        definition, not the editor's line above the window (which the file's first
        lines, indented deeper than the definition, made its parent)."""
        lines = [
            "[File: src/marshmallow/fields.py (1997 lines total)] " + "x " * 40,
            "(1456 more lines above)",
        ]
        lines += [f"{n}:            self.units," for n in range(1457, 1470)]
        lines += ["1470:", "1471:    def _serialize(self, value, attr, obj, **kwargs):"]
        lines += ["1472:        if value is None:", "1473:            return None"]
        lines += ["1474:        base_unit = dt.timedelta(**{self.precision: 1})"]
        lines += ["1475:        return int(value.total_seconds() / W00475)"]
        lines += [f"{n}:        pass" for n in range(1476, 1556)]
        lines += ["(441 more lines below)"]

        def names(segment: str) -> dict[str, float]:  # the line's words after its number
            return _words(segment.partition(":")[2])

        chosen = choose_segments("\n".join(lines), 80, TokenCounter(), weigh=names).text
        assert "1475:        return int(value.total_seconds() / W00475)" in chosen
        assert "1471:    def _serialize(" in chosen
        assert "(1456 more lines above)" not in chosen

    def test_a_piece_of_a_long_line_keeps_its_start(self) -> None:
        """A line longer than a quarter of the space is kept in pieces cut at spaces,
        and a piece is kept only with the line's start (what the line is about)."""
        lines = [
            f"reservation_id=R{i:04d}X " + " ".join(f"HAT{i}{j:03d}" for j in range(60))
            for i in range(20)
        ]
        text = "\n".join(lines)
        chosen = choose_segments(text, 300, TokenCounter(), weigh=_words)
        kept = _pieces(chosen.text)
        assert kept
        for piece in kept:
            line = next(line for line in lines if piece.strip("\n").split("\n")[0] in line)
            assert line[:20] in chosen.text

    def test_a_huge_text_is_weighed_on_a_bounded_share(self) -> None:
        """A listing of 20,000 lines cut to a few hundred tokens has only a few thousand
        of its lines weighed (those at its ends and those densest with marks of names),
        and keeps its one line dense with names."""
        weighed: list[str] = []

        def counting(segment: str) -> dict[str, float]:
            weighed.append(segment)
            return _words(segment)

        lines = [f"{i + 1:>6}→    total = total + step" for i in range(20_000)]
        lines[12_345] = "  12346→    book('HAT170', 'MFRB94', price=1286, seats=[4, 12])"
        chosen = choose_segments("\n".join(lines), 300, TokenCounter(), weigh=counting)
        assert len(weighed) <= 2_048
        assert lines[12_345] in chosen.text
        assert TokenCounter().estimate_text(chosen.text) <= 300

    def test_a_long_line_is_cut_after_its_sentences(self) -> None:
        """A paragraph on one line (a page's) is cut into pieces after its sentences, so
        the piece kept for its name is whole sentences, never a run of words cut from
        one."""
        sentences = ["One more step of the plan was discussed at some length by the team."] * 40
        sentences[23] = "The booking went through under reservation MFRB94 for the two of them."
        text = "Notes: " + " ".join(sentences)
        chosen = choose_segments(text, 120, TokenCounter(), weigh=_words)
        assert sentences[23] in chosen.text
        assert all(text[at - 2 : at] == ". " for at in _starts(chosen.text, text)[1:])

    def test_a_list_on_one_line_is_cut_after_its_elements(self) -> None:
        """A list of objects on one line of text (a search's links) is cut into pieces
        after its elements, so a kept link keeps its title beside its address."""
        links = [
            f'{{"title": "Issue {1_000 + i} in the tracker about scrolling", '
            f'"url": "https://example.org/issues/{1_000 + i}"}}'
            for i in range(40)
        ]
        text = "Links: [" + ", ".join(links) + "]"
        chosen = choose_segments(text, 150, TokenCounter(), weigh=_words)
        kept = [link for link in links if link in chosen.text]
        assert len(kept) >= 2
        assert all(text[at - 2 : at] == ", " for at in _starts(chosen.text, text)[1:])

    def test_a_line_holding_names_beside_a_kept_one_is_kept_first(self) -> None:
        """Of lines holding as many names per token, the one beside a kept line is kept
        first: a hit with its neighbours, as ``grep -C`` shows it."""
        lines = [f"step {i} ran as planned with nothing to note here" for i in range(120)]
        for i in range(30, 90, 12):
            lines[i] = f"booked R{i}A1 and R{i}B2 for the trip"
            lines[i + 1] = f"charged P{i}C3 on the card for it"
        chosen = choose_segments("\n".join(lines), 90, TokenCounter(), weigh=_words)
        kept = [i for i in range(30, 90, 12) if lines[i] in chosen.text]
        assert kept
        assert all(f"{lines[i]}\n{lines[i + 1]}" in chosen.text for i in kept)

    @pytest.mark.parametrize("cap", [20, 28, 36])
    def test_a_record_cut_to_a_fifth_keeps_its_elements(self, cap: int) -> None:
        """A record on one line cut to a fifth of itself or less still keeps a choice of
        its elements (its id first) within the cap: the gaps its elements leave are
        priced as they are written, so the choice is not shrunk to nothing."""
        record = {
            "reservation_id": "H8Q05L",
            "user_id": "sophia_silva_7557",
            "origin": "JFK",
            "destination": "ATL",
            "flight_type": "one_way",
            "cabin": "basic_economy",
            "flights": [{"flight_number": "HAT268", "date": "2024-05-24", "price": 74}],
            "passengers": [{"first_name": "Harper", "last_name": "Silva", "dob": "1990-01-01"}],
            "created_at": "2024-05-01T10:00:00",
            "total_baggages": 0,
            "insurance": "no",
        }
        text = json.dumps(record)
        counter = TokenCounter()
        chosen = choose_segments(text, cap, counter, weigh=_words)
        assert chosen.text.startswith('{"reservation_id": "H8Q05L", ')
        assert counter.estimate_text(chosen.text) <= cap
        assert _in_order(_pieces(chosen.text), text)

    @pytest.mark.parametrize("reference", ["", "recall: 0123456789abcdef"])
    def test_a_json_cut_marks_its_largest_gap_in_full_and_the_others_short(
        self, reference: str
    ) -> None:
        """A JSON result cut to a few records has one full marker, at its largest gap
        (with the reference, where the whole result is), and a one-token ``…`` line in
        every other gap: where the space is small, a marker in every gap took the room
        of the records (six markers in a reservation cut to 113 tokens)."""
        records: list[dict[str, object]] = [
            {"note": "nothing here", "kind": "plain"} for _ in range(40)
        ]
        for i in (9, 17, 26):
            records[i] = {"reservation_id": f"R{i:04d}X", "price": 1000 + i}
        text = json.dumps({"user_id": "mia_li_3668", "reservations": records})
        counter = TokenCounter()
        cut = choose_segments(text, 150, counter, weigh=reuse, reference=reference).text
        gaps = [int(n) for n in re.findall(r"\[\.\.\. (\d+) items? cut", cut)]
        shorts = cut.split("\n").count("…")
        assert len(gaps) == 1, cut
        assert shorts >= 2, cut
        assert all(f"R{i:04d}X" in cut for i in (9, 17, 26)), cut
        assert counter.estimate_text(cut) <= 150
        assert is_truncated(cut)
        assert cut.count(reference or "recall:") == (1 if reference else 0)
        (full,) = [line for line in cut.split("\n") if line.startswith("[... ")]
        assert reference in full
        # The full marker's gap is the largest (9 to 16, 18 to 25, 27 on: 8 items).
        assert gaps[0] >= 7, cut

    @given(
        text=json_values().map(json.dumps)
        | st.lists(json_values(), max_size=40).map(lambda v: json.dumps(v, indent=2)),
        cap=st.integers(min_value=0, max_value=400),
        counter=counters(),
    )
    def test_a_cut_has_one_full_marker_and_reads_as_cut(
        self, text: str, cap: int, counter: TokenCounter
    ) -> None:
        """Any JSON text, any cap: a choice that cut something holds exactly one full
        gap marker (its other gaps are ``…`` lines) and reads as a cut text, so a
        strategy that skips cut texts never cuts it again."""
        chosen = choose_segments(text, cap, counter, weigh=_words).text
        if chosen and chosen != text:
            full = re.findall(r"^\[\.\.\. [\d,]+ (?:items?|lines?) cut \.\.\.\]$", chosen, re.M)
            assert len(full) == 1, chosen
            assert is_truncated(chosen)

    def test_a_record_s_fields_stand_with_its_first_field(self) -> None:
        """A record (an object in a list) cut into its fields keeps a field only beside
        the record's first field, which says whose it is: a flight's price with the
        flight, never ``"price": 117`` alone."""
        flights = [
            {"origin": o, "destination": d, "flight_number": n, "date": "2024-05-26", "price": p}
            for o, d, n, p in (
                ("SEA", "DFW", "HAT113", 117),
                ("DFW", "ATL", "HAT282", 140),
                ("ATL", "SEA", "HAT239", 158),
            )
        ]
        record = {
            "reservation_id": "UM3OG5",
            "user_id": "omar_rossi_1241",
            "origin": "SEA",
            "destination": "DFW",
            "flight_type": "round_trip",
            "cabin": "economy",
            "flights": flights,
            "passengers": [{"first_name": "Liam", "last_name": "Lee", "dob": "1989-08-12"}],
            "payment_history": [{"payment_id": "gift_card_8190333", "amount": 830}],
            "created_at": "2024-05-10T09:21:39",
            "insurance": "no",
        }
        text = json.dumps(record)
        for cap in range(50, 130, 6):
            cut = choose_segments(text, cap, TokenCounter(), weigh=reuse).text
            for flight in flights:
                if f'"price": {flight["price"]}' in cut:
                    assert f'{{"origin": "{flight["origin"]}", ' in cut, (cap, cut)

    @given(
        count=st.integers(1, 30),
        fields=st.lists(st.sampled_from(("note", "price", "date", "code")), max_size=4),
        split=st.sampled_from([8, 24, 64, 400]),  # 8: no id is short enough to lead
    )
    def test_a_field_of_a_record_stands_under_its_first(
        self, count: int, fields: list[str], split: int
    ) -> None:
        """Any list of records of any fields, any split: a field of a record that is cut
        into its fields stands under the record's first field (its id) where that is no
        longer than the split (else under the record's opener, as the first field
        does); the first field of an object that is not in a list (a record's nested
        ``"prices": {...}``) leads nothing."""
        values = {"note": "nothing to see here", "price": 1286, "date": "2024-05-26", "code": 7}
        records = [
            {
                "id": f"R{i:04d}X",
                **{field: values[field] for field in fields},
                "prices": {"economy": 100 + i, "business": 200 + i},
            }
            for i in range(count)
        ]
        text = json.dumps({"user_id": "mia_li_3668", "records": records})
        parts = partition(text, split)
        segments = [text[a:b] for a, b in itertools.pairwise(parts.starts)]
        lead = -1
        for index, segment in enumerate(segments):
            parent = parts.parents[index]
            if segment.startswith('"id": '):
                assert segments[parent].endswith("{"), (segment, segments[parent])
                lead = index if len(segment) <= split else parent  # else: not a lead
            elif segment.startswith((*(f'"{field}": ' for field in fields), '"prices": ')):
                assert parent == lead, (segment, segments[parent])
            elif segment.startswith('"business": '):
                assert segments[parent].startswith('"prices": {'), (segment, segments[parent])

    @given(
        depth=st.integers(1, 3),
        width=st.integers(1, 6),
        fields=st.lists(st.sampled_from(("status", "date", "price")), min_size=1, max_size=3),
        cap=st.integers(min_value=30, max_value=600),
    )
    def test_a_kept_segment_is_kept_with_what_encloses_it(
        self, depth: int, width: int, fields: list[str], cap: int
    ) -> None:
        """Records nested in records (a user's reservations, each with its flights),
        any cap: every kept segment is kept with its parent (the opener it stands in,
        ``"reservations": [``, or the record's first field), however deep it is."""
        values = {"status": "confirmed", "date": "2024-05-16", "price": 117}

        def records(level: int, path: str) -> list[dict[str, object]]:
            return [
                {
                    "id": f"{path}{i}",
                    **{field: values[field] for field in fields},
                    **({"kids": records(level + 1, f"{path}{i}.")} if level < depth else {}),
                }
                for i in range(width)
            ]

        text = json.dumps({"user_id": "mia_li_3668", "reservations": records(1, "R")})
        orphans: list[list[int]] = []
        assemble = segments._assemble

        def spy(
            text: str, parts: Partition, kept: list[bool], costs: list[int], reference: str
        ) -> str:
            parents = parts.parents
            orphans.append(
                [i for i, k in enumerate(kept) if k and parents[i] >= 0 and not kept[parents[i]]]
            )
            return assemble(text, parts, kept, costs, reference)

        with mock.patch.object(segments, "_assemble", spy):
            chosen = choose_segments(text, cap, TokenCounter(), weigh=reuse).text
        if chosen and chosen != text:
            assert orphans, chosen
            assert not orphans[0], chosen  # the first choice, before any overshoot fix

    @pytest.mark.parametrize("split", [24, 48])
    def test_a_record_whose_first_field_is_null_is_led_by_none(self, split: int) -> None:
        """A record whose first field is ``null`` (``"id": null``) says whose nothing
        is: its other fields stand under the record's opener, not under the null."""
        records = [
            {"id": None, "code": f"C{i:04d}", "price": 100 + i, "note": "nothing to see here"}
            for i in range(8)
        ]
        text = json.dumps({"user_id": "mia_li_3668", "records": records})
        parts = partition(text, split)
        pieces = [text[a:b] for a, b in itertools.pairwise(parts.starts)]
        fields = [i for i, piece in enumerate(pieces) if piece.startswith(('"code"', '"price"'))]
        assert fields, pieces  # the records are cut into their fields
        for index in fields:
            assert pieces[parts.parents[index]].endswith("{"), pieces[parts.parents[index]]

    @given(drawn=tables(), cap=st.integers(min_value=0, max_value=300), counter=counters())
    def test_a_table_s_header_never_stands_without_its_rows(
        self, drawn: tuple[str, list[tuple[str, list[str]]]], cap: int, counter: TokenCounter
    ) -> None:
        """Any tables (bars, tabs, markdown; long headers; prose right after one), any
        cap: a piece of a header is kept with a piece of a row of its table."""
        text, found = drawn
        lines = choose_segments(text, cap, counter, weigh=reuse).text.split("\n")
        for number, (header, rows) in enumerate(found):
            if header and any(f"_{'xyz'[number]}" in line for line in lines):
                assert any(_row_piece(line, rows) for line in lines)

    @given(drawn=tables(), split=st.sampled_from([64, 100, 400]))
    def test_a_table_s_first_line_is_a_header_only_where_it_names_columns(
        self, drawn: tuple[str, list[tuple[str, list[str]]]], split: int
    ) -> None:
        """A header is a header in every piece of it; a headerless table's first row is
        a row as any (kept for itself)."""
        text, found = drawn
        parts = partition(text, split)
        starts = parts.starts
        at = 0
        for header, rows in found:
            line = header or rows[0]
            at = f"\n{text}\n".index(f"\n{line}\n", at)  # where the line starts in text
            pieces = [i for i in range(len(starts) - 1) if at <= starts[i] < at + len(line)]
            if header:
                assert set(pieces) <= parts.headers
            else:
                assert not parts.headers.intersection(pieces)

    @pytest.mark.parametrize(
        ("header", "rows"),
        [
            ("passengers: first_name|last_name|dob|seat", "plain{}|words|here|ok"),
            ("first_name\tlast_name\tdob\tseat", "plain{}\twords\there\tok"),
            ("| first name | last name | dob | seat |\n|---|---|---|---|", "| p{} | w | h | ok |"),
        ],
    )
    def test_prose_right_after_a_table_does_not_stand_under_its_header(
        self, header: str, rows: str
    ) -> None:
        """A line of prose right after a table's rows (no blank line) stands under none
        of the table's lines: kept for itself, it never brings the header alone."""
        body = [rows.format(i) for i in range(20)]
        text = "\n".join(
            [
                header,
                *body,
                "Payment id credit_card_7815826 charged for YAX4DR",
                *(f"noise {i} words" for i in range(15)),
            ]
        )
        column = header.split("\n", maxsplit=1)[0]
        alone = []
        for cap in range(10, 120):
            lines = choose_segments(text, cap, TokenCounter(), weigh=reuse).text.split("\n")
            if column in lines and not any(_row_piece(line, body) for line in lines):
                alone.append(cap)
        assert not alone

    @pytest.mark.parametrize(("start", "end", "between"), [("| ", " |", " | "), ("", "", "\t")])
    def test_a_long_header_is_a_header_in_every_piece(
        self, start: str, end: str, between: str
    ) -> None:
        """A header longer than a segment (column names with spaces) is cut into pieces,
        none kept without a row."""
        names = [f"column {name} code name" for name in "abcdefgh"]
        header = start + between.join(names) + end
        rows = [start + between.join(f"plain{j}" for j in range(8)) + end] * 30
        text = "\n".join([header, *rows, *(f"noise {i} words here" for i in range(40))])
        alone = []
        for cap in range(10, 200, 2):
            out = choose_segments(text, cap, TokenCounter(), weigh=reuse).text
            if "column" in out and "plain0" not in out:
                alone.append(cap)
        assert not alone

    @pytest.mark.parametrize(
        "rows",
        [
            ["9f3ab21|alice|2024-05-18|fix YAX4DR refund"]
            + [f"{i:07x}|bob|2024-04-{i + 1:02}|chore: tidy docs" for i in range(1, 12)],
            ["9f3ab21\talice\t2024-05-18\tfix YAX4DR refund"]
            + [f"{i:07x}\tbob\t2024-04-{i + 1:02}\tchore: tidy docs" for i in range(1, 12)],
        ],
    )
    def test_a_headerless_table_keeps_its_first_row(self, rows: list[str]) -> None:
        """A table's first line holding values (a commit's id, a date) is a row: kept for
        what it holds as any other."""
        before = [f"step {i}: compiling module number {i}" for i in range(8)]
        text = "\n".join([*before, "", *rows, "", "done."])
        lost = [
            cap
            for cap in range(30, 200, 10)
            if rows[0] not in choose_segments(text, cap, TokenCounter(), weigh=reuse).text
        ]
        assert not lost

    def test_lines_of_pipes_are_not_a_header(self) -> None:
        """Two shell pipelines, two log lines split by bars: neither is a header."""
        for text in (
            "ran: cat a.txt | grep ERR | wc -l\nsort b.txt | uniq -c | head -20\n",
            "INFO | worker started | ok\nINFO | job 7 done | 12s\n",
        ):
            assert not partition(text, 64).headers

    @pytest.mark.parametrize("cap", range(30, 130, 6))
    def test_a_table_s_header_is_kept_only_with_a_row(self, cap: int) -> None:
        """A table's header names its columns: it is kept with a row under it, never
        for itself, however many names its column names look like."""
        header = "passenger_first_name|passenger_last_name|seat_class_code|meal_choice_code"
        rows = [f"ann{i}|lee|economy|veg" for i in range(30)]
        text = "\n".join(
            ["booking_ref=QX7Y2Z, status=confirmed", f"passengers: {header}", *rows, "done"]
        )
        chosen = choose_segments(text, cap, TokenCounter(), weigh=reuse)
        lines = chosen.text.split("\n")
        if f"passengers: {header}" in lines:
            assert any(row in lines for row in rows)


class TestSections:
    """A text's lines keep their meaning: a line of a section with its heading, a line of
    a paragraph with the paragraph's first line."""

    def test_numbered_lines_that_do_not_run_on_keep_their_heading(self) -> None:
        """Lines numbered like an editor's but not in a run (a list of ports, ``22: ssh``)
        are lines as any: a line after them still stands under its section's heading."""
        text = "# Report\n## Ports\n22: ssh\n80: http\nThe scan found two open ports.\n"
        parts = partition(text, 10_000)
        lines = text.split("\n")
        line_of = {parts.starts[i]: i for i in range(len(parts.parents))}
        offsets = [sum(len(line) + 1 for line in lines[:n]) for n in range(len(lines))]
        found = line_of[offsets[4]]
        assert parts.parents[found] == line_of[offsets[1]]  # under "## Ports"

    def test_a_comment_in_a_numbered_listing_is_not_a_heading(self) -> None:
        """In a numbered listing ``# ...`` is a comment: the definitions after it do not
        stand under it, so keeping one of them does not cost the comment."""
        source: list[str] = []
        for i in range(60):
            if i == 3:
                source += ["# NOTE: everything below is kept for the legacy billing system", ""]
            source += [f"def handler_{i}(request):", f"    return lookup('W{i:05d}')", ""]
        text = "\n".join(f"{n + 1:6}\t{line}" for n, line in enumerate(source))
        chosen = choose_segments(text, 150, TokenCounter(), weigh=_words).text
        assert "lookup('W00030')" in chosen or "lookup('W00001')" in chosen
        assert "# NOTE" not in chosen

    def test_a_line_of_a_section_keeps_its_heading_and_paragraph(self) -> None:
        """Of a markdown page, the one line holding names deep in a section is kept
        with its section's headings and the first line of its paragraph."""
        filler = "the text goes on about the topic without naming anything in it"
        parts = ["# Guide", filler, ""]
        for section in range(12):
            parts += [f"## Part {section}", "", "This part covers one more topic.", filler]
            if section == 7:
                parts += [filler, "and the booking uses reservation MFRB94 at 1286 dollars."]
            parts += [filler, ""]
        text = "\n".join(parts)
        chosen = choose_segments(text, 120, TokenCounter(), weigh=_words).text
        assert "reservation MFRB94 at 1286" in chosen
        before = chosen[: chosen.index("and the booking")]
        assert "\n## Part 7\n" in before
        assert before.rfind("This part covers one more topic.") > before.index("## Part 7")


class TestAUsersWords:
    """A user's words are cut in the middle, never chosen by names: the lines a user
    writes around what they paste (what to do, what not to) hold no names to weigh."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("budget", [1_500, 2_500])
    async def test_a_user_s_instructions_around_a_pasted_log_are_kept(self, budget: int) -> None:
        """A user message of instructions, a pasted log and a question, cut at the water
        level, keeps the instructions before the log and the question after it."""
        counter = TokenCounter()
        asks = [
            "Please change the plan.",
            "Do not touch the database layer at all.",
            "Keep the public interface exactly as it is.",
            "Here is the log:",
        ]
        log = [
            f"2024-05-0{i % 9 + 1} ERROR worker_{i} failed to connect to db-shard-{i * 7} "
            f"at src/pool/conn_{i}.py:{100 + i}"
            for i in range(120)
        ]
        question = "Don't run the migrations again, they are slow."
        messages = [
            Message.user("Fix the flaky connection pool."),
            Message.assistant("Looking at the pool now."),
            Message.user("\n".join([*asks, *log, question])),
            Message.assistant("Understood, I will only touch the retry loop."),
            Message.user("Go on."),
        ]
        output = await default_stack(budget, counter=counter).compact(messages)
        assert counter.estimate_messages(output) <= budget
        text = "\n".join(message.text for message in output)
        assert "ERROR worker_0 " in text  # the pasted log was cut, not kept whole
        assert "ERROR worker_60 " not in text
        for line in [*asks, question]:
            assert line in text, line


class TestColonNumberedListings:
    """SWE-agent numbers a listing's lines ``150:`` with the code's indent after it."""

    @pytest.mark.anyio
    async def test_a_colon_numbered_definition_is_kept_with_its_body_line(self) -> None:
        """A tool's listing numbered SWE-agent's way (``150:    def run(self):``, the
        indent after the colon), cut at the water level, keeps the line holding names in
        its middle with the definition it stands in."""
        lines = [f"{i + 1}:        total = total + step" for i in range(300)]
        lines[149] = "150:    def run(self):"
        lines[151] = "152:        step = lookup('W00151', 1151)"
        cut = await _cut("\n".join(lines), 120)
        assert "152:        step = lookup('W00151', 1151)" in cut, cut
        assert "150:    def run(self):" in cut, cut


class TestLongLists:
    def test_only_a_lists_first_elements_are_weighed_by_their_place(self) -> None:
        """The elements of a long list of scalars past its sixteenth keep the middle's
        weight (1.0), so ``_weighed`` still caps how many middle segments it weighs (a
        list of 100,000 ids weighed every element)."""
        pieces = ["[", *(f'"R{n:05d}", ' for n in range(40)), "]"]
        parents = [-1, *([0] * 40), -1]
        edge = [1.0] * len(pieces)
        segments._walk_order(pieces, parents, edge)
        assert edge[1] == 2.0
        assert all(weight > 1.0 for weight in edge[1:17])
        assert edge[17:41] == [1.0] * 24
