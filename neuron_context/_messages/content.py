"""Content blocks: the immutable pieces a :class:`~neuron_context.Message` is made of."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

import attrs

from .._errors import ConfigurationError

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


_Validator: TypeAlias = "Callable[[Any, attrs.Attribute[Any], Any], None]"


def _fail(owner: str, field: str, problem: str) -> ConfigurationError:
    msg = f"{owner}.{field} {problem}"
    return ConfigurationError(msg)


def _check_str(owner: str) -> _Validator:
    def check(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if not isinstance(value, str):
            raise _fail(owner, attribute.name, f"must be a str, got {type(value).__name__}")

    return check


def _check_nonempty_str(owner: str) -> _Validator:
    def check(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if not isinstance(value, str):
            raise _fail(owner, attribute.name, f"must be a str, got {type(value).__name__}")
        if not value:
            raise _fail(owner, attribute.name, "must not be empty")

    return check


def _check_optional_str(owner: str) -> _Validator:
    def check(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if value is not None and not isinstance(value, str):
            raise _fail(owner, attribute.name, f"must be a str or None, got {type(value).__name__}")

    return check


def _check_optional_count(owner: str) -> _Validator:
    def check(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _fail(owner, attribute.name, f"must be a non-negative int or None, got {value!r}")

    return check


def _check_bool(owner: str) -> _Validator:
    # Fix (tests/test_messages.py): attrs' instance_of raised TypeError, not ConfigurationError.
    def check(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if not isinstance(value, bool):
            raise _fail(owner, attribute.name, f"must be a bool, got {value!r}")

    return check


def _copy_mapping(owner: str, field: str, value: object) -> dict[str, JSON]:
    if not isinstance(value, Mapping):
        raise _fail(owner, field, f"must be a mapping, got {type(value).__name__}")
    for key in value:
        if not isinstance(key, str):
            raise _fail(owner, field, f"keys must be str, got {key!r}")
    return copy.deepcopy(dict(value))


def _to_tool_input(value: object) -> dict[str, JSON]:
    return _copy_mapping("ToolUse", "input", value)


@attrs.frozen(kw_only=True)
class Text:
    """Plain text."""

    text: str = attrs.field(validator=_check_str("Text"))
    """The text."""

    type: Literal["text"] = attrs.field(default="text", init=False, repr=False)


@attrs.frozen(kw_only=True)
class Image:
    """An image, given inline as base64 ``data`` or by ``url`` (exactly one)."""

    media_type: str | None = attrs.field(default=None, validator=_check_optional_str("Image"))
    """MIME type such as ``"image/png"``; may be unknown for a URL."""
    data: str | None = attrs.field(default=None, validator=_check_optional_str("Image"))
    """Base64-encoded bytes."""
    url: str | None = attrs.field(default=None, validator=_check_optional_str("Image"))
    """Where the image can be fetched."""
    width: int | None = attrs.field(default=None, validator=_check_optional_count("Image"))
    """Width in pixels, when known (used only by size-aware pricing)."""
    height: int | None = attrs.field(default=None, validator=_check_optional_count("Image"))
    """Height in pixels, when known (used only by size-aware pricing)."""

    type: Literal["image"] = attrs.field(default="image", init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if (self.data is None) == (self.url is None):
            raise _fail("Image", "data", "and Image.url: exactly one must be given")


@attrs.frozen(kw_only=True)
class Document:
    """A document (PDF or plain text), given as base64 ``data``, a ``url`` or its ``text``."""

    media_type: str = attrs.field(validator=_check_nonempty_str("Document"))
    """MIME type such as ``"application/pdf"`` or ``"text/plain"``."""
    data: str | None = attrs.field(default=None, validator=_check_optional_str("Document"))
    """Base64-encoded bytes."""
    url: str | None = attrs.field(default=None, validator=_check_optional_str("Document"))
    """Where the document can be fetched."""
    text: str | None = attrs.field(default=None, validator=_check_optional_str("Document"))
    """The document's text, for plain-text documents or extracted text."""
    pages: int | None = attrs.field(default=None, validator=_check_optional_count("Document"))
    """Page count, when known (used only by size-aware pricing)."""

    type: Literal["document"] = attrs.field(default="document", init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.data is None and self.url is None and self.text is None:
            raise _fail("Document", "data", "Document.url or Document.text must be given")
        if self.data is not None and self.url is not None:
            raise _fail("Document", "data", "and Document.url are exclusive")


@attrs.frozen(kw_only=True)
class ToolUse:
    """A call of a tool by the model; only in assistant messages."""

    id: str = attrs.field(validator=_check_nonempty_str("ToolUse"))
    """The call's id; its result answers it with ``tool_use_id``."""
    name: str = attrs.field(validator=_check_nonempty_str("ToolUse"))
    """The tool's name."""
    input: Mapping[str, JSON] = attrs.field(factory=dict, converter=_to_tool_input)
    """The call's arguments (a plain dict, copied at construction; never mutate it)."""

    type: Literal["tool_use"] = attrs.field(default="tool_use", init=False, repr=False)


ToolResultItem: TypeAlias = "Text | Image"
"""What a tool result may hold."""


def _to_result_content(value: object) -> tuple[Text | Image, ...]:
    if isinstance(value, str):
        return (Text(text=value),)
    if isinstance(value, Text | Image):
        return (value,)
    if not isinstance(value, Iterable):
        raise _fail("ToolResult", "content", f"must be a str or a sequence, got {value!r}")
    items = tuple(value)
    for item in items:
        if not isinstance(item, Text | Image):
            raise _fail(
                "ToolResult", "content", f"items must be Text or Image, got {type(item).__name__}"
            )
    return items


@attrs.frozen(kw_only=True)
class ToolResult:
    """The result of a tool call; only in tool messages."""

    tool_use_id: str = attrs.field(validator=_check_nonempty_str("ToolResult"))
    """The id of the :class:`ToolUse` this answers."""
    content: tuple[Text | Image, ...] = attrs.field(factory=tuple, converter=_to_result_content)
    """What the tool returned; a ``str`` becomes ``(Text(str),)``."""
    is_error: bool = attrs.field(default=False, validator=_check_bool("ToolResult"))
    """Whether the tool failed."""

    type: Literal["tool_result"] = attrs.field(default="tool_result", init=False, repr=False)

    @property
    def text(self) -> str:
        """The text items joined with ``"\\n"``."""
        return "\n".join(item.text for item in self.content if isinstance(item, Text))


@attrs.frozen(kw_only=True)
class Thinking:
    """A model's visible reasoning; only in assistant messages."""

    thinking: str = attrs.field(validator=_check_str("Thinking"))
    """The reasoning text."""
    signature: str = attrs.field(default="", validator=_check_str("Thinking"))
    """The provider's signature, sent back verbatim (not counted as tokens)."""

    type: Literal["thinking"] = attrs.field(default="thinking", init=False, repr=False)


@attrs.frozen(kw_only=True)
class RedactedThinking:
    """Encrypted reasoning the provider hides; only in assistant messages."""

    data: str = attrs.field(validator=_check_str("RedactedThinking"))
    """The opaque payload."""

    type: Literal["redacted_thinking"] = attrs.field(
        default="redacted_thinking", init=False, repr=False
    )


@attrs.frozen(kw_only=True)
class Compaction:
    """A summary that replaced earlier history."""

    content: str = attrs.field(validator=_check_str("Compaction"))
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
