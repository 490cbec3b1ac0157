"""Examples for ContextSection and PersistentContext (CONTRACT §4)."""

from __future__ import annotations

import attrs
import pytest

from neuron_context import ConfigurationError, ContextSection, Message, PersistentContext


def _context(*sections: ContextSection) -> PersistentContext:
    context = PersistentContext()
    for section in sections:
        context.add_section(section)
    return context


class TestContextSection:
    """ContextSection."""

    def test_positional_construction(self) -> None:
        """A section takes label, content and priority in that order."""
        section = ContextSection("Rules", "Be brief.", 3)
        assert (section.label, section.content, section.priority) == ("Rules", "Be brief.", 3)

    def test_renders_heading_and_content(self) -> None:
        """A section renders as a level-two heading, a newline and its content."""
        assert ContextSection("Rules", "Be brief.", 0).render() == "## Rules\nBe brief."

    def test_frozen(self) -> None:
        """Assigning a field raises."""
        section = ContextSection("a", "b", 0)
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            section.priority = 1  # type: ignore[misc]

    @pytest.mark.parametrize(
        ("arguments", "field"),
        [
            ((None, "c", 0), "label"),
            (("l", 5, 0), "content"),
            (("l", "c", 1.5), "priority"),
            (("l", "c", True), "priority"),
            (("l", "c", "1"), "priority"),
        ],
    )
    def test_bad_fields(self, arguments: tuple[object, object, object], field: str) -> None:
        """A bad field raises ConfigurationError naming it."""
        with pytest.raises(ConfigurationError, match=rf"ContextSection\.{field}"):
            ContextSection(*arguments)  # type: ignore[arg-type]


class TestPersistentContext:
    """PersistentContext."""

    def test_empty_renders_empty_string(self) -> None:
        """No sections render as ""."""
        assert PersistentContext().render() == ""

    def test_one_section(self) -> None:
        """One section renders alone, without separators."""
        assert _context(ContextSection("Goal", "Ship it.", 5)).render() == "## Goal\nShip it."

    def test_sorted_by_ascending_priority(self) -> None:
        """Sections render by ascending priority, joined by a blank line."""
        context = _context(
            ContextSection("Late", "c", 10),
            ContextSection("Early", "a", -5),
            ContextSection("Middle", "b", 0),
        )
        assert context.render() == "## Early\na\n\n## Middle\nb\n\n## Late\nc"

    def test_stable_for_equal_priorities(self) -> None:
        """Sections of equal priority keep the order they were added in."""
        context = _context(
            ContextSection("B", "2", 1),
            ContextSection("A", "1", 1),
            ContextSection("Z", "0", 0),
            ContextSection("C", "3", 1),
        )
        assert context.render() == "## Z\n0\n\n## B\n2\n\n## A\n1\n\n## C\n3"

    def test_multiline_and_empty_content(self) -> None:
        """Content is rendered verbatim, newlines and emptiness included."""
        context = _context(ContextSection("Plan", "1. a\n2. b", 0), ContextSection("Empty", "", 1))
        assert context.render() == "## Plan\n1. a\n2. b\n\n## Empty\n"

    def test_render_does_not_reorder_sections(self) -> None:
        """Rendering leaves the sections in the order they were added."""
        high, low = ContextSection("H", "h", 9), ContextSection("L", "l", 1)
        context = _context(high, low)
        context.render()
        assert context.sections == [high, low]

    def test_bad_section(self) -> None:
        """Adding something that is not a section raises ConfigurationError."""
        with pytest.raises(ConfigurationError, match="ContextSection"):
            PersistentContext().add_section("## Rules\nBe brief.")  # type: ignore[arg-type]

    def test_remove_section(self) -> None:
        """remove_section removes every section with the label and says how many."""
        context = _context(
            ContextSection("A", "1", 0), ContextSection("B", "2", 0), ContextSection("A", "3", 0)
        )
        assert context.remove_section("A") == 2
        assert context.remove_section("missing") == 0
        assert context.render() == "## B\n2"

    def test_to_message(self) -> None:
        """to_message wraps the rendering in a system message."""
        context = _context(ContextSection("Rules", "Be brief.", 0))
        assert context.to_message() == Message.system("## Rules\nBe brief.")


class TestPersistentContextValidation:
    """Arguments of PersistentContext methods."""

    def test_remove_section_takes_a_str(self) -> None:
        """remove_section names a bad label."""
        with pytest.raises(ConfigurationError, match=r"remove_section: label"):
            PersistentContext().remove_section(None)  # type: ignore[arg-type]

    @pytest.mark.parametrize("priority", [1.5, "1", None, True])
    def test_priority_is_an_int(self, priority: object) -> None:
        """A priority that is not an int is refused, naming the field."""
        with pytest.raises(ConfigurationError, match=r"ContextSection\.priority"):
            ContextSection("a", "b", priority)  # type: ignore[arg-type]
