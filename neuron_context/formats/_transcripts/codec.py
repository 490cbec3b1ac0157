"""What one transcript format is to the command line: a :class:`Codec`.

A transcript file holds *units*: the JSON objects its format is made of (Chat Completions
messages, Messages API turns, Claude Code rows, Responses items, ...), in a *container*:
the ``messages`` list of an object, a bare list, or the lines of a JSONL file. A codec
reads the units as our messages and remembers, for each message, the units it was read
from (:class:`Parsed`); it renders messages back as units, grafted onto the units they
were read from (:mod:`.graft`), so nothing the library does not model is lost. Which
units are written as they were and which are rendered again is decided once, for every
format, by :mod:`.lossless`.

Units that no message was read from (a Claude Code progress row, a Codex ``turn_context``
line, a Responses item the library cannot express) travel with the message read before
them.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import ClassVar, Literal

import attrs

from ..._messages.message import Message, ToolDefinition, history_repr
from .graft import Rules

__all__ = ["Codec", "Container", "Fit", "Parsed", "tag"]

Container = Literal["object", "list", "lines"]
"""Where the units are: the ``messages`` list of a JSON object, a JSON list, JSONL lines."""


def tag(value: object) -> str | None:
    """``value`` when it is a string (a ``type``, a role, an id), else ``None``: what a
    reader compares with known names, so a list or an object where a name belongs is an
    unknown name, never an unhashable key."""
    return value if isinstance(value, str) else None


class Fit:
    """How well a codec fits a document, best last: the detection tries the best first."""

    NO = 0
    """Cannot be this format."""
    MAYBE = 1
    """Could be (plain messages read the same in several formats)."""
    LIKELY = 2
    """Has what only this format has (a ``tool_use`` block, a ``function_call`` item)."""
    DECLARED = 3
    """Says what it is (``"format": "anthropic-messages"``)."""


@attrs.frozen
class Parsed:
    """A conversation read from units, and where each message came from."""

    messages: tuple[Message, ...] = attrs.field(repr=history_repr)
    """The conversation, in order."""
    origins: tuple[tuple[int, ...], ...]
    """For each message, the indices of the units it was read from (``()``: from the
    container's other fields, such as an Anthropic request's ``system``)."""
    tools: tuple[ToolDefinition, ...] = ()
    """The tool definitions the request sends, when the file holds them."""


class Codec(abc.ABC):
    """One transcript format: reading units as messages and writing messages as units."""

    name: ClassVar[str]
    """Its ``--format`` value."""
    title: ClassVar[str]
    """What errors and reports call it."""
    containers: ClassVar[frozenset[Container]] = frozenset({"object", "list", "lines"})
    """Where its units may be."""
    rules: ClassVar[Rules] = Rules()
    """What its writer leaves out (for grafting)."""

    @abc.abstractmethod
    def fits(self, units: Sequence[object], header: Mapping[str, object]) -> int:
        """How well ``units`` (with the container's other fields, ``header``) fit this
        format: a :class:`Fit` level."""

    @abc.abstractmethod
    def read(self, units: Sequence[object], header: Mapping[str, object]) -> Parsed:
        """Our messages for ``units``.

        Raises:
            ConfigurationError: the units are not this format; the message names the
                path of what is wrong (``messages[3].content[1].tool_use_id``).
        """

    @abc.abstractmethod
    def render(self, messages: Sequence[Message], sources: Sequence[object]) -> list[object]:
        """Units for ``messages``, consecutive messages to write anew, grafted onto
        ``sources``: the units they were read from, in file order (none for a new
        message). Messages that were read from one unit are given together."""

    def join(self, units: list[object], original: Sequence[object]) -> list[object]:
        """The units to write, after :mod:`.lossless` put written and rendered units
        together; ``original`` are the units read (a format whose units link to each
        other relinks those whose target was dropped)."""
        return units

    def header(
        self,
        header: Mapping[str, object],
        before: Sequence[Message],
        after: Sequence[Message],
    ) -> Mapping[str, object]:
        """The container's other fields for the conversation ``after`` (read as
        ``before``): the same, except where a format keeps messages there."""
        return header
