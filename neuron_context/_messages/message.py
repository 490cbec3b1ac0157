"""Messages: a role and a tuple of content blocks, immutable."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence

import attrs

from .._errors import ConfigurationError, show
from .._validators import fail, require_str, string
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
from .jsonvalue import check_json

__all__ = ["Message", "Role", "ToolDefinition", "history_repr"]

_set = object.__setattr__


class Role(enum.StrEnum):
    """Who speaks a message.

    Tool results live in ``TOOL`` messages, never in ``USER`` messages.
    """

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


_ASSISTANT_ONLY = (ToolUse, Thinking, RedactedThinking)
_TOOL_USES = "Message.assistant: tool_uses"


def _to_role(value: object) -> Role:
    try:
        return Role(value)  # type: ignore[arg-type]
    except ValueError:
        msg = f"Message.role must be one of {[r.value for r in Role]}, got {show(value)}"
        raise ConfigurationError(msg) from None


def _to_content(value: object) -> tuple[ContentBlock, ...]:
    if isinstance(value, str):
        return (Text(text=value),) if value else ()
    if isinstance(value, CONTENT_BLOCK_TYPES):
        return (value,)  # type: ignore[return-value]
    if not isinstance(value, Iterable):
        msg = f"Message.content must be a sequence of content blocks, got {show(value)}"
        raise ConfigurationError(msg)
    blocks = tuple(value)
    for block in blocks:
        if not isinstance(block, CONTENT_BLOCK_TYPES):
            msg = f"Message.content items must be content blocks, got {type(block).__name__}"
            raise ConfigurationError(msg)
    return blocks


def _check_placement(role: Role, content: tuple[ContentBlock, ...]) -> None:
    """Which blocks a role may hold (tool results alone in tool messages, and so on)."""
    if role is Role.TOOL:
        if not content:
            msg = "Message.content of a tool message must hold at least one ToolResult"
            raise ConfigurationError(msg)
        for block in content:
            if type(block) is not ToolResult:
                msg = (
                    "Message.content of a tool message may hold only ToolResult blocks, "
                    f"got {type(block).__name__}"
                )
                raise ConfigurationError(msg)
        return
    for block in content:
        if isinstance(block, ToolResult):
            msg = f"Message.content: ToolResult is only allowed in tool messages, not {role}"
            raise ConfigurationError(msg)
        if role is not Role.ASSISTANT and isinstance(block, _ASSISTANT_ONLY):
            msg = (
                f"Message.content: {type(block).__name__} is only allowed in assistant "
                f"messages, not {role}"
            )
            raise ConfigurationError(msg)


@attrs.frozen(kw_only=True, getstate_setstate=False)
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

    # The counters' cache of this message's costs. Only neuron_context._counting.cache
    # reads or writes it (see there); it is no part of the value: not compared, not in
    # the repr, not pickled, and a copy starts without it.
    _cache: object = attrs.field(default=None, init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        _check_placement(self.role, self.content)

    def __getstate__(self) -> tuple[Role, tuple[ContentBlock, ...]]:
        return (self.role, self.content)

    def __setstate__(self, state: tuple[Role, tuple[ContentBlock, ...]]) -> None:
        _set(self, "role", state[0])
        _set(self, "content", state[1])
        _set(self, "_cache", None)

    @classmethod
    def _of(cls, role: Role, content: tuple[ContentBlock, ...]) -> Message:
        """A message of blocks the wire readers have just built: the placement of the
        blocks is checked, the conversions are skipped."""
        _check_placement(role, content)
        message = object.__new__(cls)
        _set(message, "role", role)
        _set(message, "content", content)
        _set(message, "_cache", None)
        return message

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
        if type(text) is not str:
            require_str(text, "Message.assistant: text")
        blocks: list[ContentBlock] = [Text(text=text)] if text else []
        if (type(tool_uses) is not tuple and type(tool_uses) is not list) and (
            not isinstance(tool_uses, Iterable) or isinstance(tool_uses, str | bytes | Mapping)
        ):
            problem = f"must be an iterable of ToolUse, got {type(tool_uses).__name__}"
            raise fail(_TOOL_USES, problem)
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
        """The text blocks, and the content of a :class:`Compaction` block, joined with
        ``"\\n"`` (so a summary message's text is its summary)."""
        return "\n".join(
            block.text if type(block) is Text else block.content  # type: ignore[union-attr]
            for block in self.content
            if type(block) is Text or type(block) is Compaction
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


def history_repr(messages: Sequence[Message]) -> str:
    """How a value that holds a history shows it in its ``repr``: the count alone.

    A history can hold thousands of messages; a ``repr`` that printed them would cost
    O(history) wherever a value is shown, and Python shows values where no one looks
    (asyncio formats the result of a run's main task when a run ends, logging formats
    its arguments). Every attrs value that holds a history passes this as the field's
    ``repr``.

    Examples:
        >>> history_repr([Message.user("hi")])
        '<1 message>'
    """
    count = len(messages)
    return f"<{count} message{'' if count == 1 else 's'}>"


def _to_schema(value: object) -> dict[str, JSON]:
    if not isinstance(value, Mapping):
        msg = f"ToolDefinition.input_schema must be a mapping, got {type(value).__name__}"
        raise ConfigurationError(msg)
    return check_json(value, "ToolDefinition.input_schema")  # type: ignore[return-value]


@attrs.frozen(kw_only=True)
class ToolDefinition:
    """A tool the model may call: its name, description and JSON schema."""

    name: str = attrs.field(validator=string(nonempty=True))
    """The tool's name."""
    description: str = attrs.field(default="", validator=string())
    """What the tool does, for the model."""
    input_schema: Mapping[str, JSON] = attrs.field(
        factory=lambda: {"type": "object", "properties": {}}, converter=_to_schema
    )
    """The JSON schema of the tool's arguments."""
