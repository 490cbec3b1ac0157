"""OpenTelemetry spans for compactions, model calls and tool calls, or nothing at all.

Spans go through ``opentelemetry-api`` alone (the ``otel`` extra): the application
chooses the SDK, the exporter and the backend (Logfire, Langfuse, Phoenix, an OTLP
collector). The API is imported on the first span, never by ``import neuron_context``.
Until the application sets a tracer provider (or without the API) a span here is a shared
no-op, a few hundred nanoseconds: many installs carry the API for another package, and
the agent loop opens a span per model call and per tool call.

The spans follow the OpenTelemetry GenAI semantic conventions (which are still at
"development" status):

- ``chat {model}`` (kind ``CLIENT``), one per model call of the agent loop:
  ``gen_ai.operation.name`` ``"chat"``, ``gen_ai.provider.name`` (the provider's
  :attr:`~neuron_context.Provider.provider_name`, else its class name),
  ``gen_ai.request.model``, ``gen_ai.request.max_tokens``, ``gen_ai.request.temperature``,
  ``gen_ai.usage.input_tokens``, ``gen_ai.usage.output_tokens`` and
  ``gen_ai.response.finish_reasons``; and ``neuron_context.request.tokens`` (the loop's
  count of the request) and ``neuron_context.request.messages``.
- ``execute_tool {name}`` (``INTERNAL``), one per tool call, around the whole middleware
  chain (retries included): ``gen_ai.operation.name`` ``"execute_tool"``,
  ``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.type`` ``"function"`` and
  ``gen_ai.tool.description``.
- ``compact_context {strategy}`` (``INTERNAL``), one per compaction step whose trigger
  fired, from the step every caller runs (the loop, the middlewares, the adapters, the
  command line): ``gen_ai.operation.name`` ``"compact_context"`` (the conventions have no
  operation for it and allow one of ours) and ``neuron_context.compaction.*``:
  ``strategy``, ``caller``, ``tokens_before``, ``tokens_after``, ``tokens_removed``,
  ``messages_before``, ``messages_after``, ``messages_removed`` and ``compacted`` (whether
  the history changed). The span lasts as long as the compaction; a summarizer's own
  calls, traced by its SDK's instrumentation, are its children.

A failure sets the span's status to ``ERROR`` and ``error.type``: the exception's class
name, ``"tool_error"`` for a tool's error result, ``"cancelled"`` for a cancellation.
No content is recorded (messages, prompts, tool arguments and results): the conventions
make that opt-in, and a history holds what users would not want in a trace store.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from ._version import __version__

if TYPE_CHECKING:
    from ._messages.content import ToolResult, ToolUse
    from ._messages.message import Message
    from ._run.tools import Tool
    from .providers._base import CompletionRequest, CompletionResponse, Provider

__all__ = ["Span", "compaction", "model_call", "tool_call"]

SCOPE = "neuron_context"
"""The instrumentation scope of every span."""

Attributes = Mapping[str, str | bool | int | float | Sequence[str]]


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
    return trace, trace.get_tracer(SCOPE, __version__), placeholder


def _active() -> tuple[ModuleType, Any] | None:
    """``opentelemetry.trace`` and our tracer when spans can be recorded: the API is
    installed and the application has set a tracer provider."""
    api = _api()
    if api is None:
        return None
    trace, tracer, placeholder = api
    if isinstance(trace.get_tracer_provider(), placeholder):
        return None
    return trace, tracer


class _Outcome(Protocol):
    """What :meth:`Span.compaction` reads of a compaction step's result."""

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
        description = f"{type(exception).__name__}: {exception}" if exception else error_type
        self._span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, description))
        if exception is not None and error_type != "cancelled":
            self._span.record_exception(exception)

    def reply(self, response: CompletionResponse) -> None:
        """Record a model's reply: usage and finish reason."""
        if self._span is None:
            return
        attributes: dict[str, Any] = {
            "gen_ai.response.finish_reasons": [str(response.stop_reason.value)]
        }
        if response.usage is not None:
            attributes["gen_ai.usage.input_tokens"] = response.usage.input_tokens
            attributes["gen_ai.usage.output_tokens"] = response.usage.output_tokens
        self.set(attributes)

    def tool_result(self, result: ToolResult) -> None:
        """Record a tool's result: an error result fails the span."""
        if result.is_error:
            self.fail("tool_error")

    def compaction(self, outcome: _Outcome) -> None:
        """Record how a compaction step ended."""
        if outcome.error is not None:
            kind = "cancelled" if outcome.cancelled else type(outcome.error).__name__
            self.fail(kind, outcome.error)
        if self._span is None:
            return
        after = len(outcome.messages)
        self.set(
            {
                "neuron_context.compaction.tokens_after": outcome.tokens_after,
                "neuron_context.compaction.tokens_removed": (
                    outcome.tokens_before - outcome.tokens_after
                ),
                "neuron_context.compaction.messages_after": after,
                "neuron_context.compaction.messages_removed": outcome.messages_before - after,
                "neuron_context.compaction.compacted": outcome.compacted,
            }
        )


_NO_SPAN = Span()
_NOTHING = contextlib.nullcontext(_NO_SPAN)


@contextlib.contextmanager
def _span(
    api: tuple[ModuleType, Any], name: str, kind: str, attributes: Attributes
) -> Iterator[Span]:
    """A current span named ``name``.

    An exception leaving the block fails the span, unless the caller has already said
    how it failed.
    """
    trace, tracer = api
    with tracer.start_as_current_span(
        name,
        kind=getattr(trace.SpanKind, kind),
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as otel_span:
        span = Span(otel_span, trace)
        try:
            yield span
        except BaseException as exc:
            if not span._failed:
                span.fail("cancelled" if _is_cancellation(exc) else type(exc).__name__, exc)
            raise


def _is_cancellation(exc: BaseException) -> bool:
    try:
        return isinstance(exc, anyio.get_cancelled_exc_class())
    except Exception:  # no async library is running: not a cancellation of one
        return False


def model_call(
    provider: Provider, request: CompletionRequest, tokens: int
) -> AbstractContextManager[Span]:
    """The span of one model call (a context manager yielding a :class:`Span`)."""
    api = _active()
    if api is None:
        return _NOTHING
    model = request.model or getattr(provider, "model", None)
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider.provider_name or type(provider).__name__,
        "neuron_context.request.tokens": tokens,
        "neuron_context.request.messages": len(request.messages),
    }
    if isinstance(model, str):
        attributes["gen_ai.request.model"] = model
    if request.max_tokens is not None:
        attributes["gen_ai.request.max_tokens"] = request.max_tokens
    if request.temperature is not None:
        attributes["gen_ai.request.temperature"] = request.temperature
    name = f"chat {model}" if isinstance(model, str) else "chat"
    return _span(api, name, "CLIENT", attributes)


def tool_call(use: ToolUse, tool: Tool | None) -> AbstractContextManager[Span]:
    """The span of one tool call (a context manager yielding a :class:`Span`)."""
    api = _active()
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
    strategy: str, caller: str, tokens: int, messages: int
) -> AbstractContextManager[Span]:
    """The span of one compaction (a context manager yielding a :class:`Span`)."""
    api = _active()
    if api is None:
        return _NOTHING
    attributes: Attributes = {
        "gen_ai.operation.name": "compact_context",
        "neuron_context.compaction.strategy": strategy,
        "neuron_context.compaction.caller": caller,
        "neuron_context.compaction.tokens_before": tokens,
        "neuron_context.compaction.messages_before": messages,
    }
    return _span(api, f"compact_context {strategy}", "INTERNAL", attributes)
