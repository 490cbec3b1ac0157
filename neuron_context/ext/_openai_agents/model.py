"""The model ``CallModelInputFilter.wrap`` gives: an Agents SDK model that recovers a call
its provider refused as too long, streamed or not.

A ``call_model_input_filter`` runs before the model call and never sees its error, so the
recovery is a model that wraps the model and sends through the recovery step
(:mod:`neuron_context._compaction.recovery`): a call refused with an error that
:func:`~neuron_context.overflow.context_overflow` recognises is sent once more with its
input recompacted to the size the refusal shows (the filter's ``_recover``, given here as
a plain function, so this module knows nothing of the filter), and a second refusal is a
:class:`~neuron_context.errors.ContextOverflowError`; an answered call's reported input
tokens calibrate the filter's counter. A stream is recovered when the
refusal comes before any output: raised before its first event (a provider's HTTP
refusal), or as a ``response.failed`` or ``error`` event after only the response's
opening events (as the Responses API and the proxies that copy it may send it); the
opening events are held back until the stream is known not to be refused, so the
caller never sees the refused response. What fails after output reached the caller is
passed on as it is.

Its own module because it is its own concept, the SDK's ``Model`` interface: where
``get_response`` and ``stream_response`` take their instructions, input and tools, how
a stream is closed, and the hooks the base class defines (so ``__getattr__`` does not
reach them).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import attrs
from agents.models.interface import Model

from ... import _tracing as tracing
from ..._compaction.recovery import Attempt, observe, resend
from ..._compaction.refusal import Overflow, context_overflow
from ..._counting.counter import BaseCounter
from ..._messages.message import Message, ToolDefinition
from ...formats._responses_items import Item

__all__ = ["Read", "Recover", "RecoveringModel"]

Recover = Callable[
    [list[Item], str | None, Sequence[object], Overflow], Awaitable[tuple[list[Any], int]]
]
"""``recover(items, instructions, tools, overflow)``: the refused call's input items
compacted to the size ``overflow`` showed, and that budget."""
Read = Callable[
    [list[Item], Sequence[object]],
    tuple[Callable[[], Sequence[Message]], tuple[ToolDefinition, ...]],
]
"""``read(items, tools)``: what reads the items as ours (when asked), and the tools'
definitions, for calibration."""


@attrs.frozen
class _Call:
    """One call's arguments, as ``get_response`` or ``stream_response`` take them."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def items(self) -> list[Item]:
        given = self.args[_INPUT] if len(self.args) > _INPUT else self.kwargs["input"]
        return [{"role": "user", "content": given}] if isinstance(given, str) else list(given)

    def instructions(self) -> str | None:
        value = self.args[0] if self.args else self.kwargs.get("system_instructions")
        return value if isinstance(value, str) else None

    def tools(self) -> Sequence[object]:
        value = self.args[3] if len(self.args) > 3 else self.kwargs.get("tools")
        return value or ()

    def with_input(self, items: list[Any]) -> _Call:
        if len(self.args) > _INPUT:
            return _Call((*self.args[:_INPUT], items, *self.args[_INPUT + 1 :]), self.kwargs)
        return _Call(self.args, {**self.kwargs, "input": items})


_INPUT = 1
"""Where ``Model.get_response`` takes its input items (after the instructions)."""


class RecoveringModel(Model):
    """An Agents SDK model that recovers from its provider's overflow errors (see
    :meth:`~neuron_context.ext.openai_agents.CallModelInputFilter.wrap`); everything
    else is the wrapped model's.

    Args:
        model: the model to wrap.
        recover: what makes a refused call's input smaller (the filter's own).
    """

    def __init__(
        self,
        model: Model,
        recover: Recover,
        *,
        read: Read | None = None,
        counter: BaseCounter | None = None,
    ) -> None:
        self._model = model
        self._recover = recover
        self._read = read
        self._counter = counter

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped model's response; refused as too long: once more, compacted."""

        async def send(call: _Call) -> Any:
            return await self._model.get_response(*call.args, **call.kwargs)

        with tracing.model_request("CallModelInputFilter") as span:
            return await resend(
                send,
                self._attempt(_Call(args, kwargs)),
                self._smaller,
                counter=self._counter,
                usage=_input_tokens,
                label="CallModelInputFilter",
                span=span,
            )

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        """The wrapped model's stream; refused as too long before any output (an error
        raised before the first event, or a ``response.failed`` or ``error`` event that
        says so after only the response's opening events): once more, compacted. What
        fails after output reached the caller is the caller's, as it is."""

        answered: list[_Call] = []

        async def send(call: _Call) -> tuple[AsyncIterator[Any], list[Any]]:
            stream = self._model.stream_response(*call.args, **call.kwargs)
            opening, failure = await _opening(stream)
            if failure is not None and not _passed_on(failure):
                await _close(stream)
                raise failure
            answered.append(call)
            return stream, opening

        with tracing.model_request("CallModelInputFilter") as span:
            stream, opening = await resend(
                send, Attempt(_Call(args, kwargs)), self._smaller, label="CallModelInputFilter"
            )
            replay = _replayed(opening, stream)
            try:
                async for event in replay:
                    if getattr(event, "type", None) == "response.completed":  # its usage
                        reported = _input_tokens(getattr(event, "response", None))
                        attempt = self._attempt(answered[-1])
                        observe(
                            self._counter,
                            attempt,
                            reported,
                            label="CallModelInputFilter",
                            span=span,
                        )
                    yield event
            finally:
                # closed here, at once and in this task, when the caller stops early
                await replay.aclose()

    def _attempt(self, call: _Call, budget: int | None = None) -> Attempt[_Call]:
        """``call`` as the recovery step sends it (read as ours only to calibrate)."""
        if self._read is None:
            return Attempt(call, budget=budget)
        read, tools = self._read(call.items(), call.tools())
        return Attempt(
            call, read=read, system_prompt=call.instructions(), tools=tools, budget=budget
        )

    async def _smaller(self, overflow: Overflow, attempt: Attempt[_Call]) -> Attempt[_Call]:
        """The refused call with its input recompacted to the size ``overflow`` showed."""
        call = attempt.request
        smaller, budget = await self._recover(
            call.items(), call.instructions(), call.tools(), overflow
        )
        return self._attempt(call.with_input(smaller), budget)

    # The model's own hooks (the base class defines them: not reached by __getattr__).

    def get_retry_advice(self, request: Any) -> Any:
        """The wrapped model's retry advice."""
        return self._model.get_retry_advice(request)

    async def close(self) -> None:
        """Close the wrapped model."""
        await self._model.close()

    async def _cleanup_on_run_end(self, owner: object) -> None:
        await self._model._cleanup_on_run_end(owner)


def _input_tokens(response: Any) -> int | None:
    """The provider's input tokens for a ``ModelResponse`` (``None`` when not reported)."""
    tokens = getattr(getattr(response, "usage", None), "input_tokens", None)
    return tokens if isinstance(tokens, int) and tokens > 0 else None


async def _close(stream: AsyncIterator[Any]) -> None:
    """Close ``stream`` when it can be (an async generator)."""
    closing = getattr(stream, "aclose", None)
    if closing is not None:
        await closing()


_OPENING = frozenset(("response.created", "response.in_progress", "response.queued"))
"""Events that open a response before any output: held back until the stream is known
not to be a refusal."""
_REFUSALS = frozenset(("response.failed", "error"))
"""Events that end a stream as a failure (the SDK raises on them)."""


class _StreamFailedError(Exception):
    """A stream's failure event, as an error: its code and message, and the event."""

    def __init__(self, event: Any) -> None:
        error = getattr(event, "response", None)
        error = getattr(error, "error", None) or event
        code = getattr(error, "code", None) or ""
        message = getattr(error, "message", None) or ""
        super().__init__(f"{code}: {message}" if code else str(message))
        self.code = code
        self.event = event


def _passed_on(failure: BaseException) -> bool:
    """Whether ``failure`` is a failure event that is not a refusal of the size: the
    SDK gets it as it came, and raises its own error for it."""
    return isinstance(failure, _StreamFailedError) and context_overflow(failure) is None


async def _opening(stream: AsyncIterator[Any]) -> tuple[list[Any], BaseException | None]:
    """The events ``stream`` opens with before any output, and the failure that ends it
    there if one does (an error raised, or a failure event as a :class:`_StreamFailedError`,
    the last of the events); ``([], None)`` for an empty stream."""
    opening: list[Any] = []
    while True:
        try:
            event = await anext(stream)
        except StopAsyncIteration:
            return opening, None
        except Exception as exc:
            return opening, exc
        opening.append(event)
        kind = getattr(event, "type", None)
        if kind in _REFUSALS:
            return opening, _StreamFailedError(event)
        if kind not in _OPENING:
            return opening, None


async def _replayed(opening: list[Any], stream: AsyncIterator[Any]) -> AsyncGenerator[Any]:
    """The events held back, then the rest of ``stream`` (closed at the end, or when
    the caller stops early)."""
    try:
        for event in opening:
            yield event
        async for event in stream:
            yield event
    finally:
        await _close(stream)
