"""A summarizer that needs no model: deterministic, offline, extractive.

:class:`ExtractiveSummarizer` is a :class:`~neuron_context.Provider`. Given the request
that :class:`~neuron_context.SummarizationStrategy` builds, it reads the rendered
transcript back (the format is line based, see :mod:`neuron_context._summary.transcript`);
given any other request, it summarizes the request's messages themselves. Either way it
writes the sections the default instructions ask for, from what it can extract, and
fills the space it is given (``request.max_tokens``): what a session cannot lose comes
first, the user's own words above all (the sharing of the space is
:mod:`neuron_context._summary.sections`').

Its work is bounded by the size of the summary, not by the length of the history: the
user's requests are found by role and only those that can be quoted are read; every
other section is read newest first and stops when nothing older could make it into the
summary, or after ``read_per_token`` characters per token of the budget (see
:mod:`neuron_context._summary.findings`). Given the messages themselves, nothing else is
read; given a rendering, the rendering is split into lines once. The work is CPU only,
so :meth:`ExtractiveSummarizer.complete` runs it in a worker thread: the event loop
keeps serving other tasks and a caller's ``timeout`` still fires (the thread is
abandoned, its result discarded). Every scan of untrusted text is linear (see
:mod:`neuron_context._summary.scan`).
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

import anyio.to_thread
import attrs

from .._counting.counter import BaseCounter
from .._counting.heuristic import to_counter
from .._messages.markers import SEPARATOR
from .._messages.message import Message
from .._messages.truncation import Weigh
from .._validators import non_negative_int, require_bool, require_callable, require_int
from ..providers._base import (
    CompletionRequest,
    CompletionResponse,
    Provider,
    StopReason,
    TokenUsage,
)
from .agent_plan import plan_block
from .fact_chunks import CHUNK
from .fact_items import carried_items, result_items
from .findings import DECISIONS_QUOTED, Findings, find
from .format import (
    ARTIFACTS,
    DECISIONS,
    ERRORS,
    FACTS,
    GOAL,
    NEXT,
    PLAN,
    REQUEST_CLOSE,
    REQUEST_OPEN,
)
from .previous import carried_sections
from .scan import clip, is_notice
from .sections import Item, fit
from .source import Source, source_of

__all__ = ["ExtractiveSummarizer"]

_DEFAULT_BUDGET = 1024
_MIN_READ = 200_000
"""Characters of the newest entries read whatever the budget (see ``read_per_token``)."""
_TIER = 1_000_000
"""Ranks within the artifacts: carried lines, then what the calls touched by tier (see
``findings.tier``), then mentions (each tier newest first)."""


def _at_least_20(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    require_int(value, f"{type(instance).__name__}.{attribute.name}", minimum=20)


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
    - **Plan**: the newest plan or todo list (a todo tool's latest call), verbatim,
      with what is done, in progress and next;
    - **Decisions**: the assistant's conclusions before its last message;
    - **Artifacts**: an index of what tool calls touched (a path or URL, else
      ``key=value`` of the key argument, such as ``command=pytest -q``, or of every
      argument of a query of a few short values, such as ``origin=ORD,
      destination=PHL, date=2024-05-10``), newest first
      (by the latest call on it), each with the tools that acted on it, the latest
      last (when space is short, paths and URLs come first, then arguments that name
      one); then paths, URLs and commit hashes mentioned in the conversation, then
      those in tool output, each newest first, up to ``max_mentions``;
    - **Facts**: the facts of the tool results (see ``neuron_context._summary.facts``:
      what code defines, key/value pairs of JSON results and tables of its lists of
      objects, ids, dates, versions, code names), a line per result under its call,
      newest first, a chunk at a time (a result's first chunk before the further
      chunks of the newer ones), a list of scalars that later calls walk (took some
      of its items as arguments, others not yet: see ``neuron_context._summary.walked``)
      first of all, in new results and carried lines alike; and the values a call
      sent (the pairs and tables of its arguments, ``called tool artifact with:
      ...``) where it acted on no path, URL, command or pattern (a booking's flights
      and payment: what a retry sends again); a result's facts line takes the place
      of its call's index line where both do not fit;
    - **Errors and fixes**: the first line of each error result, or the error line of
      a result that holds a traceback or an ``error:`` line, newest first;
    - **Next steps**: what the assistant said last, its last call (unless its index
      or facts line, chosen, says it), and a user request still unanswered.

    The previous summary (the :class:`~neuron_context.Compaction` blocks of the user
    messages, or the one a rendered request carries) is carried into the same sections
    (its text under other headings goes to the goal; quoted requests stay verbatim; its
    index follows the new one, and an artifact acted on again moves up with its new
    latest action; its facts lines, verbatim with the segments under them, the newest
    summary's first, rank as results older than the new ones), so incremental summaries
    keep the user's words and what the tools told.
    The summary fits ``request.max_tokens`` (1024 when ``None``) as measured by
    ``counter`` and fills it: the task and the newest request are quoted first (unless
    kept beside the summary), then sections take turns to add their most important
    remaining item, the one that has spent least for its weight first, and on ties the
    plan, then a result's facts, then the index, then the quoted requests, until the
    next one does not fit.

    The work is bounded by the budget, not by the history: every section but the goal
    reads the conversation newest first and stops when its items already found would
    fill the whole budget, and at most ``read_per_token`` characters per token of the
    budget (at least 200,000) are read in all; older decisions, artifacts, errors and
    mentions are left out. The user's requests are looked for in the whole history, by
    role (a check per message), and only the first (unless ``task_kept``) and the newest
    ones that could be quoted are read (at most as many characters again).

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
    read_per_token: int = attrs.field(default=50, validator=non_negative_int())
    """How much of the history is read: this many characters of the newest messages
    per token of ``request.max_tokens``, and at least 200,000 (an entry that does not
    fit whole is read by its head and its tail); as much again of the user's messages
    for the goal."""

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

    def summarize(
        self,
        request: CompletionRequest,
        *,
        shown: Set[str] = frozenset(),
        weigh: Weigh | None = None,
        task_kept: bool = False,
        newest_kept: bool = False,
    ) -> str:
        """The summary text for ``request`` (what :meth:`complete` answers).

        Args:
            request: what to summarize, and in how many tokens (``max_tokens``).
            shown: the telling words the rest of the request the summary goes into
                already shows (see ``neuron_context._summary.shown``): a fact of a
                result whose every telling word is among them is left out, as it would
                only repeat them.
            weigh: what an agent reuses of a text: a callable taking a text and
                returning a mapping of the names in it an agent may reuse (ids, dates,
                names with their labels) to their weights; given, the summary chooses
                by content (see
                ``neuron_context._summary.sections``): a request, a decision or a next
                step that holds none of it waits for the items that do, and a request
                too long for its space keeps its lines, sentences or clauses worth most,
                not its head and tail.
            task_kept: the conversation's task (its first request) is kept beside the
                summary, not in it: the first request summarized and the first one a
                previous summary quotes are ones of the others (the newest still
                comes first), not quoted first for being first.
            newest_kept: the conversation's newest request is kept beside the summary,
                not in it: the newest request summarized is an earlier one, quoted by
                its content and recency like the others (not first for being the
                newest), and no line says it is unanswered (the newer one kept beside
                the summary is what the user wants now).

        Raises:
            ConfigurationError: ``weigh`` is neither ``None`` nor callable, or
                ``task_kept`` or ``newest_kept`` is not a bool.
        """
        if weigh is not None:
            require_callable(weigh, "ExtractiveSummarizer.summarize(weigh)")
        require_bool(task_kept, "ExtractiveSummarizer.summarize(task_kept)")
        require_bool(newest_kept, "ExtractiveSummarizer.summarize(newest_kept)")
        budget = request.max_tokens or _DEFAULT_BUDGET
        chars = max(_MIN_READ, self.read_per_token * budget)
        source = source_of(request.messages)
        found = find(
            source.newest(),
            budget=budget,
            chars=chars,
            cost=self.counter.estimate_text,
            line_chars=self.line_chars,
            max_mentions=self.max_mentions,
            shown=shown,
        )
        requests = self._requests(
            source, budget, chars, task=not task_kept, pin_newest=not newest_kept
        )
        if newest_kept:
            found.unanswered = ""
        items = self._items(source, found, requests, shown, task=not task_kept)
        return fit(items, budget, self.counter, weigh=weigh)

    # -- extraction ---------------------------------------------------------------------

    def _items(
        self,
        source: Source,
        found: Findings,
        requests: list[tuple[int, str]],
        shown: Set[str],
        *,
        task: bool,
    ) -> list[Item]:
        limit = self.line_chars
        items: list[Item] = []
        seen: set[tuple[int, str]] = set()

        def add(
            section: int,
            rank: int,
            text: str,
            *,
            verbatim: bool = False,
            order: int | None = None,
            continues: str = "",
            block: bool = False,
            echoes: tuple[str, ...] = (),
            chained: bool = False,
        ) -> None:
            if text and (continues or (section, text) not in seen):
                seen.add((section, text))
                at = len(items) if order is None else order
                item = Item(section, rank, at, text, verbatim, continues, block, echoes, chained)
                items.append(item)

        carried, quoted, plans = carried_sections(source.previous, limit)
        plan = found.plan or (plans[-1] if plans else "")
        if plan:
            add(PLAN, 0, plan_block(plan), block=True)
        # The previous index is older than every call read: it follows the new one, and
        # an artifact acted on again keeps its place in the new part (its latest action).
        index = found.index
        for line in carried.pop(ARTIFACTS, []):
            if not index.carry(line):
                add(ARTIFACTS, 0, line)
        carried_items(carried.pop(FACTS, []), len(found.facts), found, shown, add)
        for section, lines in carried.items():
            if section == NEXT and found.acted:
                continue
            # Goal lines keep what came first; newer decisions and errors win.
            base = 0 if section == GOAL else 10_000
            for position, line in enumerate(lines):
                add(section, base + position, line)
        for position, text in enumerate(quoted):
            # The first quoted request is the task (unless it is kept beside the
            # summary); then the newest carried ones.
            first = position == 0 and task
            add(GOAL, 99 if first else 300 - position, text, verbatim=True)
        for rank, text in requests:
            add(GOAL, rank, text.strip("\n"), verbatim=True)
        for position, text in enumerate(found.said[1 : DECISIONS_QUOTED + 1]):
            add(DECISIONS, position, "Assistant: " + clip(text, limit))
        for position, (line, tier) in enumerate(index.lines()):
            # Paths and URLs first, then the commands that name one, then the others.
            add(ARTIFACTS, (1 + tier) * _TIER + position, line)
        known = index.names()
        mentions = [m for m in found.mentioned if m not in known]
        mentions += [m for m in found.in_output if m not in found.mentioned and m not in known]
        # Mentions share their lines, a few to a line: ``Mentioned: a.py · b/c.md · ...``
        # (a comma may be part of a path or URL: it cannot separate them).
        width = 0
        for position, mention in enumerate(mentions[: self.max_mentions]):
            rank = 4 * _TIER + position
            if width and width + len(mention) <= CHUNK:
                add(ARTIFACTS, rank, mention, order=len(items), continues=SEPARATOR)
                width += len(mention) + 2
            else:
                add(ARTIFACTS, rank, f"Mentioned: {mention}")
                width = len(mention) + 12
        result_items(found, shown, add)
        for position, line in enumerate(found.errors):
            add(ERRORS, position, line)
        if found.said:
            add(NEXT, 0, "Last said: " + clip(found.said[0], limit))
        if found.last_action:
            # Its call's index line or facts line, chosen beside it, says it all.
            echoes = (found.last_action, found.last_touched)
            add(NEXT, 1, "Last action: " + found.last_action, echoes=echoes)
        if found.unanswered:
            add(NEXT, 2, "Unanswered user request: " + clip(found.unanswered, limit))
        return items

    def _requests(
        self, source: Source, budget: int, chars: int, *, task: bool, pin_newest: bool
    ) -> list[tuple[int, str]]:
        """``(rank, text)`` of the user's requests that could be quoted, oldest first:
        the first (the task, unless ``task`` is false: then it is one of the others),
        then the newest ones (the newest pinned beside the task unless ``pin_newest``
        is false: then it is one of the others) until even the least each can cost
        (its quote marks) adds up to more than ``budget``, or ``chars`` characters of
        the user's messages are read."""
        users = source.users
        first, text = -1, ""
        for at, position in enumerate(users):
            if not task:
                break
            text = source.user_text(position)
            chars -= len(text)
            if not is_notice(text):
                first = at
                break
            if chars <= 0:
                return []
        if task and first < 0:
            return []
        least = max(1, self.counter.estimate_text(f"{REQUEST_OPEN}\n{REQUEST_CLOSE}\n"))
        pinned_newest = 0 if pin_newest else 1  # rank 101 is pinned (see sections.fit)
        newest: list[tuple[int, str]] = []
        for at in range(len(users) - 1, first, -1):
            if len(newest) * least > budget or chars <= 0:
                break
            said = source.user_text(users[at])
            chars -= len(said)
            if not is_notice(said):
                # The first request states the goal; the newest is what the user wants now.
                newest.append((101 + pinned_newest + len(newest), said))
        first_request = [(100, text)] if task else []
        return [*first_request, *reversed(newest)]
