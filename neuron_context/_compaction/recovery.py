"""The recovery step: send; refused as too long, recompact to fit and send once more.

Every caller of a model (the agent loop, LangChain's middleware, pydantic-ai's wrapped
model, the Agents SDK's wrapped model, streamed or not) sends through :func:`resend`
(or :func:`resend_sync`), so the shape is written once:

1. send the request; a failure that :func:`~neuron_context._compaction.refusal.context_overflow`
   does not recognise propagates as it is;
2. recompact the conversation that was sent (:func:`recompact`: the caller's own
   conversation, session or view, through the one compaction step) to the budget the
   refusal implies;
3. send once more; a second refusal is a :class:`~neuron_context.errors.ContextOverflowError`.

A refusal is evidence about the window, not an order, so the recovery cannot make things
worse:

- it never compacts below what holds the system prompt, the tool definitions, the system
  messages and the newest user message (:func:`floor`): a learned budget below that is
  refused with :class:`~neuron_context.errors.ContextOverflowError` (a refusal that
  claims a 1-token window, a request whose newest message alone is over the window),
  and nothing is compacted or sent;
- it never sends a request without the newest user message: a compaction that lost it
  is refused the same way;
- the caller's history is kept as it was whenever the recovery raises (the loop replaces
  its history only when the retry is answered; the adapters never edit the framework's).

The provider's reported input tokens calibrate the counter in every caller, through
:mod:`~neuron_context._compaction.calibration` (when the counter is a
:class:`~neuron_context.CalibratedCounter`): the count a refusal states, and the usage of
the reply :func:`resend` returns when the caller says how to read it, recorded on the span
the caller passes. :func:`resend_sync` runs :func:`resend`'s own coroutine to its end (a
synchronous ``send`` and ``recover`` never suspend it): one description of the step.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import attrs

from .._counting.calibrated import CalibratedCounter
from .._counting.counter import BaseCounter
from .._counting.request import RequestCounter
from .._errors import ContextOverflowError
from .._log import logger
from .._messages.message import Message, Role, ToolDefinition
from .._stores.store import Store
from .._strategies.default import DefaultStack, default_stack
from .._strategies.strategy import ContextStrategy
from .calibration import Calibration, calibrate
from .refusal import Overflow, context_overflow
from .step import StepReport, StepResult, budget_of, compact_step

if TYPE_CHECKING:
    from .._tracing.spans import Attributes, Span

__all__ = [
    "Attempt",
    "Recompacted",
    "floor",
    "observe",
    "recompact",
    "refused",
    "resend",
    "resend_sync",
    "shrunk",
]

R = TypeVar("R")
T = TypeVar("T")

_SHOWN = 300
"""How much of a refusal's text an error quotes."""


@attrs.frozen
class Attempt(Generic[R]):
    """One request a caller sends: its own object, and what it holds as we count it
    (for calibration; ``read`` is called only when a reply's usage is observed)."""

    request: R
    """What the caller's ``send`` takes."""
    read: Callable[[], Sequence[Message]] | None = None
    """The request's conversation as ours (the system prompt apart), when asked."""
    system_prompt: str | None = None
    tools: Sequence[ToolDefinition] = ()
    budget: int | None = None
    """For a retry: the budget its conversation was recompacted to."""


@attrs.frozen
class Recompacted:
    """A refused conversation recompacted to fit (see :func:`recompact`)."""

    result: StepResult
    """The compaction step's result: :attr:`StepResult.messages` is what to send."""
    strategy: ContextStrategy
    """The smaller strategy, for the caller's later calls."""
    budget: int
    """The budget it was recompacted to."""


def refused(exc: BaseException) -> Overflow | None:
    """The overflow ``exc`` reports, unless it is already the recovery's own error."""
    if isinstance(exc, ContextOverflowError):
        return None
    return context_overflow(exc)


def shrunk(strategy: ContextStrategy | None, budget: int, counter: BaseCounter) -> ContextStrategy:
    """The strategy that compacts to ``budget``: ``strategy`` itself with that budget
    when it is a :func:`default_stack` (its summarizer, store and options kept), else a
    :func:`default_stack` counting with ``counter`` that offloads to ``strategy``'s
    store when it has one (what the recovery removes is recallable as before)."""
    if isinstance(strategy, DefaultStack):
        return attrs.evolve(strategy, max_tokens=budget)
    store = getattr(strategy, "store", None)
    return default_stack(budget, counter=counter, store=store if isinstance(store, Store) else None)


def _newest_user(messages: Sequence[Message]) -> Message | None:
    """The newest user message that is not a summary: the request the model answers."""
    for message in reversed(messages):
        if message.role is Role.USER and not message.is_compaction:
            return message
    return None


def floor(
    messages: Sequence[Message],
    counter: RequestCounter,
    system_prompt: str | None = None,
    tools: Sequence[ToolDefinition] = (),
) -> int:
    """What no recompaction of ``messages`` goes below: the system prompt, the tools,
    the system messages and the newest user message, as the request counts them."""
    kept = [m for m in messages if m.role is Role.SYSTEM]
    newest = _newest_user(messages)
    if newest is not None:
        kept.append(newest)
    return counter.count(kept, system_prompt, tools)


def _stated(overflow: Overflow, budget: int) -> Attributes:
    """What the recovery's compaction span records of the refusal: the counts it stated
    (those it stated) and the budget they gave, in the counter's tokens."""
    stated: dict[str, int] = {"neuron_context.overflow.budget": budget}
    if overflow.tokens is not None:
        stated["neuron_context.overflow.input_tokens"] = overflow.tokens
    if overflow.limit is not None:
        stated["neuron_context.overflow.limit"] = overflow.limit
    return stated


def _too_small(overflow: Overflow, budget: int, fixed: int) -> ContextOverflowError:
    msg = (
        f"the request cannot be made to fit the window the provider's refusal shows: it "
        f"leaves {budget} tokens, and the system prompt, the tool definitions and the "
        f"newest request alone take {fixed}; nothing was compacted or sent again "
        f"({overflow.message[:_SHOWN]})"
    )
    return ContextOverflowError(msg, tokens=overflow.tokens, limit=overflow.limit)


def _status(exc: BaseException | None) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) and 100 <= status <= 999 else None


async def recompact(
    overflow: Overflow,
    messages: Sequence[Message],
    *,
    strategy: ContextStrategy | None,
    counter: RequestCounter,
    system_prompt: str | None = None,
    tools: Sequence[ToolDefinition] = (),
    report: StepReport | None = None,
    label: str = "overflow",
) -> Recompacted:
    """``messages`` (the conversation the refused request sent) compacted to the budget
    ``overflow`` implies, with ``strategy`` made that small (:func:`shrunk`). A
    :class:`CalibratedCounter` learns from the count the refusal states only when that
    budget holds :func:`floor` (a refusal claiming a window nothing fits teaches nothing).

    Raises:
        ContextOverflowError: the budget is below :func:`floor`, or the compaction lost
            the newest user message (nothing is to be sent).
        NeuronContextError: the compaction failed.
    """

    def sized() -> tuple[int, int, int]:
        counted = counter.count(messages, system_prompt, tools)
        budget = overflow.budget(counted, budget_of(strategy))
        fixed = floor(messages, counter, system_prompt, tools)
        if budget < fixed:
            raise _too_small(overflow, budget, fixed)
        return counted, budget, fixed

    counted, budget, fixed = sized()
    learned = calibrate(
        counter.counter,
        messages,
        overflow.tokens,
        system_prompt=system_prompt,
        tools=tools,
        label=label,
    )
    if learned:  # counted anew: the budget in the counter's new units
        counted, budget, fixed = sized()
    logger.warning(
        "%s: the provider refused the request as too long (%s); compacting to %d tokens "
        "and retrying once",
        label,
        overflow.message[:200],
        budget,
    )
    smaller = shrunk(strategy, budget, counter.counter)
    result = await compact_step(
        smaller,
        messages,
        counter=counter,
        system_prompt=system_prompt,
        tools=tools,
        tokens=counted,
        errors="raise",
        report=report,
        label=label,
        traced=lambda: _stated(overflow, budget),
    )
    newest = _newest_user(messages)
    if newest is not None and not any(m is newest or m == newest for m in result.messages):
        raise _too_small(overflow, budget, fixed)
    return Recompacted(result, smaller, budget)


def _again(exc: BaseException, budget: int | None) -> ContextOverflowError | None:
    """The error for a retry refused as too long again; ``None`` for another failure."""
    again = context_overflow(exc)
    if again is None:
        return None
    at = f" to {budget} tokens" if budget is not None else ""
    msg = (
        f"the request is still too long for the model after compacting it{at} and "
        f"retrying: {again.message[:_SHOWN]}"
    )
    return ContextOverflowError(
        msg, tokens=again.tokens, limit=again.limit, status_code=_status(exc)
    )


def observe(
    counter: BaseCounter | None,
    attempt: Attempt[R],
    reported: object,
    *,
    label: str,
    span: Span | None = None,
) -> Calibration | None:
    """Feed ``counter`` the provider's ``reported`` input tokens for the answered
    ``attempt`` (see :mod:`~neuron_context._compaction.calibration`; the attempt is read
    as ours only when the counter calibrates): what a caller whose reply reports its
    usage later (a stream, at its end) calls itself. A failure to read the attempt is
    logged, never raised."""
    if not isinstance(counter, CalibratedCounter) or attempt.read is None:
        return None
    try:
        return calibrate(
            counter,
            attempt.read,
            reported,
            system_prompt=attempt.system_prompt,
            tools=attempt.tools,
            label=label,
            span=span,
        )
    except Exception as exc:  # calibration never costs the call it learns from
        logger.warning("%s: calibration from the reported usage failed: %r", label, exc)
        return None


def _learn(
    counter: BaseCounter | None,
    attempt: Attempt[R],
    response: T,
    usage: Callable[[T], object] | None,
    *,
    label: str,
    span: Span | None,
) -> None:
    if usage is not None and isinstance(counter, CalibratedCounter):
        observe(counter, attempt, usage(response), label=label, span=span)


async def resend(
    send: Callable[[R], Awaitable[T]],
    attempt: Attempt[R],
    recover: Callable[[Overflow, Attempt[R]], Awaitable[Attempt[R]]],
    *,
    counter: BaseCounter | None = None,
    usage: Callable[[T], object] | None = None,
    label: str = "model call",
    span: Span | None = None,
) -> T:
    """``send(attempt.request)``; refused as too long: ``recover`` makes the smaller
    attempt (:func:`recompact` underneath) and it is sent once more. With ``counter``
    and ``usage`` (what reads the provider's input tokens from a reply), the answered
    attempt calibrates the counter, recorded on ``span`` (see :func:`observe`).

    The one description of the step: :func:`resend_sync` runs it too.

    Raises:
        ContextOverflowError: the recovery could not fit the request (chained to the
            refusal), or the retry was refused as too long as well (chained to it).
    """
    try:
        response = await send(attempt.request)
    except Exception as exc:
        overflow = refused(exc)
        if overflow is None:
            raise
        try:
            retry = await recover(overflow, attempt)
        except ContextOverflowError as error:
            error.status_code = error.status_code or _status(exc)
            raise error from exc
    else:
        _learn(counter, attempt, response, usage, label=label, span=span)
        return response
    try:
        response = await send(retry.request)
    except Exception as exc:
        again = _again(exc, retry.budget)
        if again is None:
            raise
        raise again from exc
    _learn(counter, retry, response, usage, label=label, span=span)
    return response


def resend_sync(
    send: Callable[[R], T],
    attempt: Attempt[R],
    recover: Callable[[Overflow, Attempt[R]], Attempt[R]],
    *,
    counter: BaseCounter | None = None,
    usage: Callable[[T], object] | None = None,
    label: str = "model call",
    span: Span | None = None,
) -> T:
    """:func:`resend` for a synchronous ``send`` and ``recover``: the same step, run to
    its end at once (its awaits are of ``send`` and ``recover``, which never suspend)."""

    async def sending(request: R) -> T:
        return send(request)

    async def recovering(overflow: Overflow, given: Attempt[R]) -> Attempt[R]:
        return recover(overflow, given)

    step = resend(
        sending, attempt, recovering, counter=counter, usage=usage, label=label, span=span
    )
    return _run_at_once(step)


def _run_at_once(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of ``coroutine``, run in this thread without an event loop: it must
    never suspend (every await in it is of a coroutine that returns without waiting)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return cast("T", done.value)
    coroutine.close()
    msg = "the recovery step suspended while run synchronously"
    raise RuntimeError(msg)
