"""The heuristic counter: bytes of UTF-8 divided by ``chars_per_token``, rounded up.

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
from collections.abc import Sequence

import attrs

from .._errors import ConfigurationError
from .._messages.content import Image, Text, ToolResult, ToolUse
from .._messages.message import Message
from .._validators import number
from .counter import BaseCounter, not_text
from .rules import RuleCounter, image_cost

__all__ = ["MIN_CHARS_PER_TOKEN", "TokenCounter", "to_counter"]

MIN_CHARS_PER_TOKEN = 1e-3
"""The smallest ``chars_per_token``: below it, counts of ordinary texts would leave the
range of floats (``TokenCounter(5e-324)`` made every count overflow)."""


@attrs.frozen(repr=False)
class TokenCounter(RuleCounter):
    """The heuristic: bytes of UTF-8 divided by ``chars_per_token``, rounded up.

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

    def _sum(self, messages: Sequence[Message]) -> int:
        return sum(self._costs(messages)) if self._walk else super()._sum(messages)

    def _costs(self, messages: Sequence[Message]) -> list[int]:
        """Each message's cost: the same rules as ``RuleCounter._price``, walked from the
        sizes the blocks measured when they were built."""
        divisor = self._divisor
        if not self._walk or not divisor:
            return super()._costs(messages)
        overhead = self.message_overhead
        pricing = self.image_pricing
        fixed_image = self.image_tokens
        other = self._other
        costs: list[int] = []
        append = costs.append
        for message in messages:
            cost = overhead
            for block in message.content:
                kind = type(block)
                if kind is Text:
                    cost -= -block._size // divisor  # type: ignore[union-attr]
                elif kind is ToolResult:
                    for item in block.content:  # type: ignore[union-attr]
                        if type(item) is Text:
                            cost -= -item._size // divisor
                        elif type(item) is Image:
                            cost += image_cost(item, pricing, fixed_image)
                        else:
                            cost += other(item)
                elif kind is ToolUse:
                    cost -= (-block._name_size // divisor) + (  # type: ignore[union-attr]
                        -block._input_size // divisor  # type: ignore[union-attr]
                    )
                else:
                    cost += other(block)
            append(cost)
        return costs

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
