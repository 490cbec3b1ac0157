"""Persistent context: labelled sections rendered into the system prompt every turn."""

from __future__ import annotations

from typing import Any

import attrs

from .._errors import ConfigurationError, show
from .._messages.message import Message
from .._validators import require_int, string

__all__ = ["ContextSection", "PersistentContext"]


def _check_priority(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    # Any int, of any size, negative ones too (they render first).
    require_int(value, f"ContextSection.{attribute.name}", minimum=None)


@attrs.frozen
class ContextSection:
    """A labelled piece of context; lower ``priority`` renders first."""

    label: str = attrs.field(validator=string())
    """The heading, rendered as ``## {label}``."""
    content: str = attrs.field(validator=string())
    """The text under the heading, verbatim."""
    priority: int = attrs.field(default=0, validator=_check_priority)
    """Lower renders first; equal priorities keep the order they were added in."""

    def render(self) -> str:
        """``"## {label}\\n{content}"``."""
        return f"## {self.label}\n{self.content}"


@attrs.define
class PersistentContext:
    """Sections that survive every compaction, rendered sorted by ascending priority.

    Render it into the system prompt (or :meth:`to_message`) each turn: system messages
    are never dropped or summarized.

    Examples:
        >>> context = PersistentContext()
        >>> context.add_section(ContextSection("Rules", "Be brief.", 0))
        >>> context.render()
        '## Rules\\nBe brief.'
    """

    sections: list[ContextSection] = attrs.field(factory=list, init=False)

    def add_section(self, section: ContextSection) -> None:
        """Add a section (equal priorities keep the order they were added in)."""
        if not isinstance(section, ContextSection):
            msg = f"PersistentContext.add_section takes a ContextSection, got {show(section)}"
            raise ConfigurationError(msg)
        self.sections.append(section)

    def remove_section(self, label: str) -> int:
        """Remove every section with ``label``; return how many were removed.

        Raises:
            ConfigurationError: ``label`` is not a ``str``.
        """
        if not isinstance(label, str):
            msg = f"PersistentContext.remove_section: label must be a str, got {show(label)}"
            raise ConfigurationError(msg)
        before = len(self.sections)
        self.sections = [s for s in self.sections if s.label != label]
        return before - len(self.sections)

    def render(self) -> str:
        """Sections by ascending priority, joined by a blank line; ``""`` when empty."""
        ordered = sorted(self.sections, key=lambda section: section.priority)
        return "\n\n".join(section.render() for section in ordered)

    def to_message(self) -> Message:
        """The rendered context as a system message."""
        return Message.system(self.render())
