"""Rolling up an index that outgrows its room: the oldest entries in fewer lines.

An index line costs about 30 tokens whatever its entry holds, so an index of small
entries outgrows its room long before the entries are large. Rolling up keeps every
removed text behind a key the index shows, in five stages, oldest first, until the
lines fit:

1. the oldest lines go without their facts (``order_id=W123, total=54.1``), the
   newest keeping theirs;
2. consecutive entries smaller than a page (groups of an earlier index too) join into
   groups of up to a page (:data:`GROUP_TOKENS`): one line, ``earlier: 5 entries,
   1,843 tokens (read_file a.py; grep TODO; …)``, and still one recall page;
3. the oldest lines go terse (``earlier: 5 entries, 1,843 tokens``; an entry's label
   as its few words, ``str_replace_editor view match.c``, or cut to :data:`_TERSE`
   characters): a line costs about half, and every entry is still one page;
4. the oldest entries of at most a page give up their line: each stands as a few words
   and its key on a line of page keys (:mod:`~neuron_context._stores.paged`), oldest
   first, about half a terse line each; where those do not fit either, the oldest keys
   go without their words (keys alone); every entry still one page;
5. the fewest lines that let the rest fit join into one entry holding all their
   messages, whatever its size (``earlier: 40 entries, 52,314 tokens``, first), after
   their directory (each line with its key, oldest first; each entry is put under its
   own key too): a recall of it starts with what is where, and a search finds what it
   holds. The lines that join are those whose entries hold the fewest words an agent
   reuses (ids, numbers, paths, code names: :func:`_worth`; the oldest first among
   equals, and first of all what is beyond a page already), whatever their age.

The loss of what an agent needs next is flat with the distance, so the room is spent on
keys before descriptions, and on the keys of what holds the facts an agent reuses: a
page behind a key the request shows is one recall away, an entry beyond a page a recall
and a search.

The content of a line carried from an earlier index is read back only when the lines
do not fit even as page keys (to weigh it in stage 5, and to roll it up).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from .._messages.content import Compaction, Text
from .._messages.message import Message, Role
from .entries import PAGE_TOKENS
from .lines import Entry
from .offload import _stored
from .paged import SAID
from .serialized import COSTLIEST_KEY, Content, content_key
from .store import Store

if TYPE_CHECKING:  # the counter is a parameter: no import of a higher room at run time
    from .._counting.counter import BaseCounter

__all__ = ["DIRECTORY_HEADING", "GROUP_TOKENS", "roll_up"]

GROUP_TOKENS = 1_500
"""What a group of entries holds at most (by the stack's counter): a recall page less
what rendering a transcript adds (tool calls as JSON, headers)."""

_NAMES = 40
"""Characters of a group's line naming what it holds."""

_TERSE = 24
"""Characters of an entry's label in a terse line."""

DIRECTORY_HEADING = "[the entries this one holds, oldest first — recall a key to read one:"
"""The first line of the directory that starts an entry of more than a page."""


def _messages(
    store: Store, entries: Sequence[Entry], read: dict[str, Content | None]
) -> list[Message] | None:
    """The messages ``entries`` hold (a text as a user message), read back where carried
    (from ``read`` where read already; one that cannot be read: its index line)."""
    messages: list[Message] = []
    for entry in entries:
        content: Content | None = entry.content
        if content is None:
            content = read[entry.key] if entry.key in read else _stored(store, entry.key)
        if content is None:
            # Unreadable (a failed read, or a key the store no longer holds): its line
            # goes in as it is, so a key that does exist stays reachable, and a dead
            # one costs no more than its line.
            content = entry.line()
        if isinstance(content, str):
            messages.append(Message(role=Role.USER, content=(Text(text=content),)))
        else:
            messages.extend(content)
    return messages


def _joined(
    store: Store,
    entries: Sequence[Entry],
    counter: BaseCounter,
    *,
    named: bool,
    read: dict[str, Content | None] | None = None,
) -> Entry | None:
    """One entry holding ``entries`` (stored): a group of a page, its line naming
    them (``named``); or, beyond a page, one that starts with their directory (each
    entry's line and key: a recall's first page says what is where, and each entry is
    in the store under its own key too, :attr:`Entry.holds`; a page key with its
    words, where it has them: a directory has no room to save)."""
    messages = _messages(store, entries, read or {})
    if not messages:
        return None
    count = sum(entry.entries for entry in entries)
    tokens = counter.estimate_messages(messages)
    what = f"earlier: {count:,} entries, {tokens:,} tokens"
    if named:
        names = _names(entries)
        what += f" ({names if len(names) <= _NAMES else names[: _NAMES - 1] + '…'})"
        return Entry(what, content_key(messages), messages, entries=count, tokens=tokens)
    lines = "\n".join(attrs.evolve(entry, paged=False).line() for entry in entries)
    directory = Message(
        role=Role.USER,
        content=(Compaction(content=f"{DIRECTORY_HEADING}\n{lines}\n]"),),
    )
    content = [directory, *messages]
    return Entry(
        what,
        content_key(content),
        content,
        entries=count,
        tokens=tokens,
        holds=tuple(entry for entry in entries if entry.content is not None),
    )


def _names(entries: Sequence[Entry]) -> str:
    """What a group's line names: each entry's few words (:attr:`Entry.words`), its
    calls' before its messages' (what a tool returned is what an agent reads back), a
    tool's name once for a run of its calls (``read_file a.py; b.py; grep TODO``)."""
    said = [e.words or e.what.rsplit(" (", 1)[0] for e in entries]
    calls = [words for words in said if not words.startswith(SAID)]
    names: list[str] = []
    tool = None
    for words in calls or said:
        first, _, rest = words.partition(" ")
        names.append(rest if first == tool and rest else words)
        tool = first
    return "; ".join(names)


def roll_up(
    store: Store,
    entries: list[Entry],
    fits: Callable[[Sequence[Entry]], bool],
    counter: BaseCounter,
    *,
    pages: bool = True,
) -> list[Entry] | None:
    """``entries`` rolled up until ``fits`` them (see the module; without ``pages``,
    stages 1 and 5 alone), or ``None`` when not
    even one line fits. The joined entries are new
    (their content set: the caller puts them)."""
    entries = list(entries)
    if not fits(entries):  # Stage 1: the oldest lines without their facts
        entries = _fewest(entries, lambda e: attrs.evolve(e, facts=""), fits)
    start = 0
    while pages and not fits(entries):
        # Stage 2: the oldest run of entries smaller than a page (groups too), joined
        # up to a page.
        while start < len(entries) and not 0 < entries[start].tokens <= GROUP_TOKENS:
            start += 1
        end = start
        total = 0
        while (
            end < len(entries)
            and entries[end].tokens > 0
            and total + entries[end].tokens <= GROUP_TOKENS
        ):
            total += entries[end].tokens
            end += 1
        if end - start < 2:
            if start >= len(entries):
                break
            start += 1
            continue
        group = _joined(store, entries[start:end], counter, named=True)
        if group is None:
            return None
        entries[start:end] = [group]
        start += 1
    # Stage 3: the fewest oldest lines terse that make the lines fit (all when none do).
    if pages and not fits(entries):
        entries = _fewest(entries, _terse, fits)
    # Stage 4: the fewest oldest entries of a page that make the lines fit as page
    # keys, each with its words; then the fewest oldest of those keys without them.
    if pages and not fits(entries):
        entries = _fewest(entries, _paged, fits)
    if pages and not fits(entries):
        entries = _fewest(entries, _bare, fits)
    # Stage 5: the fewest lines, those worth least first, into one that let the rest
    # fit beside it (bisected: each try prices a whole index).
    if fits(entries):
        return entries
    if not fits([_longest()]):
        return None
    read: dict[str, Content | None] = {}
    order = sorted(range(len(entries)), key=lambda i: (_worth(store, entries[i], read), i))

    def rest(count: int) -> list[Entry]:
        folded = set(order[:count])
        return [entry for i, entry in enumerate(entries) if i not in folded]

    low, high = 1, len(entries)  # the answer is in [low, high]
    while low < high:
        middle = (low + high) // 2
        if fits([_longest(), *rest(middle)]):
            high = middle
        else:
            low = middle + 1
    folded = [entries[i] for i in sorted(order[:low])]
    one = _joined(store, folded, counter, named=False, read=read)
    return None if one is None else [one, *rest(low)]


def _fewest(
    entries: list[Entry],
    change: Callable[[Entry], Entry],
    fits: Callable[[Sequence[Entry]], bool],
) -> list[Entry]:
    """``entries`` with the fewest oldest of them changed by ``change`` that make them
    fit (all when none do): a binary search, a changed line costing no more."""
    changed = [change(entry) for entry in entries]
    low, high = 1, len(entries)  # the answer is in [low, high]
    while low < high:
        middle = (low + high) // 2
        if fits([*changed[:middle], *entries[middle:]]):
            high = middle
        else:
            low = middle + 1
    return [*changed[:low], *entries[low:]]


def _terse(entry: Entry) -> Entry:
    """``entry`` with a shorter line: a group's without the names of what it holds, an
    entry's label as its page key's words where shorter, else cut to :data:`_TERSE`
    characters (its size kept)."""
    if entry.rolled:
        what = entry.what.split(" (", 1)[0]
    else:
        label, _, size = entry.what.rpartition(" (")
        if entry.words and len(entry.words) <= len(label):
            what = f"{entry.words} ({size}"  # a few words, as its page key would show
        elif len(label) > _TERSE:
            what = f"{label[: _TERSE - 1]}… ({size}"
        else:
            what = entry.what
    return attrs.evolve(entry, what=what, facts="")


def _paged(entry: Entry) -> Entry:
    """``entry`` as its words and key on a line of page keys where it is at most a page
    (its size known), else as it is."""
    if entry.paged or not 0 < entry.tokens <= PAGE_TOKENS:
        return entry
    return attrs.evolve(entry, facts="", paged=True)


def _bare(entry: Entry) -> Entry:
    """``entry``, a page key, as its key alone (else as it is)."""
    return attrs.evolve(entry, words="") if entry.paged else entry


_WORD = re.compile(r"[\w./@:+#-]+")


def _worth(store: Store, entry: Entry, read: dict[str, Content | None]) -> int:
    """How much of what an agent reuses ``entry`` holds: its distinct words that are not
    prose (an id, a number, a path, a code name: a digit, an inner capital or a joining
    character in it); 0 for an entry beyond a page or of unknown size (it rolls up first
    and is not read). A carried entry is read back (into ``read``)."""
    if not (entry.paged or 0 < entry.tokens <= PAGE_TOKENS):
        return 0
    content = entry.content
    if content is None:
        content = read[entry.key] = _stored(store, entry.key)
    if content is None:
        return 0
    texts = [content] if isinstance(content, str) else [_text_of(m) for m in content]
    return len({word for text in texts for word in _WORD.findall(text) if _reused(word)})


def _text_of(message: Message) -> str:
    """The texts of ``message``: its text, its results' and its calls' inputs."""
    calls = [str(use.input) for use in message.tool_uses]
    return "\n".join([message.text, *(r.text for r in message.tool_results), *calls])


def _reused(word: str) -> bool:
    """Whether ``word`` is one an agent reuses rather than prose (see :func:`_worth`)."""
    word = word.strip(".:-")
    if len(word) < 3:
        return False
    if any(c.isdigit() for c in word):
        return True
    return any(c in "_./@#" for c in word) or any(c.isupper() for c in word[1:])


def _longest() -> Entry:
    """A roll-up line as long as any: what stage 5 prices before it knows the counts."""
    return Entry(f"earlier: {10**6:,} entries, {10**9:,} tokens", COSTLIEST_KEY)
