"""Persistent context: labelled sections rendered into the system prompt every turn."""

from __future__ import annotations

from typing import Any

import attrs

from .._errors import ConfigurationError
from .._messages.message import Message

__all__ = ["ContextSection", "PersistentContext"]


def _check_str(_: object, attribute: Any, value: Any) -> None:
    if not isinstance(value, str):
        msg = f"ContextSection.{attribute.name} must be a str, got {value!r}"
        raise ConfigurationError(msg)


def _check_priority(_: object, attribute: Any, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"ContextSection.{attribute.name} must be an int, got {value!r}"
        raise ConfigurationError(msg)


@attrs.frozen
class ContextSection:
    """A labelled piece of context; lower ``priority`` renders first."""

    label: str = attrs.field(validator=_check_str)
    content: str = attrs.field(validator=_check_str)
    priority: int = attrs.field(default=0, validator=_check_priority)

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
            msg = f"PersistentContext.add_section takes a ContextSection, got {section!r}"
            raise ConfigurationError(msg)
        self.sections.append(section)

    def remove_section(self, label: str) -> int:
        """Remove every section with ``label``; return how many were removed."""
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
