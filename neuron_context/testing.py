"""Test doubles: a provider backed by a plain function, and a strategy that records calls.

Examples:
    >>> import anyio
    >>> from neuron_context import CompletionRequest, Message
    >>> provider = FunctionProvider(lambda request: "a summary")
    >>> response = anyio.run(provider.complete, CompletionRequest([Message.user("hi")]))
    >>> response.text, len(provider.requests)
    ('a summary', 1)
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeAlias

import anyio.to_thread
import attrs

from ._counting.counter import BaseCounter
from ._errors import ConfigurationError, show
from ._exports import publish as _publish
from ._messages.message import Message, history_repr
from ._strategies.strategy import ContextStrategy, counter_of, to_counter
from .providers._base import CompletionRequest, CompletionResponse, Provider, StopReason

__all__ = ["CompactCall", "FunctionProvider", "RecordingStrategy", "Reply"]

Reply: TypeAlias = "CompletionResponse | Message | str"
"""What a :class:`FunctionProvider` function returns (or its awaitable resolves to)."""


class FunctionProvider(Provider):
    """A :class:`~neuron_context.Provider` that answers with a plain function.

    ``fn`` is called with each :class:`~neuron_context.CompletionRequest`; it may be a
    sync or an async function (an awaitable result is awaited) and returns a
    :class:`~neuron_context.CompletionResponse`, an assistant
    :class:`~neuron_context.Message` or a ``str`` (an assistant text reply). A message or a
    ``str`` gets the stop reason a model would give it: ``"tool_use"`` when the message
    calls tools, else ``"end_turn"``. Exceptions it raises propagate as they
    are, so tests can inject failures. Every request is recorded in :attr:`requests`
    before ``fn`` runs.

    A sync function runs in a worker thread (``anyio.to_thread.run_sync``), so one that
    blocks (``time.sleep``, a blocking HTTP call) does not block the event loop: the
    caller's ``anyio.fail_after`` or a strategy's ``timeout=`` still fires, and the
    thread, left to finish on its own, has its late result thrown away.

    Examples:
        >>> async def echo(request):
        ...     return request.messages[-1].text
        >>> provider = FunctionProvider(echo)

        A model that calls a tool, then answers:

        >>> from neuron_context import ToolUse
        >>> def model(request):
        ...     if len(request.messages) == 1:
        ...         call = ToolUse(id="c1", name="get_time", input={})
        ...         return Message.assistant(tool_uses=[call])
        ...     return "It is noon."
        >>> import anyio
        >>> request = CompletionRequest([Message.user("What time is it?")])
        >>> reply = anyio.run(FunctionProvider(model).complete, request)
        >>> reply.stop_reason.value
        'tool_use'
    """

    __slots__ = ("fn", "requests")

    def __init__(self, fn: Callable[[CompletionRequest], Reply | Awaitable[Reply]]) -> None:
        if not callable(fn):
            msg = f"FunctionProvider.fn must be callable, got {show(fn)}"
            raise ConfigurationError(msg)
        self.fn = fn
        self.requests: list[CompletionRequest] = []
        """Every request received, oldest first."""

    def __repr__(self) -> str:
        return f"FunctionProvider({self.fn!r})"

    async def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Record ``request``, call the function and wrap a ``str`` reply."""
        self.requests.append(request)
        result: object
        if _is_async(self.fn):
            result = self.fn(request)
        else:
            call = functools.partial(self.fn, request)
            result = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, CompletionResponse):
            return result
        if isinstance(result, str):
            result = Message.assistant(result)
        if isinstance(result, Message):
            stop = StopReason.TOOL_USE if result.tool_uses else StopReason.END_TURN
            return CompletionResponse(result, stop_reason=stop)
        msg = (
            "FunctionProvider.fn must return a CompletionResponse, a Message or a str, "
            f"got {type(result).__name__}"
        )
        raise ConfigurationError(msg)


def _is_async(fn: object) -> bool:
    """Whether calling ``fn`` returns a coroutine without running its body."""
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - an object with an async __call__
    return inspect.iscoroutinefunction(call)


def _result_repr(result: list[Message] | None) -> str:
    return "None" if result is None else history_repr(result)


@attrs.frozen
class CompactCall:
    """One call of :meth:`RecordingStrategy.compact`."""

    messages: list[Message] = attrs.field(repr=history_repr)
    """A copy of the list it was given."""
    result: list[Message] | None = attrs.field(default=None, repr=_result_repr)
    """What it returned; ``None`` when it raised."""
    error: Exception | None = None
    """What it raised, if anything."""


class RecordingStrategy(ContextStrategy):
    """A :class:`~neuron_context.ContextStrategy` that records every ``compact`` call.

    With an ``inner`` strategy it delegates everything to it; without one, ``compact``
    returns its input unchanged (as a new list), ``should_compact`` is always true and
    ``token_estimate`` uses the default :class:`~neuron_context.TokenCounter`.
    Wrapping a composite also hides it from the flattening of an enclosing composite.

    Examples:
        >>> import anyio
        >>> from neuron_context import Message
        >>> recorder = RecordingStrategy()
        >>> _ = anyio.run(recorder.compact, [Message.user("hi")])
        >>> len(recorder.calls)
        1
    """

    __slots__ = ("_counter", "calls", "inner")

    def __init__(self, inner: ContextStrategy | None = None) -> None:
        if inner is not None and not isinstance(inner, ContextStrategy):
            msg = f"RecordingStrategy.inner must be a ContextStrategy or None, got {show(inner)}"
            raise ConfigurationError(msg)
        self.inner = inner
        self.calls: list[CompactCall] = []
        """Every ``compact`` call, oldest first."""
        self._counter = to_counter(None)

    def __repr__(self) -> str:
        return f"RecordingStrategy({self.inner!r})"

    @property
    def counter(self) -> BaseCounter:
        """The inner strategy's counter (what callers count with), or the default one."""
        return self._counter if self.inner is None else counter_of(self.inner)

    def should_compact(self, messages: Sequence[Message], token_count: int) -> bool:
        """The inner strategy's trigger; always true without one."""
        if self.inner is None:
            return True
        return self.inner.should_compact(messages, token_count)

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Run the inner strategy (or return a copy of ``messages``) and record the call."""
        given = list(messages)
        if self.inner is None:
            self.calls.append(CompactCall(given, list(messages)))
            return list(messages)
        try:
            result = await self.inner.compact(messages)
        except Exception as exc:
            self.calls.append(CompactCall(given, None, exc))
            raise
        self.calls.append(CompactCall(given, list(result)))
        return result

    def token_estimate(self, messages: Sequence[Message]) -> int:
        """The inner strategy's estimate; the default counter's without one."""
        if self.inner is None:
            return self._counter.estimate_messages(messages)
        return self.inner.token_estimate(messages)


_publish(__name__, globals(), __all__)
