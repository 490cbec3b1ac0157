"""What a request costs once the provider's prompt cache is counted: :class:`CacheCostModel`.

Providers cache the longest prefix a request shares with a recent one and bill it at a
fraction of the input price; the rest of the prompt is processed and written to the
cache, at the input price or above it. A compaction rewrites the prompt from its first
changed message on, so the tokens after that point, cached before, are billed again:
the cost of compacting is mostly cache misses, not the tokens it sheds. The model here
prices those events, in whatever unit the caller likes (the presets price in units of
one uncached input token, so a figure reads as "input tokens' worth").

Where the presets' numbers come from (the providers' pages, as of 2026):

- **Anthropic** (``platform.claude.com/docs/en/build-with-claude/prompt-caching``,
  ``anthropic.com/pricing``): a cache read is 0.1x the base input price, a cache write
  1.25x for an entry that lives 5 minutes (the default, refreshed on every hit) and 2x
  for a 1-hour entry; output is 5x input across the Claude families (Haiku $1/$5,
  Sonnet $3/$15, Opus $5/$25 per million tokens).
- **OpenAI** (``developers.openai.com/api/docs/guides/prompt-caching``): caching is
  automatic for prompts of 1,024 tokens and more; a cached input token of the GPT-5
  family bills at 0.1x the input price; models before GPT-5.6 charge nothing extra to
  write the cache (GPT-5.6 and later bill writes: give ``cache_write`` then); in-memory
  entries are cleared after 5 to 10 minutes of inactivity (5 is taken: the cautious
  end). Output: GPT-5 lists $1.25 input and $10 output per million tokens, 8x.

Prices change and differ by model: override any field (``attrs.evolve(model,
output=6.0)``) or build a model of your own, in dollars per million tokens if you like.
"""

from __future__ import annotations

from typing import Literal

import attrs

from .._errors import ConfigurationError
from .._validators import number, string

__all__ = ["CacheCostModel", "cost_model"]

PresetName = Literal["anthropic", "anthropic-1h", "openai"]
"""The presets :func:`cost_model` knows."""


@attrs.frozen(kw_only=True)
class CacheCostModel:
    """The prices of a provider's prompt cache, per token, and how long an entry lives.

    A request of ``prompt`` tokens whose first ``cached`` tokens the cache serves costs
    ``cached * cache_read + (prompt - cached) * cache_write``: a loop caches its whole
    prompt (OpenAI does so by itself; an Anthropic loop marks its last message), so every
    token not read from the cache is written to it. ``input`` is the price of a token
    sent without caching (a one-off request, such as a summarizer's).

    Examples:
        >>> model = CacheCostModel.anthropic()
        >>> model.request_cost(10_000, cached=9_000)
        2150.0
        >>> model.is_warm(gap=60.0), model.is_warm(gap=600.0)
        (True, False)
    """

    name: str = attrs.field(default="custom", validator=string(nonempty=True))
    """What the model describes, for reports."""
    input: float = attrs.field(default=1.0, validator=number(minimum=0))
    """The price of an input token sent without the cache."""
    cache_read: float = attrs.field(default=0.1, validator=number(minimum=0))
    """The price of an input token the cache serves."""
    cache_write: float = attrs.field(default=1.0, validator=number(minimum=0))
    """The price of an input token the cache did not serve, written to it."""
    cache_ttl: float = attrs.field(default=300.0, validator=number(minimum=0))
    """Seconds a cache entry lives without being read (each read refreshes it)."""
    output: float = attrs.field(default=5.0, validator=number(minimum=0))
    """The price of an output token."""

    @classmethod
    def anthropic(cls, *, ttl: Literal["5m", "1h"] = "5m") -> CacheCostModel:
        """Anthropic's Claude families: reads at 0.1x, writes at 1.25x (5-minute entries)
        or 2x (1-hour entries), output at 5x, in units of one input token."""
        if ttl not in ("5m", "1h"):
            msg = f"CacheCostModel.anthropic: ttl must be '5m' or '1h', not {ttl!r}"
            raise ConfigurationError(msg)
        long = ttl == "1h"
        return cls(
            name="anthropic-1h" if long else "anthropic",
            cache_read=0.1,
            cache_write=2.0 if long else 1.25,
            cache_ttl=3600.0 if long else 300.0,
            output=5.0,
        )

    @classmethod
    def openai(cls) -> CacheCostModel:
        """OpenAI's GPT-5 family: automatic caching, reads at 0.1x, no write premium,
        entries gone after 5 minutes without use, output at 8x."""
        return cls(name="openai", cache_read=0.1, cache_write=1.0, cache_ttl=300.0, output=8.0)

    def request_cost(self, prompt: int, *, cached: int = 0) -> float:
        """The input cost of a request of ``prompt`` tokens, ``cached`` of them read from
        the cache (the rest written to it)."""
        cached = min(max(cached, 0), prompt)
        return cached * self.cache_read + (prompt - cached) * self.cache_write

    def call_cost(self, prompt: int, output: int) -> float:
        """The cost of a one-off, uncached call (a summarizer's): ``prompt`` input tokens
        at :attr:`input` and ``output`` tokens at :attr:`output`."""
        return prompt * self.input + output * self.output

    def rewrite_cost(self, tokens: int) -> float:
        """What sending ``tokens`` again costs beyond reading them from the cache: the
        premium a compaction pays for each cached token it rewrites."""
        return tokens * max(0.0, self.cache_write - self.cache_read)

    def is_warm(self, gap: float | None) -> bool:
        """Whether an entry last used ``gap`` seconds ago is still cached (``None``: not
        known, taken as warm, the cautious answer for a compaction)."""
        return gap is None or gap <= self.cache_ttl


_PRESETS = {
    "anthropic": CacheCostModel.anthropic,
    "anthropic-1h": lambda: CacheCostModel.anthropic(ttl="1h"),
    "openai": CacheCostModel.openai,
}


def cost_model(name: str) -> CacheCostModel:
    """The preset called ``name``: ``"anthropic"``, ``"anthropic-1h"`` or ``"openai"``.

    Raises:
        ConfigurationError: for any other name.
    """
    factory = _PRESETS.get(name) if isinstance(name, str) else None
    if factory is None:
        msg = f"cost_model: unknown preset {name!r}; known: {', '.join(sorted(_PRESETS))}"
        raise ConfigurationError(msg)
    return factory()
