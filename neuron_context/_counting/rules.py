"""The block rules, written once: what a message costs given the cost of its texts.

Every rule-based counter prices a message as ``message_overhead`` plus its blocks, each
block a fixed part (images, documents) plus the counts of its texts, each text rounded
on its own (CONTRACT §2). :class:`RuleCounter` holds those rules and the options they
read (with their defaults, written here once); a subclass says only how to count a text
(:meth:`~RuleCounter.estimate_text`, and optionally many at once). Dispatch over the
block types is exhaustive: a block the rules do not know is an error, never priced 0.

Counting a history goes through the caches: each message's cost
(:mod:`neuron_context._counting.cache`), and the memo of the last long histories
(:mod:`neuron_context._counting.memo`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, TypeAlias

import attrs

from .._errors import ConfigurationError
from .._messages.checks import check_messages, not_messages
from .._messages.content import (
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
from .._messages.jsonvalue import compact_json
from .._messages.message import Message, ToolDefinition
from .._validators import MAX_INT, non_negative_int, one_of
from .cache import (
    CacheKey,
    CostTable,
    bound_costs,
    cache_key,
    cached_costs,
    store_cost,
    sum_costs,
)
from .counter import BaseCounter, check_limit
from .memo import MEMO_MIN_LENGTH, HistoryMemo

__all__ = ["DocumentPricing", "ImagePricing", "RuleCounter", "as_list", "image_cost"]

ImagePricing: TypeAlias = Literal["fixed", "openai", "anthropic"]
"""How images are priced: the fixed ``image_tokens`` (default), OpenAI's tile formula,
or Anthropic's ``width * height / 750``; the formulas apply only to images with known
``width`` and ``height``."""

DocumentPricing: TypeAlias = Literal["fixed", "content"]
"""How documents are priced: the fixed ``document_tokens`` (default), or by their
content: their ``text`` when present, else ``pages * tokens_per_page``."""


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


_ANTHROPIC_MAX_IMAGE_TOKENS = 1600  # images beyond ~1.15 megapixels are scaled down


def _anthropic_image_tokens(width: int, height: int) -> int:
    # Anthropic: scaled to fit 1568px on the long side and about 1.15 megapixels, then w*h/750.
    scale = min(1.0, 1568 / max(width, height, 1))
    tokens = math.ceil((width * scale) * (height * scale) / 750)
    return min(tokens, _ANTHROPIC_MAX_IMAGE_TOKENS)


def image_cost(image: Image, pricing: ImagePricing, fixed: int) -> int:
    """What ``image`` costs under ``pricing`` (``fixed`` when its size is unknown)."""
    if pricing == "fixed" or image.width is None or image.height is None:
        return fixed
    if pricing == "openai":
        return _openai_image_tokens(image.width, image.height)
    return _anthropic_image_tokens(image.width, image.height)


def _argument(counter: object, method: str) -> str:
    """How an error names the messages given to ``counter.method``."""
    return f"{type(counter).__name__}.{method}: messages"


def as_list(messages: Iterable[Message], name: str) -> list[Message]:
    """``messages`` (any iterable but a str, bytes or mapping) as a list; ``name`` names
    it in the error."""
    if isinstance(messages, str | bytes | Mapping):
        check_messages(messages, name, sequence=False)  # raises: it is not messages
    return list(messages)


def _unknown_block(block: object) -> ConfigurationError:
    msg = f"cannot count a {type(block).__name__}: not a content block"
    return ConfigurationError(msg)


@attrs.frozen(kw_only=True, repr=False)
class RuleCounter(BaseCounter):
    """A counter made of the block rules and a way to count text (see the module)."""

    # The fixed prices are at most MAX_INT (2**53), unlike budgets: a price is part of
    # every count, and counts meet floats in ratios and shares, exact only up to there.
    image_tokens: int = attrs.field(default=300, validator=non_negative_int(maximum=MAX_INT))
    """Cost of an image (the fixed price)."""
    document_tokens: int = attrs.field(default=500, validator=non_negative_int(maximum=MAX_INT))
    """Cost of a document (the fixed price)."""
    message_overhead: int = attrs.field(default=4, validator=non_negative_int(maximum=MAX_INT))
    """Cost of a message beyond its blocks."""
    image_pricing: ImagePricing = attrs.field(
        default="fixed", validator=one_of(("fixed", "openai", "anthropic"))
    )
    """``"fixed"`` (the default: every image costs ``image_tokens``, whatever its size),
    ``"openai"`` or ``"anthropic"`` (an image with a size, by that provider's formula)."""
    document_pricing: DocumentPricing = attrs.field(
        default="fixed", validator=one_of(("fixed", "content"))
    )
    """``"fixed"`` (the default: every document costs ``document_tokens``) or
    ``"content"`` (by its text, else by its pages)."""
    tokens_per_page: int = attrs.field(default=1500, validator=non_negative_int(maximum=MAX_INT))
    """With ``document_pricing="content"``: tokens per page of a document without text."""

    _memo: HistoryMemo = attrs.field(init=False, eq=False, repr=False, factory=HistoryMemo)
    _key: CacheKey = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_key", cache_key(type(self), self._rules()))

    def __repr__(self) -> str:
        # The subclass's own fields first (``TokenCounter(chars_per_token=4.0, ...)``).
        own = {field.name for field in attrs.fields(RuleCounter)}
        fields = [field for field in attrs.fields(type(self)) if field.repr]
        ordered = [f for f in fields if f.name not in own] + [f for f in fields if f.name in own]
        body = ", ".join(f"{field.name}={getattr(self, field.name)!r}" for field in ordered)
        return f"{type(self).__name__}({body})"

    def _rules(self) -> tuple[object, ...]:
        """Everything a message's cost depends on (with the class: the cache key)."""
        return (
            self.image_tokens,
            self.document_tokens,
            self.message_overhead,
            self.image_pricing,
            self.document_pricing,
            self.tokens_per_page,
        )

    # -- the rules -------------------------------------------------------------------

    def _blocks(self, content: Iterable[ContentBlock], texts: list[str]) -> int:
        """Append the texts of ``content`` to ``texts``; return its fixed cost."""
        fixed = 0
        for block in content:
            kind = type(block)
            if kind is Text:
                texts.append(block.text)  # type: ignore[arg-type, union-attr]
            elif kind is ToolResult:
                for item in block.content:  # type: ignore[union-attr]
                    if type(item) is Text:
                        texts.append(item.text)
                    elif type(item) is Image:
                        fixed += image_cost(item, self.image_pricing, self.image_tokens)
                    else:
                        raise _unknown_block(item)
            elif kind is ToolUse:
                texts.append(block.name)  # type: ignore[union-attr]
                texts.append(block._json)  # type: ignore[union-attr]
            elif kind is Image:
                fixed += image_cost(block, self.image_pricing, self.image_tokens)  # type: ignore[arg-type]
            elif kind is Thinking:
                texts.append(block.thinking)  # type: ignore[union-attr]
            elif kind is RedactedThinking:
                texts.append(block.data)  # type: ignore[arg-type, union-attr]
            elif kind is Compaction:
                texts.append(block.content)  # type: ignore[arg-type, union-attr]
            elif kind is Document:
                fixed += self._document(block, texts)  # type: ignore[arg-type]
            else:
                raise _unknown_block(block)
        return fixed

    def _document(self, document: Document, texts: list[str]) -> int:
        if self.document_pricing == "content":
            if document.text is not None:
                texts.append(document.text)
                return 0
            if document.pages is not None:
                return document.pages * self.tokens_per_page
        return self.document_tokens

    def _price(self, messages: Sequence[Message]) -> list[int]:
        """The cost of each message (no cache): all texts counted in one batch."""
        texts: list[str] = []
        append = texts.append
        starts: list[int] = []
        fixed: list[int] = []
        overhead = self.message_overhead
        blocks = self._blocks
        for message in messages:
            starts.append(len(texts))
            content = message.content
            if len(content) == 1 and type(content[0]) is Text:  # the most common message
                append(content[0].text)
                fixed.append(overhead)
            else:
                fixed.append(overhead + blocks(content, texts))
        if not starts:
            return []
        # Sums of consecutive counts from their running total (C speed, no slices).
        running = [0, *itertools.accumulate(self.estimate_texts(texts))]
        starts.append(len(texts))
        return [
            cost + running[end] - running[start]
            for cost, start, end in zip(fixed, starts, starts[1:], strict=False)
        ]

    def _sum(self, messages: Sequence[Message]) -> int:
        """The total of ``messages`` through the per-message cache."""
        return sum_costs(messages, self._key, self._price)

    def _costs(self, messages: Sequence[Message]) -> list[int]:
        """Each message's cost through the per-message cache."""
        return cached_costs(messages, self._key, self._price)

    # -- the interface ----------------------------------------------------------------

    def pin_cost(self, message: Message, cost: int) -> bool:
        """Price ``message`` at ``cost`` from now on (in this counter's cache): ``True``."""
        store_cost(message, self._key, cost)
        return True

    def estimate_message(self, message: Message) -> int:
        """Tokens of one message: ``message_overhead`` plus its blocks."""
        return self.estimate_messages((message,))

    def estimate_messages(self, messages: Iterable[Message]) -> int:
        """Tokens of a conversation: the sum over its messages.

        Costs already known are read from the cache; the texts of the others are counted
        in one batch. A long list that extends the one counted before is summed from
        that list's total plus its new messages.

        Raises:
            ConfigurationError: ``messages`` is not an iterable of ``Message``.
        """
        try:
            if type(messages) is list or type(messages) is tuple:
                if len(messages) >= MEMO_MIN_LENGTH:
                    return self._memo.total(messages, self._costs, self._sum)
                return self._sum(messages)
            return self._sum(as_list(messages, _argument(self, "estimate_messages")))
        except (AttributeError, TypeError) as exc:
            error = not_messages(messages, _argument(self, "estimate_messages"))
            if error is None:
                raise
            raise error from exc

    def _upper(self) -> RuleCounter | None:
        """A cheap counter whose count of every text is never below this one's (the
        bound :meth:`bound_messages` adds for messages not priced yet), or ``None``."""
        return None

    def bound_messages(self, messages: Sequence[Message], limit: int) -> int:
        """The exact count where it is over ``limit``; below, possibly a bound (see
        :meth:`BaseCounter.bound_messages`). A long list that extends a history this
        counter remembers costs what that history cost plus a bound of its new
        messages: nothing is tokenized until the sum passes ``limit``.

        Raises:
            ConfigurationError: ``messages`` is not a sequence of ``Message``, or
                ``limit`` is not an int.
        """
        limit = check_limit(limit, type(self).__name__)
        upper = self._upper()
        if upper is None:
            return self.estimate_messages(messages)
        try:
            if type(messages) is not list and type(messages) is not tuple:
                messages = as_list(messages, _argument(self, "bound_messages"))
            key, walk = self._key, upper._sum

            def bound(some: Sequence[Message]) -> int:
                return bound_costs(some, key, walk)

            if len(messages) >= MEMO_MIN_LENGTH:
                return self._memo.bound(messages, limit, self._costs, self._sum, bound)
            total = bound(messages)
            return total if total <= limit else self._sum(messages)
        except (AttributeError, TypeError) as exc:
            error = not_messages(messages, _argument(self, "bound_messages"))
            if error is None:
                raise
            raise error from exc

    def cost_table(self, messages: Sequence[Message]) -> CostTable:
        """What each message costs, with running sums; a list that extends a history
        this counter remembers costs only its new messages.

        Raises:
            ConfigurationError: ``messages`` is not a sequence of ``Message``.
        """
        try:
            if type(messages) is list or type(messages) is tuple:
                if len(messages) >= MEMO_MIN_LENGTH:
                    return self._memo.table(messages, self._costs)
                return CostTable(self._costs(messages))
            return CostTable(self._costs(as_list(messages, _argument(self, "cost_table"))))
        except (AttributeError, TypeError) as exc:
            error = not_messages(messages, _argument(self, "cost_table"))
            if error is None:
                raise
            raise error from exc

    def estimate_content(self, content: Iterable[ContentBlock]) -> int:
        """Tokens of some content blocks, without the message overhead (not cached)."""
        texts: list[str] = []
        try:
            fixed = self._blocks(content, texts)
        except TypeError as exc:
            msg = f"content must be an iterable of content blocks, got {type(content).__name__}"
            raise ConfigurationError(msg) from exc
        return fixed + sum(self.estimate_texts(texts))

    def estimate_tools(self, tools: Iterable[ToolDefinition]) -> int:
        """Tokens of tool definitions: name, description and compact JSON schema."""
        texts: list[str] = []
        try:
            for tool in tools:
                texts.extend((tool.name, tool.description, compact_json(tool.input_schema)))
        except (AttributeError, TypeError) as exc:
            msg = f"tools must be an iterable of ToolDefinition, got {type(tools).__name__}"
            raise ConfigurationError(msg) from exc
        return sum(self.estimate_texts(texts))
