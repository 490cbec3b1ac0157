"""OpenAI Chat Completions transcripts: ``{"messages": [...]}``, a bare list, or JSONL.

Read with :func:`~neuron_context.formats.from_openai`; written with
:func:`~neuron_context.formats.to_openai`, grafted onto the messages they were read
from, so the keys the library does not model (``name``, ``refusal``, ``annotations``, a
part's ``detail``) stay. ``tools`` (function tools) are read as the request's tool
definitions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..._messages.message import Message
from .._openai_chat import read_openai, to_openai
from .._tool_definitions import tools_from_openai
from .codec import Codec, Fit, Parsed
from .graft import Rules, graft_list, never

__all__ = ["ChatCodec", "declared"]

_OPENAI_ROLES = frozenset({"system", "developer", "tool"})


def declared(header: Mapping[str, object], *names: str) -> bool:
    """Whether ``header`` says (``"format": ...``) that it is one of ``names``."""
    value = header.get("format")
    return isinstance(value, str) and value in names


class ChatCodec(Codec):
    """OpenAI Chat Completions messages."""

    name = "openai"
    title = "OpenAI Chat Completions"
    rules = Rules(implied={"tool_calls": None})

    def fits(self, units: Sequence[object], header: Mapping[str, object]) -> int:
        if declared(header, "openai-chat", "openai"):
            return Fit.DECLARED
        for unit in units:
            if not isinstance(unit, Mapping):
                continue
            role = unit.get("role")
            if (isinstance(role, str) and role in _OPENAI_ROLES) or "tool_calls" in unit:
                return Fit.LIKELY
        return Fit.MAYBE

    def read(self, units: Sequence[object], header: Mapping[str, object]) -> Parsed:
        messages, origins = read_openai(units)  # type: ignore[arg-type]  # checked there
        tools = header.get("tools")
        definitions = tools_from_openai(tools) if tools is not None else []  # type: ignore[arg-type]
        return Parsed(tuple(messages), tuple(origins), tuple(definitions))

    def render(self, messages: Sequence[Message], sources: Sequence[object]) -> list[object]:
        return graft_list(sources, list(to_openai(messages)), self.rules, skipped=never)
