"""Spans for a strategy's own ``compact`` / ``apply`` called directly, as in a user's loop.

:func:`trace_compactions` wraps the methods a strategy class defines; each call outside
a traced compaction is one ``compact_context`` span, caller ``"direct"``, with the
strategy's own ``token_estimate`` before and after. Without a tracer provider a wrapped
call costs one check (``benches/test_bench_tracing.py``).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Coroutine, Iterator, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .spans import COMPACTING, active, compaction

if TYPE_CHECKING:
    from .._messages.message import Message

__all__ = ["trace_compactions"]

_Compact = Callable[..., Coroutine[Any, Any, list["Message"]]]
_Apply = Callable[..., list["Message"]]


def trace_compactions(cls: type) -> None:
    """Make the ``compact`` (async) and ``apply`` (sync) that ``cls`` defines open a
    compaction span when called outside one (``ContextStrategy.__init_subclass__`` calls
    this for every strategy class, a user's too). Whatever arguments a subclass's method
    takes are passed through as they are.

    Each original stays in the class as well, under ``_untraced_compact`` /
    ``_untraced_apply``: attrs rebuilds a slotted class and rebinds the ``__class__``
    cell (a ``super()`` inside a method) of the functions it finds in the class, and the
    original must be among them.
    """
    for name, wrap in (("compact", _traced_compact), ("apply", _traced_apply)):
        method = cls.__dict__.get(name)
        if (
            not inspect.isfunction(method)
            or getattr(method, "__isabstractmethod__", False)
            or getattr(method, "_neuron_traced", False)
            or inspect.iscoroutinefunction(method) != (name == "compact")
        ):
            continue
        setattr(cls, f"_untraced_{name}", method)
        setattr(cls, name, wrap(method))


def _mark(function: Callable[..., Any]) -> None:
    function._neuron_traced = True  # type: ignore[attr-defined]


def _messages(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The messages a ``compact``/``apply`` call was given (``None`` if none)."""
    return args[0] if args else kwargs.get("messages")


def _traced_compact(compact: _Compact) -> _Compact:
    @functools.wraps(compact)
    async def traced(self: Any, *args: Any, **kwargs: Any) -> list[Message]:
        api = active()
        if api is None or COMPACTING.get():
            return await compact(self, *args, **kwargs)
        messages = _messages(args, kwargs)
        if not isinstance(messages, Sequence):
            return await compact(self, *args, **kwargs)
        with _direct(api, self, messages) as finish:
            return finish(await compact(self, *args, **kwargs))

    _mark(traced)
    return traced


def _traced_apply(apply: _Apply) -> _Apply:
    @functools.wraps(apply)
    def traced(self: Any, *args: Any, **kwargs: Any) -> list[Message]:
        api = active()
        if api is None or COMPACTING.get():
            return apply(self, *args, **kwargs)
        messages = _messages(args, kwargs)
        if not isinstance(messages, Sequence):
            return apply(self, *args, **kwargs)
        with _direct(api, self, messages) as finish:
            return finish(apply(self, *args, **kwargs))

    _mark(traced)
    return traced


@contextlib.contextmanager
def _direct(
    api: tuple[ModuleType, Any], strategy: Any, messages: Sequence[Message]
) -> Iterator[Callable[[list[Message]], list[Message]]]:
    """The span of a direct call of ``strategy``'s compaction on ``messages``: yields
    the function that records the result and returns it."""
    before = _estimate(strategy, messages)
    name = type(strategy).__name__
    with compaction(name, "direct", before, len(messages)) as span:

        def finish(result: list[Message]) -> list[Message]:
            try:
                after = _estimate(strategy, result)
                changed = len(result) != len(messages) or any(
                    new is not old and new != old for new, old in zip(result, messages, strict=True)
                )
                span.compacted(before, after, len(messages), len(result), compacted=changed)
            except Exception:  # a result that is not a list of messages: not ours to judge
                pass
            return result

        yield finish


def _estimate(strategy: Any, messages: Sequence[Message]) -> int:
    """``strategy.token_estimate(messages)``, or -1 when it fails (a span never costs
    the compaction)."""
    try:
        tokens = strategy.token_estimate(messages)
    except Exception:
        return -1
    return tokens if isinstance(tokens, int) else -1
