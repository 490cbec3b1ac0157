"""A previous summary read back, so the next one carries it: its lines by section, its
quoted user requests and its plans, verbatim (the format is :mod:`.format`'s)."""

from __future__ import annotations

from .agent_plan import PLAN_CLOSE, PLAN_OPEN
from .format import FACTS, GOAL, HEADINGS, PLAN, REQUEST_CLOSE, REQUEST_OPEN
from .scan import clip

__all__ = ["carried_sections"]


def carried_sections(
    previous: str | None, limit: int
) -> tuple[dict[int, list[str]], list[str], list[str]]:
    """The previous summary's lines by section (unknown headings and text: the goal),
    its quoted user requests and its plans (oldest first), verbatim. Its facts lines
    are carried whole (each is one result's index)."""
    carried: dict[int, list[str]] = {}
    quoted: list[str] = []
    plans: list[str] = []
    if not previous:
        return carried, quoted, plans
    titles = {heading.removeprefix("## ").casefold(): i for i, heading in enumerate(HEADINGS)}
    section = GOAL
    quote: list[str] | None = None
    plan: list[str] | None = None
    for raw in previous.split("\n"):
        if quote is not None:
            if raw == REQUEST_CLOSE:
                quoted.append("\n".join(quote))
                quote = None
            else:
                quote.append(raw)
            continue
        if plan is not None:
            if raw == PLAN_CLOSE:
                plans.append("\n".join(plan))
                plan = None
            else:
                plan.append(raw)
            continue
        if raw == REQUEST_OPEN:
            quote = []
            continue
        if raw == PLAN_OPEN:
            plan = []
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
        if line and section != PLAN:
            carried.setdefault(section, []).append(line if section == FACTS else clip(line, limit))
    if quote:  # an unclosed quote: keep its words as a request
        quoted.append("\n".join(quote))
    return carried, quoted, plans
