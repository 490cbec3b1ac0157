"""Calibration from what the provider reports: the one step every caller feeds a
:class:`~neuron_context.CalibratedCounter` through, and what it learned.

The loop, after each answered model call, and every adapter, through the recovery step
(:mod:`neuron_context._compaction.recovery`: a reply's usage, a refusal's stated count),
hand the provider's input tokens to :func:`calibrate`. What the counter learned (a
:class:`Calibration`: the report, the counter's estimate of the same request before it
learned, its factor after) is logged at DEBUG and recorded on the model call's span (the
loop's ``chat``, an adapter's ``model_request``); the loop's ``ModelCalled`` event
carries the factor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from .._counting.calibrated import CalibratedCounter
from .._counting.counter import BaseCounter
from .._log import logger
from .._messages.message import Message, ToolDefinition

if TYPE_CHECKING:
    from .._tracing.spans import Span

__all__ = ["Calibration", "calibrate"]


@attrs.frozen
class Calibration:
    """What one report of the provider's input tokens taught a
    :class:`~neuron_context.CalibratedCounter`: the figure the loop's ``ModelCalled``
    event and the model call's span show."""

    input_tokens: int
    """The provider's reported input tokens for the request."""
    estimated_tokens: int
    """The counter's count of the same request before it learned from the report."""
    factor: float
    """The counter's calibration factor after learning from it."""


def calibrate(
    counter: BaseCounter,
    messages: Sequence[Message] | Callable[[], Sequence[Message]],
    reported: object,
    *,
    system_prompt: str | None = None,
    tools: Sequence[ToolDefinition] = (),
    label: str = "model call",
    span: Span | None = None,
) -> Calibration | None:
    """Feed ``counter`` the provider's ``reported`` input tokens for a request of
    ``messages`` (or a function giving them), ``system_prompt`` and ``tools``, when it is
    a :class:`~neuron_context.CalibratedCounter` and the report is a count > 0; what it
    learned (``None`` when it learned nothing) is logged at DEBUG and recorded on
    ``span`` (the model call's), the one place every caller shows it."""
    if not isinstance(counter, CalibratedCounter):
        return None
    if isinstance(reported, bool) or not isinstance(reported, int) or reported <= 0:
        return None
    conversation = messages() if callable(messages) else messages
    sent = [Message.system(system_prompt), *conversation] if system_prompt else conversation
    estimated = counter.estimate_messages(sent) + counter.estimate_tools(tools)
    if not counter.observe(sent, reported, tools=tools):
        return None
    learned = Calibration(reported, estimated, counter.factor)
    logger.debug(
        "%s: the provider counted %d input tokens, the counter %d; calibration factor %.4f",
        label,
        reported,
        estimated,
        learned.factor,
        extra={"input_tokens": reported, "estimated_tokens": estimated, "factor": learned.factor},
    )
    if span is not None:
        span.calibrated(learned)
    return learned
