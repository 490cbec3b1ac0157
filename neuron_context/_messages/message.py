"""Messages: a role and a tuple of content blocks, immutable."""

from __future__ import annotations

import copy
import enum
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from .._errors import ConfigurationError
from .content import (
    CONTENT_BLOCK_TYPES,
    JSON,
    Compaction,
    ContentBlock,
    Image,
    RedactedThinking,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
)

__all__ = ["Message", "Role", "ToolDefinition"]


class Role(enum.StrEnum):
    """Who speaks a message.

    Tool results live in ``TOOL`` messages (the Rust crate puts them in user messages).
    """

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


_ASSISTANT_ONLY = (ToolUse, Thinking, RedactedThinking)


def _to_role(value: object) -> Role:
    try:
        return Role(value)  # type: ignore[arg-type]
    except ValueError:
        msg = f"Message.role must be one of {[r.value for r in Role]}, got {value!r}"
        raise ConfigurationError(msg) from None


def _to_content(value: object) -> tuple[ContentBlock, ...]:
    if isinstance(value, str):
        return (Text(text=value),) if value else ()
    if isinstance(value, CONTENT_BLOCK_TYPES):
        return (value,)  # type: ignore[return-value]
    if not isinstance(value, Iterable):
        msg = f"Message.content must be a sequence of content blocks, got {value!r}"
        raise ConfigurationError(msg)
    blocks = tuple(value)
    for block in blocks:
        if not isinstance(block, CONTENT_BLOCK_TYPES):
            msg = f"Message.content items must be content blocks, got {type(block).__name__}"
            raise ConfigurationError(msg)
    return blocks


@attrs.frozen(kw_only=True)
class Message:
    """One message of a conversation.

    Build it with the constructors :meth:`system`, :meth:`user`, :meth:`assistant` and
    :meth:`tool_result`, or directly with a role and a tuple of blocks. It is immutable:
    copy it with :func:`attrs.evolve`.
    """

    role: Role = attrs.field(converter=_to_role)
    """Who speaks."""
    content: tuple[ContentBlock, ...] = attrs.field(factory=tuple, converter=_to_content)
    """The blocks, in order."""

    # Cached per-counter costs (see neuron_context._counter); not part of the value.
    _costs: dict[object, int] | None = attrs.field(
        default=None, init=False, eq=False, repr=False, alias="_costs"
    )

    def __attrs_post_init__(self) -> None:
        role = self.role
        if role is Role.TOOL:
            if not self.content:
                msg = "Message.content of a tool message must hold at least one ToolResult"
                raise ConfigurationError(msg)
            for block in self.content:
                if not isinstance(block, ToolResult):
                    msg = (
                        "Message.content of a tool message may hold only ToolResult blocks, "
                        f"got {type(block).__name__}"
                    )
                    raise ConfigurationError(msg)
            return
        for block in self.content:
            if isinstance(block, ToolResult):
                msg = f"Message.content: ToolResult is only allowed in tool messages, not {role}"
                raise ConfigurationError(msg)
            if role is not Role.ASSISTANT and isinstance(block, _ASSISTANT_ONLY):
                msg = (
                    f"Message.content: {type(block).__name__} is only allowed in assistant "
                    f"messages, not {role}"
                )
                raise ConfigurationError(msg)

    # -- constructors -------------------------------------------------------------

    @classmethod
    def system(cls, text: str) -> Message:
        """A system message holding ``text``."""
        return cls(role=Role.SYSTEM, content=(Text(text=text),))

    @classmethod
    def user(cls, text: str) -> Message:
        """A user message holding ``text``."""
        return cls(role=Role.USER, content=(Text(text=text),))

    @classmethod
    def assistant(cls, text: str = "", *, tool_uses: Iterable[ToolUse] = ()) -> Message:
        """An assistant message: a text block when ``text`` is not empty, then the tool uses."""
        blocks: list[ContentBlock] = [Text(text=text)] if text else []
        blocks.extend(tool_uses)
        return cls(role=Role.ASSISTANT, content=tuple(blocks))

    @classmethod
    def tool_result(
        cls,
        tool_use_id: str,
        content: str | Sequence[Text | Image],
        *,
        is_error: bool = False,
    ) -> Message:
        """A tool message holding one :class:`ToolResult`."""
        result = ToolResult(tool_use_id=tool_use_id, content=content, is_error=is_error)
        return cls(role=Role.TOOL, content=(result,))

    # -- properties -----------------------------------------------------------------

    @property
    def text(self) -> str:
        """The text blocks joined with ``"\\n"`` (a summary's :class:`Compaction` block
        counts as text: a summary message's ``text`` is its summary)."""
        return "\n".join(
            block.text if isinstance(block, Text) else block.content
            for block in self.content
            if isinstance(block, Text | Compaction)
        )

    @property
    def tool_uses(self) -> tuple[ToolUse, ...]:
        """The tool uses, in order."""
        return tuple(block for block in self.content if isinstance(block, ToolUse))

    @property
    def tool_results(self) -> tuple[ToolResult, ...]:
        """The tool results, in order."""
        return tuple(block for block in self.content if isinstance(block, ToolResult))

    @property
    def is_tool(self) -> bool:
        """Whether the role is ``TOOL``."""
        return self.role is Role.TOOL

    @property
    def is_system(self) -> bool:
        """Whether the role is ``SYSTEM``."""
        return self.role is Role.SYSTEM

    @property
    def is_compaction(self) -> bool:
        """Whether the message holds a :class:`Compaction` summary."""
        return any(isinstance(block, Compaction) for block in self.content)


def _to_schema(value: object) -> dict[str, JSON]:
    if not isinstance(value, Mapping):
        msg = f"ToolDefinition.input_schema must be a mapping, got {type(value).__name__}"
        raise ConfigurationError(msg)
    return copy.deepcopy(dict(value))


def _check_name(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str) or not value:
        msg = f"ToolDefinition.{attribute.name} must be a non-empty str, got {value!r}"
        raise ConfigurationError(msg)


def _check_description(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, str):
        msg = f"ToolDefinition.{attribute.name} must be a str, got {type(value).__name__}"
        raise ConfigurationError(msg)


@attrs.frozen(kw_only=True)
class ToolDefinition:
    """A tool the model may call: its name, description and JSON schema."""

    name: str = attrs.field(validator=_check_name)
    """The tool's name."""
    description: str = attrs.field(default="", validator=_check_description)
    """What the tool does, for the model."""
    input_schema: Mapping[str, JSON] = attrs.field(
        factory=lambda: {"type": "object", "properties": {}}, converter=_to_schema
    )
    """The JSON schema of the tool's arguments."""
