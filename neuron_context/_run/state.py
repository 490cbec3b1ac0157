"""What an agent remembers between runs, as a plain dict and back.

An agent's state is its history, the counters its limits read, and the data its
middlewares keep (the todo list, which injection rules fired when). It is a mutable
:class:`AgentState` owned by one :class:`~neuron_context.Agent`; :meth:`AgentState.to_dict`
turns it into JSON-ready data (the history in the :mod:`neuron_context.formats` JSON
format) and :meth:`AgentState.from_dict` reads it back, so a run can end on one worker
and the next one start on another (Celery, Temporal, Ray: whatever already runs the
jobs). Code (tools, rules, providers) is never serialized: the new worker builds the
same agent and loads the state into it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import cast

import attrs

from .._errors import ConfigurationError, show
from .._messages.content import JSON
from .._messages.jsonvalue import check_json
from .._messages.message import Message, history_repr
from ..formats import from_dict, to_dict

__all__ = ["AgentState"]

FORMAT = "neuron-context-agent"
VERSION = 1


def _counts(value: object, name: str) -> dict[str, int]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
        for k, v in value.items()
    ):
        msg = f"AgentState.from_dict: {name} must map tool names to counts, got {show(value)}"
        raise ConfigurationError(msg)
    return dict(value)


def _count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        msg = f"AgentState.from_dict: {name} must be a non-negative int, got {show(value)}"
        raise ConfigurationError(msg)
    return value


def _values(values: Mapping[str, JSON], name: str) -> dict[str, JSON]:
    """A copy of the middlewares' data, if it is JSON (so the state always serializes):
    str keys, JSON values nested at most the JSON depth limit, else an error naming
    ``name`` and the path (``AgentState.values['todos'][3]``)."""
    return cast("dict[str, JSON]", check_json(dict(values), name))


@attrs.define(eq=False)
class AgentState:
    """An agent's history, counters and middleware data.

    The loop keeps the counters; a middleware keeps its data under its own key of
    :attr:`values` (JSON values only, so the state always serializes).

    Examples:
        >>> state = AgentState(messages=[Message.user("hi")])
        >>> AgentState.from_dict(state.to_dict()).messages == state.messages
        True
    """

    messages: list[Message] = attrs.field(factory=list, repr=history_repr)
    """The history, oldest first: what the next run continues."""
    values: dict[str, JSON] = attrs.field(factory=dict)
    """Middleware data by key (``"todos"``, an injector's state, ...)."""
    runs: int = 0
    """Runs started."""
    turns: int = 0
    """Model turns over every run (the turn number injection rules see)."""
    model_calls: int = 0
    """Model calls over every run."""
    tool_calls: dict[str, int] = attrs.field(factory=dict)
    """Tool calls over every run, by tool name."""
    run_model_calls: int = 0
    """Model calls of the current (or last) run."""
    run_tool_calls: dict[str, int] = attrs.field(factory=dict)
    """Tool calls of the current (or last) run, by tool name."""
    conversation: str = attrs.field(factory=lambda: uuid.uuid4().hex)
    """The conversation's name (a random one by default): inside a run, an unscoped
    store is this conversation's view (``store.scoped(conversation)``), so the runs of
    one state, in any process, read what they offloaded and nothing another
    conversation did."""

    def start_run(self) -> None:
        """Count a new run and reset the per-run counters."""
        self.runs += 1
        self.run_model_calls = 0
        self.run_tool_calls = {}

    def count_model_call(self) -> int:
        """Count one model call; return its number in this run (1-based)."""
        self.model_calls += 1
        self.run_model_calls += 1
        return self.run_model_calls

    def count_tool_call(self, name: str) -> tuple[int, int]:
        """Count one call of ``name``; return its numbers in this run: all tools, this tool."""
        self.tool_calls[name] = self.tool_calls.get(name, 0) + 1
        self.run_tool_calls[name] = self.run_tool_calls.get(name, 0) + 1
        return sum(self.run_tool_calls.values()), self.run_tool_calls[name]

    def to_dict(self) -> dict[str, JSON]:
        """The state as JSON-ready data (see :meth:`from_dict`).

        Raises:
            ConfigurationError: a middleware stored a value in :attr:`values` that is not
                JSON (a set, bytes, NaN, nested too deep), naming its path.
        """
        return {
            "format": FORMAT,
            "version": VERSION,
            "history": to_dict(self.messages),
            "values": _values(self.values, "AgentState.values"),
            "runs": self.runs,
            "turns": self.turns,
            "model_calls": self.model_calls,
            "tool_calls": dict(self.tool_calls),
            "run_model_calls": self.run_model_calls,
            "run_tool_calls": dict(self.run_tool_calls),
            "conversation": self.conversation,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, JSON]) -> AgentState:
        """Read back what :meth:`to_dict` wrote (possibly in another process).

        Raises:
            ConfigurationError: ``data`` is not such a dict (its ``values`` are checked as
                JSON, as :meth:`to_dict` writes them: no sets, nothing nested deeper than
                the JSON depth limit), naming the path.
        """
        if not isinstance(data, Mapping) or (data.get("format"), data.get("version")) != (
            FORMAT,
            VERSION,
        ):
            msg = (
                f"AgentState.from_dict: data must come from AgentState.to_dict() "
                f"(format {show(FORMAT)}, version {VERSION})"
            )
            raise ConfigurationError(msg)
        history = data.get("history")
        if not isinstance(history, Mapping):
            msg = "AgentState.from_dict: history must be a neuron-context messages dict"
            raise ConfigurationError(msg)
        values = data.get("values", {})
        if not isinstance(values, Mapping):
            msg = f"AgentState.from_dict: values must be a dict, got {show(values)}"
            raise ConfigurationError(msg)
        name = data.get("conversation", None)
        if name is not None and (not isinstance(name, str) or not name):
            msg = f"AgentState.from_dict: conversation must be a non-empty str, got {show(name)}"
            raise ConfigurationError(msg)
        named = {} if name is None else {"conversation": name}
        return cls(
            messages=from_dict(history),
            values=_values(values, "AgentState.from_dict: values"),
            runs=_count(data.get("runs", 0), "runs"),
            turns=_count(data.get("turns", 0), "turns"),
            model_calls=_count(data.get("model_calls", 0), "model_calls"),
            tool_calls=_counts(data.get("tool_calls", {}), "tool_calls"),
            run_model_calls=_count(data.get("run_model_calls", 0), "run_model_calls"),
            run_tool_calls=_counts(data.get("run_tool_calls", {}), "run_tool_calls"),
            **named,
        )
