"""A summarizer that needs no model: deterministic, offline, extractive.

:class:`ExtractiveSummarizer` is a :class:`~neuron_context.Provider`. Given the request
that :class:`~neuron_context.SummarizationStrategy` builds, it reads the rendered
transcript back (the format is line based, see :mod:`neuron_context._transcript`);
given any other request, it summarizes the request's messages themselves. Either way it
writes the sections the default instructions ask for, from what it can extract.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeAlias

import attrs

from .._counting.base import BaseCounter
from .._messages.content import Compaction
from .._messages.conversation import Structure
from .._messages.message import Message, Role
from .._strategies.base import to_counter
from .._validators import non_negative_int, require_int
from ..providers._base import (
    CompletionRequest,
    CompletionResponse,
    Provider,
    StopReason,
    TokenUsage,
)
from .format import HEADINGS
from .transcript import Entry, entries_of, parse_request

__all__ = ["ExtractiveSummarizer"]

GOAL, DECISIONS, ARTIFACTS, ERRORS, NEXT = range(5)
# The order in which sections get their next item when the budget is shared out.
_PRIORITY = (GOAL, ARTIFACTS, ERRORS, NEXT, DECISIONS)
_DEFAULT_BUDGET = 1024

# Arguments that say what a tool call touched, most telling first.
KEY_ARGUMENTS = (
    "path",
    "file_path",
    "filepath",
    "filename",
    "file",
    "paths",
    "url",
    "command",
    "cmd",
    "query",
    "pattern",
    "q",
)

_EXTENSIONS = (
    "c|cc|cfg|cpp|cs|css|csv|ex|exs|go|h|hpp|html|ini|ipynb|java|js|json|jsx|kt|lock|log|md|"
    "php|pony|py|pyi|rb|rs|scss|sh|sql|svelte|swift|toml|ts|tsx|txt|vue|xml|yaml|yml"
)
_URL = re.compile(r"https?://[^\s'\"<>()\[\]{}`]+")
_PATH = re.compile(
    r"(?<![\w/.~-])(?:~|\.{1,2})?/?[\w.@+*-]+(?:/[\w.@+*-]+)+/?"
    rf"|(?<![\w/.-])[\w-][\w.-]*\.(?:{_EXTENSIONS})\b"
)
_HASH = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
_ERROR_LINE = re.compile(
    r"^(?:[\w.]*(?:Error|Exception|Failure)\b.*|(?:error|fatal|ERROR|FATAL|FAILED)\b.*)$"
)
_TRAILING = ".,;:!?'\""
# User texts that are not requests: markup an agent wrapped output in, or a bracketed note
# such as "[Request interrupted by user]".
_NOTE = re.compile(r"^(?:<[\w-]+[^>]*>.*</[\w-]+>|\[[^\]]*\])$", re.DOTALL)


_Add: TypeAlias = Callable[[int, int, str], None]


def _at_least_20(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    require_int(value, f"{type(instance).__name__}.{attribute.name}", minimum=20)


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


@attrs.frozen
class _Item:
    section: int
    rank: int  # lower is more important within its section
    order: int  # display position within its section
    text: str


@attrs.frozen(kw_only=True)
class ExtractiveSummarizer(Provider):
    """A :class:`~neuron_context.Provider` that summarizes without a model.

    Deterministic and offline. It writes the sections of the default instructions:

    - **Goal and constraints**: the previous summary's goal, carried forward, and the
      user's requests (the start of each; a text that is only markup such as
      ``<command-name>...</command-name>`` or a bracketed note is not a request);
    - **Decisions**: the assistant's conclusions before its last message;
    - **Artifacts**: each tool call with its key argument (path, URL, command, query,
      ...), then paths, URLs and commit hashes mentioned;
    - **Errors and fixes**: the first line of each error result, or the error line of
      a result that holds a traceback or an ``error:`` line;
    - **Next steps**: what the assistant said last, its last call, and a user request
      still unanswered.

    The previous summary's sections are carried into the same sections (its text under
    other headings goes to the goal), so incremental summaries keep the goal. The
    summary fits ``request.max_tokens`` (1024 when ``None``) as measured by
    ``counter``: sections take turns to add their most important remaining item, goal
    first, until the next one does not fit.

    Examples:
        >>> from neuron_context import SummarizationStrategy
        >>> strategy = SummarizationStrategy(ExtractiveSummarizer(), 10, 100_000)
    """

    counter: BaseCounter = attrs.field(default=None, converter=to_counter)
    """Measures the summary against ``request.max_tokens``."""
    line_chars: int = attrs.field(default=240, validator=_at_least_20)
    """The longest item, in characters; longer ones are clipped with ``…``."""
    max_mentions: int = attrs.field(default=30, validator=non_negative_int())
    """The most paths, URLs and hashes listed besides the tool calls."""

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Summarize the conversation in ``request``; see the class."""
        summary = self.summarize(request)
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

        def add(section: int, rank: int, text: str) -> None:
            if text and (section, text) not in seen:
                seen.add((section, text))
                items.append(_Item(section, rank, len(items), text))

        carried = _carried(previous)
        users = [e for e in entries if e.kind == "user" and not _NOTE.match(e.text.strip())]
        assistants = [e for e in entries if e.kind == "assistant"]
        calls = [e for e in entries if e.kind == "call"]
        new_next = bool(assistants or calls)
        for section, lines in carried.items():
            if section == NEXT and new_next:
                continue
            # Goal and artifacts keep what came first; newer decisions and errors win.
            base = 0 if section in (GOAL, ARTIFACTS) else 10_000
            for index, line in enumerate(lines):
                add(section, base + index, _clip(line, limit))
        for index, entry in enumerate(users):
            # The first request states the goal; the latest is what the user wants now.
            rank = 100 if index == 0 else 101 if index == len(users) - 1 else 102 + index
            add(GOAL, rank, "User: " + _clip(entry.text, limit))
        # The last assistant text goes to the next steps; the five before it are decisions.
        for index, entry in enumerate(reversed(assistants[-6:-1])):
            add(DECISIONS, index, "Assistant: " + _clip(entry.text, limit))
        described = [_describe_call(entry, limit) for entry in calls]
        for index, text in enumerate(described):
            add(ARTIFACTS, 1000 + index, text)
        self._mentions(entries, described, add)
        errors = [line for e in entries if (line := _error_line(e, limit))]
        for index, line in enumerate(reversed(errors)):
            add(ERRORS, index, line)
        if assistants:
            add(NEXT, 0, "Last said: " + _clip(assistants[-1].text, limit))
        if calls:
            add(NEXT, 1, "Last action: " + described[-1])
        if users and entries[-1] is users[-1]:
            add(NEXT, 2, "Unanswered user request: " + _clip(users[-1].text, limit))
        return items

    def _mentions(
        self,
        entries: Sequence[Entry],
        described: Sequence[str],
        add: _Add,
    ) -> None:
        already = "\n".join(described)
        found: dict[str, None] = {}
        for entry in entries:
            if entry.kind in ("result", "error"):
                continue  # tool output lists many paths: too noisy
            text = _argument_text(entry.text) if entry.kind == "call" else entry.text
            for mention in _mentioned(text):
                if mention not in already:
                    found.setdefault(mention, None)
        for index, mention in enumerate(list(found)[: self.max_mentions]):
            add(ARTIFACTS, 2000 + index, f"Mentioned: {mention}")

    # -- fitting ------------------------------------------------------------------------

    def _fit(self, items: Sequence[_Item], budget: int) -> str:
        by_section: dict[int, list[_Item]] = {}
        for item in sorted(items, key=lambda i: (i.rank, i.order)):
            by_section.setdefault(item.section, []).append(item)
        estimate = self.counter.estimate_text
        chosen: list[_Item] = []
        used = 0
        opened: set[int] = set()
        full: set[int] = set()
        depth = 0
        while len(full) < len(by_section):
            for section in _PRIORITY:
                queue = by_section.get(section, [])
                if section in full or section not in by_section:
                    continue
                if depth >= len(queue):
                    full.add(section)
                    continue
                item = queue[depth]
                cost = estimate(f"- {item.text}\n")
                if section not in opened:
                    cost += estimate(f"\n{HEADINGS[section]}\n")
                if used + cost > budget:
                    full.add(section)
                    continue
                chosen.append(item)
                used += cost
                opened.add(section)
            depth += 1
        while chosen:
            text = _render(chosen)
            if estimate(text) <= budget:
                return text
            chosen.pop()
        return ""


def _render(items: Iterable[_Item]) -> str:
    sections: dict[int, list[_Item]] = {}
    for item in items:
        sections.setdefault(item.section, []).append(item)
    parts: list[str] = []
    for section in sorted(sections):
        lines = [f"- {item.text}" for item in sorted(sections[section], key=lambda i: i.order)]
        parts.append("\n".join([HEADINGS[section], *lines]))
    return "\n\n".join(parts)


def _read(messages: Sequence[Message]) -> tuple[str | None, list[Entry]]:
    """The previous summary and the entries: from our rendering, or from the messages."""
    users = [m for m in messages if m.role is Role.USER]
    if users:
        parsed = parse_request(users[-1].text)
        if parsed is not None:
            return parsed
    summaries = [b.content for m in messages for b in m.content if isinstance(b, Compaction)]
    previous = "\n\n".join(s for s in summaries if s.strip()) or None
    return previous, entries_of(messages, Structure.of(messages))


def _carried(previous: str | None) -> dict[int, list[str]]:
    """The previous summary's lines by section (unknown headings and text: the goal)."""
    carried: dict[int, list[str]] = {}
    if not previous:
        return carried
    titles = {heading.removeprefix("## ").casefold(): i for i, heading in enumerate(HEADINGS)}
    section = GOAL
    for raw in previous.split("\n"):
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
            carried.setdefault(section, []).append(line)
    return carried


def _argument_text(arguments: str) -> str:
    """The string values of a call's JSON arguments, one per line."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return arguments
    strings: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, str):
            strings.append(node)
        elif isinstance(node, Mapping):
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(value)
    return "\n".join(strings)


def _describe_call(entry: Entry, limit: int) -> str:
    """``name: key argument`` for a call (the first string argument when none is known)."""
    try:
        arguments = json.loads(entry.text)
    except ValueError:
        arguments = None
    detail = ""
    if isinstance(arguments, Mapping):
        keys = [k for k in KEY_ARGUMENTS if k in arguments]
        keys += [k for k, v in arguments.items() if isinstance(v, str) and k not in keys]
        for key in keys:
            value = arguments[key]
            if isinstance(value, list):
                value = ", ".join(str(v) for v in value)
            if isinstance(value, str | int | float) and str(value).strip():
                first = str(value).strip().split("\n", 1)[0]
                detail = f"{key}={first}"
                break
    elif entry.text.strip():
        detail = entry.text.strip()
    name = entry.name or "tool"
    return _clip(f"{name}({detail})" if detail else name, limit)


def _mentioned(text: str) -> list[str]:
    """Paths, URLs and commit hashes in ``text``, in order of appearance."""
    found: list[str] = []
    for match in _URL.finditer(text):
        found.append(match.group().rstrip(_TRAILING))
    rest = _URL.sub(" ", text)
    for match in _PATH.finditer(rest):
        path = match.group().rstrip(_TRAILING)
        last = path.rstrip("/").rsplit("/", 1)[-1]
        if "/" in path and "." not in last and path.count("/") < 2:
            continue  # "and/or", "read/write": not a path
        found.append(path)
    found.extend(match.group() for match in _HASH.finditer(rest))
    return found


def _error_line(entry: Entry, limit: int) -> str:
    """The line that says what failed, for error results and results that show errors."""
    name = entry.name or "tool"
    if entry.kind == "error":
        first = next((line for line in entry.text.split("\n") if line.strip()), "(no output)")
        return _clip(f"{name} failed: {first}", limit)
    if entry.kind != "result":
        return ""
    hits = [line.strip() for line in entry.text.split("\n") if _ERROR_LINE.match(line.strip())]
    return _clip(f"{name}: {hits[-1]}", limit) if hits else ""
