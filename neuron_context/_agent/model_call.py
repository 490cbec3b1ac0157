"""One model call of the agent loop: the innermost handler of ``wrap_model_call``.

The loop (:mod:`~neuron_context._agent.loop`) sends each turn's request through the
middleware chain and the recovery step; at the bottom of the chain, :func:`call_model`
sends it to the provider. The request starts on a user message; a request a middleware
changed is checked (and repaired where it is not well formed, with a warning), since the
history itself is well formed by construction; a provider that raises something of its
own fails as a :class:`~neuron_context.ProviderError`; the reply is recorded as a
:class:`~neuron_context.events.ModelCalled` event, and the input tokens it reports
calibrate a :class:`~neuron_context.CalibratedCounter` through the recovery step's
calibration, as every adapter's do.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import anyio

from .. import _tracing as tracing
from .._compaction.calibration import Calibration
from .._compaction.recovery import Attempt, observe
from .._counting.calibrated import CalibratedCounter
from .._errors import (
    ConfigurationError,
    InvalidConversationError,
    MiddlewareError,
    NeuronContextError,
    ProviderError,
    described,
)
from .._log import logger
from .._messages.checks import check_messages
from .._messages.conversation import first_is_user
from .._messages.message import Message
from .._messages.wellformed import repair, start_on_user, validate
from .._middleware.chain import MiddlewareChain
from .._middleware.types import ModelRequest, ModelResponse
from .._run.events import ModelCalled
from .._run.run import RunContext
from ..providers._base import CompletionRequest, CompletionResponse, Provider, StopReason
from .boundary import same
from .options import AgentOptions

__all__ = ["call_model"]


async def call_model(
    request: ModelRequest, *, provider: Provider, options: AgentOptions, chain: MiddlewareChain
) -> ModelResponse:
    """The innermost handler of ``wrap_model_call``: send ``request`` to its provider
    (``provider`` unless a middleware picked another), starting on a user message, its
    messages checked where a middleware changed them (and repaired where they are not
    well formed), and its reply recorded as a :class:`ModelCalled` event; the reported
    input tokens calibrate the run's counter (``options``: the agent's output limit and
    temperature; ``chain``: the middlewares a request that is not messages is blamed on)."""
    context = request.context
    provider = request.provider if request.provider is not None else provider
    history = context.state.messages
    messages = request.messages  # the request's own list
    if not first_is_user(messages):
        messages = start_on_user(messages, history)
    # The history is well formed by construction (checked when a run starts and after
    # every compaction); only a request a middleware changed needs the O(n) check.
    unchanged = same(messages, history)
    if not unchanged:
        _check_request(messages, chain)
        try:
            validate(messages)
        except InvalidConversationError as exc:
            logger.warning("a middleware broke the request; sending it repaired: %s", exc)
            messages = repair(messages)
    tools = request.tools
    completion = CompletionRequest._of_messages(
        messages,
        system=request.system_prompt,
        tools=tools,
        model=request.model,
        max_tokens=options.max_output_tokens,
        temperature=options.temperature,
    )
    estimated = context.count_request(messages, request.system_prompt, tools)
    started = time.perf_counter()
    calibration: Calibration | None = None
    try:
        with tracing.model_call(provider, completion, estimated) as span:
            completed = await provider.complete(completion)
            if isinstance(completed, CompletionResponse):  # else refused just below
                span.reply(completed)
                calibration = _calibrate(context, request, messages, completed, span)
    except (NeuronContextError, anyio.get_cancelled_exc_class()):
        raise
    except Exception as exc:
        # A provider of the user's (or a FunctionProvider) raised something of its own:
        # callers and middlewares see one kind of failure, the cause chained.
        msg = f"{type(provider).__name__}.complete failed: {described(exc)}"
        raise ProviderError(msg) from exc
    duration = time.perf_counter() - started
    # The provider's reply crosses in here: a CompletionResponse or a ProviderError
    # naming the provider; its calls get distinct ids (ModelResponse checks it).
    response = ModelResponse.of(completed, provider)
    usage = response.usage
    context.emit(
        ModelCalled(
            context.turn,
            type(provider).__name__,
            request.model,
            estimated,
            usage.input_tokens if usage is not None else None,
            usage.output_tokens if usage is not None else None,
            StopReason(response.stop_reason).value,
            len(response.tool_uses),
            duration,
            calibration.factor if calibration is not None else None,
        )
    )
    return response


def _check_request(messages: list[Message], chain: MiddlewareChain) -> None:
    """The request's messages as the wrappers left them (the ``before_model`` hooks'
    are checked by the chain): messages, or a :class:`MiddlewareError`."""
    try:
        check_messages(messages, "ModelRequest.messages")
    except ConfigurationError as exc:
        names = ", ".join(m.name for m in chain.middlewares) or "a middleware"
        msg = f"{exc} (left by {names})"
        raise MiddlewareError(msg, middleware=names, hook="wrap_model_call") from None


def _calibrate(
    context: RunContext,
    request: ModelRequest,
    messages: Sequence[Message],
    completed: CompletionResponse,
    span: tracing.Span,
) -> Calibration | None:
    """The reply's reported input tokens fed to the run's counter through the recovery
    step's calibration, as every adapter's are, and recorded on the model call's span."""
    if completed.usage is None or not isinstance(context.counter, CalibratedCounter):
        return None
    sent = Attempt(
        request, read=lambda: messages, system_prompt=request.system_prompt, tools=request.tools
    )
    return observe(context.counter, sent, completed.usage.input_tokens, label="Agent", span=span)
