"""The reports on screen: rich tables for ``count``, ``compact`` and ``simulate``.

rich is imported only here and only when a report is printed, so ``import
neuron_context`` never pulls it in; the command line needs the ``cli`` extra. Output is
plain text when it is not a terminal (and honours ``NO_COLOR`` and ``COLUMNS``), so
the reports can be compared in tests and pasted into issues.

``simulate``'s report ends with a verdict: the stack that keeps every call within the
budget and starting on a user message, then keeps the task and the newest request in
the most calls, then costs the least — and, for the others, what they got wrong.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, cast

from .._counting.pricing import CacheCostModel
from ..formats._transcripts.storage import printable
from .census import Census, Row
from .diff import Diff
from .simulate import Run, Totals

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["best", "console", "plain", "print_census", "print_compaction", "print_runs"]


def console(*, stderr: bool = False) -> Console:
    """A console on stdout (or stderr), plain when not a terminal; text its encoding
    cannot hold is escaped, never an error."""
    from rich.console import Console

    stream = cast("IO[str]", SafeStream(sys.stderr if stderr else sys.stdout))
    return Console(file=stream, highlight=False, soft_wrap=True)


def plain(text: str) -> str:
    """``text`` from a transcript or an argument, shown as it is: rich markup in it
    (``[bold]``, ``[/]``) is escaped, lone surrogates written as escapes."""
    from rich.markup import escape

    return escape(printable(text))


def _n(value: int | float) -> str:
    return f"{value:,.0f}"


def _tokens_table(
    title: str, rows: Sequence[Row], counters: Sequence[str], what: str, count: str = "count"
) -> object:
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    table.add_column(what)
    table.add_column(count, justify="right")
    for name in counters:
        table.add_column(f"tokens ({name})", justify="right")
    total = sum(r.tokens[0] for r in rows) or 1
    table.add_column("share", justify="right")
    for row in rows:
        share = f"{row.tokens[0] / total:.0%}"
        table.add_row(plain(row.label), _n(row.count), *(_n(t) for t in row.tokens), share)
    return table


def print_census(out: Console, census: Census) -> None:
    """Print where the tokens go."""
    from rich.table import Table

    names = ", ".join(census.transcripts)
    if len(census.transcripts) > 3:
        names = f"{len(census.transcripts)} transcripts ({census.transcripts[0]}, …)"
    names = plain(names)
    totals = ", ".join(f"{_n(t)} ({c})" for t, c in zip(census.total, census.counters, strict=True))
    out.print(f"[bold]{names}[/]: {_n(census.messages)} messages, {totals} tokens")
    out.print()
    out.print(_tokens_table("By role", census.by_role, census.counters, "role"))
    out.print()
    if census.by_tool:
        tools = _tokens_table(
            "By tool (calls and their results)", census.by_tool, census.counters, "tool", "calls"
        )
        out.print(tools)
        out.print()
    out.print(_tokens_table("By block kind", census.by_kind, census.counters, "kind"))
    out.print()
    table = Table(title="Largest messages", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True, min_width=3)
    table.add_column("role", no_wrap=True, min_width=9)
    for name in census.counters:
        header = f"tokens ({name})"
        table.add_column(header, justify="right", no_wrap=True, min_width=len(header))
    fixed = 3 + 9 + sum(len(f"tokens ({name})") for name in census.counters)
    room = out.width - fixed - 3 * (len(census.counters) + 2)  # 3 per column separator
    table.add_column("what", overflow="ellipsis", no_wrap=True, max_width=max(12, min(60, room)))
    several = len(census.transcripts) > 1
    for item in census.largest:
        where = f"{item.transcript}:{item.index}" if several else str(item.index)
        table.add_row(plain(where), item.role, *(_n(t) for t in item.tokens), plain(item.preview))
    out.print(table)


def print_compaction(
    out: Console,
    *,
    label: str,
    budget: int,
    diff: Diff,
    fits: bool,
    why: str,
    well_formed: str | None,
    written: str | None,
    tools: tuple[int, int] = (0, 0),
) -> None:
    """Print a compaction's before/after report; ``tools``: how many tool definitions the
    request sends, and their tokens."""
    from rich.table import Table

    out.print(f"stack: [bold]{plain(label)}[/]   budget: {_n(budget)} tokens")
    table = Table(show_edge=False, pad_edge=False)
    for column in ("", "before", "after"):
        table.add_column(column, justify="right" if column else "left")
    table.add_row("messages", _n(diff.messages_before), _n(diff.messages_after))
    table.add_row("tokens", _n(diff.tokens_before), _n(diff.tokens_after))
    out.print(table)
    if tools[0]:
        what = "tool definition" if tools[0] == 1 else "tool definitions"
        out.print(
            f"and {_n(tools[0])} {what}: {_n(tools[1])} tokens in every request, "
            "counted in the budget"
        )
    out.print()
    if diff.changes or diff.summaries:
        changes = Table(
            title="What changed (counted against the input)",
            title_justify="left",
            show_edge=False,
            pad_edge=False,
        )
        for column in ("change", "messages", "tokens before", "tokens after"):
            changes.add_column(column, justify="left" if column == "change" else "right")
        changes.add_row("kept as they were", _n(diff.kept), "", "")
        for change in diff.changes:
            changes.add_row(
                change.kind,
                _n(change.messages),
                _n(change.tokens_before),
                _n(change.tokens_after),
            )
        if diff.summaries:
            changes.add_row("new summary", _n(len(diff.summaries)), "", _n(diff.summary_tokens))
        out.print(changes)
        out.print()
    else:
        out.print("nothing changed: the history already fits the budget")
    if well_formed is None:
        out.print("well formed: yes (every tool call is answered, no result without its call)")
    else:
        out.print(f"well formed: [red]NO[/] — {plain(well_formed)}")
    verdict = "yes" if fits else f"[red]no[/] — {plain(why)}"
    out.print(f"fits the budget: {verdict}")
    if written:
        out.print(f"written: {plain(written)}")


def _cost(totals: Totals) -> float:
    """The cost runs are compared by: the net cost under a cost model, when priced."""
    return totals.net_cost if totals.net_input_cost else totals.input_cost


def _score(totals: Totals) -> tuple[int, float]:
    lost = (totals.calls - totals.task_kept) + (totals.calls - totals.last_kept)
    return (totals.over_budget + totals.not_on_user + totals.failed + lost, _cost(totals))


def best(runs: Sequence[Run]) -> Run:
    """The run to recommend: the fewest faults (calls over budget, not starting on a user
    message, without the task or the newest request; failed compactions), then the
    cheapest."""
    return min(runs, key=lambda run: _score(run.totals))


def _calls(n: int) -> str:
    return f"{n:,} call" + ("" if n == 1 else "s")


def _faults(totals: Totals) -> list[str]:
    calls = totals.calls
    faults = []
    if totals.over_budget:
        faults.append(f"{totals.over_budget} of {_calls(calls)} over budget")
    if totals.not_on_user:
        faults.append(f"{_calls(totals.not_on_user)} not starting on a user message")
    if totals.task_kept < calls:
        faults.append(f"lost the task in {_calls(calls - totals.task_kept)}")
    if totals.last_kept < calls:
        faults.append(f"lost the newest request in {_calls(calls - totals.last_kept)}")
    if totals.failed:
        faults.append(f"{totals.failed} failed compactions")
    return faults


_ROWS: tuple[tuple[str, str], ...] = (
    ("model calls", "calls"),
    ("compactions", "compactions"),
    ("peak context tokens", "peak"),
    ("final context tokens", "final"),
    ("calls over budget", "over_budget"),
    ("calls not starting on user", "not_on_user"),
    ("calls holding the task", "task_kept"),
    ("calls holding newest request", "last_kept"),
    ("input tokens", "input_tokens"),
    ("prefix-cached tokens", "cached_tokens"),
    ("input cost (cached at 1/10)", "input_cost"),
)
_PRICED: tuple[tuple[str, str], ...] = (
    ("cache hit rate", "cache_hit_rate"),
    ("net input cost (reads, writes)", "net_input_cost"),
    ("compaction calls' own cost", "compaction_cost"),
    ("net cost", "net_cost"),
)
"""The rows a cost model adds."""


def print_runs(
    out: Console,
    runs: Sequence[Run],
    *,
    title: str,
    budget: str,
    cost_model: CacheCostModel | None = None,
) -> None:
    """Print the comparison of ``runs`` (one column per stack) and the verdict; with
    ``cost_model``, the rows of the net cost after the cache's reads and writes."""
    from rich.table import Table

    table = Table(title=plain(title), title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("", no_wrap=True)
    for run in runs:
        table.add_column(plain(run.label), justify="right", overflow="fold")
    rows = list(_ROWS)
    if any(run.totals.failed for run in runs):
        rows.append(("failed compactions", "failed"))
    if cost_model is not None:
        rows.extend(_PRICED)
    for name, field in rows:
        cells = []
        for run in runs:
            value = getattr(run.totals, field)
            cell = f"{value:.1%}" if field == "cache_hit_rate" else _n(value)
            if field == "cached_tokens" and run.totals.input_tokens:
                cell += f" ({value / run.totals.input_tokens:.0%})"
            cells.append(cell)
        table.add_row(name, *cells)
    out.print(table)
    out.print(f"budget: {plain(budget)}")
    if cost_model is not None:
        m = cost_model
        out.print(
            plain(
                f"prices ({m.name}, per uncached input token): cache read {m.cache_read:g}, "
                f"cache write {m.cache_write:g} (entries live {m.cache_ttl:g} s), "
                f"output {m.output:g}"
            )
        )
    out.print()
    chosen = best(runs)
    faults = _faults(chosen.totals)
    if faults:
        out.print(f"[bold]best of these: {plain(chosen.label)}[/], but: " + "; ".join(faults))
    else:
        t = chosen.totals
        out.print(
            f"[bold]use {plain(chosen.label)}[/]: every call within budget, starting on a user"
            f" message and holding the task and the newest request; "
            + (
                f"net cost {_n(t.net_cost)}"
                if t.net_input_cost
                else f"input cost {_n(t.input_cost)}"
            )
        )
    for run in runs:
        if run is chosen:
            continue
        problems = _faults(run.totals)
        if not problems:
            extra = _cost(run.totals) - _cost(chosen.totals)
            problems = [f"costs {_n(extra)} more" if extra > 0 else "as good"]
        out.print(f"  {plain(run.label)}: " + "; ".join(problems))


class SafeStream(io.TextIOBase):
    """A text stream that writes what its underlying stream's encoding cannot hold as
    backslash escapes instead of raising (reports show any transcript's text)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        encoding = getattr(self._stream, "encoding", None) or "utf-8"
        try:
            safe = text.encode(encoding, "backslashreplace").decode(encoding, "replace")
        except LookupError:
            safe = text.encode("ascii", "backslashreplace").decode("ascii")
        self._stream.write(safe)
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        isatty = getattr(self._stream, "isatty", None)
        return bool(isatty()) if callable(isatty) else False

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # TextIOBase's is a plain attribute
        return getattr(self._stream, "encoding", None) or "utf-8"
