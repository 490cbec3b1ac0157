"""Token counting: the crate's heuristic, block rules shared by every counter, and a
per-message cost cache.

Every counter prices a message as ``message_overhead`` plus the cost of its blocks. A
block is priced as a fixed part (images, documents) plus the token counts of its texts,
each rounded on its own. Subclasses only say how to count a text (or many at once).

Messages are immutable, so the cost of a message is cached on the message itself, keyed
by the counter's configuration: counting a history that grew by one message costs one
message, and the cache lives and dies with the messages (no global state, no leak).
"""

from __future__ import annotations

import abc
import json
import math
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Literal, TypeAlias

import attrs

from ._content import (
    Compaction,
    ContentBlock,
    Document,
    Image,
    RedactedThinking,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
)
from ._errors import ConfigurationError
from ._messages import Message, ToolDefinition

__all__ = ["BaseCounter", "ImagePricing", "TokenCounter", "compact_json"]

ImagePricing: TypeAlias = Literal["fixed", "openai", "anthropic"]
"""How images are priced: the fixed ``image_tokens`` (default), OpenAI's tile formula,
or Anthropic's ``width * height / 750``; the formulas apply only to images with known
``width`` and ``height``."""

DocumentPricing: TypeAlias = Literal["fixed", "content"]
"""How documents are priced: the fixed ``document_tokens`` (default), or by their
content: their ``text`` when present, else ``pages * tokens_per_page``."""

_CACHE_SLOTS = 4


def compact_json(value: object) -> str:
    """JSON with no spaces and non-ASCII kept, as the counting rules require."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _openai_image_tokens(width: int, height: int) -> int:
    # OpenAI "high" detail: fit in 2048x2048, shortest side to 768, 170 per 512px tile + 85.
    if width <= 0 or height <= 0:
        return 85
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    tiles = math.ceil(w / 512) * math.ceil(h / 512)
    return 170 * tiles + 85


def _anthropic_image_tokens(width: int, height: int) -> int:
    # Anthropic: images are scaled to fit 1568px on the long side, then w*h/750.
    scale = min(1.0, 1568 / max(width, height, 1))
    return math.ceil((width * scale) * (height * scale) / 750)


class BaseCounter(abc.ABC):
    """What every counter shares: the block rules, the message cache and the sums.

    Subclasses implement :meth:`estimate_text` (and may override :meth:`estimate_texts`
    to count many texts at once) and :meth:`_cache_key`.
    """

    message_overhead: int
    image_tokens: int
    document_tokens: int
    image_pricing: ImagePricing
    document_pricing: DocumentPricing
    tokens_per_page: int

    @abc.abstractmethod
    def estimate_text(self, text: str) -> int:
        """Tokens of one text; ``""`` is 0."""

    def estimate_texts(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text; subclasses may batch."""
        estimate = self.estimate_text
        return [estimate(text) for text in texts]

    @abc.abstractmethod
    def _cache_key(self) -> Hashable:
        """Identifies the counting rules, so equal counters share cached costs."""

    # -- block rules ---------------------------------------------------------------

    def _image_cost(self, image: Image) -> int:
        pricing = self.image_pricing
        if pricing == "fixed" or image.width is None or image.height is None:
            return self.image_tokens
        if pricing == "openai":
            return _openai_image_tokens(image.width, image.height)
        return _anthropic_image_tokens(image.width, image.height)

    def _document_fixed(self, document: Document) -> tuple[int, str | None]:
        if self.document_pricing == "content":
            if document.text is not None:
                return 0, document.text
            if document.pages is not None:
                return document.pages * self.tokens_per_page, None
        return self.document_tokens, None

    def _parts(self, message: Message, texts: list[str]) -> int:
        """Append the message's texts to ``texts``; return its fixed cost."""
        return self.message_overhead + self._content_parts(message.content, texts)

    def _content_parts(self, content: Iterable[ContentBlock], texts: list[str]) -> int:
        fixed = 0
        for block in content:
            if isinstance(block, Text):
                texts.append(block.text)
            elif isinstance(block, ToolResult):
                for item in block.content:
                    if isinstance(item, Text):
                        texts.append(item.text)
                    else:
                        fixed += self._image_cost(item)
            elif isinstance(block, ToolUse):
                texts.append(block.name)
                texts.append(compact_json(block.input))
            elif isinstance(block, Image):
                fixed += self._image_cost(block)
            elif isinstance(block, Thinking):
                texts.append(block.thinking)
            elif isinstance(block, RedactedThinking):
                texts.append(block.data)
            elif isinstance(block, Compaction):
                texts.append(block.content)
            elif isinstance(block, Document):
                cost, text = self._document_fixed(block)
                fixed += cost
                if text is not None:
                    texts.append(text)
        return fixed

    # -- public sums -------------------------------------------------------------------

    def estimate_message(self, message: Message) -> int:
        """Tokens of one message: ``message_overhead`` plus its blocks."""
        key = self._cache_key()
        costs = message._costs
        if costs is not None:
            cached = costs.get(key)
            if cached is not None:
                return cached
        texts: list[str] = []
        cost = self._parts(message, texts) + sum(self.estimate_texts(texts))
        _store(message, key, cost)
        return cost

    def estimate_messages(self, messages: Iterable[Message]) -> int:
        """Tokens of a conversation: the sum over its messages.

        Costs already known are read from the cache; the texts of the others are
        counted in one batch.
        """
        key = self._cache_key()
        total = 0
        pending: list[Message] = []
        for message in messages:
            costs = message._costs
            cached = costs.get(key) if costs is not None else None
            if cached is None:
                pending.append(message)
            else:
                total += cached
        if not pending:
            return total
        texts: list[str] = []
        bounds: list[tuple[int, int]] = []
        for message in pending:
            start = len(texts)
            fixed = self._parts(message, texts)
            bounds.append((fixed, start))
        counts = self.estimate_texts(texts)
        for index, message in enumerate(pending):
            fixed, start = bounds[index]
            stop = bounds[index + 1][1] if index + 1 < len(bounds) else len(texts)
            cost = fixed + sum(counts[start:stop])
            _store(message, key, cost)
            total += cost
        return total

    def estimate_content(self, content: Iterable[ContentBlock]) -> int:
        """Tokens of some content blocks, without the message overhead (not cached)."""
        texts: list[str] = []
        return self._content_parts(content, texts) + sum(self.estimate_texts(texts))

    def estimate_tools(self, tools: Iterable[ToolDefinition]) -> int:
        """Tokens of tool definitions: name, description and compact JSON schema."""
        texts: list[str] = []
        for tool in tools:
            texts.extend((tool.name, tool.description, compact_json(tool.input_schema)))
        return sum(self.estimate_texts(texts))


def _store(message: Message, key: Hashable, cost: int) -> None:
    costs = message._costs
    if costs is None:
        object.__setattr__(message, "_costs", {key: cost})
        return
    if len(costs) >= _CACHE_SLOTS:
        costs.pop(next(iter(costs)))
    costs[key] = cost


def _check_ratio(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        msg = f"TokenCounter.{attribute.name} must be a finite number > 0, got {value!r}"
        raise ConfigurationError(msg)


def _check_count(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        msg = f"{attribute.name} must be a non-negative int, got {value!r}"
        raise ConfigurationError(msg)


def _check_choice(*choices: str) -> Any:
    def check(_: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if value not in choices:
            msg = f"{attribute.name} must be one of {list(choices)}, got {value!r}"
            raise ConfigurationError(msg)

    return check


@attrs.frozen
class TokenCounter(BaseCounter):
    """The crate's heuristic: bytes of UTF-8 divided by ``chars_per_token``, rounded up.

    Fixed costs for images (``image_tokens``) and documents (``document_tokens``), plus
    ``message_overhead`` per message. Pricing images by size or documents by content is
    opt-in (``image_pricing``, ``document_pricing``).

    Example:
        >>> TokenCounter().estimate_text("abcde")
        2
    """

    chars_per_token: float = attrs.field(default=4.0, validator=_check_ratio)
    """Bytes of UTF-8 per token; finite and > 0."""
    image_tokens: int = attrs.field(default=300, kw_only=True, validator=_check_count)
    """Cost of an image (the fixed price)."""
    document_tokens: int = attrs.field(default=500, kw_only=True, validator=_check_count)
    """Cost of a document (the fixed price)."""
    message_overhead: int = attrs.field(default=4, kw_only=True, validator=_check_count)
    """Cost of a message beyond its blocks."""
    image_pricing: ImagePricing = attrs.field(
        default="fixed", kw_only=True, validator=_check_choice("fixed", "openai", "anthropic")
    )
    """``"fixed"`` (crate-exact), ``"openai"`` or ``"anthropic"`` for sized images."""
    document_pricing: DocumentPricing = attrs.field(
        default="fixed", kw_only=True, validator=_check_choice("fixed", "content")
    )
    """``"fixed"`` (crate-exact) or ``"content"`` (text, else pages)."""
    tokens_per_page: int = attrs.field(default=1500, kw_only=True, validator=_check_count)
    """With ``document_pricing="content"``: tokens per page of a document without text."""

    _key: Hashable = attrs.field(init=False, eq=False, repr=False)
    _divisor: int = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        key = (
            "heuristic",
            float(self.chars_per_token),
            self.image_tokens,
            self.document_tokens,
            self.message_overhead,
            self.image_pricing,
            self.document_pricing,
            self.tokens_per_page,
        )
        object.__setattr__(self, "_key", key)
        ratio = self.chars_per_token
        object.__setattr__(self, "_divisor", int(ratio) if float(ratio).is_integer() else 0)

    def _cache_key(self) -> Hashable:
        return self._key

    def estimate_text(self, text: str) -> int:
        """``ceil(len(text.encode("utf-8")) / chars_per_token)``; ``""`` is 0."""
        size = len(text) if text.isascii() else len(text.encode("utf-8"))
        divisor = self._divisor
        if divisor:
            return -(-size // divisor)
        return math.ceil(size / self.chars_per_token)
