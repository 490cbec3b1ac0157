"""What the extractive summarizer reads from a request, without a pass over all of it.

A summary request holds either a rendered transcript (what
:class:`~neuron_context.SummarizationStrategy` sends, see
:mod:`neuron_context._summary.transcript`) or the messages themselves. Either way the
summarizer needs three things, and none of them needs the whole conversation parsed:

- the previous summary: the ``<previous_summary>`` of a rendering, or the
  :class:`~neuron_context.Compaction` blocks of the user messages (every summary the
  library writes is one);
- where the user's messages are (:attr:`Source.users`), to quote the first request and
  the newest ones: found by role (a check per message, nothing read) or, in a rendering,
  by the ``user:`` header lines (``str.find``, in C);
- the entries newest first (:meth:`Source.newest`), read lazily from the end, so the
  reader pays only for what it reads: tool results are named from the assistant message
  before their run of tool messages, not from a :class:`Structure` of everything.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

import attrs

from .._messages.content import Compaction, ToolResult
from .._messages.message import Message, Role
from .format import ALIGNED_MARK
from .transcript import Entry, Request, message_entries, newest_entries, read_request

__all__ = ["Source", "source_of"]


class Source(Protocol):
    """A conversation to summarize, read on demand."""

    @property
    def previous(self) -> str | None:
        """The previous summary (``None``: none)."""

    @property
    def users(self) -> Sequence[int]:
        """The positions of the user messages, oldest first (for :meth:`user_text`)."""

    def user_text(self, position: int) -> str:
        """The text of the user message at ``position`` (``""``: only a summary)."""

    def newest(self) -> Iterator[Entry]:
        """The entries (system messages and summaries excluded), newest first."""


@attrs.frozen
class _Messages:
    messages: Sequence[Message]
    stop: int  # the messages to read are messages[:stop]
    users: Sequence[int]
    previous: str | None

    def user_text(self, position: int) -> str:
        entries = message_entries(self.messages[position], _unnamed)
        return entries[0].text if entries else ""

    def newest(self) -> Iterator[Entry]:
        return newest_entries(self.messages, self.stop)


@attrs.frozen
class _Rendered:
    request: Request
    users: Sequence[int]

    @property
    def previous(self) -> str | None:
        return self.request.previous

    def user_text(self, position: int) -> str:
        return self.request.body(position)

    def newest(self) -> Iterator[Entry]:
        return self.request.newest()


def _unnamed(result: ToolResult) -> str:  # pragma: no cover - user messages hold no results
    return ""


def source_of(messages: Sequence[Message]) -> Source:
    """The conversation in ``messages``: our rendering when the last user message is one,
    else the messages themselves (less a cache-aligned request's closing instruction)."""
    user = Role.USER  # a local: an enum member is slow to look up in a loop
    users = [index for index, message in enumerate(messages) if message.role is user]
    if users:
        request = read_request(messages[users[-1]].text)
        if request is not None:
            return _Rendered(request, request.users())
    stop = len(messages)
    if messages and messages[-1].text.startswith(ALIGNED_MARK):
        stop -= 1  # a cache-aligned request's instruction, not the user's
        if users and users[-1] == stop:
            users.pop()
    summaries = [
        block.content
        for index in users
        for block in messages[index].content
        if isinstance(block, Compaction)
    ]
    previous = "\n\n".join(s for s in summaries if s.strip()) or None
    return _Messages(messages, stop, users, previous)
