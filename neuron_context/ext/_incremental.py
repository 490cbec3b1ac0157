"""The incremental reader every adapter converts a framework's messages with.

An adapter is called once per model request with the whole history, and the history
grows by a few messages a turn. Converting all of it every time costs O(history) per
turn; :class:`Reader` converts only what is new and keeps the rest, so a turn costs its
new messages:

- a call whose messages start with the last call's (the same objects, or equal ones: a
  history read back from a checkpointer) converts only the new ones, and the messages
  it converted before are the same objects as last call, so every cache keyed by them
  (costs, the compacted view) hits too. A message changed in place (the same object,
  edited) is not seen, except among the newest few a ``stamp`` covers: replace it, as
  LangGraph's reducers and pydantic-ai do.
- well-formedness is checked the same way, from where the last check stopped (the new
  messages), and :meth:`Converted.sendable` repairs a conversation that is not, so an
  adapter never sends a malformed conversation, compacted or not.

A :class:`Converted` is one call's result, with the lookups an adapter's rebuild needs
in O(1) (where one of our messages stands, which messages answer a tool call).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from .._errors import InvalidConversationError
from .._log import logger
from .._messages.content import (
    Compaction,
    ContentBlock,
    Document,
    Image,
    RedactedThinking,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
)
from .._messages.message import Message, history_repr
from .._messages.wellformed import repair, valid_from, validate
from .._prefix import starts_with

__all__ = ["MESSAGE_BYTES", "Converted", "Read", "Reader", "message_footprint"]

K = TypeVar("K")
S = TypeVar("S")


Read = Callable[[Sequence[K], int], tuple[list[Message], list[S]]]
"""An adapter's conversion: ``read(items, offset)`` gives our messages for ``items`` and,
for each, where it came from (``S``, the adapter's own: an index, a part, a list of
indices); ``offset`` is the index of ``items[0]`` in the whole list (for error paths and
sources)."""


MESSAGE_BYTES = 1_500
"""What a read message costs besides its text, in bytes (measured: our message and its
blocks, the framework's message object, the reader's lookups and the costs cached on the
message; see docs/performance.md)."""


def message_footprint(message: Message) -> int:
    """About how many bytes ``message`` holds in a session: :data:`MESSAGE_BYTES` and the
    text of its blocks (a tool's input by its keys and values, shallowly)."""
    return MESSAGE_BYTES + sum(_block_bytes(block) for block in message.content)


def _block_bytes(block: ContentBlock | Image) -> int:
    match block:
        case Text(text=text) | Thinking(thinking=text) | Compaction(content=text):
            return len(text)
        case RedactedThinking(data=data):
            return len(data)
        case ToolResult(content=content):
            return sum(_block_bytes(item) for item in content)
        case ToolUse(name=name, input=arguments):
            return len(name) + sum(len(key) + len(str(value)) for key, value in arguments.items())
        case Image(data=data, url=url):
            return len(data or url or "")
        case Document(data=data, url=url, text=text):
            return len(data or url or "") + len(text or "")
    return 0


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
        "_followed",
        "_footprint",
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
        self._footprint = 0  # about the bytes our messages hold (see footprint)
        self._followed: Sequence[K] | None = None  # the items follows() last said yes to

    @property
    def items(self) -> Sequence[K]:
        """The framework's messages read last (the reader's own list: do not change it)."""
        return self._items

    @property
    def footprint(self) -> int:
        """About how many bytes the messages read hold: their text and a fixed cost a
        message for the objects (ours, and the framework's items kept to compare the next
        call with). Kept as messages are read and forgotten, so asking costs nothing."""
        return self._footprint

    def follows(self, items: Sequence[K]) -> bool:
        """Whether ``items`` starts with the messages read last time (remembered for the
        very object ``items`` until the next read, which then need not compare again)."""
        if starts_with(items, self._items):
            self._followed = items
            return True
        return False

    def __call__(self, items: Sequence[K]) -> Converted[K, S]:
        """``items`` read as ours (only what is new or edited converted again when they
        extend the last call's)."""
        size = len(self._items)
        followed = self._followed is items or self.follows(items)
        self._followed = None
        start = self._first_changed(items) if followed else 0
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
            self._footprint += message_footprint(message)
            index[id(message)] = position
            for result in message.tool_results:
                results.setdefault(result.tool_use_id, []).append(position)
        own.extend(messages)
        self._sources.extend(sources)

    def _forget(self, message: Message, position: int) -> None:
        self._footprint -= message_footprint(message)
        if self._index.get(id(message)) == position:
            del self._index[id(message)]
        for result in message.tool_results:
            positions = self._results.get(result.tool_use_id)
            if positions and positions[-1] == position:
                positions.pop()
