"""The plot of a simulation: context tokens per model call, one line per stack.

A table gives totals; the plot shows the shape that explains them: a history that
grows until the budget line, then a stack that compacts well below it (a saw with long
teeth: few compactions, a warm prompt cache) or one that hugs the line (compacting on
almost every call). Compactions are marked on each line, the budget is drawn as a step
line (budgets given as a fraction differ per transcript), and where several transcripts
are summed a thin vertical line marks where each begins; each is labelled with its name,
or, where the names would overlap (many transcripts, short ones side by side), with its
number, the names listed by number under the title, and a number that would still overlap
its neighbour left out (the list names every transcript).

matplotlib is imported only here, with the headless Agg backend, so the plot works on a
server or in CI; ``figure()`` returns the figure so tests can read its series.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..formats._transcripts.storage import printable
from .simulate import Run

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.text import Text

__all__ = ["figure", "png"]

_LABEL = 28
"""Characters of a transcript's name on the plot."""
_KEY_WIDTH = 110
"""Characters of a line of the list of transcripts under the title."""


def _text(text: str) -> str:
    """``text`` drawn as it is: ``$`` would start matplotlib's math mode, a lone
    surrogate cannot be rendered."""
    return printable(text).replace("$", r"\$")


def _short(name: str) -> str:
    """A transcript's name as the plot labels it: the file (or bundled transcript) alone."""
    name = name.removeprefix("demo:").replace("\\", "/").rsplit("/", 1)[-1]
    return name if len(name) <= _LABEL else name[: _LABEL - 1] + "…"


def figure(runs: Sequence[Run], *, title: str) -> Figure:
    """A figure of ``runs``: tokens per call, compactions marked, the budget line."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 4.8), dpi=110, layout="constrained")
    axes = fig.add_subplot()
    for run in runs:
        x = list(range(1, len(run.calls) + 1))
        y = [call.tokens for call in run.calls]
        (line,) = axes.plot(x, y, linewidth=1.4, label=_text(run.label))
        marks = [(i, c.tokens) for i, c in zip(x, run.calls, strict=True) if c.compacted]
        if marks:
            axes.plot(
                [m[0] for m in marks],
                [m[1] for m in marks],
                linestyle="none",
                marker="v",
                markersize=5,
                color=line.get_color(),
            )
    if runs and runs[0].calls:
        calls = runs[0].calls
        x = list(range(1, len(calls) + 1))
        axes.step(
            x,
            [c.budget for c in calls],
            where="mid",
            color="black",
            linestyle="--",
            linewidth=1,
            label="budget",
        )
        starts = [i for i in range(1, len(calls)) if calls[i].transcript != calls[i - 1].transcript]
        for start in starts:
            axes.axvline(start + 0.5, color="grey", linewidth=0.5, alpha=0.5)
        names = [_short(calls[start].transcript) for start in [0, *starts]]
        title += _label(fig, axes, [0, *starts], names)
    axes.set_xlabel("model call")
    axes.set_ylabel("context tokens sent")
    axes.set_title(_text(title), fontsize=10)
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    handles, labels = axes.get_legend_handles_labels()
    if any(call.compacted for run in runs for call in run.calls):
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], linestyle="none", marker="v", color="grey"))
        labels.append("compaction")
    fig.legend(handles, labels, fontsize=8, loc="outside lower center", ncols=min(len(labels), 3))
    return fig


def _overlapping(fig: Figure, labels: Sequence[Text]) -> list[int]:
    """The indices of the labels whose box overlaps the box of the label shown before."""
    fig.draw_without_rendering()  # the layout, so the boxes are where they will be drawn
    found: list[int] = []
    previous = None
    for index, label in enumerate(labels):
        box = label.get_window_extent()
        if previous is not None and box.x0 < previous.x1 + 2:
            found.append(index)
            continue
        previous = box
    return found


def _label(fig: Figure, axes: Axes, starts: Sequence[int], names: Sequence[str]) -> str:
    """Label each transcript at its start: its name, or its number when names would
    overlap; returns what the title adds (the names by number, or nothing)."""

    def place(texts: Sequence[str], *, rotation: int) -> list[Text]:
        return [
            axes.text(
                start + 0.7,
                0.98,
                _text(text),
                transform=axes.get_xaxis_transform(),
                fontsize=7,
                color="dimgrey",
                va="top",
                rotation=rotation,
            )
            for start, text in zip(starts, texts, strict=True)
        ]

    labels = place(names, rotation=90 if len(starts) > 7 else 0)
    if len(labels) < 2 or not _overlapping(fig, labels):
        return ""
    for label in labels:
        label.remove()
    numbers = place([str(n) for n in range(1, len(names) + 1)], rotation=0)
    for index in _overlapping(fig, numbers):
        numbers[index].set_visible(False)
    lines: list[str] = []
    for entry in (f"{n}: {name}" for n, name in enumerate(names, 1)):
        if lines and len(lines[-1]) + 3 + len(entry) <= _KEY_WIDTH:
            lines[-1] += "   " + entry
        else:
            lines.append(entry)
    return "\n" + "\n".join(lines)


def png(fig: Figure) -> bytes:
    """``fig`` as PNG bytes (the caller writes them whole, see :mod:`.storage`)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()
