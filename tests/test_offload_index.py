"""Offloading item by item, under an index (CONTRACT §8, granularity): each removed
message, tool result (with its call) or page of a long text is its own entry under its
own key, and the output's index names each with its key."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from offload_support import keys_in, page_keys, unrecoverable
from strategies import conversations

from neuron_context import (
    Compaction,
    MemoryStore,
    Message,
    Role,
    SQLiteStore,
    Store,
    TokenCounter,
    ToolUse,
    default_stack,
    validate,
)
from neuron_context._stores.entries import (
    INDEX_HEADING,
    PAGE_TOKENS,
    SEGMENT_TOKENS,
    Entry,
    entries_of,
    index_lines,
    is_index,
)
from neuron_context._stores.index import index_reference
from neuron_context._stores.paged import page_keys as read_page_keys
from neuron_context._stores.paged import pages_line, words_of
from neuron_context._stores.rollup import DIRECTORY_HEADING
from neuron_context._stores.serialized import Content
from neuron_context.stores import RECALL_INSTRUCTIONS, recall

COUNTER = TokenCounter()
_LINE = re.compile(r"^- (.+) — recall: ([0-9a-f]{16})$", re.MULTILINE)


def _reads(store: MemoryStore) -> list[str]:
    """The keys ``store`` is asked for from now on, in order (its ``get`` counted)."""
    reads = store.get
    read: list[str] = []

    def counting(key: str) -> Content | None:
        read.append(key)
        return reads(key)

    store.get = counting  # type: ignore[method-assign]
    return read


@contextmanager
def _store(kind: str) -> Iterator[Store]:
    store: Store = MemoryStore() if kind == "memory" else SQLiteStore(":memory:")
    yield store


def _lines(messages: list[Message]) -> list[tuple[str, str]]:
    """The index lines (what, key) of ``messages``, in order."""
    found: list[tuple[str, str]] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, Compaction):
                found += _LINE.findall(block.content)
    return found


def _size(store: Store, key: str) -> int:
    """What the entry under ``key`` costs."""
    content = store.get(key)
    assert content is not None
    if isinstance(content, str):
        return COUNTER.estimate_text(content)
    return COUNTER.estimate_messages(content)


def _session(turns: int, size: int) -> list[Message]:
    """A coding session: each turn a read of a file of ``size`` lines and an answer."""
    messages = [Message.user("Fix the failing test in src/app.py")]
    for turn in range(turns):
        use = ToolUse(id=f"c{turn}", name="read_file", input={"path": f"src/m{turn}.py"})
        messages.append(Message.assistant(f"Reading module {turn}.", tool_uses=[use]))
        lines = "\n".join(
            f"def f{turn}_{i}(x): return x * {i}  # id W{turn}{i:04d}" for i in range(size)
        )
        messages.append(Message.tool_result(f"c{turn}", lines))
        messages.append(Message.assistant(f"Module {turn} looks fine."))
        messages.append(Message.user(f"Go on with module {turn + 1}."))
    return messages


sessions = st.builds(_session, st.integers(1, 12), st.sampled_from([5, 40, 400, 1500]))


@settings(max_examples=25, deadline=None)
@given(messages=sessions | conversations(max_turns=8), share=st.sampled_from([0.1, 0.25, 0.5]))
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_every_removed_text_behind_a_key_the_output_shows(
    kind: str, messages: list[Message], share: float
) -> None:
    """Every text default_stack removes is in the output or behind a key it shows (no
    chain of keys; a long text in page-sized pieces), unless the budget has no room for
    even ``[recall: <key>]`` (the output is then the one without a store)."""
    budget = max(1, int(COUNTER.estimate_messages(messages) * share))
    with _store(kind) as store:
        output = anyio.run(default_stack(budget, counter=COUNTER, store=store).compact, messages)
        if unrecoverable(messages, output, store, transitive=False):
            assert output == anyio.run(default_stack(budget, counter=COUNTER).compact, messages)


def _indivisible(content: object) -> bool:
    """A message holding only blocks no cut divides (tool calls, images, documents), or
    a tool result holding an image (kept whole with its call: its text says what the
    image is)."""
    if not isinstance(content, list):
        return False
    if len(content) == 1 and all(b.type not in ("text", "compaction") for b in content[0].content):
        return True
    results = [result for message in content for result in message.tool_results]
    return any(item.type == "image" for result in results for item in result.content)


@settings(max_examples=40, deadline=None)
@given(messages=sessions | conversations(max_turns=8))
def test_every_entry_is_at_most_a_page(messages: list[Message]) -> None:
    """Each entry holds at most a segment (a page less a margin), bar an indivisible
    block; the same messages give the same entries and keys (content hashes)."""
    entries = entries_of(messages, COUNTER)
    for entry in entries:
        assert entry.content is not None
        if isinstance(entry.content, str):
            assert COUNTER.estimate_text(entry.content) <= SEGMENT_TOKENS
        elif COUNTER.estimate_messages(entry.content) > SEGMENT_TOKENS:
            assert _indivisible(entry.content), entry.what
    assert [e.key for e in entries_of(messages, COUNTER)] == [e.key for e in entries]


@settings(max_examples=30, deadline=None)
@given(
    messages=sessions,
    room=st.integers(60, 3000),
    kind=st.sampled_from(["memory", "sqlite"]),
)
def test_the_index_fits_its_room(messages: list[Message], room: int, kind: str) -> None:
    """An index costs at most its room (the oldest entries rolled up: page-sized groups
    first, then one entry), or is the shortest form; every text stays behind its keys,
    and every group is one page."""
    with _store(kind) as store:
        index = index_reference(store, messages, COUNTER, "test", room=room)
        assert index is not None
        block = index.content[0]
        assert isinstance(block, Compaction)
        text = block.content
        assert COUNTER.estimate_message(index) <= room or text.startswith("[recall: ")
        assert unrecoverable(messages, [index], store, transitive=False) == []
        for number, (what, key) in enumerate(_lines([index])):
            content = store.get(key)
            assert content is not None
            # A group is one page; only the first line may roll up all that is older.
            if what.startswith("earlier:") and (number > 0 or "(" in what):
                assert COUNTER.estimate_messages(content) <= PAGE_TOKENS  # type: ignore[arg-type]
        for key in page_keys(text):
            assert _size(store, key) <= PAGE_TOKENS


def test_terse_lines_before_a_roll_up_beyond_a_page() -> None:
    """Where the page-sized groups' lines do not fit the room, the oldest go terse (a
    group's without its names) before any entry holds more than a page."""
    store = MemoryStore()
    index = index_reference(store, _session(12, 40), COUNTER, "test", room=100)
    assert index is not None
    lines = _lines([index])
    assert len(lines) > 1
    assert lines[0][0].startswith("earlier: ")
    assert "(" not in lines[0][0].split("tokens", 1)[1]  # terse: no names
    for _, key in lines:
        content = store.get(key)
        assert isinstance(content, list)
        assert COUNTER.estimate_messages(content) <= PAGE_TOKENS


def test_page_keys_before_a_roll_up_beyond_a_page() -> None:
    """Where not even terse lines fit the room, the oldest entries of a page stand as
    keys alone on one line, oldest first, before any entry holds more than a page."""
    store = MemoryStore()
    messages = _session(12, 40)
    index = index_reference(store, messages, COUNTER, "test", room=60)
    assert index is not None
    assert COUNTER.estimate_message(index) <= 60
    block = index.content[0]
    assert isinstance(block, Compaction)
    keys = page_keys(block.content)
    assert len(keys) > 1
    for key in keys_in([block.content]):
        assert _size(store, key) <= PAGE_TOKENS
    assert unrecoverable(messages, [index], store, transitive=False) == []


def test_page_keys_are_carried_unchanged() -> None:
    """An index's line of page keys, removed again, keeps its keys in their order
    without reading their entries, before the new lines."""
    store = MemoryStore()
    messages = _session(12, 40)
    first = index_reference(store, messages[:-8], COUNTER, "test", room=60)
    assert first is not None
    block = first.content[0]
    assert isinstance(block, Compaction)
    keys = page_keys(block.content)
    assert keys
    read = _reads(store)
    second = index_reference(store, [first, *messages[-8:]], COUNTER, "test", room=PAGE_TOKENS)
    assert second is not None
    assert read == []
    text = second.content[0]
    assert isinstance(text, Compaction)
    assert page_keys(text.content) == keys
    assert len(_lines([second])) >= 4
    assert unrecoverable(messages, [second], store, transitive=False) == []


def test_a_system_prompt_that_fills_the_budget_leaves_the_index_a_page_key() -> None:
    """Where the system prompt leaves the index a share of about a line, its room
    still holds a line and a page key: the keys it shows each recall at most a page."""
    store = MemoryStore()
    stack = default_stack(1750, counter=COUNTER, store=store)
    history = [Message.system("You are a careful agent. " * 250)]
    for message in _session(12, 40):
        history.append(message)
        if stack.should_compact(history, stack.token_estimate(history)):
            history = anyio.run(stack.compact, history)
    index = next(message for message in history if is_index(message))
    block = index.content[0]
    assert isinstance(block, Compaction)
    keys = keys_in([block.content])
    assert len(keys) >= 2
    for key in keys:
        assert _size(store, key) <= PAGE_TOKENS


_entries = st.lists(
    st.builds(
        Entry,
        what=st.sampled_from(["read_file a.py (12 tokens)", "earlier: 3 entries, 900 tokens"]),
        key=st.binary(min_size=8, max_size=8).map(bytes.hex),
        paged=st.booleans(),
        words=st.sampled_from(
            ["", "read_file a.py", "get_order #W100", "view match.c:1-80", "sha 0123456789abcdef"]
        ),
    ),
    unique_by=lambda entry: entry.key,
    max_size=12,
)


@given(entries=_entries)
def test_an_index_of_page_keys_reads_back_as_it_was(entries: list[Entry]) -> None:
    """An index's lines, page keys among them, read back from the index (carried by a
    later compaction) as the same keys in the same order, the page keys still page keys
    with the same words (a word that looks like a key among them)."""
    text = "\n".join([INDEX_HEADING, *index_lines(entries)]) + "\n]"
    index = Message(role=Role.USER, content=(Compaction(content=text),))
    carried = entries_of([index], COUNTER)

    def shown(entry: Entry) -> tuple[str, bool, str]:
        return entry.key, entry.paged, entry.words if entry.paged else ""

    assert [shown(e) for e in carried] == [shown(e) for e in entries]
    assert page_keys(text) == [e.key for e in entries if e.paged]


@given(
    pages=st.lists(
        st.tuples(st.text(max_size=40), st.binary(min_size=8, max_size=8).map(bytes.hex)),
        max_size=8,
    )
)
def test_a_line_of_page_keys_reads_back_its_keys_whatever_the_words(
    pages: list[tuple[str, str]],
) -> None:
    """Whatever words a page shows (commas, line ends, a word like a key), the line of
    page keys reads back every key, in order: a key lost there is neither carried by
    the next index nor kept from the store's eviction."""
    assert read_page_keys(pages_line(pages)) == [key for _, key in pages]


@settings(max_examples=200)
@given(what=st.text(max_size=80) | st.sampled_from(["https://", "file:///", "x https:// y"]))
def test_any_description_has_words_that_read_back(what: str) -> None:
    """Any description of an offloaded message (a URL's scheme alone, a file named with
    a comma) gives words without commas or line ends, which a line of page keys reads
    back with its key."""
    words = words_of(what)
    assert "," not in words
    assert "\n" not in words
    assert read_page_keys(pages_line([(words, "0123456789abcdef")])) == ["0123456789abcdef"]


_PAGE = re.compile(r"(?:^|, )(?:([^,\n]*) )?([0-9a-f]{16})(?=, |$)")


def _pages(text: str) -> list[tuple[str, str]]:
    """The ``(words, key)`` of each page on the lines of page keys in ``text``."""
    lines = re.findall(r"^- earlier, a page each, oldest first: (.+)$", text, re.MULTILINE)
    return [(words or "", key) for line in lines for words, key in _PAGE.findall(line)]


def test_page_keys_show_what_each_page_holds() -> None:
    """On the line of page keys each page shows a few words before its key where the
    room has them: its tool and the file it read (a path as its file's name), words its
    page holds; where they do not fit, the oldest keys stand alone first."""
    store = MemoryStore()
    messages = _session(12, 40)
    index = index_reference(store, messages, COUNTER, "test", room=60)
    assert index is not None
    block = index.content[0]
    assert isinstance(block, Compaction)
    pages = _pages(block.content)
    worded = [(words, key) for words, key in pages if words]
    assert worded
    assert len(worded) < len(pages)  # the oldest alone
    assert pages[-len(worded) :] == worded
    for words, key in worded:
        tool, name = words.replace(";", "").split(" ")[:2]
        assert tool == "read_file"
        assert re.fullmatch(r"m\d+\.py", name)
        assert f"src/{name}" in str(store.get(key))


@pytest.mark.parametrize(
    ("what", "words"),
    [
        ("read_file src/app.py (2,314 tokens)", "read_file app.py"),
        ('assistant: "Reading it." → read_file src/app.py (2,314 tokens)', "read_file app.py"),
        ("assistant: search_direct_flight SFO JFK (120 tokens)", "search_direct_flight SFO JFK"),
        ("read_file src/big.py, lines 181-370 of 530 (1,788 tokens)", "read_file big.py:181-370"),
        ("read_file big.py:181-370 (1,788 tokens)", "read_file big.py:181-370"),
        (
            "str_replace_editor view /workspace/ponyc/src/libponyc/expr/match.c (1,799 tokens)",
            "str_replace_editor view match.c",
        ),
        ("earlier: 5 entries, 1,843 tokens (read_file a.py; b.py)", "read_file a.py; b.py"),
        ("earlier: 5 entries, 1,843 tokens", ""),
        (
            "WebFetch https://hex.pm/packages/phoenix (33 tokens)",
            "WebFetch hex.pm/…/phoenix",
        ),
    ],
)
def test_the_words_a_page_key_shows(what: str, words: str) -> None:
    """A page key's words are its line's description without its size or an
    assistant's text: the tool and what it acted on, a path as its file, a segment's
    lines after it (read again as they were), a group's names."""
    assert words_of(what) == words
    assert words_of(words) == words


def test_the_words_of_what_an_assistant_said() -> None:
    """An assistant's text keeps its role before its words; its calls alone do not."""
    said = words_of('assistant: "Module 6 looks fine." (9 tokens)')
    assert said == "assistant: Module 6 looks fine."


def test_a_long_path_is_named_by_its_file() -> None:
    """An index line of a call on a path longer than a line names keeps the path's
    start and its end, the file's name."""
    path = "/workspace/project/" + "deeply/nested/" * 5 + "hooks_controller_test.exs"
    use = ToolUse(id="c0", name="read_file", input={"path": path})
    messages = [
        Message.user("Read it."),
        Message.assistant("", tool_uses=[use]),
        Message.tool_result("c0", "defmodule HooksControllerTest do\nend"),
    ]
    index = index_reference(MemoryStore(), messages, COUNTER, "test", room=400)
    assert index is not None
    (what,) = [what for what, _ in _lines([index]) if "read_file" in what]
    assert "read_file /workspace/project/" in what
    assert "…" in what
    assert "hooks_controller_test.exs (" in what


def _orders_then_chat(count: int = 4) -> list[Message]:
    """``count`` order lookups (JSON full of ids and prices), then ``count`` long user
    messages of prose: each entry about a page."""
    messages = [Message.user("Where are my orders?")]
    for turn in range(count):
        use = ToolUse(id=f"o{turn}", name="get_order", input={"order_id": f"#W{turn}00"})
        messages.append(Message.assistant("", tool_uses=[use]))
        items = [{"item_id": f"{turn}{n:05d}", "price": 100.5 + n} for n in range(100)]
        order = {"order_id": f"#W{turn}00", "items": items}
        messages.append(Message.tool_result(f"o{turn}", json.dumps(order)))
    prose = "the weather was fine and we walked along the river " * 120
    messages += [Message.user(prose) for _ in range(count)]
    return messages


def test_what_rolls_up_beyond_a_page_is_what_holds_fewest_ids() -> None:
    """Where not all page keys fit, the entries that roll up into one beyond a page are
    those holding the fewest words an agent reuses (ids, numbers, paths), whatever their
    age: the keys left beside it hold the orders, not the prose."""
    store = MemoryStore()
    messages = _orders_then_chat(8)
    index = index_reference(store, messages, COUNTER, "test", room=64)
    assert index is not None
    block = index.content[0]
    assert isinstance(block, Compaction)
    keys = keys_in([block.content])
    paged = [key for key in keys if _size(store, key) <= PAGE_TOKENS]
    assert len(paged) < len(keys)  # one entry rolled up beyond a page
    assert paged
    assert all("order_id" in str(store.get(key)) for key in paged)
    assert unrecoverable(messages, [index], store, transitive=False) == []


def _orders(count: int) -> list[Message]:
    """A customer-service session: each turn looks an order up (a JSON result)."""
    messages = [Message.user("Where are my orders?")]
    for turn in range(count):
        use = ToolUse(id=f"o{turn}", name="get_order", input={"order_id": f"#W{turn}00"})
        messages.append(Message.assistant("", tool_uses=[use]))
        order = {"order_id": f"#W{turn}00", "status": "delivered", "total": 54.1 + turn}
        messages.append(Message.tool_result(f"o{turn}", json.dumps(order)))
    return messages


def test_a_line_shows_the_facts_its_entry_holds() -> None:
    """Where the room allows, an entry's line shows the first facts of its result with
    their labels (its fields of ids and amounts before those of words); where it does
    not, the oldest lines lose their facts first, before any entry rolls up."""
    messages = _orders(6)
    roomy = index_reference(MemoryStore(), messages, COUNTER, "test", room=PAGE_TOKENS)
    assert roomy is not None
    lines = [what for what, _ in _lines([roomy])]
    assert lines[1] == "assistant: get_order #W000 (31 tokens): " + (
        "order_id=#W000, total=54.1, status=delivered"
    )
    room = COUNTER.estimate_message(roomy) - 10
    tight = index_reference(MemoryStore(), messages, COUNTER, "test", room=room)
    assert tight is not None
    shown = [what for what, _ in _lines([tight])]
    assert len(shown) == len(lines)
    assert "order_id=" not in shown[1]
    assert shown[-1] == lines[-1]


def test_a_roll_up_beyond_a_page_starts_with_its_directory() -> None:
    """An entry of more than a page (the oldest lines rolled into one) comes back from
    a recall starting with the lines of the entries it holds, each with a key that
    recalls that entry alone."""
    store = MemoryStore()
    index = index_reference(store, _session(12, 400), COUNTER, "test", room=60)
    assert index is not None
    key = _lines([index])[0][1]
    page = recall(store, key)
    assert not page.is_error
    listed = re.findall(r"^\s*- (.+) — recall: ([0-9a-f]{16})$", page.text, re.MULTILINE)
    assert len(listed) > 5
    for what, part in listed:
        content = store.get(part)
        assert content is not None, what
        if isinstance(content, str):
            assert COUNTER.estimate_text(content) <= PAGE_TOKENS
        else:
            assert COUNTER.estimate_messages(content) <= PAGE_TOKENS


def test_a_recalled_summary_shows_its_text() -> None:
    """A summary (or an index) offloaded as an entry comes back from a recall as
    ``summary:`` and its text, in its place among the messages."""
    store = MemoryStore()
    summary = Message(role=Role.USER, content=(Compaction(content="## Goal\nBook HAT170"),))
    key = store.put([Message.user("Hi"), summary, Message.assistant("Booked.")])
    page = recall(store, key)
    assert page.text == "user:\n  Hi\nsummary:\n  ## Goal\n  Book HAT170\nassistant:\n  Booked."


def test_groups_of_an_earlier_index_join_again() -> None:
    """Groups an earlier index made join their neighbours into groups of up to a page
    when the lines outgrow the room, before anything rolls up beyond a page."""
    store = MemoryStore()
    pairs = [
        [Message.user(f"Note {n}: order W{n}00 is late."), Message.assistant("Noted.")]
        for n in range(4)
    ]
    groups = []
    for number, pair in enumerate(pairs):
        key = store.put(pair)
        groups.append(f"- earlier: 2 entries, {20 + number} tokens (note {number}) — recall: {key}")
    earlier = Message(
        role=Role.USER,
        content=(Compaction(content="\n".join([INDEX_HEADING, *groups, "]"])),),
    )
    index = index_reference(store, [earlier, *_orders(2)], COUNTER, "test", room=60)
    assert index is not None
    lines = _lines([index])
    assert lines
    for _, key in lines:
        content = store.get(key)
        assert isinstance(content, list)
        assert COUNTER.estimate_messages(content) <= PAGE_TOKENS
        assert not any(
            DIRECTORY_HEADING in block.content
            for message in content
            for block in message.content
            if isinstance(block, Compaction)
        )
    removed = [message for pair in pairs for message in pair]
    assert unrecoverable([*removed, *_orders(2)], [index], store, transitive=False) == []


def test_earlier_lines_are_carried_unchanged() -> None:
    """An index removed again is carried line by line (its keys neither read nor
    written again), and the new entries follow it."""
    store = MemoryStore()
    messages = _session(3, 40)
    first = index_reference(store, messages[1:5], COUNTER, "test", room=PAGE_TOKENS)
    assert first is not None
    assert is_index(first)
    later = [first, *messages[5:9]]
    read = _reads(store)
    second = index_reference(store, later, COUNTER, "test", room=PAGE_TOKENS)
    assert second is not None
    assert read == []
    old, new = _lines([first]), _lines([second])
    assert new[: len(old)] == old
    assert len(new) > len(old)
    assert unrecoverable(messages[1:9], [second], store, transitive=False) == []


def test_a_long_result_in_pages() -> None:
    """A tool result longer than a page is cut at lines into entries of a page, each
    line saying which lines it holds."""
    store = MemoryStore()
    messages = _session(1, 1500)
    index = index_reference(store, messages[:4], COUNTER, "test", room=PAGE_TOKENS)
    assert index is not None
    lines = [what for what, _ in _lines([index])]
    pages = [what for what in lines if what.startswith("read_file src/m0.py, lines ")]
    assert len(pages) >= 2
    assert pages[0].startswith("read_file src/m0.py, lines 1-")
    for _, key in _lines([index]):
        content = store.get(key)
        assert content is not None
        if isinstance(content, str):
            assert COUNTER.estimate_text(content) <= SEGMENT_TOKENS


def test_same_content_same_key_across_compactions() -> None:
    """A loop's compactions show each entry under one key: a key shown once keeps
    naming the same line."""
    store = MemoryStore()
    stack = default_stack(3000, counter=COUNTER, store=store)
    history: list[Message] = []
    shown: dict[str, str] = {}
    for message in _session(12, 40):
        history.append(message)
        if stack.should_compact(history, stack.token_estimate(history)):
            history = anyio.run(stack.compact, history)
            for what, key in _lines(history):
                assert shown.setdefault(key, what) == what
    assert len(shown) > 5


def test_the_instructions_say_what_an_index_line_is() -> None:
    """RECALL_INSTRUCTIONS tells a model what to do with an index line: its facts are
    there to use, its key to recall for more."""
    assert "index" in RECALL_INSTRUCTIONS
    assert "recall: <key>" in RECALL_INSTRUCTIONS
    assert "order_id=W123" in RECALL_INSTRUCTIONS
    assert "used as it is" in RECALL_INSTRUCTIONS
    assert "'earlier, a page each'" in RECALL_INSTRUCTIONS


def test_the_instructions_say_what_a_page_key_shows() -> None:
    """RECALL_INSTRUCTIONS says a page key shows a few words of what its page holds
    before its key, and that a query finds what a key alone does not say."""
    assert "each a few words of what it holds, then its key" in RECALL_INSTRUCTIONS
    assert "a page key without words" in RECALL_INSTRUCTIONS


def test_a_carried_line_whose_facts_quote_a_token_count() -> None:
    """A carried index line keeps its own token count and its facts whole when a fact
    quotes ``(N tokens): `` (the split took the last such form: 5 tokens, and the facts
    cut after it)."""
    key = "0123456789abcdef"
    line = f"- get_log (31 tokens): note=an earlier line (5 tokens): x=1 — recall: {key}"
    earlier = Message(role=Role.USER, content=(Compaction(content=f"{INDEX_HEADING}\n{line}\n]"),))
    (entry,) = entries_of([earlier], COUNTER)
    assert (entry.key, entry.what, entry.tokens) == (key, "get_log (31 tokens)", 31)
    assert entry.facts == "note=an earlier line (5 tokens): x=1"
    assert entry.line() == line


@pytest.mark.anyio
async def test_a_description_naming_a_scheme_alone_is_offloaded() -> None:
    """An assistant's words quoting a URL's scheme alone (``"https://"``) describe its
    entry like any other: the compaction offloads them and the index reads back."""
    messages = [Message.user("Fix the URL check.")]
    for step in range(8):
        said = f'I will check url.startswith("https://") in step {step}. ' + "detail " * 300
        messages += [Message.assistant(said), Message.user(f"ok {step}")]
    store = MemoryStore()
    output = await default_stack(600, counter=COUNTER, store=store).compact(messages)
    validate(output)
    assert not unrecoverable(messages, output, store)
