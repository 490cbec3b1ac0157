"""The spans: how each is opened, named and filled, and the no-op without a provider.

What is traced, and with which attributes, is described in :mod:`neuron_context._tracing`.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from .._errors import described
from .._version import __version__

if TYPE_CHECKING:
    from .._messages.content import ToolResult, ToolUse
    from .._messages.message import Message
    from .._run.tools import Tool
    from ..providers._base import CompletionRequest, CompletionResponse, Provider, TokenUsage

__all__ = [
    "COMPACTING",
    "Span",
    "active",
    "agent_run",
    "compaction",
    "model_call",
    "model_request",
    "tool_call",
]

SCOPE = "neuron_context"
"""The instrumentation scope of every span."""

Attributes = Mapping[str, str | bool | int | float | Sequence[str]]

COMPACTING: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "neuron_context_compacting", default=False
)
"""Whether a compaction span is open in this context (a nested ``compact`` opens none)."""


@functools.cache
def _api() -> tuple[ModuleType, Any, type] | None:
    """``opentelemetry.trace``, our tracer and the API's placeholder provider class, or
    ``None`` without the API.

    The tracer is taken once: before the application sets a tracer provider it is the
    API's proxy, which follows the provider set later.
    """
    try:
        trace = importlib.import_module("opentelemetry.trace")
    except ImportError:
        return None
    placeholder = getattr(trace, "ProxyTracerProvider", type(None))
    trace.get_tracer_provider()  # loads one named by OTEL_PYTHON_TRACER_PROVIDER
    return trace, trace.get_tracer(SCOPE, __version__), placeholder


def active() -> tuple[ModuleType, Any] | None:
    """``opentelemetry.trace`` and our tracer when spans can be recorded: the API is
    installed and the application has set a tracer provider.

    The API's ``get_tracer_provider()`` reads the environment on every call (about a
    microsecond), so the global it returns is read directly: it is set once, by
    ``set_tracer_provider`` (or by _api's first call, from
    ``OTEL_PYTHON_TRACER_PROVIDER``). An API without that global is asked the slow way.
    """
    api = _api()
    if api is None:
        return None
    trace, tracer, placeholder = api
    provider = getattr(trace, "_TRACER_PROVIDER", placeholder)
    if provider is placeholder:
        provider = trace.get_tracer_provider()
    if provider is None or isinstance(provider, placeholder):
        return None
    return trace, tracer


class _Outcome(Protocol):
    """What :meth:`Span.compaction` reads of a compaction's result."""

    @property
    def tokens_before(self) -> int: ...
    @property
    def tokens_after(self) -> int: ...
    @property
    def messages_before(self) -> int: ...
    @property
    def messages(self) -> Sequence[Message]: ...
    @property
    def compacted(self) -> bool: ...
    @property
    def error(self) -> BaseException | None: ...
    @property
    def cancelled(self) -> bool: ...


class _Calibration(Protocol):
    """What :meth:`Span.calibrated` reads of a calibration (see
    :mod:`neuron_context._compaction.calibration`)."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def estimated_tokens(self) -> int: ...
    @property
    def factor(self) -> float: ...


class Span:
    """One span, or nothing (without the API, or when the span records nothing)."""

    __slots__ = ("_failed", "_span", "_trace")

    def __init__(self, span: Any = None, trace: ModuleType | None = None) -> None:
        self._span = span if span is not None and span.is_recording() else None
        self._trace = trace
        self._failed = False

    def set(self, attributes: Attributes) -> None:
        """Add ``attributes``."""
        if self._span is not None:
            self._span.set_attributes(attributes)

    def fail(self, error_type: str, exception: BaseException | None = None) -> None:
        """Mark the operation as failed, with ``error.type`` (and the exception, if any)."""
        if self._span is None or self._trace is None:
            return
        self._failed = True
        self._span.set_attribute("error.type", error_type)
        description = described(exception) if exception is not None else error_type
        self._span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, description))
        if exception is not None and error_type != "cancelled":
            # The SDK reads the exception's text: one that cannot give it keeps its type
            # on the span, and the failure traced is never replaced by another.
            with contextlib.suppress(Exception):
                self._span.record_exception(exception)

    def reply(self, response: CompletionResponse) -> None:
        """Record a model's reply: finish reason as the provider sent it, the model and
        id it reported, and usage."""
        if self._span is None:
            return
        reason = response.finish_reason or str(response.stop_reason.value)
        attributes: dict[str, Any] = {"gen_ai.response.finish_reasons": [reason]}
        if response.model is not None:
            attributes["gen_ai.response.model"] = response.model
        if response.response_id is not None:
            attributes["gen_ai.response.id"] = response.response_id
        self.usage(response.usage, attributes)

    def usage(self, usage: TokenUsage | None, attributes: dict[str, Any] | None = None) -> None:
        """Record token usage (with ``attributes``, if any)."""
        attributes = {} if attributes is None else attributes
        if usage is not None:
            attributes["gen_ai.usage.input_tokens"] = usage.input_tokens
            attributes["gen_ai.usage.output_tokens"] = usage.output_tokens
        if attributes:
            self.set(attributes)

    def calibrated(self, calibration: _Calibration) -> None:
        """Record what the provider's reported input tokens taught the counter: the
        report (``neuron_context.calibration.input_tokens``: not the conventions'
        ``gen_ai.usage.input_tokens``, which the chat span of the inference carries, so a
        backend summing usage over spans counts it once), the counter's estimate of the
        same request before it learned, and the factor after."""
        self.set(
            {
                "neuron_context.calibration.input_tokens": calibration.input_tokens,
                "neuron_context.calibration.estimated_tokens": calibration.estimated_tokens,
                "neuron_context.calibration.factor": calibration.factor,
            }
        )

    def tool_result(self, result: ToolResult) -> None:
        """Record a tool's result: an error result fails the span."""
        if result.is_error:
            self.fail("tool_error")

    def compaction(self, outcome: _Outcome) -> None:
        """Record how a compaction ended."""
        if outcome.error is not None:
            kind = "cancelled" if outcome.cancelled else type(outcome.error).__name__
            self.fail(kind, outcome.error)
        if self._span is None:
            return
        self.compacted(
            outcome.tokens_before,
            outcome.tokens_after,
            outcome.messages_before,
            len(outcome.messages),
            compacted=outcome.compacted,
        )

    def compacted(
        self, tokens_before: int, tokens_after: int, before: int, after: int, *, compacted: bool
    ) -> None:
        """Record a compaction's figures after it: tokens and messages."""
        self.set(
            {
                "neuron_context.compaction.tokens_after": tokens_after,
                "neuron_context.compaction.tokens_removed": tokens_before - tokens_after,
                "neuron_context.compaction.messages_after": after,
                "neuron_context.compaction.messages_removed": before - after,
                "neuron_context.compaction.compacted": compacted,
            }
        )


_NO_SPAN = Span()
_NOTHING = contextlib.nullcontext(_NO_SPAN)


@contextlib.contextmanager
def _span(
    api: tuple[ModuleType, Any],
    name: str,
    kind: str,
    attributes: Attributes,
    *,
    compacting: bool = False,
    current: bool = True,
) -> Iterator[Span]:
    """A span named ``name``, the current span unless not ``current`` (with
    ``compacting``, a compaction's: the ``compact`` calls inside it open no span of
    their own).

    An exception leaving the block fails the span, unless the caller has already said
    how it failed.
    """
    trace, tracer = api
    start = tracer.start_as_current_span if current else tracer.start_span
    with start(
        name,
        kind=getattr(trace.SpanKind, kind),
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as otel_span:
        span = Span(otel_span, trace)
        token = COMPACTING.set(True) if compacting else None
        try:
            yield span
        except GeneratorExit:  # a stream's reader stopped early: not a failure
            raise
        except BaseException as exc:
            if not span._failed:
                span.fail("cancelled" if _is_cancellation(exc) else type(exc).__name__, exc)
            raise
        finally:
            if token is not None:
                COMPACTING.reset(token)


def _is_cancellation(exc: BaseException) -> bool:
    try:
        return isinstance(exc, anyio.get_cancelled_exc_class())
    except Exception:  # no async library is running: not a cancellation of one
        return False


def _provider_attributes(operation: str, provider: Provider) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": operation,
        "gen_ai.provider.name": provider.provider_name or type(provider).__name__,
    }


def agent_run(provider: Provider, model: str | None) -> AbstractContextManager[Span]:
    """The span of one agent run (a context manager yielding a :class:`Span`)."""
    api = active()
    if api is None:
        return _NOTHING
    attributes = _provider_attributes("invoke_agent", provider)
    model = model or getattr(provider, "model", None)
    if isinstance(model, str):
        attributes["gen_ai.request.model"] = model
    return _span(api, "invoke_agent", "INTERNAL", attributes)


def model_call(
    provider: Provider, request: CompletionRequest, tokens: int
) -> AbstractContextManager[Span]:
    """The span of one model call (a context manager yielding a :class:`Span`)."""
    api = active()
    if api is None:
        return _NOTHING
    model = request.model or getattr(provider, "model", None)
    attributes = _provider_attributes("chat", provider)
    attributes["neuron_context.request.tokens"] = tokens
    attributes["neuron_context.request.messages"] = len(request.messages)
    if isinstance(model, str):
        attributes["gen_ai.request.model"] = model
    if request.max_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = request.max_tokens
    if request.temperature is not None:
        attributes["gen_ai.request.temperature"] = request.temperature
    name = f"chat {model}" if isinstance(model, str) else "chat"
    return _span(api, name, "CLIENT", attributes)


def model_request(caller: str) -> AbstractContextManager[Span]:
    """The span of one model request an adapter sends through the recovery step
    (a context manager yielding a :class:`Span`; not made the current span, so it may
    stay open across a stream's events)."""
    api = active()
    if api is None:
        return _NOTHING
    attributes = {"neuron_context.caller": caller}
    return _span(api, f"model_request {caller}", "INTERNAL", attributes, current=False)


def tool_call(use: ToolUse, tool: Tool | None) -> AbstractContextManager[Span]:
    """The span of one tool call (a context manager yielding a :class:`Span`)."""
    api = active()
    if api is None:
        return _NOTHING
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": use.name,
        "gen_ai.tool.call.id": use.id,
        "gen_ai.tool.type": "function",
    }
    if tool is not None and tool.description:
        attributes["gen_ai.tool.description"] = tool.description
    return _span(api, f"execute_tool {use.name}", "INTERNAL", attributes)


def compaction(
    strategy: str,
    caller: str,
    tokens: int,
    messages: int,
    extra: Callable[[], Attributes] | None = None,
) -> AbstractContextManager[Span]:
    """The span of one compaction (a context manager yielding a :class:`Span`);
    ``extra`` gives further attributes (called only when a span is recorded)."""
    api = active()
    if api is None:
        return _NOTHING
    attributes: Attributes = {
        "gen_ai.operation.name": "compact_context",
        "neuron_context.compaction.strategy": strategy,
        "neuron_context.compaction.caller": caller,
        "neuron_context.compaction.tokens_before": tokens,
        "neuron_context.compaction.messages_before": messages,
        **(extra() if extra is not None else {}),
    }
    return _span(api, f"compact_context {strategy}", "INTERNAL", attributes, compacting=True)
