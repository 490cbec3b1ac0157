"""The summary format, owned here alone: its sections, the instructions, the heading.

A summary crosses three places: :class:`~neuron_context.SummarizationStrategy` asks a
model for it (:data:`DEFAULT_INSTRUCTIONS`, :data:`SUMMARIZE`, :data:`UPDATE`),
:class:`~neuron_context.ExtractiveSummarizer` writes it without one (the sections of
:data:`HEADINGS`), and the wire formats render it for a provider after
:data:`SUMMARY_HEADING` (the heading is part of what a provider receives, but the
counting rules do not price it, so :func:`~neuron_context.default_stack` leaves a margin
for it). Keeping all of them in
one module keeps them in step by construction rather than by a test.
"""

from __future__ import annotations

import re

__all__ = [
    "ALIGNED_MARK",
    "ALIGNED_REQUEST",
    "ARTIFACTS",
    "DECISIONS",
    "DEFAULT_INSTRUCTIONS",
    "ERRORS",
    "FACTS",
    "GOAL",
    "HEADINGS",
    "NEXT",
    "PLAN",
    "REQUEST_CLOSE",
    "REQUEST_OPEN",
    "SUMMARIZE",
    "SUMMARY_HEADING",
    "UPDATE",
    "quoted",
    "unquoted",
]

SUMMARY_HEADING = "[Summary of earlier conversation]"
"""The line put before a :class:`~neuron_context.Compaction` summary when it is rendered
for a provider."""

HEADINGS = (
    "## Goal and constraints",
    "## Plan",
    "## Decisions",
    "## Artifacts",
    "## Facts",
    "## Errors and fixes",
    "## Next steps",
)
"""The sections of a summary, in order (the default instructions ask for them)."""

GOAL, PLAN, DECISIONS, ARTIFACTS, FACTS, ERRORS, NEXT = range(len(HEADINGS))
"""Each section's index in :data:`HEADINGS`."""

REQUEST_OPEN = "<user_request>"
REQUEST_CLOSE = "</user_request>"
"""The lines around a user's request quoted verbatim in a summary (so that an update of
the summary can carry the quote as it is, whatever lines it holds)."""

_TAG = re.compile(r"<(\\*/?user_request\s*>)", re.IGNORECASE)
"""A request tag in a user's words, escaped or not (``</user_request>``,
``<\\/user_request>``, any case)."""
_ESCAPED = re.compile(r"<\\(\\*/?user_request\s*>)", re.IGNORECASE)


def quoted(text: str) -> str:
    """``text`` (a user's words) as a quote writes it between :data:`REQUEST_OPEN` and
    :data:`REQUEST_CLOSE`: each request tag it holds gets a backslash after its ``<``
    (``<\\/user_request>``), so the quote ends only where the summary closes it and the
    user's words still read as written. A tag escaped already gets one more, so
    :func:`unquoted` gives back exactly ``text``."""
    return _TAG.sub(r"<\\\1", text)


def unquoted(text: str) -> str:
    """The user's words a quote holds (``text`` between the tags, as :func:`quoted`
    wrote it): the inverse of :func:`quoted`."""
    return _ESCAPED.sub(r"<\1", text)


ALIGNED_MARK = "[Summary request]"
"""The first line of the instruction message a cache-aligned summary request ends with
(so a summarizer that reads messages, like the extractive one, knows it is not the
user's)."""
ALIGNED_REQUEST = (
    "Summarize the conversation above, following these instructions. Do not call tools "
    "and do not continue the work: write only the summary."
)

SUMMARIZE = "Summarize the conversation below."
UPDATE = (
    "Update the previous summary with the new messages below: keep everything in it "
    "that still holds (above all the user's goal and constraints), correct what the new "
    "messages change, and add what they add."
)

DEFAULT_INSTRUCTIONS = """\
You compact the history of a long-running AI agent session. The messages you are given \
will be removed from the agent's context and replaced by your summary: the agent must be \
able to continue its work from the summary alone, and anything you leave out is lost.

Write a factual summary in Markdown with exactly these sections:

## Goal and constraints
The user's goal and every requirement, constraint or preference they stated. Quote the \
user's own requests verbatim, each on its own lines between <user_request> and \
</user_request>: the first request (the task) in full, then every later request, the \
newest first when space is short. Where the user's words themselves hold one of these \
tags, write it with a backslash after its "<" (<\\/user_request>), so the quote ends \
only where you close it. Notices from the agent's harness (command markup, \
"[Request interrupted by user]") are not requests.

## Plan
Only when the conversation holds a plan or todo list (the latest call of a todo or plan \
tool): its newest version, copied verbatim (each item's own words and status), then what \
is done, what is in progress and what comes next. Leave the section out otherwise.

## Decisions
What was decided or concluded, and why.

## Artifacts
An index of the files and paths, URLs, commands and identifiers that tool calls touched, \
written verbatim, one per line with the latest action on it (for example \
"src/app.py: read_file, edit_file (latest)"), newest first; then other paths and URLs \
that matter.

## Facts
An index, not prose, of the facts the tool results gave that the work may need again, \
each written verbatim: identifiers (ids, order and reservation numbers, hashes), numbers \
with what they are, names, dates, code symbols (functions, classes, modules, with their \
line), and the key/value pairs of JSON results. One line per tool result, named by the \
call that produced it, the facts as compact "key=value" lists (for example \
"get_order order_id=W123: status=shipped, total=312.40, item_id=1008292230; ..."), the \
newest results first; when space is short, keep the newest.

## Errors and fixes
Each error met and how it was resolved, or that it is still open.

## Next steps
What remains to be done, and what the agent was doing when the history was cut.

Use the space you are given: a longer, more complete summary is better than a short one \
that loses details the agent will need. When a previous summary is given, update it: \
keep everything in it that still holds (above all the goal, the constraints and the \
quoted requests, which you copy as they are), correct what the new messages change, and \
add what they add. Write only the summary: no preamble, no closing remarks, nothing that \
is not in the conversation."""
"""The default ``instructions``: the system prompt of every summary request."""
