"""Token counting: the crate's heuristic, block rules shared by every counter, and a
per-message cost cache.

Every counter prices a message as ``message_overhead`` plus the cost of its blocks. A
block is priced as a fixed part (images, documents) plus the token counts of its texts,
each rounded on its own. Subclasses only say how to count a text (or many at once).

Messages are immutable, so the cost of a message is cached on the message itself, keyed
by the counter's configuration: counting a history that grew by one message costs one
message, and the cache lives and dies with the messages (no global state, no leak).

On top of that, a counter remembers the last few long lists it counted with their totals
(:class:`_HistoryMemo`): a history that only grew is then summed by comparing the known
prefix at C speed (by identity) and counting just the new messages, instead
of a Python-level lookup per message.
"""

from __future__ import annotations

import abc
import json
import math
import operator
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, Literal, TypeAlias

import attrs

from .._errors import ConfigurationError
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
from .._messages.message import Message, ToolDefinition

__all__ = ["BaseCounter", "ImagePricing", "TokenCounter", "compact_json"]

ImagePricing: TypeAlias = Literal["fixed", "openai", "anthropic"]
"""How images are priced: the fixed ``image_tokens`` (default), OpenAI's tile formula,
or Anthropic's ``width * height / 750``; the formulas apply only to images with known
``width`` and ``height``."""

DocumentPricing: TypeAlias = Literal["fixed", "content"]
"""How documents are priced: the fixed ``document_tokens`` (default), or by their
content: their ``text`` when present, else ``pages * tokens_per_page``."""

_CACHE_SLOTS = 4

_MEMO_ENTRIES = 4
"""How many histories a counter remembers (see :class:`_HistoryMemo`)."""
_MEMO_MIN_LENGTH = 64
"""Shorter lists are summed from the per-message cache alone and not remembered."""

_JSON_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _make_c_encoder() -> Callable[[object, int], Sequence[str]] | None:
    # Performance: json.dumps builds an encoder per call; the C encoder, built once, is
    # 2x faster on the small dicts of tool inputs. Same output as json.dumps with
    # separators=(",", ":"), ensure_ascii=False (the check below proves it on this Python).
    maker = getattr(json.encoder, "c_make_encoder", None)
    if maker is None:  # pragma: no cover - CPython always has it
        return None
    try:
        encoder: Callable[[object, int], Sequence[str]] = maker(
            None,
            _JSON_ENCODER.default,
            json.encoder.encode_basestring,
            None,
            ":",
            ",",
            False,
            False,
            True,
        )
        sample = {"a": [1, 2.5, None, True, "é\n"], "b": {"c": -1e300}}
        if "".join(encoder(sample, 0)) != _JSON_ENCODER.encode(sample):  # pragma: no cover
            return None
    except Exception:  # pragma: no cover - a Python whose private encoder API changed
        return None
    return encoder


_C_ENCODER = _make_c_encoder()


def compact_json(value: object) -> str:
    """JSON with no spaces and non-ASCII kept, as the counting rules require.

    The same text as ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``.
    """
    if _C_ENCODER is not None and type(value) is dict:
        try:
            return "".join(_C_ENCODER(value, 0))
        except (ValueError, RecursionError):
            pass  # e.g. a circular value: let json.dumps raise its own error
    return _JSON_ENCODER.encode(value)


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


class _HistoryMemo:
    """The last few long lists a counter counted, with their totals.

    A list that starts with one of them (the same message objects, or equal ones: a cost
    depends only on the message's value) costs a C-speed comparison of that prefix plus
    the new messages. It holds at most ``_MEMO_ENTRIES`` lists (strong references to
    their messages, so memory stays bounded by a few histories per counter); it is no
    part of the counter's value, and copies and pickles of a counter start empty.
    """

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: tuple[tuple[list[Message], int], ...] = ()

    def __reduce__(self) -> tuple[type[_HistoryMemo], tuple[()]]:
        return (_HistoryMemo, ())

    def total(self, counter: BaseCounter, messages: list[Message] | tuple[Message, ...]) -> int:
        """The total of ``messages``, from a remembered prefix when one matches."""
        entries = self.entries
        length = len(messages)
        for index, (snapshot, known) in enumerate(entries):
            size = len(snapshot)
            if size > length:
                continue
            # Identity, not ==: equal messages may cost differently ({"n": 1} vs {"n": True}).
            if not all(map(operator.is_, messages[:size], snapshot)):
                continue
            total, kept = known, snapshot
            if size < length:
                total += counter._sum(messages[size:])
                kept = list(messages)
            self.entries = ((kept, total), *entries[:index], *entries[index + 1 :])
            return total
        total = counter._sum(messages)
        self.entries = ((list(messages), total), *entries[: _MEMO_ENTRIES - 1])
        return total


class BaseCounter(abc.ABC):
    """What every counter shares: the block rules, the message cache and the sums.

    Subclasses implement :meth:`estimate_text` (and may override :meth:`estimate_texts`
    to count many texts at once) and :meth:`_cache_key`; a subclass with a ``_memo``
    field (a :class:`_HistoryMemo`) also sums long histories incrementally.
    """

    _memo: _HistoryMemo | None = None

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

    def _uncached_costs(self, messages: Sequence[Message]) -> list[int]:
        """The cost of each message, computed (no cache): all texts counted in one batch."""
        if type(self).estimate_texts is BaseCounter.estimate_texts:
            return self._direct_costs(messages)
        texts: list[str] = []
        bounds: list[tuple[int, int]] = []
        for message in messages:
            start = len(texts)
            bounds.append((self._parts(message, texts), start))
        counts = self.estimate_texts(texts)
        costs: list[int] = []
        for index, (fixed, start) in enumerate(bounds):
            stop = bounds[index + 1][1] if index + 1 < len(bounds) else len(texts)
            costs.append(fixed + sum(counts[start:stop]))
        return costs

    def _direct_costs(self, messages: Sequence[Message]) -> list[int]:
        # Performance: a counter that does not batch (estimate_texts not overridden) prices
        # each message directly; the common blocks inline, the others by the general rules.
        estimate = self.estimate_text
        overhead = self.message_overhead
        costs: list[int] = []
        for message in messages:
            cost = overhead
            for block in message.content:
                if isinstance(block, Text):
                    cost += estimate(block.text)
                elif isinstance(block, ToolResult):
                    for item in block.content:
                        if isinstance(item, Text):
                            cost += estimate(item.text)
                        else:
                            cost += self._image_cost(item)
                elif isinstance(block, ToolUse):
                    cost += estimate(block.name) + estimate(compact_json(block.input))
                else:
                    cost += self.estimate_content((block,))
            costs.append(cost)
        return costs

    def estimate_message(self, message: Message) -> int:
        """Tokens of one message: ``message_overhead`` plus its blocks."""
        key = self._cache_key()
        costs = message._costs
        if costs is not None:
            cached = costs.get(key)
            if cached is not None:
                return cached
        cost = self._uncached_costs((message,))[0]
        _store(message, key, cost)
        return cost

    def estimate_messages(self, messages: Iterable[Message]) -> int:
        """Tokens of a conversation: the sum over its messages.

        Costs already known are read from the cache; the texts of the others are
        counted in one batch. A long list that extends one counted before is summed
        from that list's total plus its new messages.
        """
        memo = self._memo
        if (
            memo is not None
            and isinstance(messages, list | tuple)
            and len(messages) >= _MEMO_MIN_LENGTH
        ):
            return memo.total(self, messages)
        return self._sum(messages)

    def _sum(self, messages: Iterable[Message]) -> int:
        """The sum over ``messages`` through the per-message cache."""
        key = self._cache_key()
        total = 0
        pending: list[Message] = []
        for message in messages:
            costs = message._costs
            if costs is not None:
                cached = costs.get(key)
                if cached is not None:
                    total += cached
                    continue
            pending.append(message)
        if not pending:
            return total
        for message, cost in zip(pending, self._uncached_costs(pending), strict=True):
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

    Examples:
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
    _memo: _HistoryMemo = attrs.field(init=False, eq=False, repr=False, factory=_HistoryMemo)

    def __attrs_post_init__(self) -> None:
        # A str, not a tuple: its hash is computed once, which makes every cache lookup
        # and store cheaper (repr of these primitives is unique per configuration).
        key = "heuristic" + repr(
            (
                float(self.chars_per_token),
                self.image_tokens,
                self.document_tokens,
                self.message_overhead,
                self.image_pricing,
                self.document_pricing,
                self.tokens_per_page,
            )
        )
        object.__setattr__(self, "_key", key)
        ratio = self.chars_per_token
        object.__setattr__(self, "_divisor", int(ratio) if float(ratio).is_integer() else 0)

    def _cache_key(self) -> Hashable:
        return self._key

    def estimate_text(self, text: str) -> int:
        """``ceil(len(text.encode("utf-8")) / chars_per_token)``; ``""`` is 0."""
        # Fix (tests/test_properties.py): a lone surrogate (json.loads('"\\ud83d"'), a
        # tool output cut mid-emoji) made encode() raise UnicodeEncodeError; it now counts
        # as the 3 bytes it takes in WTF-8. Valid text counts exactly as before.
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        divisor = self._divisor
        if divisor:
            return -(-size // divisor)
        return math.ceil(size / self.chars_per_token)
