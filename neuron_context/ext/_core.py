"""What every adapter shares: the lazy import of a framework, one compaction, and sync calls.

An adapter is a translation, so the part that decides anything lives here, once:
:func:`compact_conversation` asks the strategy whether to compact (with the same token
estimate the agent loop uses), runs it, and checks the result before any framework sees
it. A strategy given a malformed history may return a malformed one (strategies do not
validate their input, see CONTRACT.md §1); the adapter then sends ``repair(result)`` and
logs a warning rather than letting the provider reject the request.

Frameworks hand the same message objects back turn after turn (LangGraph's state,
pydantic-ai's history), so an adapter keeps a :class:`Memo` of what it converted: a warm
turn converts only the new messages, and since their converted messages are the same
objects as last turn, the counter's per-message cost cache hits too.

Frameworks call sync and async hooks; strategies are async. :func:`run_sync` runs one
coroutine to completion from sync code (see :mod:`neuron_context._blocking`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

from .._blocking import run_blocking
from .._errors import ConfigurationError, InvalidConversationError
from .._log import logger
from .._messages.message import Message
from .._messages.wellformed import repair, start_on_user, validate
from .._strategies.base import ContextStrategy

__all__ = ["Memo", "compact_conversation", "missing_extra", "run_sync"]

T = TypeVar("T")
K = TypeVar("K")


_EXTRAS = {
    "neuron_context.ext.langchain": "langchain",
    "neuron_context.ext.pydantic_ai": "pydantic-ai",
    "neuron_context.ext.openai_agents": "openai-agents",
}


def missing_extra(adapter: str) -> ConfigurationError:
    """The error the ``adapter`` module raises (``from`` the ``ImportError``) when its
    framework is not installed: it names the extra to install."""
    msg = (
        f"{adapter} needs its framework, which is not installed: "
        f'pip install "neuron-context[{_EXTRAS[adapter]}]"'
    )
    return ConfigurationError(msg)


async def compact_conversation(
    strategy: ContextStrategy, messages: Sequence[Message]
) -> list[Message] | None:
    """The compacted, well-formed conversation starting on a user message when
    ``messages`` did, or ``None`` when the strategy leaves it as is.

    ``None`` means "send what you have": the trigger did not fire, or the strategy
    returned the very messages it was given.
    """
    tokens = strategy.token_estimate(messages)
    if not strategy.should_compact(messages, tokens):
        return None
    # Whatever the strategy, what goes back starts on a user message when the input did
    # (Anthropic rejects anything else), as the agent loop guarantees.
    result = start_on_user(await strategy.compact(messages), messages)
    if len(result) == len(messages) and all(a is b for a, b in zip(result, messages, strict=True)):
        return None
    try:
        validate(result)
    except InvalidConversationError as exc:
        name = type(strategy).__name__
        logger.warning("%s returned a malformed conversation (%s); repaired", name, exc)
        result = repair(result)
    return result


def run_sync(function: Callable[[], Awaitable[T]]) -> T:
    """Run the async ``function`` to completion from sync code (a framework's sync hook)."""
    return run_blocking(function)


class Memo(Generic[K, T]):
    """What each framework message of the latest call converted to, by identity.

    It holds the messages of the latest call only (so it never grows past one history)
    and keeps a strong reference to each, so an id is never reused while remembered.
    Framework messages are mutable: a remembered conversion is used only while the
    message's ``stamp`` (the objects it holds: its content, its parts) are the very
    objects converted; anything else is converted again. A change below the stamp (a
    field of a pydantic-ai part assigned in place) is not noticed: replace a part rather
    than mutate it, as pydantic-ai itself asks. Concurrent calls may replace each other's
    entries, which costs conversions, never correctness.
    """

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[int, tuple[K, tuple[object, ...], T]] = {}

    def convert(
        self,
        objects: Sequence[K],
        stamp: Callable[[K], tuple[object, ...]],
        convert: Callable[[K, int], T],
    ) -> list[T]:
        """``convert(obj, index)`` for each of ``objects``, reusing the latest call's results."""
        previous = self._entries
        entries: dict[int, tuple[K, tuple[object, ...], T]] = {}
        out: list[T] = []
        for index, obj in enumerate(objects):
            marks = stamp(obj)
            entry = previous.get(id(obj))
            if entry is not None and entry[0] is obj and _same(entry[1], marks):
                value = entry[2]
            else:
                value = convert(obj, index)
            entries[id(obj)] = (obj, marks, value)
            out.append(value)
        self._entries = entries
        return out


def _same(before: tuple[object, ...], now: tuple[object, ...]) -> bool:
    return len(before) == len(now) and all(a is b for a, b in zip(before, now, strict=True))
