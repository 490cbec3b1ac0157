"""The counter interface every strategy takes (``counter=``), and a running count.

:class:`BaseCounter` is what users type against: six ``estimate_*`` methods,
:meth:`~BaseCounter.bound_messages` (the count where a trigger needs it, a cheap bound
below) and :meth:`~BaseCounter.running`. It promises nothing else (no fields): the rule-based
counters (:class:`~neuron_context.TokenCounter`, :class:`~neuron_context.TokenizerCounter`,
both built on :class:`~neuron_context._counting.rules.RuleCounter`) have their options,
:class:`~neuron_context.CalibratedCounter` has its own.

:class:`RunningCount` is the per-turn path of a loop that keeps its history: it holds a
total, not the messages, and adding a turn costs only the new messages.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Sequence

from .._errors import ConfigurationError, show
from .._messages.content import ContentBlock
from .._messages.jsonvalue import compact_json
from .._messages.message import Message, ToolDefinition
from .cache import CostTable

__all__ = ["BaseCounter", "RunningCount", "check_limit", "compact_json", "not_text"]


class BaseCounter(abc.ABC):
    """A token counter: what every strategy accepts as ``counter=``.

    Implement the six ``estimate_*`` methods (or subclass a counter that has them).
    Counts are ints, never negative.
    """

    @abc.abstractmethod
    def estimate_text(self, text: str) -> int:
        """Tokens of one text; ``""`` is 0."""

    def estimate_texts(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text (a counter may count them in one batch)."""
        estimate = self.estimate_text
        return [estimate(text) for text in texts]

    @abc.abstractmethod
    def estimate_message(self, message: Message) -> int:
        """Tokens of one message."""

    @abc.abstractmethod
    def estimate_messages(self, messages: Iterable[Message]) -> int:
        """Tokens of a conversation."""

    @abc.abstractmethod
    def estimate_content(self, content: Iterable[ContentBlock]) -> int:
        """Tokens of some content blocks, without a message's overhead."""

    @abc.abstractmethod
    def estimate_tools(self, tools: Iterable[ToolDefinition]) -> int:
        """Tokens of tool definitions."""

    def bound_messages(self, messages: Sequence[Message], limit: int) -> int:
        """:meth:`estimate_messages` where it is over ``limit``; below, possibly a bound.

        The result is the exact count whenever it is greater than ``limit``, and
        otherwise a value between the exact count and ``limit``: so it is over ``limit``
        exactly when the count is, and a trigger comparing it with ``limit`` (or any
        larger threshold) decides as with the count. A counter whose exact counts are
        expensive answers far from ``limit`` without counting: the exact counter of the
        tiktoken encodings adds the UTF-8 size of the texts it has not tokenized yet
        (never below their count), and tokenizes only once that sum passes ``limit``.
        This default counts exactly.

        Raises:
            ConfigurationError: ``messages`` is not a sequence of ``Message``, or
                ``limit`` is not an int.
        """
        check_limit(limit, type(self).__name__)
        return self.estimate_messages(messages)

    def cost_table(self, messages: Sequence[Message]) -> CostTable:
        """What each message of ``messages`` costs, with running sums (the cost of any
        run of consecutive messages in O(1)).

        The built-in rule-based counters make it from their history memo, so a history
        they counted before, grown by a few messages, costs only the new ones. This
        default prices each message with :meth:`estimate_message`.
        """
        return CostTable([self.estimate_message(message) for message in messages])

    def pin_cost(self, message: Message, cost: int) -> bool:
        """Price ``message`` at ``cost`` from now on, when this counter keeps per-message
        costs (a stand-in whose real price the caller knows, such as the tool definitions
        as one message); returns whether it does. This default keeps none: ``False``."""
        del message, cost
        return False

    def running(self, messages: Sequence[Message] = ()) -> RunningCount:
        """A running count of a history that grows, starting from ``messages``.

        Each turn, :meth:`RunningCount.add` the new messages: the cost is that of the new
        messages alone, whatever the history's length. After a compaction (the history
        was replaced, not extended), start a new one from the compacted history.

        Examples:
            >>> from neuron_context import TokenCounter
            >>> count = TokenCounter().running([Message.user("x" * 40)])
            >>> count.add([Message.assistant("y" * 8)])
            20
        """
        return RunningCount(self.estimate_messages, messages)


class RunningCount:
    """The token count of a history that only grows, kept as a total.

    Made by :meth:`BaseCounter.running`. It holds no messages (only the total), so it
    never keeps a dropped history alive. Not thread-safe: one loop owns it.
    """

    __slots__ = ("_length", "_measure", "_scale", "_total")

    def __init__(
        self,
        measure: Callable[[Sequence[Message]], int],
        messages: Sequence[Message] = (),
        *,
        scale: Callable[[int], int] | None = None,
    ) -> None:
        self._measure = measure
        self._scale = scale
        self._total = measure(messages)
        self._length = len(messages)

    @property
    def total(self) -> int:
        """The tokens of every message added so far."""
        scale = self._scale
        return self._total if scale is None else scale(self._total)

    def __len__(self) -> int:
        """How many messages were added."""
        return self._length

    def add(self, messages: Sequence[Message]) -> int:
        """Count the new ``messages`` (appended to the history); return the new total."""
        self._total += self._measure(messages)
        self._length += len(messages)
        return self.total

    def __repr__(self) -> str:
        return f"RunningCount(total={self.total}, messages={self._length})"


def check_limit(limit: object, owner: str) -> int:
    """``limit`` if it is an int (not a bool), for :meth:`BaseCounter.bound_messages`."""
    if type(limit) is int or (isinstance(limit, int) and not isinstance(limit, bool)):
        return int(limit)
    msg = f"{owner}.bound_messages: limit must be an int, got {show(limit)}"
    raise ConfigurationError(msg)


def not_text(text: object) -> ConfigurationError:
    """The error for a text that is not a ``str``."""
    msg = f"text must be a str, got {type(text).__name__}"
    return ConfigurationError(msg)
