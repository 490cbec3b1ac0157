"""Calibration: learn how far a counter is from the tokenizer of the model in use.

A heuristic counter (bytes / 4) can be off by 2-3x on non-Latin text, code or JSON, and
even an exact tokenizer is not the model's own when the model's is unpublished. Every
provider response reports how many input tokens the request really cost, so the ratio
``reported / estimated`` is free, continuous feedback: :class:`CalibratedCounter` learns
it and scales its base counter's estimates by it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import attrs

from .._errors import ConfigurationError, show
from .._messages.content import ContentBlock
from .._messages.message import Message, ToolDefinition
from .._numbers import ceil_scale
from .._validators import MAX_INT, instance_of, number, require_int
from .cache import CostTable
from .counter import BaseCounter, RunningCount

__all__ = ["CalibratedCounter"]

_STATE_FORMAT = "neuron-context-calibration"
_STATE_VERSION = 1
# Float products such as 100 * 1.1 = 110.00000000000001 must not round up a whole token.
_EPSILON = 1e-9
_MAX_FACTOR = 1e6
"""Factors (and their bounds) beyond this are nonsense and would overflow the products."""


def _as_number(value: object) -> float | None:
    """``value`` as a float when it is a finite int or float (not a bool), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _scale(count: int, factor: float) -> int:
    """``ceil(count * factor)``; a count above 0 stays above 0, however small the factor
    (exact for counts of any size)."""
    if count <= 0:
        return 0
    return max(1, ceil_scale(count, factor, slack=_EPSILON))


@attrs.define(eq=False)
class CalibratedCounter(BaseCounter):
    """Scales another counter by a correction factor learned from real usage reports.

    After each model call, pass what was sent and the provider's reported input tokens
    to :meth:`observe`; the counter compares them with its base's estimate and moves its
    :attr:`factor` toward ``reported / estimated`` (an exponential moving average with
    weight ``alpha``; the first observation is taken as it is). Each sample is clamped to
    ``[min_factor, max_factor]`` first, so one absurd report cannot throw the factor far
    off, and reports that cannot be used (zero tokens, an empty estimate) are ignored.
    Every estimate is then ``ceil(base estimate * factor)``; the base's per-message cache
    keeps working, since the factor is applied on top of the cached costs.

    It works with any counter and with every strategy (``counter=``). Limits:

    - **One global factor.** A history that mixes languages or content types whose
      ratios differ (English prose, CJK text, JSON tool results, code) is scaled by their
      average, weighted by what the recent requests held; no part is corrected on its
      own, and a single message's estimate is only as good as that average.
    - **It lags.** When the content mix changes (the agent starts reading minified JSON
      after an hour of prose), the factor takes several observations to follow; lower
      ``alpha`` smooths more and lags more.
    - **Reports cover more than the messages.** Provider-reported input tokens include
      the tool schemas, the system prompt and the provider's own per-request overhead
      (chat templates, tool-use preambles). Pass the request's ``tools`` and its system
      prompt (as a system message) to :meth:`observe`, or the factor absorbs them and
      overestimates long histories relative to short ones.
    - **Totals, not sums.** :meth:`estimate_messages` scales the base's total once, so
      it can be a few tokens below the sum of :meth:`estimate_message` over the same
      messages (each of which is rounded up on its own).
    - **Not persistent by itself.** Save :meth:`state` and :meth:`restore` it to keep
      what was learned across processes; the factor belongs to one model and one base
      counter configuration.

    Examples:
        >>> from neuron_context import Message, TokenCounter
        >>> counter = CalibratedCounter(TokenCounter())
        >>> history = [Message.user("x" * 400)]
        >>> counter.estimate_messages(history)
        104
        >>> counter.observe(history, 156)
        True
        >>> counter.factor
        1.5
        >>> counter.estimate_messages(history)
        156
    """

    base: BaseCounter = attrs.field(
        validator=instance_of(
            BaseCounter, "a counter (a BaseCounter such as TokenCounter or TokenizerCounter)"
        )
    )
    """The counter whose estimates are corrected."""
    alpha: float = attrs.field(
        default=0.3,
        kw_only=True,
        validator=number(minimum=0, maximum=1, exclusive_minimum=True),
    )
    """Weight of a new observation in the moving average, in ``(0, 1]``."""
    min_factor: float = attrs.field(
        default=0.25,
        kw_only=True,
        validator=number(minimum=0, maximum=_MAX_FACTOR, exclusive_minimum=True),
    )
    """The smallest factor (and sample) allowed, > 0."""
    max_factor: float = attrs.field(
        default=4.0,
        kw_only=True,
        validator=number(minimum=0, maximum=_MAX_FACTOR, exclusive_minimum=True),
    )
    """The largest factor (and sample) allowed, at most 1e6."""
    initial_factor: float = attrs.field(
        default=1.0,
        kw_only=True,
        validator=number(minimum=0, maximum=_MAX_FACTOR, exclusive_minimum=True),
    )
    """The factor before any observation (and after :meth:`reset`)."""

    _factor: float = attrs.field(init=False)
    _observations: int = attrs.field(init=False, default=0)

    def __attrs_post_init__(self) -> None:
        if self.min_factor > self.max_factor:
            msg = (
                f"CalibratedCounter.min_factor ({show(self.min_factor)}) must not exceed "
                f"max_factor ({show(self.max_factor)})"
            )
            raise ConfigurationError(msg)
        if not self.min_factor <= self.initial_factor <= self.max_factor:
            msg = (
                f"CalibratedCounter.initial_factor must lie in [min_factor, max_factor] = "
                f"[{show(self.min_factor)}, {show(self.max_factor)}], "
                f"got {show(self.initial_factor)}"
            )
            raise ConfigurationError(msg)
        self._factor = float(self.initial_factor)

    # -- learning ------------------------------------------------------------------------

    @property
    def factor(self) -> float:
        """The current correction factor: estimates are ``ceil(base * factor)``."""
        return self._factor

    @property
    def observations(self) -> int:
        """How many observations have been used (ignored ones are not counted)."""
        return self._observations

    def observe(
        self,
        messages: Iterable[Message],
        reported_input_tokens: int,
        *,
        tools: Iterable[ToolDefinition] = (),
    ) -> bool:
        """Learn from one request: what was sent and the input tokens the provider billed.

        Args:
            messages: every message of the request, the system prompt included.
            reported_input_tokens: the provider's count (``usage.input_tokens``; with
                Anthropic prompt caching, add the cache read and creation tokens).
            tools: the tool definitions sent with the request.

        Returns:
            Whether the observation was used: a report of 0 tokens, or a request the base
            estimates at 0 tokens, is ignored.

        Raises:
            ConfigurationError: ``reported_input_tokens`` is not an ``int``, or negative.
        """
        reported = require_int(
            reported_input_tokens, "CalibratedCounter.observe: reported_input_tokens"
        )
        base = self.base
        estimated = base.estimate_messages(messages) + base.estimate_tools(tools)
        if reported == 0 or estimated <= 0:
            return False
        # Compared before dividing: a report of any size is clamped, never a float overflow.
        if reported >= estimated * self.max_factor:
            sample = self.max_factor
        else:
            sample = min(self.max_factor, max(self.min_factor, reported / estimated))
        if self._observations == 0:
            factor = sample
        else:
            factor = self._factor + self.alpha * (sample - self._factor)
        self._factor = min(self.max_factor, max(self.min_factor, factor))
        self._observations += 1
        return True

    def reset(self) -> None:
        """Forget every observation: the factor is ``initial_factor`` again."""
        self._factor = float(self.initial_factor)
        self._observations = 0

    def state(self) -> dict[str, str | int | float]:
        """What was learned, as a plain JSON-compatible dict (see :meth:`restore`)."""
        return {
            "format": _STATE_FORMAT,
            "version": _STATE_VERSION,
            "factor": self._factor,
            "observations": self._observations,
        }

    def restore(self, state: Mapping[str, object]) -> None:
        """Take back what :meth:`state` returned (possibly in another process).

        Raises:
            ConfigurationError: ``state`` is not such a dict, or its factor lies outside
                ``[min_factor, max_factor]``.
        """
        if not isinstance(state, Mapping):
            msg = f"CalibratedCounter.restore: state must be a dict, got {type(state).__name__}"
            raise ConfigurationError(msg)
        if state.get("format") != _STATE_FORMAT or state.get("version") != _STATE_VERSION:
            msg = (
                "CalibratedCounter.restore: state must come from CalibratedCounter.state() "
                f"(format {show(_STATE_FORMAT)}, version {_STATE_VERSION}), got "
                f"format={show(state.get('format'))}, version={show(state.get('version'))}"
            )
            raise ConfigurationError(msg)
        factor = _as_number(state.get("factor"))
        if factor is None or not self.min_factor <= factor <= self.max_factor:
            msg = (
                "CalibratedCounter.restore: state['factor'] must be a number in "
                f"[{show(self.min_factor)}, {show(self.max_factor)}], "
                f"got {show(state.get('factor'))}"
            )
            raise ConfigurationError(msg)
        observations = state.get("observations")
        if (
            isinstance(observations, bool)
            or not isinstance(observations, int)
            or not 0 <= observations <= MAX_INT
        ):
            msg = (
                "CalibratedCounter.restore: state['observations'] must be a non-negative "
                f"int, got {show(observations)}"
            )
            raise ConfigurationError(msg)
        self._factor = factor
        self._observations = observations

    # -- counting ------------------------------------------------------------------------

    def estimate_text(self, text: str) -> int:
        """The base's count of ``text``, scaled."""
        return _scale(self.base.estimate_text(text), self._factor)

    def estimate_texts(self, texts: Sequence[str]) -> list[int]:
        """The base's counts of ``texts``, each scaled."""
        factor = self._factor
        return [_scale(count, factor) for count in self.base.estimate_texts(texts)]

    def estimate_message(self, message: Message) -> int:
        """The base's cost of ``message``, scaled."""
        return _scale(self.base.estimate_message(message), self._factor)

    def estimate_messages(self, messages: Iterable[Message]) -> int:
        """The base's total for ``messages``, scaled once (the base's cache applies)."""
        return _scale(self.base.estimate_messages(messages), self._factor)

    def estimate_content(self, content: Iterable[ContentBlock]) -> int:
        """The base's cost of some content blocks, scaled."""
        return _scale(self.base.estimate_content(content), self._factor)

    def estimate_tools(self, tools: Iterable[ToolDefinition]) -> int:
        """The base's cost of tool definitions, scaled."""
        return _scale(self.base.estimate_tools(tools), self._factor)

    def cost_table(self, messages: Sequence[Message]) -> CostTable:
        """The base's cost of each message, each scaled (so the table's total may be a
        few tokens above :meth:`estimate_messages`, which scales the base's total once)."""
        factor = self._factor
        return CostTable([_scale(cost, factor) for cost in self.base.cost_table(messages).costs()])

    def running(self, messages: Sequence[Message] = ()) -> RunningCount:
        """A running count of the base's total, scaled by the factor when read."""
        return RunningCount(self.base.estimate_messages, messages, scale=self._scaled)

    def _scaled(self, total: int) -> int:
        return _scale(total, self._factor)
