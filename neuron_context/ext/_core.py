"""What every adapter shares: the lazy import of a framework, the readers' boundary, sync
calls, tool definitions, and (from their own modules) incremental reading and one
compaction per conversation.

An adapter is a translation; the part that decides anything lives in
:mod:`neuron_context._compaction` (the one compaction step every caller uses), and the
part that keeps a call cheap lives in this package, once. The adapters import all of it
from here:

- :func:`missing_extra` is the error an adapter module raises when its framework is not
  installed, naming the extra; :func:`check_strategy` checks the one argument every
  adapter takes.
- :func:`read_at` is the readers' boundary: whatever reading a framework message raises
  becomes a ``ConfigurationError`` naming its path.
- :class:`~._incremental.Reader` (in :mod:`._incremental`) converts a framework's messages to ours,
  only the new ones each call, and checks well-formedness the same way;
  :meth:`~._incremental.Converted.sendable` repairs a conversation that is not well formed.
- :class:`~._sessions.Session` and :class:`~._sessions.Sessions` (in :mod:`._sessions`)
  are the conversations an adapter serves, each with its reader and its compacted view.
- When the provider refuses a request as too long, every adapter sends through the one
  recovery step (:mod:`neuron_context._compaction.recovery`) and recompacts with its
  session's view (:meth:`~neuron_context._compaction.view.ContextView.recover`);
  :meth:`~._sessions.Sessions.learn` keeps the smaller strategy for every conversation
  after.
- :class:`ToolDefinitions` converts a framework's tools once per tool object.

Frameworks call sync and async hooks; strategies are async. :func:`run_sync` runs one
coroutine to completion from sync code (see :mod:`neuron_context._blocking`);
:class:`CounterLoad` keeps the first count of an async hook off the framework's event loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import anyio.to_thread

from .._blocking import run_blocking
from .._errors import ConfigurationError, show
from .._extras import install_hint
from .._messages.message import ToolDefinition
from .._strategies.strategy import ContextStrategy, counter_of
from ..formats._common import read_at
from ._incremental import Converted, Reader
from ._sessions import Session, Sessions, session_factory

__all__ = [
    "Converted",
    "CounterLoad",
    "Reader",
    "Session",
    "Sessions",
    "ToolDefinitions",
    "check_strategy",
    "missing_extra",
    "read_at",
    "run_sync",
    "session_factory",
]

T = TypeVar("T")

_EXTRAS = {
    "neuron_context.ext.langchain": "langchain",
    "neuron_context.ext.pydantic_ai": "pydantic-ai",
    "neuron_context.ext.openai_agents": "openai-agents",
}


def missing_extra(adapter: str) -> ConfigurationError:
    """The error the ``adapter`` module raises (``from`` the ``ImportError``) when its
    framework is not installed: it names the extra to install."""
    msg = f"{adapter} needs its framework, which is not installed: {install_hint(_EXTRAS[adapter])}"
    return ConfigurationError(msg)


def check_strategy(owner: str, strategy: object) -> ContextStrategy:
    """``strategy`` if it is a :class:`ContextStrategy`, else the error naming ``owner``."""
    if not isinstance(strategy, ContextStrategy):
        msg = f"{owner}.strategy must be a ContextStrategy, got {show(strategy)}"
        raise ConfigurationError(msg)
    return strategy


def run_sync(function: Callable[[], Awaitable[T]]) -> T:
    """Run the async ``function`` to completion from sync code (a framework's sync hook)."""
    return run_blocking(function)


class ToolDefinitions:
    """The tool definitions a framework's tools are sent as, converted once per tool
    object by ``convert`` (``None``: a tool with no definition to count, such as a
    provider's hosted tool). Tools are long-lived, so a call costs a lookup per tool."""

    __slots__ = ("_convert", "_known")

    def __init__(self, convert: Callable[[object], ToolDefinition | None]) -> None:
        self._convert = convert
        self._known: dict[int, tuple[object, ToolDefinition | None]] = {}

    def of(self, tools: Sequence[object]) -> tuple[ToolDefinition, ...]:
        """The definitions of ``tools``, in order."""
        known = self._known
        out: list[ToolDefinition] = []
        for tool in tools:
            entry = known.get(id(tool))
            if entry is None or entry[0] is not tool:
                entry = known[id(tool)] = (tool, self._convert(tool))
            if entry[1] is not None:
                out.append(entry[1])
        return tuple(out)


class CounterLoad:
    """The first count of an adapter's async hook, made in a worker thread.

    ``default_stack``'s counter loads its tokenizer when it first counts (about a second
    of reading from disk); in a framework's async hook that would block its event loop
    (pydantic-ai's tests fail on it). Awaiting this before the hook's first count loads it
    in a worker thread; later calls cost a flag check. A load that fails is left to the
    count, which raises as it would have.
    """

    __slots__ = ("_counter", "_loaded")

    def __init__(self, strategy: ContextStrategy) -> None:
        self._counter = counter_of(strategy)
        self._loaded = False

    async def __call__(self) -> None:
        """Count one text in a worker thread, the first time."""
        if self._loaded:
            return
        # A load that fails is left to the count, which raises it where it is reported.
        with contextlib.suppress(Exception):
            await anyio.to_thread.run_sync(self._counter.estimate_text, "load")
        self._loaded = True
