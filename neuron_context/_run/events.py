"""What an agent run reports: plain, frozen, serializable events.

Every event is an :mod:`attrs` value with a literal ``type`` discriminator and
:meth:`AgentEvent.to_dict`, so a run can be logged, shipped to a metrics backend or
stored beside the history without knowing the classes. A run delivers its events, in
order, to ``AgentOptions.on_event`` as they happen and keeps them in
``AgentResult.events``.

Why events and not only logs: the figures users ask about (tokens per call, what a
compaction removed, which limit stopped a run) are numbers to aggregate; a log line is
for a human. Events carry durations in seconds (``time.perf_counter``) and token counts
as the loop's counter measured them; ``input_tokens``/``output_tokens`` of
:class:`ModelCalled` are what the provider reported, when it did.
"""

from __future__ import annotations

from typing import ClassVar, Literal, TypeAlias

import attrs

from .._messages.content import JSON

__all__ = [
    "AgentEvent",
    "CompactionCompleted",
    "CompactionFailed",
    "CompactionOverBudget",
    "CompactionStarted",
    "Event",
    "FallbackUsed",
    "LimitReached",
    "ModelCalled",
    "OffloadFailed",
    "RequestEdited",
    "RunFinished",
    "ToolCalled",
    "ToolRetried",
    "TurnStarted",
]


@attrs.frozen
class AgentEvent:
    """Base of every event: the run turn it happened in (1-based; 0 before the first)."""

    type: ClassVar[str] = "event"
    turn: int
    """The turn of the run (one model call per turn)."""

    def to_dict(self) -> dict[str, JSON]:
        """The event as a JSON-ready dict, ``{"type": ..., **fields}``."""
        data: dict[str, JSON] = {"type": self.type}
        data.update(attrs.asdict(self, recurse=False))
        return data


@attrs.frozen
class TurnStarted(AgentEvent):
    """A turn begins (before the loop's own compaction)."""

    type: ClassVar[str] = "turn_started"
    messages: int
    """Messages in the history."""
    tokens: int
    """What the provider would receive now: messages, system prompt and tools."""


@attrs.frozen
class ModelCalled(AgentEvent):
    """The model answered."""

    type: ClassVar[str] = "model_called"
    provider: str
    """The provider's class name (a fallback's, when one answered)."""
    model: str | None
    estimated_tokens: int
    """What the loop's counter measured for the request (system prompt and tools too)."""
    input_tokens: int | None
    """The provider's reported input tokens, when it reported usage."""
    output_tokens: int | None
    """The provider's reported output tokens, when it reported usage."""
    stop_reason: str
    tool_calls: int
    """How many tools the reply called."""
    duration: float
    """Seconds, the whole ``wrap_model_call`` chain included."""
    calibration_factor: float | None = None
    """The :class:`~neuron_context.CalibratedCounter`'s factor after learning from this
    call's ``input_tokens`` (compared with ``estimated_tokens``); ``None`` when the
    counter does not calibrate or learned nothing from the report."""


@attrs.frozen
class ToolCalled(AgentEvent):
    """A tool call finished (through the whole ``wrap_tool_call`` chain)."""

    type: ClassVar[str] = "tool_called"
    name: str
    tool_use_id: str
    outcome: Literal["success", "error", "cancelled"]
    """``"error"``: the model sees an error result (exception, unknown tool, bad
    arguments, rejection); ``"cancelled"``: the run was cancelled or stopped."""
    error: str | None
    """The error text the model sees, for ``"error"``."""
    duration: float


@attrs.frozen
class CompactionStarted(AgentEvent):
    """A compaction of the agent's history begins."""

    type: ClassVar[str] = "compaction_started"
    strategy: str
    """The strategy's class name."""
    trigger: str
    """Who compacts: ``"context"`` (``AgentOptions.context``) or a middleware's name."""
    tokens_before: int
    messages_before: int


@attrs.frozen
class CompactionCompleted(AgentEvent):
    """A compaction replaced the agent's history."""

    type: ClassVar[str] = "compaction_completed"
    strategy: str
    trigger: str
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    messages_removed: int
    """``messages_before - messages_after``."""
    duration: float
    prefix_kept: int = 0
    """The request's tokens before the first changed message (system prompt and tools
    included): what the provider's prompt cache still serves on the next call."""
    tokens_rewritten: int = 0
    """``tokens_after - prefix_kept``: what the next call sends anew, the compaction's
    cost in cache misses."""


@attrs.frozen
class CompactionOverBudget(AgentEvent):
    """A compaction's result is still over its strategy's budget: what it does not cut
    to meet one (the system prompt and tools, the newest request with the step in
    progress, kept whole) costs more. It follows the :class:`CompactionCompleted`."""

    type: ClassVar[str] = "compaction_over_budget"
    strategy: str
    trigger: str
    tokens_after: int
    """The request's tokens after the compaction (messages, system prompt and tools)."""
    max_tokens: int
    """The strategy's budget."""


@attrs.frozen
class CompactionFailed(AgentEvent):
    """A compaction failed or was cancelled; the history was kept as it was."""

    type: ClassVar[str] = "compaction_failed"
    strategy: str
    trigger: str
    tokens_before: int
    error: str
    cancelled: bool
    """Whether it was cancelled (the run then stops, cancelled) rather than failed."""
    duration: float


@attrs.frozen
class OffloadFailed(AgentEvent):
    """A strategy could not put what it removed in its store: that content is gone, as
    without a store (the compaction itself went on; the conversation is whole)."""

    type: ClassVar[str] = "offload_failed"
    strategy: str
    """The strategy that offloaded."""
    store: str
    """The store's class name."""
    error: str
    """The store's exception, as ``Type: message``."""


@attrs.frozen
class RequestEdited(AgentEvent):
    """A :class:`ContextEditingMiddleware` edited one request (the history is untouched)."""

    type: ClassVar[str] = "request_edited"
    strategy: str
    tokens_before: int
    tokens_after: int
    messages_removed: int
    prefix_kept: int = 0
    """The request's tokens before the first edited message (what the prompt cache
    serves, when the previous request was the same up to there)."""
    tokens_rewritten: int = 0
    """``tokens_after - prefix_kept``."""


@attrs.frozen
class LimitReached(AgentEvent):
    """A limit stopped the run (its error is raised next)."""

    type: ClassVar[str] = "limit_reached"
    limit: Literal["turns", "model_calls", "tool_calls"]
    maximum: int
    tool_name: str | None = None
    """The tool, for a per-tool limit."""


@attrs.frozen
class FallbackUsed(AgentEvent):
    """A :class:`ModelFallbackMiddleware` moved on to the next provider."""

    type: ClassVar[str] = "fallback_used"
    failed: str
    """The provider that failed (class name)."""
    provider: str
    """The provider tried next."""
    error: str


@attrs.frozen
class ToolRetried(AgentEvent):
    """A :class:`ToolRetryMiddleware` retries a failed call."""

    type: ClassVar[str] = "tool_retried"
    name: str
    tool_use_id: str
    attempt: int
    """The attempt that failed (1 is the first call)."""
    delay: float
    """Seconds waited before the next attempt."""
    error: str


@attrs.frozen
class RunFinished(AgentEvent):
    """The run ended with a reply that calls no tool."""

    type: ClassVar[str] = "run_finished"
    model_calls: int
    tool_calls: int
    messages: int


RouteReason: TypeAlias = Literal["rule", "images", "long_context", "default"]
"""Which rule of a :class:`DynamicModelSelectionMiddleware` chose a route."""


@attrs.frozen
class ModelRouted(AgentEvent):
    """A :class:`DynamicModelSelectionMiddleware` chose where this turn's call goes."""

    type: ClassVar[str] = "model_routed"
    route: str
    """The route's name."""
    reason: RouteReason
    """Which rule chose it: a user ``"rule"``, ``"images"``, ``"long_context"`` or
    ``"default"``."""
    provider: str
    """The provider's class name (the agent's when the route keeps it: ``"agent"``)."""
    model: str | None
    tokens: int
    """The request as counted (messages, system prompt and tools)."""
    images: int
    """Images in the request."""


Event: TypeAlias = (
    "TurnStarted | ModelCalled | ToolCalled | CompactionStarted | CompactionCompleted"
    " | CompactionFailed | CompactionOverBudget | RequestEdited | LimitReached"
    " | FallbackUsed | ToolRetried | RunFinished | ModelRouted | OffloadFailed"
)
"""Any event a run emits."""
