"""The loop's own context: count what the provider receives, compact the history.

At the top of every turn the loop does what the crate's loop does, with two fixes:

- **It counts what the provider will receive**: the messages, the system prompt (as a
  system message) and the tool definitions. The crate counted the messages alone, so a
  large tool catalogue or system prompt pushed real requests over the window while the
  loop believed it was within budget. :func:`count_request` is the one place that does
  this; the loop's own per-turn count is a :class:`HistoryCount`, which pays only for
  the messages added since the last turn (a
  :class:`~neuron_context._counting.base.RunningCount` the loop appends to, restarted
  from the history whenever it was replaced rather than extended).
- **A failed compaction never loses history**: the history is replaced only by a
  successful result; on a :class:`~neuron_context.NeuronContextError` (or cancellation)
  the loop keeps the uncompacted history, reports :class:`CompactionFailed`, and goes
  on (or raises, with ``AgentOptions(context_errors="raise")``; cancellation always
  propagates).

The strategy's ``should_compact`` receives that full count and ``compact`` the messages,
so size the strategy's ``max_tokens`` as the window minus the reply and the overhead
(:meth:`Agent.count_request` of an empty history gives the overhead).

:func:`~neuron_context._messages.wellformed.start_on_user` is the guard behind the
contract's "first message" row: the loop never sends a conversation whose first
non-system message is not a user message when its history started on one (Anthropic
rejects such a request), whatever strategy compacted it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import anyio
import attrs

from .._counting.base import BaseCounter, RunningCount
from .._errors import CompactionError, InvalidConversationError, NeuronContextError
from .._log import logger
from .._messages.message import Message, ToolDefinition
from .._messages.wellformed import start_on_user, validate
from .._strategies.base import ContextStrategy
from .events import CompactionCompleted, CompactionFailed, CompactionStarted
from .run import RunContext

__all__ = ["HistoryCount", "compact_history", "count_request"]


def count_request(
    counter: BaseCounter,
    messages: Sequence[Message],
    system_prompt: str | None,
    tools: Sequence[ToolDefinition],
) -> int:
    """The tokens of a request: messages, system prompt (as a message) and tools."""
    total = counter.estimate_messages(messages) + counter.estimate_tools(tools)
    if system_prompt:
        total += counter.estimate_message(Message.system(system_prompt))
    return total


@attrs.define(eq=False)
class HistoryCount:
    """The running token count of the loop's history: a turn costs its new messages.

    The loop keeps its history in one list and appends to it; a compaction or a
    middleware that assigns ``state.messages`` replaces the list. :meth:`messages`
    takes the same list object, no shorter than what was counted and with its first
    and last counted messages still in place, as an extension and counts only its new
    messages; any other history (a new list, a shorter one, an edited end) restarts
    the count from it. To change a message of the history, assign a new list (as
    every strategy and middleware of the library does): an item replaced in the middle
    of the same list is not seen. One count belongs to one run of one agent: not
    thread-safe.
    """

    counter: BaseCounter
    _running: RunningCount | None = attrs.field(default=None, init=False)
    # The list counted (held for one turn: the next call restarts on any other list),
    # and its first and last counted messages.
    _list: Sequence[Message] | None = attrs.field(default=None, init=False)
    _first: Message | None = attrs.field(default=None, init=False)
    _last: Message | None = attrs.field(default=None, init=False)
    _system: Message | None = attrs.field(default=None, init=False)

    def messages(self, history: Sequence[Message]) -> int:
        """The tokens of ``history`` (equal to ``counter.estimate_messages(history)``)."""
        running = self._running
        if (
            running is None
            or history is not self._list
            or len(history) < len(running)
            or (
                len(running) > 0
                and (history[0] is not self._first or history[len(running) - 1] is not self._last)
            )
        ):
            running = self._running = self.counter.running(history)
        elif len(history) > len(running):
            running.add(history[len(running) :])
        self._list = history
        self._first, self._last = (history[0], history[-1]) if history else (None, None)
        return running.total

    def request(
        self,
        history: Sequence[Message],
        system_prompt: str | None,
        tools: Sequence[ToolDefinition],
    ) -> int:
        """What :func:`count_request` returns for ``history``, at the cost of its new messages."""
        total = self.messages(history) + self.counter.estimate_tools(tools)
        if system_prompt:
            system = self._system
            if system is None or system.text != system_prompt:
                system = self._system = Message.system(system_prompt)
            total += self.counter.estimate_message(system)
        return total


async def compact_history(
    context: RunContext,
    strategy: ContextStrategy,
    tokens: int,
    *,
    system_prompt: str | None,
    tools: Sequence[ToolDefinition],
    trigger: str = "context",
    raise_errors: bool = False,
) -> bool:
    """Compact ``context.state.messages`` with ``strategy`` if it asks to; report it.

    Returns whether the history was replaced. The history is replaced only by a
    well-formed result that starts on a user message when the history did.

    Raises:
        NeuronContextError: the compaction failed and ``raise_errors`` is set.
    """
    state = context.state
    history = state.messages
    if not strategy.should_compact(history, tokens):
        return False
    name = type(strategy).__name__
    context.emit(CompactionStarted(context.turn, name, trigger, tokens, len(history)))
    started = time.perf_counter()
    try:
        compacted = start_on_user(await strategy.compact(history), history)
        validate(compacted)
    except anyio.get_cancelled_exc_class():
        context.emit(
            CompactionFailed(
                context.turn, name, trigger, tokens, "cancelled", True, _since(started)
            )
        )
        raise
    except Exception as exc:
        # Any failure, ours or a user strategy's own exception: the history is kept.
        what = "a malformed conversation" if isinstance(exc, InvalidConversationError) else ""
        error = f"{type(exc).__name__}: {exc}" + (f" ({what})" if what else "")
        logger.warning("%s: compaction by %s failed, history kept: %s", trigger, name, error)
        context.emit(
            CompactionFailed(context.turn, name, trigger, tokens, error, False, _since(started))
        )
        if raise_errors:
            if isinstance(exc, NeuronContextError):
                raise
            msg = f"compaction by {name} failed: {error}"
            raise CompactionError(msg) from exc
        return False
    state.messages = compacted
    after = count_request(context.counter, compacted, system_prompt, tools)
    context.emit(
        CompactionCompleted(
            context.turn,
            name,
            trigger,
            tokens,
            after,
            len(history),
            len(compacted),
            len(history) - len(compacted),
            _since(started),
        )
    )
    return True


def _since(started: float) -> float:
    return time.perf_counter() - started
