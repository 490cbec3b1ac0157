"""The context of one run, handed to middlewares and tools.

A :class:`RunContext` is what a hook or a tool may need beyond its arguments: the
agent's :class:`AgentState` (history, counters, middleware data), the counter the loop
measures requests with, the current turn, and :meth:`RunContext.emit` to report an
event. A new one is made for every run, so middlewares shared by many agents keep
nothing per run on themselves (no cross-talk between concurrent runs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from .._counting.counter import BaseCounter
from .._counting.heuristic import TokenCounter
from .._counting.request import RequestCounter
from .._messages.message import Message, ToolDefinition
from .events import AgentEvent
from .state import AgentState

__all__ = ["RunContext"]


def _drop(_: AgentEvent) -> None:
    """Events of a detached context go nowhere."""


@attrs.define(eq=False)
class RunContext:
    """What a middleware hook or a tool sees of the run it belongs to.

    Built by the loop; a request built by hand (in a test) gets a detached one with a
    fresh state whose events go nowhere.
    """

    state: AgentState = attrs.field(factory=AgentState)
    """The agent's state; ``state.messages`` is the persisted history."""
    counter: BaseCounter = attrs.field(factory=TokenCounter)
    """The counter the loop measures requests with."""
    requests: RequestCounter = attrs.field(
        default=attrs.Factory(lambda self: RequestCounter(self.counter), takes_self=True),
        repr=False,
    )
    """Counts requests with :attr:`counter` (the agent's own, kept between runs)."""
    turn: int = 0
    """The turn of this run (1-based once the first turn started)."""
    scratch: dict[str, object] = attrs.field(factory=dict)
    """Per-run data of middlewares that need not survive the run (keyed by owner)."""
    sink: Callable[[AgentEvent], None] = attrs.field(default=_drop, repr=False)
    """Receives every event (the loop's recorder)."""

    def count_request(
        self,
        messages: Sequence[Message],
        system_prompt: str | None = None,
        tools: Sequence[ToolDefinition] = (),
    ) -> int:
        """What a request costs: ``messages``, ``system_prompt`` and ``tools``."""
        return self.requests.count(messages, system_prompt, tools)

    def emit(self, event: AgentEvent) -> None:
        """Report ``event`` to the run (``AgentOptions.on_event`` and the result)."""
        self.sink(event)
