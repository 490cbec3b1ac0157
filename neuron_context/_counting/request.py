"""What a request costs: its messages, its system prompt and its tool definitions.

A provider bills all three, so the trigger of every caller counts all three (a large
tool catalogue or system prompt would otherwise push real requests over the window while
the caller believed it was within budget). The messages go through the counter's history
memo (a history that grew since the last call costs its new messages); the system
prompt and the tools change rarely, so their costs are kept for the last ones seen.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._messages.jsonvalue import compact_json
from .._messages.message import Message, ToolDefinition
from .calibrated import CalibratedCounter
from .counter import BaseCounter

__all__ = ["RequestCounter"]


class RequestCounter:
    """Counts requests with ``counter``: messages, system prompt (as a system message,
    as providers receive it) and tool definitions.

    Thread-safe: what it keeps (the last system prompt and tools, with their costs) is
    replaced whole, never changed in place; their costs are priced anew when a
    :class:`~neuron_context.CalibratedCounter`'s factor moves.
    """

    __slots__ = ("_stand_in", "_system", "_tools", "counter")

    def __init__(self, counter: BaseCounter) -> None:
        self.counter = counter
        """The counter every count goes through."""
        self._system: tuple[str, Message, int, float | None] | None = None
        self._tools: tuple[tuple[ToolDefinition, ...], int, float | None] = ((), 0, None)
        self._stand_in: tuple[tuple[ToolDefinition, ...], Message] | None = None

    def __repr__(self) -> str:
        return f"RequestCounter({self.counter!r})"

    def system_message(self, prompt: str | None) -> Message | None:
        """The system prompt as the system message a provider receives (the same object
        while the prompt is the same), or ``None`` without one."""
        if not prompt:
            return None
        return self._system_entry(prompt)[1]

    def tools_message(self, tools: Sequence[ToolDefinition]) -> Message | None:
        """A system message standing for the tool definitions while a strategy compacts
        (the same object while the tools are the same), or ``None`` without tools.

        A strategy budgets the messages it is given; the tools are part of the request
        it must fit, so the compaction step hands it this message beside the system
        prompt and takes it out of the result. Its text is the definitions as the
        counting rules price them (name, description, compact JSON schema), so any
        counter prices it about right; under the request's own counter its cost is
        exactly :meth:`overhead`'s share for the tools when the counter keeps
        per-message costs (:meth:`~neuron_context.counting.BaseCounter.pin_cost`).
        """
        if not tools:
            return None
        entry = self._stand_in
        if entry is not None and (tools is entry[0] or tuple(tools) == entry[0]):
            return entry[1]
        known = tuple(tools)
        text = "\n".join(
            f"{tool.name}\n{tool.description}\n{compact_json(tool.input_schema)}" for tool in known
        )
        message = Message.system(text)
        self.counter.pin_cost(message, self.overhead(None, known))  # the tools' own price
        self._stand_in = (known, message)
        return message

    def overhead(self, system_prompt: str | None, tools: Sequence[ToolDefinition]) -> int:
        """What the system prompt and the tools add to any request."""
        total = 0
        if system_prompt:
            total += self._system_entry(system_prompt)[2]
        if tools:
            known, cost, factor = self._tools
            now = self._factor()
            if factor != now or (tools is not known and tuple(tools) != known):
                known = tuple(tools)
                cost = self.counter.estimate_tools(known)
                self._tools = (known, cost, now)
            total += cost
        return total

    def count(
        self,
        messages: Sequence[Message],
        system_prompt: str | None = None,
        tools: Sequence[ToolDefinition] = (),
    ) -> int:
        """The tokens of a request of ``messages`` with ``system_prompt`` and ``tools``."""
        return self.counter.estimate_messages(messages) + self.overhead(system_prompt, tools)

    def _system_entry(self, prompt: str) -> tuple[str, Message, int, float | None]:
        entry = self._system
        now = self._factor()
        if entry is None or entry[0] != prompt or entry[3] != now:
            same = entry is not None and entry[0] == prompt
            message = entry[1] if entry is not None and same else Message.system(prompt)
            cost = self.counter.estimate_message(message)
            entry = self._system = (prompt, message, cost, now)
        return entry

    def _factor(self) -> float | None:
        """A calibrating counter's factor (the costs kept are priced anew when it moves)."""
        counter = self.counter
        return counter.factor if isinstance(counter, CalibratedCounter) else None
