"""OpenTelemetry spans for runs, compactions, model calls and tool calls, or nothing at all.

Spans go through ``opentelemetry-api`` alone (the ``otel`` extra): the application
chooses the SDK, the exporter and the backend (Logfire, Langfuse, Phoenix, an OTLP
collector). The API is imported on the first span, never by ``import neuron_context``.
Until the application sets a tracer provider (or without the API) a span here is a shared
no-op, a few hundred nanoseconds at most (``benches/test_bench_tracing.py``): many
installs carry the API for another package, and every compaction, model call and tool
call asks.

The spans follow the OpenTelemetry GenAI semantic conventions (which are still at
"development" status):

- ``invoke_agent`` (kind ``INTERNAL``, the conventions' in-process agent span), one per
  :meth:`Agent.run <neuron_context.Agent.run>`, the parent of the run's other spans:
  ``gen_ai.operation.name`` ``"invoke_agent"``, ``gen_ai.provider.name``,
  ``gen_ai.request.model`` (when the options or the provider name one) and the run's
  ``gen_ai.usage.input_tokens`` / ``gen_ai.usage.output_tokens`` (the sums of what the
  provider reported, when it did).
- ``chat {model}`` (kind ``CLIENT``), one per model call of the agent loop:
  ``gen_ai.operation.name`` ``"chat"``, ``gen_ai.provider.name`` (the provider's
  :attr:`~neuron_context.Provider.provider_name`, else its class name),
  ``gen_ai.request.model``, ``gen_ai.request.max_tokens``, ``gen_ai.request.temperature``;
  from the reply ``gen_ai.response.finish_reasons`` (as the provider sent it: OpenAI's
  ``"stop"``, Anthropic's ``"end_turn"``; the :class:`~neuron_context.StopReason` when the
  provider gave none), ``gen_ai.response.model``, ``gen_ai.response.id``,
  ``gen_ai.usage.input_tokens`` and ``gen_ai.usage.output_tokens``; and
  ``neuron_context.request.tokens`` (the loop's count of the request) and
  ``neuron_context.request.messages``; with a :class:`~neuron_context.CalibratedCounter`,
  what the reply's input tokens taught it (below).
- ``model_request {caller}`` (``INTERNAL``), one per model request an adapter sends
  through the recovery step (``ContextMiddleware``, ``HistoryProcessor``,
  ``CallModelInputFilter``; the framework's own model call, and its retry after a
  refusal, inside it; a stream's until it ends): ``neuron_context.caller``; with a
  :class:`~neuron_context.CalibratedCounter`, what the reply's input tokens taught it.
  It is not the current span (a stream's events run outside it), and it carries no
  ``gen_ai.operation.name``: the framework's own instrumentation traces the inference.
- The calibration, on the ``chat`` span of the loop and the ``model_request`` span of an
  adapter (the one calibration step every caller runs):
  ``neuron_context.calibration.input_tokens`` (the provider's report; the inference's own
  chat span carries it as ``gen_ai.usage.input_tokens``),
  ``neuron_context.calibration.estimated_tokens`` (the
  counter's count of the same request before it learned) and
  ``neuron_context.calibration.factor`` (its factor after).
- ``execute_tool {name}`` (``INTERNAL``), one per tool call, around the whole middleware
  chain (retries included): ``gen_ai.operation.name`` ``"execute_tool"``,
  ``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.type`` ``"function"`` and
  ``gen_ai.tool.description``.
- ``compact_context {strategy}`` (``INTERNAL``), one per compaction: from the step every
  caller runs when its trigger fires (the loop, the middlewares, the adapters, the command
  line), and from a strategy's own ``compact`` (or ``apply``) called directly, as in a
  user's loop (:func:`trace_compactions`; a call inside a traced compaction, such as a
  composite's children, opens none). ``gen_ai.operation.name`` ``"compact_context"`` (the
  conventions have no operation for it and allow one of ours) and
  ``neuron_context.compaction.*``: ``strategy``, ``caller`` (``"direct"`` for a direct
  call), ``tokens_before``, ``tokens_after``, ``tokens_removed``, ``messages_before``,
  ``messages_after``, ``messages_removed`` and ``compacted`` (whether the history
  changed). The step counts the request (system prompt and tools too); a direct call
  counts what it is given, with the strategy's ``token_estimate``. The span lasts as long
  as the compaction; a summarizer's own calls, traced by its SDK's instrumentation, are
  its children.

A failure sets the span's status to ``ERROR`` and ``error.type``: the exception's class
name, ``"tool_error"`` for a tool's error result, ``"cancelled"`` for a cancellation.
No content is recorded (messages, prompts, tool arguments and results): the conventions
make that opt-in, and a history holds what users would not want in a trace store.
"""

from .direct import trace_compactions as trace_compactions
from .spans import Span as Span
from .spans import agent_run as agent_run
from .spans import compaction as compaction
from .spans import model_call as model_call
from .spans import model_request as model_request
from .spans import tool_call as tool_call

__all__ = [
    "Span",
    "agent_run",
    "compaction",
    "model_call",
    "model_request",
    "tool_call",
    "trace_compactions",
]
