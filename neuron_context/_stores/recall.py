"""The recall tool's core, shared by our loop and every adapter: a key (and lines) in,
the content or an error out, never an exception.

Each framework wraps :func:`recall` in its own tool type (our
:class:`~neuron_context.Tool`, a LangChain tool, a pydantic-ai tool, an Agents SDK
function tool); they all read the same store the same way, with the same error texts, so
a model that learned the tool in one loop uses it in another. A model learns of it from
:data:`RECALL_INSTRUCTIONS` in the system prompt and from the references themselves,
which end in ``recall: <key>``.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from .serialized import render
from .store import Store

__all__ = [
    "RECALL_DESCRIPTION",
    "RECALL_INSTRUCTIONS",
    "RECALL_TOOL_NAME",
    "Recalled",
    "recall",
    "text_reader",
]

RECALL_TOOL_NAME = "recall"
"""The name every recall tool is given."""

RECALL_DESCRIPTION = (
    "Read back content that was moved out of the conversation to save space. Pass the key "
    "from a reference such as '[tool result cleared: read_file a.py, 2,314 tokens — recall: "
    "<key>]'; for a long text, start_line and end_line (1-based, inclusive) read only those "
    "lines."
)
"""The tool's description, for the model."""

RECALL_INSTRUCTIONS = (
    "Older parts of this conversation may have been moved out of your context to save "
    "space; each left a short reference ending in 'recall: <key>'. When you need the "
    "exact content a reference stands for, call the recall tool with that key (and "
    "start_line/end_line for part of a long text) instead of guessing or redoing the work."
)
"""The sentence to add to a system prompt so that a model uses the recall tool."""


@attrs.frozen
class Recalled:
    """What the recall tool answers: the text, and whether it is an error."""

    text: str
    is_error: bool = False


def recall(
    store: Store, key: str, start_line: int | None = None, end_line: int | None = None
) -> Recalled:
    """Read ``key`` back from ``store`` as text, lines ``start_line``..``end_line``
    (1-based, inclusive) when given; an unknown key, a bad range or a failing store is an
    error result."""
    if not isinstance(key, str) or not key.strip():
        return Recalled("recall: key must be a non-empty string", is_error=True)
    key = key.strip()
    try:
        content = store.get(key)
    except Exception as exc:  # a failing store is the tool's error, not the run's
        return Recalled(
            f"recall: the store failed to read {key!r}: {type(exc).__name__}: {exc}",
            is_error=True,
        )
    if content is None:
        return Recalled(
            f"recall: no content under key {key!r} (it was never stored, or has expired)",
            is_error=True,
        )
    text = render(content)
    if start_line is None and end_line is None:
        return Recalled(text)
    lines = text.split("\n")
    first = 1 if start_line is None else start_line
    last = len(lines) if end_line is None else end_line
    if (
        not isinstance(first, int)
        or not isinstance(last, int)
        or first < 1
        or last < first
        or first > len(lines)
    ):
        return Recalled(
            f"recall: lines {start_line}..{end_line} are outside 1..{len(lines)} of {key!r}",
            is_error=True,
        )
    return Recalled("\n".join(lines[first - 1 : last]))


def text_reader(store: Store) -> Callable[[str, int | None, int | None], str]:
    """The recall tool as a plain function returning text (an error as its text), for
    the frameworks whose tool results have no error flag (pydantic-ai, the Agents SDK):
    they build the tool's schema from its signature and docstring."""

    def read(key: str, start_line: int | None = None, end_line: int | None = None) -> str:
        """Read back content moved out of the conversation.

        Args:
            key: the key after 'recall:' in a reference.
            start_line: first line to read (1-based), for part of a long text.
            end_line: last line to read (inclusive).
        """
        return recall(store, key, start_line, end_line).text

    return read
