"""What every adapter shares: the lazy import of a framework, incremental reading, one
compaction per conversation, and sync calls.

An adapter is a translation; the part that decides anything lives in
:mod:`neuron_context._compaction` (the one compaction step every caller uses), and the
part that keeps a call cheap lives here, once:

- :class:`Reader` converts a framework's messages to ours and remembers them: a call
  whose messages start with the last call's (the same objects, or equal ones: a history
  read back from a checkpointer) converts only the new ones, and the messages it
  converted before are the same objects as last call, so every cache keyed by them
  (costs, the compacted view) hits too. A message changed in place (the same object,
  edited) is not seen: replace it, as LangGraph's reducers and pydantic-ai do. It checks
  that the conversation is well formed the same way, from where the last check stopped
  (the new messages), and :meth:`Converted.sendable` repairs one that is not, so an
  adapter never sends a malformed conversation, compacted or not.
- :func:`read_at` is the readers' boundary: whatever reading a framework message raises
  becomes a ``ConfigurationError`` naming its path.
- :func:`neuron_context.ext._recovery.recover` is what every adapter does when the
  provider refuses a request as too long: :meth:`Sessions.learn` keeps the smaller
  strategy for every conversation after.
- :class:`Session` is one conversation: its reader and its
  :class:`~neuron_context._compaction.view.ContextView` (the compacted view, extended
  with the new messages and compacted again only when it crosses the trigger).
  :class:`Sessions` keeps the last few conversations an adapter served (one middleware
  serves every thread of a LangGraph deployment), each taken out while in use.

Frameworks call sync and async hooks; strategies are async. :func:`run_sync` runs one
coroutine to completion from sync code (see :mod:`neuron_context._blocking`).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

from .._blocking import run_blocking
from .._compaction.request import RequestCounter
from .._compaction.view import ContextView
from .._errors import ConfigurationError, InvalidConversationError, show
from .._extras import install_hint
from .._log import logger
from .._messages.message import Message, ToolDefinition, history_repr
from .._messages.wellformed import repair, valid_from, validate
from .._prefix import starts_with
from .._strategies.strategy import ContextStrategy, counter_of

__all__ = [
    "Converted",
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
K = TypeVar("K")
S = TypeVar("S")

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


def read_at(path: str, read: Callable[[], T]) -> T:
    """``read()``, the conversion of the framework message at ``path``; an error it raises
    names ``path`` (a :class:`ConfigurationError` of our values, ``ToolUse.id must not be
    empty``, gets it in front; one that names it already is raised as it is), and so does
    any other exception the framework's own code raises while we read its message (a
    serializer that cannot serialize, a translator that fails): the reader's one boundary.
    """
    try:
        return read()
    except ConfigurationError as exc:
        if str(exc).startswith(path):
            raise
        msg = f"{path}: {exc}"
        raise ConfigurationError(msg) from exc
    except (RecursionError, MemoryError):
        msg = f"{path} is nested too deeply to read"
        raise ConfigurationError(msg) from None
    except Exception as exc:
        msg = f"{path} cannot be read: {type(exc).__name__}: {show(str(exc), 200)}"
        raise ConfigurationError(msg) from exc


def run_sync(function: Callable[[], Awaitable[T]]) -> T:
    """Run the async ``function`` to completion from sync code (a framework's sync hook)."""
    return run_blocking(function)


Read = Callable[[Sequence[K], int], tuple[list[Message], list[S]]]
"""An adapter's conversion: ``read(items, offset)`` gives our messages for ``items`` and,
for each, where it came from (``S``, the adapter's own: an index, a part, a list of
indices); ``offset`` is the index of ``items[0]`` in the whole list (for error paths and
sources)."""


class Converted(Generic[K, S]):
    """One call's framework messages and what they read as, with the lookups a rebuild
    needs in O(1): where one of our messages stands, which messages answer a tool call."""

    __slots__ = ("_index", "_results", "items", "messages", "sources", "well_formed")

    def __init__(
        self,
        items: Sequence[K],
        messages: list[Message],
        sources: list[S],
        index: dict[int, int],
        results: dict[str, list[int]],
        *,
        well_formed: bool = True,
    ) -> None:
        self.items = items
        """The framework's messages of this call (the very objects it gave)."""
        self.messages = messages
        """Ours, read from them (the reader's own list: do not change it)."""
        self.sources = sources
        """Where each of ours came from."""
        self.well_formed = well_formed
        """Whether :attr:`messages` is a well-formed conversation."""
        self._index = index
        self._results = results

    def sendable(self, label: str) -> list[Message]:
        """What may be sent: :attr:`messages`, or their :func:`~neuron_context.repair`
        when they are not well formed (an orphan result, a call the conversation moved
        on from, a second answer), logged naming ``label``. A framework's history can
        be malformed (a bad trim, a crashed tool node); a provider rejects it, so an
        adapter never passes it on as it is, whether or not its strategy fires."""
        if self.well_formed:
            return self.messages
        try:
            validate(self.messages)
        except InvalidConversationError as exc:
            logger.warning(
                "%s: the conversation is not well formed (%s); sending it repaired", label, exc
            )
        return repair(self.messages)

    def __repr__(self) -> str:
        return f"Converted({history_repr(self.messages)})"

    def index(self, message: Message) -> int:
        """The position of ``message`` (one of ours, by identity) in :attr:`messages`, or -1."""
        return self._index.get(id(message), -1)

    def results(self, tool_use_id: str) -> list[int]:
        """The positions of our tool messages answering ``tool_use_id``, in order."""
        return self._results.get(tool_use_id, [])


class Reader(Generic[K, S]):
    """A framework's messages read as ours, converting only what is new (see the module).

    Args:
        read: the adapter's conversion.
        span: the first and last item a source covers (several items may make one of
            our messages, and one item several of ours).
        stamp: what the conversion of an item depends on (the objects it holds); the
            last :data:`TAIL` items are stamped and read again when their stamp changed
            (frameworks edit the newest messages in place: pydantic-ai adds parts to
            the request it is preparing).
        regroup: several items make one message and new items may continue the last
            one (Responses items): on growth, the last message is read again.
    """

    TAIL = 4
    """How many of the newest items are checked for edits made in place."""

    __slots__ = (
        "_index",
        "_items",
        "_messages",
        "_read",
        "_regroup",
        "_results",
        "_sources",
        "_span",
        "_stamp",
        "_stamps",
        "_valid",
    )

    def __init__(
        self,
        read: Read[K, S],
        *,
        span: Callable[[S], tuple[int, int]],
        stamp: Callable[[K], tuple[object, ...]] | None = None,
        regroup: bool = False,
    ) -> None:
        self._read = read
        self._span = span
        self._stamp = stamp
        self._regroup = regroup
        self._items: list[K] = []
        self._stamps: list[tuple[object, ...]] = []  # of the last TAIL items
        self._messages: list[Message] = []
        self._sources: list[S] = []
        self._index: dict[int, int] = {}
        self._results: dict[str, list[int]] = {}
        self._valid = 0  # our first _valid messages form a well-formed conversation

    def follows(self, items: Sequence[K]) -> bool:
        """Whether ``items`` starts with the messages read last time."""
        return starts_with(items, self._items)

    def __call__(self, items: Sequence[K]) -> Converted[K, S]:
        """``items`` read as ours (only what is new or edited converted again when they
        extend the last call's)."""
        size = len(self._items)
        start = self._first_changed(items) if self.follows(items) else 0
        if self._regroup and size < len(items) and self._sources:
            start = min(start, self._span(self._sources[-1])[0])
        if start < size or size < len(items) or not size:
            keep = self._keep(start)
            if keep < len(self._sources):
                start = min(start, self._span(self._sources[keep])[0])
            messages, sources = self._read(items[start:], start)
            # A message read again and unchanged stays the same object (so the caches
            # keyed by our messages, and the view's prefix, still match).
            before = self._messages
            for offset, message in enumerate(messages[: len(before) - keep]):
                if message == before[keep + offset]:
                    messages[offset] = before[keep + offset]
            self._extend(keep, messages, sources)
            del self._items[start:]
            self._items.extend(items[start:])
            stamp = self._stamp
            if stamp is not None:
                self._stamps = [stamp(item) for item in self._items[-self.TAIL :]]
        messages = self._messages
        if self._valid < len(messages) and valid_from(messages, self._valid):
            self._valid = len(messages)  # checked from where the last check stopped
        well_formed = self._valid == len(messages)
        return Converted(
            items, messages, self._sources, self._index, self._results, well_formed=well_formed
        )

    def _first_changed(self, items: Sequence[K]) -> int:
        """The first of the last :data:`TAIL` items read before whose stamp changed (the
        number of items read before when none did)."""
        size = len(self._items)
        stamp = self._stamp
        if stamp is None:
            return size
        first = size - len(self._stamps)
        for offset, before in enumerate(self._stamps):
            now = stamp(items[first + offset])
            if len(now) != len(before) or any(a is not b for a, b in zip(now, before, strict=True)):
                return first + offset
        return size

    def _keep(self, start: int) -> int:
        """How many messages came wholly from items before ``start`` (they are kept)."""
        keep = len(self._sources)
        while keep and self._span(self._sources[keep - 1])[1] >= start:
            keep -= 1
        return keep

    def _extend(self, keep: int, messages: list[Message], sources: list[S]) -> None:
        """Keep the first ``keep`` messages and append ``messages``."""
        own = self._messages
        self._valid = min(self._valid, keep)
        for position in range(len(own) - 1, keep - 1, -1):
            self._forget(own[position], position)
        del own[keep:]
        del self._sources[keep:]
        index, results = self._index, self._results
        for position, message in enumerate(messages, len(own)):
            index[id(message)] = position
            for result in message.tool_results:
                results.setdefault(result.tool_use_id, []).append(position)
        own.extend(messages)
        self._sources.extend(sources)

    def _forget(self, message: Message, position: int) -> None:
        if self._index.get(id(message)) == position:
            del self._index[id(message)]
        for result in message.tool_results:
            positions = self._results.get(result.tool_use_id)
            if positions and positions[-1] == position:
                positions.pop()


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


class Session(Generic[K, S]):
    """One conversation an adapter serves: its reader and its compacted view."""

    __slots__ = ("reader", "view")

    def __init__(self, reader: Reader[K, S], view: ContextView) -> None:
        self.reader = reader
        self.view = view


class Sessions(Generic[K, S]):
    """The last :data:`KEPT` conversations an adapter served, found by their messages.

    :meth:`take` gives the session whose messages the call's messages start with (taken
    out of the pool while in use, so concurrent calls never share one) or a new one;
    :meth:`put` returns it. Thread-safe.
    """

    KEPT = 8

    __slots__ = ("_learned", "_lock", "_make", "_pool")

    def __init__(self, make: Callable[[], Session[K, S]]) -> None:
        self._make = make
        self._pool: list[Session[K, S]] = []
        self._lock = threading.Lock()
        self._learned: ContextStrategy | None = None

    def take(self, items: Sequence[K]) -> Session[K, S]:
        """The session of the conversation ``items`` continues, or a new one."""
        with self._lock:
            for position in range(len(self._pool) - 1, -1, -1):
                session = self._pool[position]
                if session.reader.follows(items):
                    del self._pool[position]
                    return session
            learned = self._learned
        session = self._make()
        if learned is not None:
            session.view.strategy = learned
        return session

    def learn(self, strategy: ContextStrategy) -> None:
        """Compact every conversation with ``strategy`` from now on: the strategy sized
        to the window a provider's overflow error showed."""
        with self._lock:
            self._learned = strategy
            for session in self._pool:
                session.view.strategy = strategy

    def put(self, session: Session[K, S]) -> None:
        """Return ``session`` to the pool (the most recent; the oldest beyond KEPT goes)."""
        with self._lock:
            self._pool.append(session)
            del self._pool[: -self.KEPT]


def session_factory(
    strategy: ContextStrategy, reader: Callable[[], Reader[K, S]]
) -> Callable[[], Session[K, S]]:
    """What makes a new session of an adapter: a new ``reader()`` and a view of
    ``strategy``, all counting with the strategy's counter through one request counter."""
    requests = RequestCounter(counter_of(strategy))

    def make() -> Session[K, S]:
        return Session(reader(), ContextView(strategy, requests))

    return make
