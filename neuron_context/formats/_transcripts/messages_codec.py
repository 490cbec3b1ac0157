"""Anthropic Messages transcripts: ``{"system": ..., "messages": [...]}``, or the turns alone.

Read with :func:`~neuron_context.formats.from_anthropic` (the top-level ``system`` is the
first message; a user turn holding tool results is a tool message and, for the rest of
its blocks, a user message); written with :func:`~neuron_context.formats.to_anthropic`,
grafted onto the turns they were read from: ``cache_control`` breakpoints, citations and
any other key the library does not model stay on their blocks, and a turn's string
content stays a string. The ``system`` field is written as it was (the built-in stacks
never change system messages). ``tools`` (client tools) are read as the request's tool
definitions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..._messages.message import Message, Role
from .._anthropic_messages import read_anthropic, to_anthropic
from .._tool_definitions import tools_from_anthropic
from .chat_codec import declared
from .codec import Codec, Fit, Parsed
from .graft import Rules, graft_list, never

__all__ = ["MessagesCodec"]

_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})


def _anthropic_content(unit: object) -> bool:
    content = unit.get("content") if isinstance(unit, Mapping) else None
    if not isinstance(content, list):
        return False
    for block in content:
        if isinstance(block, Mapping):
            kind = block.get("type")
            if (isinstance(kind, str) and kind in _BLOCKS) or "source" in block:
                return True
    return False


class MessagesCodec(Codec):
    """Anthropic Messages API requests."""

    name = "anthropic"
    title = "Anthropic Messages"
    rules = Rules(implied={"is_error": False})

    def fits(self, units: Sequence[object], header: Mapping[str, object]) -> int:
        if declared(header, "anthropic-messages", "anthropic"):
            return Fit.DECLARED
        if "system" in header or any(_anthropic_content(unit) for unit in units):
            return Fit.LIKELY
        return Fit.MAYBE

    def read(self, units: Sequence[object], header: Mapping[str, object]) -> Parsed:
        system = header.get("system")
        messages, origins = read_anthropic(units, system=system)  # type: ignore[arg-type]
        tools = header.get("tools")
        definitions = tools_from_anthropic(tools) if tools is not None else []  # type: ignore[arg-type]
        return Parsed(tuple(messages), tuple(origins), tuple(definitions))

    def render(self, messages: Sequence[Message], sources: Sequence[object]) -> list[object]:
        _, turns = to_anthropic([m for m in messages if m.role is not Role.SYSTEM])
        return graft_list(sources, list(turns), self.rules, skipped=never)

    def header(
        self,
        header: Mapping[str, object],
        before: Sequence[Message],
        after: Sequence[Message],
    ) -> Mapping[str, object]:
        leading = [m for m in after[:1] if m.role is Role.SYSTEM]
        original = [m for m in before[:1] if m.role is Role.SYSTEM]
        if leading == original:
            return header
        system, _ = to_anthropic(leading)
        return {**header, "system": system}
