"""The crate's heuristic counter: bytes of UTF-8 divided by ``chars_per_token``, rounded up.

Its rules are :class:`~neuron_context._counting.rules.RuleCounter`'s; only the cost of a
text is its own. Because that cost depends on nothing but the text's size in bytes, and
every :class:`~neuron_context.Text` and :class:`~neuron_context.ToolUse` measures its
sizes once when it is built, counting a history is one tight walk over the blocks: no
text is encoded again, no JSON is written again, and no per-message cache is needed
(reading a cached cost would cost as much as computing it). The walk applies exactly the
same rules as :class:`RuleCounter`; a subclass that changes how a text is counted gets the
general rules (and the per-message cache) instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import attrs

from .._errors import ConfigurationError
from .._messages.content import Image, Text, ToolResult, ToolUse
from .._messages.message import Message
from .._validators import number
from .base import BaseCounter, not_messages, not_text
from .cache import MEMO_MIN_LENGTH
from .rules import RuleCounter, as_list, image_cost

__all__ = ["MIN_CHARS_PER_TOKEN", "TokenCounter", "to_counter"]

MIN_CHARS_PER_TOKEN = 1e-3
"""The smallest ``chars_per_token``: below it, counts of ordinary texts would leave the
range of floats (``TokenCounter(5e-324)`` made every count overflow)."""


@attrs.frozen(repr=False)
class TokenCounter(RuleCounter):
    """The crate's heuristic: bytes of UTF-8 divided by ``chars_per_token``, rounded up.

    Fixed costs for images (``image_tokens``) and documents (``document_tokens``), plus
    ``message_overhead`` per message. Pricing images by size or documents by content is
    opt-in (``image_pricing``, ``document_pricing``).

    Examples:
        >>> TokenCounter().estimate_text("abcde")
        2
    """

    chars_per_token: float = attrs.field(
        default=4.0, kw_only=False, validator=number(minimum=MIN_CHARS_PER_TOKEN, maximum=1e300)
    )
    """Bytes of UTF-8 per token; finite, at least 0.001."""

    _divisor: int = attrs.field(init=False, eq=False, repr=False)
    _walk: bool = attrs.field(init=False, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        ratio = self.chars_per_token
        object.__setattr__(self, "_divisor", int(ratio) if float(ratio).is_integer() else 0)
        kind = type(self)
        object.__setattr__(
            self,
            "_walk",
            kind.estimate_text is TokenCounter.estimate_text
            and kind.estimate_texts is BaseCounter.estimate_texts
            and kind._price is RuleCounter._price,
        )

    def _rules(self) -> tuple[object, ...]:
        return (float(self.chars_per_token), *super()._rules())

    def estimate_text(self, text: str) -> int:
        """``ceil(len(text.encode("utf-8")) / chars_per_token)``; ``""`` is 0."""
        # A lone surrogate (json.loads('"\\ud83d"'), a tool output cut mid-emoji) counts
        # as the 3 bytes it takes in WTF-8.
        if type(text) is not str and not isinstance(text, str):
            raise not_text(text)
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        divisor = self._divisor
        if divisor:
            return -(-size // divisor)
        return math.ceil(size / self.chars_per_token)

    def estimate_messages(self, messages: Iterable[Message]) -> int:
        """Tokens of a conversation: the sum over its messages.

        Raises:
            ConfigurationError: ``messages`` is not an iterable of ``Message``.
        """
        if not self._walk:
            return super().estimate_messages(messages)
        try:
            if type(messages) is list or type(messages) is tuple:
                if len(messages) >= MEMO_MIN_LENGTH:
                    return self._memo.total(messages, self._total)
                return self._total(messages)
            return self._total(as_list(messages))
        except (AttributeError, TypeError) as exc:
            error = not_messages(messages)
            if error is None:
                raise
            raise error from exc

    def _sum(self, messages: Sequence[Message]) -> int:
        return self._total(messages) if self._walk else super()._sum(messages)

    def _total(self, messages: Sequence[Message]) -> int:
        """The walk: the same rules as ``RuleCounter._price``, from the measured sizes."""
        divisor = self._divisor
        if not divisor:
            return sum(self._price(messages))
        overhead = self.message_overhead
        pricing = self.image_pricing
        fixed_image = self.image_tokens
        other = self._other
        total = 0
        for message in messages:
            total += overhead
            for block in message.content:
                kind = type(block)
                if kind is Text:
                    total -= -block._size // divisor  # type: ignore[union-attr]
                elif kind is ToolResult:
                    for item in block.content:  # type: ignore[union-attr]
                        if type(item) is Text:
                            total -= -item._size // divisor
                        elif type(item) is Image:
                            total += image_cost(item, pricing, fixed_image)
                        else:
                            total += other(item)
                elif kind is ToolUse:
                    total -= (-block._name_size // divisor) + (  # type: ignore[union-attr]
                        -block._input_size // divisor  # type: ignore[union-attr]
                    )
                else:
                    total += other(block)
        return total

    def _other(self, block: object) -> int:
        """A block the walk does not inline, by the general rules (raises if unknown)."""
        texts: list[str] = []
        fixed = self._blocks((block,), texts)  # type: ignore[arg-type]
        return fixed + sum(map(self.estimate_text, texts))


def to_counter(value: BaseCounter | None) -> BaseCounter:
    """The given counter, or the default heuristic one."""
    if value is None:
        return TokenCounter()
    if not isinstance(value, BaseCounter):
        msg = f"counter must be a TokenCounter or TokenizerCounter, got {type(value).__name__}"
        raise ConfigurationError(msg)
    return value
