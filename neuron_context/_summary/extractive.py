"""A summarizer that needs no model: deterministic, offline, extractive.

:class:`ExtractiveSummarizer` is a :class:`~neuron_context.Provider`. Given the request
that :class:`~neuron_context.SummarizationStrategy` builds, it reads the rendered
transcript back (the format is line based, see :mod:`neuron_context._summary.transcript`);
given any other request, it summarizes the request's messages themselves. Either way it
writes the sections the default instructions ask for, from what it can extract, and
fills the space it is given (``request.max_tokens``): what a session cannot lose comes
first, the user's own words above all.

Its work is CPU only and grows with the history, so :meth:`ExtractiveSummarizer.complete`
runs it in a worker thread: the event loop keeps serving other tasks and a caller's
``timeout`` still fires (the thread is abandoned, its result discarded). Every scan of
untrusted text is linear (see :mod:`neuron_context._summary.scan`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeAlias

import anyio.to_thread
import attrs

from .._counting.base import BaseCounter
from .._counting.heuristic import to_counter
from .._messages.content import Compaction
from .._messages.conversation import Structure
from .._messages.message import Message, Role
from .._messages.truncation import truncate_text
from .._validators import non_negative_int, require_int
from ..providers._base import (
    CompletionRequest,
    CompletionResponse,
    Provider,
    StopReason,
    TokenUsage,
)
from .format import ALIGNED_MARK, HEADINGS, REQUEST_CLOSE, REQUEST_OPEN
from .scan import argument_text, artifact_of, clip, error_line, is_notice, mentioned
from .transcript import Entry, entries_of, parse_request

__all__ = ["ExtractiveSummarizer"]

GOAL, DECISIONS, ARTIFACTS, ERRORS, NEXT = range(5)
# The order in which sections get their next item when the budget is shared out.
_PRIORITY = (GOAL, ARTIFACTS, ERRORS, NEXT, DECISIONS)
_DEFAULT_BUDGET = 1024
_LATEST = " (latest)"
_WEIGHTS = {GOAL: 4.0, ARTIFACTS: 4.0, ERRORS: 2.0, NEXT: 1.5, DECISIONS: 1.0}
"""How the sections share the space (see ``_fit``)."""
_VERBATIM_SHARE = 0.4
"""The most of the budget one quoted request may take; a longer one is cut in the middle."""

_Add: TypeAlias = Callable[..., None]


def _at_least_20(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    require_int(value, f"{type(instance).__name__}.{attribute.name}", minimum=20)


@attrs.frozen
class _Item:
    section: int
    rank: int  # lower is more important within its section
    order: int  # display position within its section
    text: str
    verbatim: bool = False  # a user's words, quoted as they are

    def rendered(self) -> str:
        if self.verbatim:
            return f"{REQUEST_OPEN}\n{self.text}\n{REQUEST_CLOSE}"
        return f"- {self.text}"


@attrs.frozen(kw_only=True)
class ExtractiveSummarizer(Provider):
    """A :class:`~neuron_context.Provider` that summarizes without a model.

    Deterministic and offline. It writes the sections of the default instructions:

    - **Goal and constraints**: the previous summary's goal, carried forward, and the
      user's requests *verbatim*, each between ``<user_request>`` lines (a text that is
      only markup such as ``<command-name>...</command-name>``, a bracketed note such as
      ``[Request interrupted by user]`` or a harness caveat is not a request); when space
      is short the first request and the newest ones come first, and a request longer
      than half the space is cut in the middle (head and tail kept, the cut marked);
    - **Decisions**: the assistant's conclusions before its last message;
    - **Artifacts**: an index of what tool calls touched (a path or URL, else
      ``key=value`` of the key argument, such as ``command=pytest -q``), in the order
      first touched, each with the tools that acted on it, the latest last; then
      paths, URLs and commit hashes mentioned in the conversation, then those in tool
      output, up to ``max_mentions``;
    - **Errors and fixes**: the first line of each error result, or the error line of
      a result that holds a traceback or an ``error:`` line, newest first;
    - **Next steps**: what the assistant said last, its last call, and a user request
      still unanswered.

    The previous summary's sections are carried into the same sections (its text under
    other headings goes to the goal; quoted requests stay verbatim; an artifact acted on
    again gets its new latest action), so incremental summaries keep the user's words.
    The summary fits ``request.max_tokens`` (1024 when ``None``) as measured by
    ``counter`` and fills it: sections take turns to add their most important remaining
    item, goal first, until the next one does not fit.

    Examples:
        >>> from neuron_context import SummarizationStrategy
        >>> strategy = SummarizationStrategy(ExtractiveSummarizer(), 10, 100_000)
    """

    counter: BaseCounter = attrs.field(default=None, converter=to_counter)
    """Measures the summary against ``request.max_tokens``."""
    line_chars: int = attrs.field(default=240, validator=_at_least_20)
    """The longest item, in characters; longer ones are clipped with ``…`` (quoted user
    requests are not clipped)."""
    max_mentions: int = attrs.field(default=30, validator=non_negative_int())
    """The most paths, URLs and hashes listed besides the tool calls."""

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Summarize the conversation in ``request``, in a worker thread; see the class."""
        summary = await anyio.to_thread.run_sync(self.summarize, request, abandon_on_cancel=True)
        usage = TokenUsage(
            input_tokens=self.counter.estimate_messages(request.messages)
            + self.counter.estimate_text(request.system or ""),
            output_tokens=self.counter.estimate_text(summary),
        )
        return CompletionResponse(
            Message.assistant(summary), stop_reason=StopReason.END_TURN, usage=usage
        )

    def summarize(self, request: CompletionRequest) -> str:
        """The summary text for ``request`` (what :meth:`complete` answers)."""
        previous, entries = _read(request.messages)
        items = self._items(previous, entries)
        return self._fit(items, request.max_tokens or _DEFAULT_BUDGET)

    # -- extraction ---------------------------------------------------------------------

    def _items(self, previous: str | None, entries: Sequence[Entry]) -> list[_Item]:
        limit = self.line_chars
        items: list[_Item] = []
        seen: set[tuple[int, str]] = set()

        def add(section: int, rank: int, text: str, *, verbatim: bool = False) -> None:
            if text and (section, text) not in seen:
                seen.add((section, text))
                items.append(_Item(section, rank, len(items), text, verbatim))

        carried, quoted = _carried(previous, limit)
        users = [e for e in entries if e.kind == "user" and not is_notice(e.text)]
        assistants = [e for e in entries if e.kind == "assistant"]
        calls = [e for e in entries if e.kind == "call"]
        # Artifacts acted on again move to the new part of the index (their latest action).
        index = _Index()
        for line in carried.pop(ARTIFACTS, []):
            if not index.carry(line):
                add(ARTIFACTS, 0, line)
        for section, lines in carried.items():
            if section == NEXT and (assistants or calls):
                continue
            # Goal lines keep what came first; newer decisions and errors win.
            base = 0 if section == GOAL else 10_000
            for position, line in enumerate(lines):
                add(section, base + position, line)
        for position, text in enumerate(quoted):
            # The first quoted request is the task; then the newest carried ones.
            add(GOAL, 99 if position == 0 else 300 - position, text, verbatim=True)
        for position, entry in enumerate(users):
            # The first request states the goal; the newest is what the user wants now.
            newer = len(users) - 1 - position
            rank = 100 if position == 0 else 101 + newer
            add(GOAL, rank, entry.text.strip("\n"), verbatim=True)
        for position, entry in enumerate(reversed(assistants[-6:-1])):
            add(DECISIONS, position, "Assistant: " + clip(entry.text, limit))
        last_action = ""
        for entry in calls:
            artifact = artifact_of(entry.text, limit)
            index.act(artifact or entry.name or "tool", entry.name or "tool")
            last_action = f"{entry.name or 'tool'} {artifact}".strip()
        for position, (line, named) in enumerate(index.lines()):
            # Paths and URLs first: commands and other arguments after them.
            add(ARTIFACTS, (1000 if named else 1500) + position, line)
        self._mentions(entries, index, add)
        errors = [line for e in entries if (line := error_line(e.kind, e.name, e.text, limit))]
        for position, line in enumerate(reversed(errors)):
            add(ERRORS, position, line)
        if assistants:
            add(NEXT, 0, "Last said: " + clip(assistants[-1].text, limit))
        if last_action:
            add(NEXT, 1, "Last action: " + last_action)
        if users and entries[-1] is users[-1]:
            add(NEXT, 2, "Unanswered user request: " + clip(users[-1].text, limit))
        return items

    def _mentions(self, entries: Sequence[Entry], index: _Index, add: _Add) -> None:
        """Paths, URLs and hashes: from the conversation first, then from tool output
        (newest first), skipping what the index already names."""
        known = index.names()
        said: dict[str, None] = {}
        output: dict[str, None] = {}
        for entry in entries:
            if entry.kind in ("result", "error"):
                target, text = output, entry.text
            else:
                target = said
                text = argument_text(entry.text) if entry.kind == "call" else entry.text
            for mention in mentioned(text):
                if mention not in known:
                    target.setdefault(mention, None)
        found = list(said)
        found += [m for m in reversed(output) if m not in said]
        for position, mention in enumerate(found[: self.max_mentions]):
            add(ARTIFACTS, 2000 + position, f"Mentioned: {mention}")

    # -- fitting ------------------------------------------------------------------------

    def _fit(self, items: Sequence[_Item], budget: int) -> str:
        by_section: dict[int, list[_Item]] = {}
        for item in sorted(items, key=lambda i: (i.rank, i.order)):
            by_section.setdefault(item.section, []).append(item)
        estimate = self.counter.estimate_text
        chosen: list[_Item] = []
        costs: list[int] = []
        used = 0
        spent = dict.fromkeys(by_section, 0)
        taken = dict.fromkeys(by_section, 0)
        # Sections share the space by weight: the next item comes from the section that
        # has spent the least for its weight (in priority order on ties), so a few long
        # requests cannot crowd out the index, and space one section leaves goes to the
        # others.
        active = [s for s in _PRIORITY if s in by_section]
        while active:
            section = min(active, key=lambda s: spent[s] / _WEIGHTS[s])
            queue = by_section[section]
            if taken[section] >= len(queue):
                active.remove(section)
                continue
            item = queue[taken[section]]
            heading = estimate(f"\n{HEADINGS[section]}\n") if not spent[section] else 0
            cost = heading + estimate(item.rendered() + "\n")
            room = budget - used
            if item.verbatim and (cost > room or cost > budget * _VERBATIM_SHARE):
                item = self._shortened(item, min(room, int(budget * _VERBATIM_SHARE)))
                cost = heading + estimate(item.rendered() + "\n")
            if cost > room:
                active.remove(section)
                continue
            chosen.append(item)
            costs.append(cost)
            used += cost
            spent[section] += cost
            taken[section] += 1
        while chosen:
            text = _render(chosen)
            over = estimate(text) - budget
            if over <= 0:
                return text
            while chosen and over > 0:  # drop the least important items by the overshoot
                over -= costs.pop()
                chosen.pop()
        return ""

    def _shortened(self, item: _Item, space: int) -> _Item:
        """``item`` with its text cut in the middle to fit ``space`` tokens, rendered."""
        wrapper = self.counter.estimate_text(f"{REQUEST_OPEN}\n\n{REQUEST_CLOSE}\n") + 1
        if space - wrapper < 24:  # too little room to quote anything useful
            return item
        text = truncate_text(item.text, space - wrapper, self.counter)
        return attrs.evolve(item, text=text)


def _render(items: Iterable[_Item]) -> str:
    sections: dict[int, list[_Item]] = {}
    for item in items:
        sections.setdefault(item.section, []).append(item)
    parts: list[str] = []
    for section in sorted(sections):
        lines = [item.rendered() for item in sorted(sections[section], key=lambda i: i.order)]
        parts.append("\n".join([HEADINGS[section], *lines]))
    return "\n\n".join(parts)


class _Index:
    """What tool calls touched, each with the tools that acted on it (latest last)."""

    def __init__(self) -> None:
        self._actions: dict[str, list[str]] = {}

    def act(self, artifact: str, action: str) -> None:
        actions = self._actions.setdefault(artifact, [])
        if action in actions:
            actions.remove(action)
        actions.append(action)

    def carry(self, line: str) -> bool:
        """Take an index line of a previous summary; ``False`` if it is not one."""
        artifact, separator, rest = line.rpartition(": ")
        names = rest.removesuffix(_LATEST).split(", ")
        if not separator or not artifact or not all(_is_name(n) for n in names):
            return False
        for name in names:
            self.act(artifact, name)
        return True

    def lines(self) -> list[tuple[str, bool]]:
        """In the order first touched: ``artifact: tool, other tool (latest)``, and
        whether the artifact is a path or URL (not ``key=value`` or a bare tool name)."""
        lines = []
        for artifact, actions in self._actions.items():
            if artifact in actions and len(actions) == 1:
                lines.append((artifact, False))  # a call without arguments: its name says it
            else:
                latest = _LATEST if len(actions) > 1 else ""
                lines.append((f"{artifact}: {', '.join(actions)}{latest}", "=" not in artifact))
        return lines

    def names(self) -> str:
        return "\n".join(self._actions)


def _is_name(value: str) -> bool:
    return bool(value) and len(value) <= 128 and all(c.isalnum() or c in "_.-" for c in value)


def _read(messages: Sequence[Message]) -> tuple[str | None, list[Entry]]:
    """The previous summary and the entries: from our rendering, or from the messages."""
    users = [m for m in messages if m.role is Role.USER]
    if users:
        parsed = parse_request(users[-1].text)
        if parsed is not None:
            return parsed
    if messages and messages[-1].text.startswith(ALIGNED_MARK):
        messages = messages[:-1]  # a cache-aligned request's instruction, not the user's
    summaries = [b.content for m in messages for b in m.content if isinstance(b, Compaction)]
    previous = "\n\n".join(s for s in summaries if s.strip()) or None
    return previous, entries_of(messages, Structure.of(messages))


def _carried(previous: str | None, limit: int) -> tuple[dict[int, list[str]], list[str]]:
    """The previous summary's lines by section (unknown headings and text: the goal),
    and its quoted user requests, verbatim."""
    carried: dict[int, list[str]] = {}
    quoted: list[str] = []
    if not previous:
        return carried, quoted
    titles = {heading.removeprefix("## ").casefold(): i for i, heading in enumerate(HEADINGS)}
    section = GOAL
    quote: list[str] | None = None
    for raw in previous.split("\n"):
        if quote is not None:
            if raw == REQUEST_CLOSE:
                quoted.append("\n".join(quote))
                quote = None
            else:
                quote.append(raw)
            continue
        if raw == REQUEST_OPEN:
            quote = []
            continue
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            title = line.lstrip("#").strip().casefold()
            if title in titles:
                section = titles[title]
                continue
        if line.startswith(("- ", "* ")):
            line = line[2:].strip()
        if line:
            carried.setdefault(section, []).append(clip(line, limit))
    if quote:  # an unclosed quote: keep its words as a request
        quoted.append("\n".join(quote))
    return carried, quoted
