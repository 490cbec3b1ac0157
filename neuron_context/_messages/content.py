"""Content blocks: the immutable pieces a :class:`~neuron_context.Message` is made of."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, TypeAlias

import attrs

from .._errors import show
from .._validators import MAX_INT, bool_, fail, non_negative_int, optional, string
from .jsonvalue import check_json, compact_json, parsed_json, utf8_size

__all__ = [
    "JSON",
    "Compaction",
    "ContentBlock",
    "Document",
    "Image",
    "RedactedThinking",
    "Text",
    "Thinking",
    "ToolResult",
    "ToolResultItem",
    "ToolUse",
]

JSON: TypeAlias = "Mapping[str, JSON] | Sequence[JSON] | str | int | float | bool | None"
"""A JSON value."""

_set = object.__setattr__


def _to_tool_input(value: object) -> dict[str, JSON]:
    if not isinstance(value, Mapping):
        raise fail("ToolUse.input", f"must be a mapping, got {type(value).__name__}")
    return check_json(value, "ToolUse.input")  # type: ignore[return-value]


@attrs.frozen(kw_only=True)
class Text:
    """Plain text."""

    text: str = attrs.field(validator=string())
    """The text."""

    type: Literal["text"] = attrs.field(default="text", init=False, repr=False)

    # Performance: bytes of UTF-8 of ``text``, measured once here rather than on every
    # count (the heuristic counter divides it; see neuron_context._counting.heuristic).
    _size: int = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        _set(self, "_size", utf8_size(self.text))

    @classmethod
    def _of(cls, text: str) -> Text:
        """A block for a ``str`` the caller has checked (the wire readers): no validation."""
        block = object.__new__(cls)
        _set(block, "text", text)
        _set(block, "type", "text")
        _set(block, "_size", utf8_size(text))
        return block


@attrs.frozen(kw_only=True)
class Image:
    """An image, given inline as base64 ``data`` or by ``url`` (exactly one)."""

    media_type: str | None = attrs.field(default=None, validator=optional(string()))
    """MIME type such as ``"image/png"``; may be unknown for a URL."""
    data: str | None = attrs.field(default=None, validator=optional(string()))
    """Base64-encoded bytes."""
    url: str | None = attrs.field(default=None, validator=optional(string()))
    """Where the image can be fetched."""
    width: int | None = attrs.field(
        default=None, validator=optional(non_negative_int(maximum=MAX_INT))
    )
    """Width in pixels, when known (used only by size-aware pricing, at most 2**53)."""
    height: int | None = attrs.field(
        default=None, validator=optional(non_negative_int(maximum=MAX_INT))
    )
    """Height in pixels, when known (used only by size-aware pricing, at most 2**53)."""

    type: Literal["image"] = attrs.field(default="image", init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if (self.data is None) == (self.url is None):
            raise fail("Image.data", "and Image.url: exactly one must be given")


@attrs.frozen(kw_only=True)
class Document:
    """A document (PDF or plain text), given as base64 ``data``, a ``url`` or its ``text``."""

    media_type: str = attrs.field(validator=string(nonempty=True))
    """MIME type such as ``"application/pdf"`` or ``"text/plain"``."""
    data: str | None = attrs.field(default=None, validator=optional(string()))
    """Base64-encoded bytes."""
    url: str | None = attrs.field(default=None, validator=optional(string()))
    """Where the document can be fetched."""
    text: str | None = attrs.field(default=None, validator=optional(string()))
    """The document's text, for plain-text documents or extracted text."""
    pages: int | None = attrs.field(
        default=None, validator=optional(non_negative_int(maximum=MAX_INT))
    )
    """Page count, when known (used only by size-aware pricing, at most 2**53)."""

    type: Literal["document"] = attrs.field(default="document", init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.data is None and self.url is None and self.text is None:
            raise fail("Document.data", "Document.url or Document.text must be given")
        if self.data is not None and self.url is not None:
            raise fail("Document.data", "and Document.url are exclusive")


@attrs.frozen(kw_only=True)
class ToolUse:
    """A call of a tool by the model; only in assistant messages."""

    id: str = attrs.field(validator=string(nonempty=True))
    """The call's id; its result answers it with ``tool_use_id``."""
    name: str = attrs.field(validator=string(nonempty=True))
    """The tool's name."""
    input: Mapping[str, JSON] = attrs.field(factory=dict, converter=_to_tool_input)
    """The call's arguments: a JSON object (a plain dict, checked and copied at
    construction; never mutate it)."""

    type: Literal["tool_use"] = attrs.field(default="tool_use", init=False, repr=False)

    # Performance: the input's compact JSON (what the counters price; writing it was a
    # quarter of a cold count) and the bytes of UTF-8 of the name and of that JSON,
    # computed once here rather than on every count.
    _json: str = attrs.field(init=False, eq=False, repr=False)
    _name_size: int = attrs.field(init=False, eq=False, repr=False)
    _input_size: int = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        text = compact_json(self.input)
        _set(self, "_json", text)
        _set(self, "_name_size", utf8_size(self.name))
        _set(self, "_input_size", utf8_size(text))

    @classmethod
    def _of(cls, id: str, name: str, input: dict[str, JSON], *, path: str) -> ToolUse:
        """A tool use for values the wire readers have just built themselves.

        ``id`` and ``name`` are non-empty ``str`` (the caller checked); ``input`` is a
        ``dict`` nobody else holds (fresh from ``json.loads``), so it is checked (as
        ``path``) but not copied.

        Raises:
            ConfigurationError: ``input`` is not a JSON value.
        """
        if type(id) is not str or type(name) is not str or not id or not name:
            return cls(id=id, name=name, input=input)  # raises the usual error
        text = parsed_json(input, path)
        block = object.__new__(cls)
        _set(block, "id", id)
        _set(block, "name", name)
        _set(block, "input", input)
        _set(block, "type", "tool_use")
        _set(block, "_json", text)
        _set(block, "_name_size", utf8_size(name))
        _set(block, "_input_size", utf8_size(text))
        return block


ToolResultItem: TypeAlias = "Text | Image"
"""What a tool result may hold."""


def _to_result_content(value: object) -> tuple[Text | Image, ...]:
    if isinstance(value, str):
        return (Text(text=value),)
    if isinstance(value, Text | Image):
        return (value,)
    if not isinstance(value, Iterable) or isinstance(value, Mapping | bytes):
        problem = f"must be a str or a sequence of Text and Image, got {type(value).__name__}"
        raise fail("ToolResult.content", f"{problem} {show(value, 60)}")
    items = tuple(value)
    for item in items:
        if not isinstance(item, Text | Image):
            raise fail(
                "ToolResult.content", f"items must be Text or Image, got {type(item).__name__}"
            )
    return items


@attrs.frozen(kw_only=True)
class ToolResult:
    """The result of a tool call; only in tool messages."""

    tool_use_id: str = attrs.field(validator=string(nonempty=True))
    """The id of the :class:`ToolUse` this answers."""
    content: tuple[Text | Image, ...] = attrs.field(factory=tuple, converter=_to_result_content)
    """What the tool returned; a ``str`` becomes ``(Text(str),)``."""
    is_error: bool = attrs.field(default=False, validator=bool_())
    """Whether the tool failed."""

    type: Literal["tool_result"] = attrs.field(default="tool_result", init=False, repr=False)

    @classmethod
    def _of(cls, tool_use_id: str, content: tuple[Text | Image, ...]) -> ToolResult:
        """A result of blocks the wire readers have just built (not an error)."""
        if type(tool_use_id) is not str or not tool_use_id:
            return cls(tool_use_id=tool_use_id, content=content)  # raises the usual error
        block = object.__new__(cls)
        _set(block, "tool_use_id", tool_use_id)
        _set(block, "content", content)
        _set(block, "is_error", False)
        _set(block, "type", "tool_result")
        return block

    @property
    def text(self) -> str:
        """The text items joined with ``"\\n"``."""
        return "\n".join(item.text for item in self.content if isinstance(item, Text))


@attrs.frozen(kw_only=True)
class Thinking:
    """A model's visible reasoning; only in assistant messages."""

    thinking: str = attrs.field(validator=string())
    """The reasoning text."""
    signature: str = attrs.field(default="", validator=string())
    """The provider's signature, sent back verbatim (not counted as tokens)."""

    type: Literal["thinking"] = attrs.field(default="thinking", init=False, repr=False)


@attrs.frozen(kw_only=True)
class RedactedThinking:
    """Encrypted reasoning the provider hides; only in assistant messages."""

    data: str = attrs.field(validator=string())
    """The opaque payload."""

    type: Literal["redacted_thinking"] = attrs.field(
        default="redacted_thinking", init=False, repr=False
    )


@attrs.frozen(kw_only=True)
class Compaction:
    """A summary that replaced earlier history."""

    content: str = attrs.field(validator=string())
    """The summary text alone (the heading is added when rendered for a provider)."""

    type: Literal["compaction"] = attrs.field(default="compaction", init=False, repr=False)


ContentBlock: TypeAlias = (
    "Text | Image | Document | ToolUse | ToolResult | Thinking | RedactedThinking | Compaction"
)
"""Any block a message may hold."""

CONTENT_BLOCK_TYPES: tuple[type, ...] = (
    Text,
    Image,
    Document,
    ToolUse,
    ToolResult,
    Thinking,
    RedactedThinking,
    Compaction,
)
