"""What the extractive summarizer finds in a conversation, reading it newest first.

Every section a summary draws from the conversation's entries (the user's requests
aside) wants its newest items: the assistant's last words and the decisions before them,
the last call, errors newest first, the artifacts tool calls touched newest first, and
the paths, URLs and hashes mentioned. So :func:`find` reads the entries from the newest
and stops as soon as nothing older could make it into the summary:

- a section is *full* when the items it has found already cost more than the whole
  budget on their own (the summary takes a section's items in order, so no later item
  could be taken); for facts, each result counts for at most a ``STRIDE``-th of the
  budget (a summary takes the first chunks of the ``STRIDE`` results before a result's
  next chunk, so one long listing does not hide the results before it); for mentions,
  when ``max_mentions`` are found;
- whatever the sections still want, it reads at most ``chars`` characters of entry text
  (a documented bound: the summarizer's ``read_per_token`` per token of its budget), so
  the work is bounded by the size of the summary, not by the length of the history,
  even when nothing fills up (100,000 messages without a single path).

An entry longer than what is left of ``chars`` is read by its head and its tail. Every
scan of its text is linear (see :mod:`neuron_context._summary.scan`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Set

import attrs

from .agent_plan import is_plan_tool, plan_of
from .fact_chunks import STRIDE, Fact, render
from .facts import facts
from .facts_json import cut_lists
from .scan import KEY_ARGUMENTS, argument_text, artifact_of, error_line, is_notice, mentioned
from .transcript import Entry
from .walked import Calls, next_piece, used_by, walked_facts

_LISTS = 16
"""The most lists of scalars of an older result checked for a walk (see ``_walked``)."""
_BEYOND = 64
"""The most results read for a walked list once the facts found fill the budget: a
list an agent walks stands a few results before the calls that walk it."""

__all__ = ["DECISIONS_QUOTED", "FactGroup", "Findings", "Index", "find", "tier"]

DECISIONS_QUOTED = 5
"""Assistant messages before the last one that the decisions section quotes."""
LATEST = " (latest)"


class Index:
    """What tool calls touched, newest first, each with the tools that acted on it in
    the order of their latest action (latest last)."""

    def __init__(self) -> None:
        self._actions: dict[str, list[str]] = {}

    def __contains__(self, artifact: str) -> bool:
        return artifact in self._actions

    def __len__(self) -> int:
        return len(self._actions)

    def act_before(self, artifact: str, action: str) -> None:
        """Record ``action`` on ``artifact``, older than every action recorded so far."""
        actions = self._actions.setdefault(artifact, [])
        if action not in actions:
            actions.insert(0, action)

    def carry(self, line: str) -> bool:
        """Take an index line of a previous summary (older than everything recorded);
        ``False`` if it is not one."""
        artifact, separator, rest = line.rpartition(": ")
        names = rest.removesuffix(LATEST).split(", ")
        if not separator or not artifact or not all(_is_name(n) for n in names):
            return False
        for name in reversed(names):
            self.act_before(artifact, name)
        return True

    def lines(self) -> list[tuple[str, int]]:
        """Newest first: ``artifact: tool, other tool (latest)``, and its tier (see
        :func:`tier`; a call without arguments, shown by its tool's name alone, is 2)."""
        lines = []
        for artifact, actions in self._actions.items():
            if artifact in actions and len(actions) == 1:
                lines.append((artifact, 2))  # a call without arguments: its name says it
            else:
                latest = LATEST if len(actions) > 1 else ""
                lines.append((f"{artifact}: {', '.join(actions)}{latest}", tier(artifact)))
        return lines

    def names(self) -> str:
        return "\n".join(self._actions)


def tier(artifact: str) -> int:
    """How telling what a call touched is: 0 for a path or URL, 1 for ``key=value`` whose
    value names one (``command=pytest tests/test_io.py``), 2 for any other argument."""
    key, separator, value = artifact.partition("=")
    if not separator or not key.isidentifier():
        return 0
    return 1 if mentioned(value) else 2


def _keyed(arguments: str) -> bool:
    """Whether a call's JSON ``arguments`` may hold a key argument (see
    :data:`~.scan.KEY_ARGUMENTS`): its quoted name occurs in them (a value quoting it
    only makes the call's values go unnoted; no second parse of the arguments)."""
    return any(f'"{key}"' in arguments for key in KEY_ARGUMENTS)


def _is_pair(text: str) -> bool:
    """Whether a fact is a ``key=value`` pair (not a token or a line of a text)."""
    key, separator, _ = text.partition("=")
    return bool(separator) and key.isidentifier()


def _is_name(value: str) -> bool:
    return bool(value) and len(value) <= 128 and all(c.isalnum() or c in "_.-" for c in value)


@attrs.define
class FactGroup:
    """The facts of one tool result, and the call that produced it."""

    id: str
    """The tool-use id of the result."""
    label: str
    """The call: its tool and what it touched (its tool alone until the call is read)."""
    facts: list[Fact]
    """The facts, most telling first."""
    read: int = 0
    """When it was read (entries are read newest first, counted from 1): the calls read
    before it are the newer ones (see :attr:`Findings.called`)."""


@attrs.define
class Findings:
    """What :func:`find` found, newest first."""

    said: list[str] = attrs.Factory(list)
    """The assistant's texts, newest first (the last one and the decisions before it)."""
    acted: bool = False
    """Whether an assistant text or a tool call was read."""
    last_action: str = ""
    """The newest call: its tool and what it touched."""
    last_touched: str = ""
    """What the newest call touched, as the index names it (its tool alone when
    nothing)."""
    unanswered: str = ""
    """The newest entry, when it is a user's request (it is still unanswered)."""
    errors: list[str] = attrs.Factory(list)
    """The error lines, newest first."""
    index: Index = attrs.Factory(Index)
    """What the calls touched."""
    mentioned: dict[str, None] = attrs.Factory(dict)
    """Paths, URLs and hashes in the conversation (requests, replies, call arguments)."""
    in_output: dict[str, None] = attrs.Factory(dict)
    """Those in tool output (some may be in :attr:`mentioned` too)."""
    facts: list[FactGroup] = attrs.Factory(list)
    """The facts of the tool results, newest first."""
    plan: str = ""
    """The plan the newest plan or todo call wrote, rendered (see
    :mod:`neuron_context._summary.agent_plan`)."""
    called: Calls = attrs.Factory(Calls)
    """The calls' arguments, each with when it was read (see :attr:`FactGroup.read`):
    a result's list whose items calls after it used is being walked (see
    :mod:`.walked`)."""


@attrs.define
class _Reader:
    """The state of one :func:`find`: what each section has spent, whether it is full."""

    budget: int
    cost: Callable[[str], int]
    line_chars: int
    max_mentions: int
    found: Findings = attrs.Factory(Findings)
    errors_cost: int = 0
    index_costs: list[int] = attrs.Factory(lambda: [0, 0, 0])  # by tier
    said_count: int = 0  # mentions in the conversation that the index does not name
    all_count: int = 0  # the same, with those only in tool output
    facts_cost: int = 0
    unlabelled: dict[str, FactGroup] = attrs.Factory(dict)  # results whose call is unread
    entries: int = 0  # how many were read
    shown: Set[str] = frozenset()  # the telling words of the rest of the request
    beyond: int = 0  # results read for a walked list once the facts fill the budget

    def complete(self) -> bool:
        found = self.found
        return (
            len(found.said) > DECISIONS_QUOTED
            and bool(found.last_action)
            and self.errors_cost > self.budget
            and self.index_costs[0] > self.budget
            and self.said_count >= self.max_mentions
            and self.facts_cost > self.budget
        )

    def read(self, entry: Entry, text: str) -> None:
        kind = entry.kind
        self.entries += 1
        if kind == "user":
            self._said(text)
        elif kind == "assistant":
            self.found.acted = True
            if len(self.found.said) <= DECISIONS_QUOTED:
                self.found.said.append(text)
            self._said(text)
        elif kind == "call":
            self._call(entry.name or "tool", text)
            self.found.called.add(text, self.entries)
            self._label(entry, text)
            self._said(argument_text(text))
            self._arguments(entry, text)
        else:
            if self.errors_cost <= self.budget:
                line = error_line(kind, entry.name, text, self.line_chars)
                if line:
                    self.found.errors.append(line)
                    self.errors_cost += self.cost(f"- {line}\n")
            self._output(text)
            self._facts(entry, text)

    def _facts(self, entry: Entry, text: str) -> None:
        """Note the facts of a result until they alone would fill the budget, each
        result counting for at most a ``STRIDE``-th of it: a summary takes the first
        chunks of the ``STRIDE`` results before a result's next chunk (see
        ``fact_chunks.STRIDE``), so the results before a long one are read too."""
        if self.facts_cost > self.budget:
            self._walked(entry, text)
            return
        found = facts(text)
        if not found:
            return
        group = FactGroup(entry.id, entry.name or "tool", found, self.entries)
        self.found.facts.append(group)
        if entry.id:
            self.unlabelled.setdefault(entry.id, group)
        self.facts_cost += min(self.cost(render(found)), self.budget // STRIDE)

    def _walked(self, entry: Entry, text: str) -> None:
        """Note the lists of an older result that newer calls (or the rest of the
        request) walk, when the facts found already fill the budget: a summary takes a
        walked list before every result's facts (see :mod:`.walked`). At most
        :data:`_BEYOND` results are looked at, and only one with a JSON list of scalars
        (one of its first :data:`_LISTS`, on one line or pretty-printed) being walked is
        read for its facts."""
        self.beyond += 1
        if self.beyond > _BEYOND:
            return
        read = self.entries
        used = used_by(self.found.called, self.shown, read)
        lists = [
            [piece[1:-1].split(", ") for piece in pieces]
            for _, _, pieces in cut_lists(text, _LISTS)
        ]
        if not any(next_piece(pieces, used) is not None for pieces in lists):
            return
        found = facts(text)
        ahead, _ = walked_facts(found, used)
        if not ahead:
            return
        keys = {fact.text.partition("=")[0] for fact in ahead}
        kept = [fact for fact in found if fact.text.partition("=[")[0] in keys]
        group = FactGroup(entry.id, entry.name or "tool", kept, read)
        self.found.facts.append(group)
        if entry.id:
            self.unlabelled.setdefault(entry.id, group)

    def _arguments(self, entry: Entry, arguments: str) -> None:
        """Note the facts of a call's arguments beyond what its index line names (a
        booking's flights and payment, an update's new values: what the agent chose,
        and sends again when it retries), as a result's facts are noted, labelled
        ``called tool artifact with``; not for a call on a path, URL, command or
        pattern (its key argument says what it acted on, the rest are its options or
        the text it wrote) nor for a plan (the plan section holds it)."""
        if self.facts_cost > self.budget or is_plan_tool(entry.name) or _keyed(arguments):
            return
        # Its pairs and tables: a long argument (a thought, a message) is words the
        # call wrote, not values it chose.
        found = [f for f in facts(arguments) if f.header or f.row or _is_pair(f.text)]
        if not found:
            return
        artifact = artifact_of(arguments, self.line_chars)
        call = f"{entry.name or 'tool'} {artifact}".strip()
        label = f"called {call} with"
        self.found.facts.append(FactGroup("", label, found, self.entries))
        self.facts_cost += min(self.cost(render(found)), self.budget // STRIDE)

    def _label(self, entry: Entry, arguments: str) -> None:
        """Name the results of a call after it; note the plan the newest plan call wrote."""
        group = self.unlabelled.pop(entry.id, None) if entry.id else None
        if group is not None:
            artifact = artifact_of(arguments, self.line_chars)
            group.label = f"{entry.name or 'tool'} {artifact}".strip()
        if not self.found.plan and is_plan_tool(entry.name):
            try:
                value = json.loads(arguments)
            except ValueError:
                return
            if isinstance(value, dict):
                self.found.plan = plan_of(entry.name, value) or ""

    def _call(self, name: str, arguments: str) -> None:
        found = self.found
        found.acted = True
        if found.last_action and self.index_costs[0] > self.budget:
            return  # no older call can reach the summary
        artifact = artifact_of(arguments, self.line_chars)
        key = artifact or name
        if not found.last_action:
            found.last_action = f"{name} {artifact}".strip()
            found.last_touched = key
        if key not in found.index:
            # An index line is taken after every line of a lower tier, and after the
            # newer lines of its own: once a tier's lines cost more than the budget, no
            # older line of it can be taken.
            rank = tier(artifact) if artifact else 2
            if self.index_costs[rank] > self.budget:
                return
            self.index_costs[rank] += self.cost(f"- {key}\n")
            self.said_count -= key in found.mentioned
            self.all_count -= key in found.mentioned or key in found.in_output
        found.index.act_before(key, name)

    def _said(self, text: str) -> None:
        # Mentions in the conversation come before those in tool output, so they are
        # read until they alone fill the list.
        if self.said_count >= self.max_mentions:
            return
        found = self.found
        for value in mentioned(text):
            if value not in found.mentioned:
                found.mentioned[value] = None
                unnamed = value not in found.index
                self.said_count += unnamed
                self.all_count += unnamed and value not in found.in_output

    def _output(self, text: str) -> None:
        if self.all_count >= self.max_mentions:
            return
        found = self.found
        for value in mentioned(text):
            if value not in found.mentioned and value not in found.in_output:
                found.in_output[value] = None
                self.all_count += value not in found.index


def _ends(text: str, chars: int) -> str:
    """The head and the tail of ``text``, ``chars`` characters in all."""
    head = chars // 2
    return f"{text[:head]}\n{text[len(text) - (chars - head) :]}"


def find(
    entries: Iterable[Entry],
    *,
    budget: int,
    chars: int,
    cost: Callable[[str], int],
    line_chars: int,
    max_mentions: int,
    shown: Set[str] = frozenset(),
) -> Findings:
    """Read ``entries`` (newest first) until no older one could reach a summary of
    ``budget`` tokens as ``cost`` prices its lines, or ``chars`` characters are read;
    ``shown``: the telling words of the rest of the request (a list whose items they
    show is being walked, see :mod:`.walked`)."""
    reader = _Reader(budget, cost, line_chars, max_mentions, shown=shown)
    first = True
    for entry in entries:
        if chars <= 0 or reader.complete():
            break
        text = entry.text if len(entry.text) <= chars else _ends(entry.text, chars)
        chars -= len(entry.text)
        if first and entry.kind == "user" and not is_notice(text):
            reader.found.unanswered = text
        first = False
        reader.read(entry, text)
    return reader.found
