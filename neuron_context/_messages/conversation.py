"""Conversation structure: the one boundary API every strategy cuts and edits through.

This is the one place that knows how tool calls pair with their results. Strategies ask
it where they may cut and how to remove or rewrite tool calls; none does its own index
arithmetic, so none can separate a tool use from its result.

Definitions:

- A message *opens an exchange* when it is an assistant message with tool uses
  (:func:`opens_exchange`, the one test of it).
- A *tool exchange* is such a message plus the messages after it up to the last ``TOOL``
  message before the next ``USER`` or ``ASSISTANT`` message (system messages in between
  belong to it).
- A *cut* at index ``i`` splits a conversation into ``messages[:i]`` and
  ``messages[i:]``; it is *safe* when it does not fall inside an exchange and
  ``messages[i]`` is not a tool message (:func:`next_safe_cut`, the one rule).
- A *turn* starts at a user message; :func:`turn_start` finds the user message whose
  turn holds an index, which is what keeps a compacted conversation starting on a user
  message (Anthropic rejects one whose first message is an assistant message).

Cost: whether a cut is safe depends only on the exchange around it, so
:func:`next_safe_cut` and :func:`cut_keeping_last` look at the tail and that exchange
alone (O(window), not O(len(messages)), which keeps a sliding window cheap at 100k
messages). Questions about the whole conversation (which exchange holds message ``i``,
which tool use a result answers) go through :class:`Structure`: computed once in O(n),
it answers each in O(1). Its edits (:meth:`Structure.without_calls`,
:func:`replace_blocks`) return new lists and never change their input.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence

import attrs

from .content import ContentBlock, Image, Text, ToolResult, ToolUse
from .message import Message, Role, history_repr

__all__ = [
    "Exchange",
    "ResultRef",
    "Structure",
    "ToolCall",
    "cut_keeping_last",
    "next_safe_cut",
    "opens_exchange",
    "replace_blocks",
    "replace_content",
    "tool_calls",
    "tool_results",
    "turn_start",
]


def opens_exchange(message: Message) -> bool:
    """Whether ``message`` is an assistant message with tool uses (it opens an exchange)."""
    return message.role is Role.ASSISTANT and any(
        isinstance(block, ToolUse) for block in message.content
    )


# -- cuts -------------------------------------------------------------------------------


def next_safe_cut(messages: Sequence[Message], index: int) -> int:
    """The first safe cut at or after ``index`` (clamped to ``0..len(messages)``).

    Looks only at the messages around ``index``: the first user or assistant message at
    or after it is always safe, so only system messages before that one can be safe
    earlier (tool messages never are), and they are unless a tool message of the
    exchange opened before ``index`` still follows them.
    """
    length = len(messages)
    index = max(0, min(index, length))
    turn = index
    while turn < length and messages[turn].role not in (Role.USER, Role.ASSISTANT):
        turn += 1
    if turn == index:
        return index
    opened = False
    for before in range(index - 1, -1, -1):
        role = messages[before].role
        if role is Role.USER or role is Role.ASSISTANT:
            opened = opens_exchange(messages[before])
            break
    last_tool = -1
    if opened:
        for after in range(turn - 1, index - 1, -1):
            if messages[after].role is Role.TOOL:
                last_tool = after
                break
    for candidate in range(max(index, last_tool + 1), turn):
        if messages[candidate].role is Role.SYSTEM:
            return candidate
    return turn


def cut_keeping_last(messages: Sequence[Message], n: int, *, skip_summaries: bool = False) -> int:
    """The safe cut that keeps at most the last ``n`` non-system messages after it.

    The cut starts at the ``n``-th newest non-system message and moves forward past any
    exchange it would split, so what follows it is never more than asked. With
    ``skip_summaries``, messages holding a :class:`~neuron_context.Compaction` do not
    count. Looks at the tail only.
    """
    if n <= 0:
        return len(messages)
    counted = 0
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message.role is Role.SYSTEM or (skip_summaries and message.is_compaction):
            continue
        counted += 1
        if counted == n:
            return next_safe_cut(messages, i)
    return 0


def turn_start(messages: Sequence[Message], index: int) -> int | None:
    """The index of the user message whose turn holds ``index``: the newest user message
    before ``index`` when ``messages[index]`` is not one itself; ``None`` when none.

    A cut at ``c`` followed by a non-user message keeps the conversation starting on a
    user message by *pinning* ``messages[turn_start(messages, c)]`` in front of the kept
    part: a user message followed by a safe cut is always well formed.
    """
    for i in range(min(index, len(messages) - 1), -1, -1):
        if messages[i].role is Role.USER:
            return i
    return None


def first_is_user(messages: Sequence[Message]) -> bool:
    """Whether the first non-system message is a user message (vacuously true if none)."""
    for message in messages:
        if message.role is not Role.SYSTEM:
            return message.role is Role.USER
    return True


# -- the whole conversation ------------------------------------------------------------


@attrs.frozen
class Exchange:
    """One assistant message with tool uses and the tool messages answering it."""

    start: int
    """Index of the assistant message."""
    stop: int
    """One past the last tool message of the exchange (``start + 1`` when none)."""
    tool_messages: tuple[int, ...]
    """Indices of its tool messages."""


@attrs.frozen
class ResultRef:
    """Where a tool result sits: ``messages[message].content[block]``."""

    message: int
    """Index of the tool message."""
    block: int
    """Index of the result within the message's content."""
    result: ToolResult
    """The result itself."""


def tool_results(messages: Sequence[Message]) -> Iterator[ResultRef]:
    """Every tool result with its position, oldest first (O(n), no structure needed)."""
    for m_index, message in enumerate(messages):
        if message.role is Role.TOOL:
            for b_index, block in enumerate(message.content):
                if isinstance(block, ToolResult):
                    yield ResultRef(m_index, b_index, block)


def replace_content(result: ToolResult, content: tuple[Text | Image, ...]) -> ToolResult:
    """A copy of ``result`` with ``content`` (its id and ``is_error`` kept)."""
    return attrs.evolve(result, content=content)


def replace_blocks(
    messages: Sequence[Message], blocks: Mapping[tuple[int, int], ContentBlock]
) -> list[Message]:
    """A copy of ``messages`` with ``messages[m].content[b]`` replaced by
    ``blocks[(m, b)]``; the other messages are the same objects."""
    by_message: dict[int, dict[int, ContentBlock]] = {}
    for (m_index, b_index), block in blocks.items():
        by_message.setdefault(m_index, {})[b_index] = block
    output = list(messages)
    for m_index, replaced in by_message.items():
        message = output[m_index]
        content = tuple(replaced.get(i, block) for i, block in enumerate(message.content))
        output[m_index] = attrs.evolve(message, content=content)
    return output


@attrs.frozen
class Structure:
    """A conversation split into tool exchanges, computed once in O(n).

    Examples:
        >>> from neuron_context import Message, ToolUse
        >>> call = Message.assistant(tool_uses=[ToolUse(id="c1", name="ls", input={})])
        >>> messages = [Message.user("hi"), call, Message.tool_result("c1", "a.txt")]
        >>> structure = Structure.of(messages)
        >>> structure.exchange_at(2)
        Exchange(start=1, stop=3, tool_messages=(2,))
        >>> structure.safe_cut(2)
        3
    """

    messages: Sequence[Message] = attrs.field(repr=history_repr)
    """The conversation."""
    exchanges: tuple[Exchange, ...]
    """Its tool exchanges, in order."""
    _exchange_of: tuple[int, ...] = attrs.field(repr=False, alias="exchange_of")
    # _exchange_of[i]: the index into `exchanges` of the exchange holding message i, or -1.

    @classmethod
    def of(cls, messages: Sequence[Message]) -> Structure:
        """Split ``messages`` into exchanges."""
        n = len(messages)
        exchanges: list[Exchange] = []
        exchange_of = [-1] * n
        open_start = -1
        open_tools: list[int] = []

        def close() -> None:
            nonlocal open_start, open_tools
            if open_start >= 0:
                stop = open_tools[-1] + 1 if open_tools else open_start + 1
                index = len(exchanges)
                exchanges.append(Exchange(open_start, stop, tuple(open_tools)))
                for i in range(open_start, stop):
                    exchange_of[i] = index
            open_start, open_tools = -1, []

        for i, message in enumerate(messages):
            role = message.role
            if role is Role.TOOL:
                if open_start >= 0:
                    open_tools.append(i)
            elif role is Role.ASSISTANT:
                close()
                if opens_exchange(message):
                    open_start = i
            elif role is Role.USER:
                close()
        close()
        return cls(messages, tuple(exchanges), exchange_of=tuple(exchange_of))

    # -- questions ----------------------------------------------------------------------

    def safe_cut(self, index: int) -> int:
        """The first safe cut at or after ``index`` (see :func:`next_safe_cut`)."""
        return next_safe_cut(self.messages, index)

    def cut_keeping_last(self, n: int, *, skip_summaries: bool = False) -> int:
        """The safe cut keeping at most the last ``n`` non-system messages (see
        :func:`cut_keeping_last`)."""
        return cut_keeping_last(self.messages, n, skip_summaries=skip_summaries)

    def exchange_at(self, index: int) -> Exchange | None:
        """The exchange holding message ``index``, or ``None``."""
        if not 0 <= index < len(self._exchange_of):
            return None
        found = self._exchange_of[index]
        return self.exchanges[found] if found >= 0 else None

    def tool_use_for(self, message_index: int, result: ToolResult) -> ToolUse | None:
        """The tool use that ``result`` (in the tool message at ``message_index``) answers."""
        exchange = self.exchange_at(message_index)
        if exchange is None:
            return None
        for block in self.messages[exchange.start].content:
            if isinstance(block, ToolUse) and block.id == result.tool_use_id:
                return block
        return None

    def caller_of(self, message_index: int) -> int | None:
        """The index of the assistant message whose calls the tool message at
        ``message_index`` answers, or ``None`` for an orphan."""
        exchange = self.exchange_at(message_index)
        return exchange.start if exchange is not None else None

    # -- edits --------------------------------------------------------------------------

    def without_calls(self, calls: Mapping[int, Collection[str]]) -> list[Message]:
        """A copy without the given tool calls and the results that answer them.

        Args:
            calls: for an assistant message's index, the ids of its tool uses to remove.
                Their results within that exchange go too; a tool message left with no
                result and an assistant message left with no content are dropped.
        """
        drop_uses: dict[int, Collection[str]] = {}
        drop_results: dict[int, Collection[str]] = {}
        for start, ids in calls.items():
            exchange = self.exchange_at(start)
            if exchange is None or exchange.start != start or not ids:
                continue
            drop_uses[start] = ids
            for m_index in exchange.tool_messages:
                drop_results[m_index] = ids
        output: list[Message] = []
        for m_index, message in enumerate(self.messages):
            ids = drop_uses.get(m_index) or drop_results.get(m_index) or ()
            if not ids:
                output.append(message)
                continue
            content = tuple(
                block
                for block in message.content
                if not (isinstance(block, ToolUse) and block.id in ids)
                and not (isinstance(block, ToolResult) and block.tool_use_id in ids)
            )
            if len(content) == len(message.content):
                output.append(message)
            elif content:
                output.append(attrs.evolve(message, content=content))
        return output


# -- tool calls with their results ---------------------------------------------------


@attrs.frozen
class ToolCall:
    """One tool use, where it sits, and the results that answer it in its exchange."""

    message: int
    """Index of the assistant message holding the call."""
    block: int
    """Index of the tool use within that message's content."""
    use: ToolUse
    """The call."""
    results: tuple[ResultRef, ...]
    """Its results, oldest first (one in a well-formed conversation; none while the call
    is still running)."""

    @property
    def succeeded(self) -> bool:
        """Whether it was answered and no answer is an error."""
        return bool(self.results) and not any(ref.result.is_error for ref in self.results)


def tool_calls(structure: Structure) -> list[ToolCall]:
    """Every tool call of ``structure`` with its results, oldest first (O(n)).

    The one place that pairs calls with results for strategies that reason about calls
    (which call supersedes which, which result is stale): a result belongs to the call
    with its id in the same exchange, as :func:`validate` defines it.
    """
    messages = structure.messages
    calls: list[ToolCall] = []
    for exchange in structure.exchanges:
        answers: dict[str, list[ResultRef]] = {}
        for m_index in exchange.tool_messages:
            for b_index, block in enumerate(messages[m_index].content):
                if isinstance(block, ToolResult):
                    answers.setdefault(block.tool_use_id, []).append(
                        ResultRef(m_index, b_index, block)
                    )
        for b_index, block in enumerate(messages[exchange.start].content):
            if isinstance(block, ToolUse):
                found = tuple(answers.get(block.id, ()))
                calls.append(ToolCall(exchange.start, b_index, block, found))
    return calls
