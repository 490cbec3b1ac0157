"""Superseded tool calls: of the calls that write the same thing, keep only the newest.

An agent that writes a script, runs it, and writes it again carries every version in
its history, though only the newest is the file's content now; the older versions cost
tokens and can mislead the model about what the file holds. The LangChain-middleware
README this project started from filtered old ``create_python_script`` calls by their
``path`` argument; this strategy is that idea for any tool: ``keys`` says which argument
(or which function of the arguments) identifies what a call writes.

A call is removed *with its result* through the boundary API
(:meth:`~neuron_context.strategies.Structure.without_calls`), so a parallel call in the same
assistant message keeps its own pair and an assistant message left with no content goes.
Which call supersedes which is the shared rule of ``supersede.py``: only a call that
succeeded supersedes older ones (a failed write left the older version in place).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence

import attrs

from .._errors import CompactionError, ConfigurationError, show
from .._log import log_compaction
from .._messages.content import JSON, ContentBlock, Text
from .._messages.conversation import (
    Structure,
    ToolCall,
    replace_blocks,
    replace_content,
    tool_calls,
)
from .._messages.message import Message, Role
from .._stores.offload import describe_call, offload, referenced
from .._stores.store import Store, optional_store
from .._validators import non_negative_int
from .strategy import PureStrategy
from .supersede import hashable, superseded

__all__ = ["KeySpec", "SupersededToolCallsStrategy"]

KeySpec = str | Callable[[Mapping[str, JSON]], object]
"""What identifies a call's target: an argument name, or a function of the arguments
(returning ``None`` when the call has no target)."""


def _to_keys(value: object) -> dict[str, KeySpec]:
    owner = "SupersededToolCallsStrategy.keys"
    if not isinstance(value, Mapping):
        msg = f"{owner} must map tool names to an argument name or a function, got {show(value)}"
        raise ConfigurationError(msg)
    keys: dict[str, KeySpec] = {}
    for name, spec in value.items():
        if not isinstance(name, str):
            msg = f"{owner} has a non-str tool name {show(name)}"
            raise ConfigurationError(msg)
        if not isinstance(spec, str) and not callable(spec):
            msg = f"{owner}[{show(name)}] must be an argument name or a function, got {show(spec)}"
            raise ConfigurationError(msg)
        keys[name] = spec
    return keys


@attrs.define
class SupersededToolCallsStrategy(PureStrategy):
    """Of the tool calls with the same tool and key, keeps only the newest and its result.

    ``keys`` maps a tool name to the argument that identifies what the tool writes
    (``{"create_python_script": "path"}``), or to a function of the call's arguments
    returning that identity (``None``: the call is not tracked). Older calls with the
    same tool and key are removed together with their results; other calls, including
    parallel calls in the same assistant message, keep their pairs; an assistant message
    left with no content is removed. Only a call that succeeded supersedes older ones.

    Examples:
        >>> strategy = SupersededToolCallsStrategy({"create_python_script": "path"})
    """

    keys: dict[str, KeySpec] = attrs.field(converter=_to_keys)
    """Tool name → the argument (or function of the arguments) naming what it writes."""
    max_tokens: int = attrs.field(default=0, kw_only=True, validator=non_negative_int())
    """The trigger: compact when the history costs more than this (0: always)."""
    store: Store | None = attrs.field(default=None, kw_only=True, validator=optional_store())
    """Where the removed calls and their results go: the newer call's result then ends
    with a note naming them and the key to recall them by (``[superseded calls removed:
    create_python_script a.py, 2 calls, 812 tokens — recall: <key>]``)."""

    def _key(self, call: ToolCall) -> Hashable | None:
        use = call.use
        spec = self.keys.get(use.name)
        if spec is None:
            return None
        if isinstance(spec, str):
            value: object = use.input.get(spec)
        else:
            try:
                value = spec(use.input)
            except Exception as exc:
                msg = (
                    f"SupersededToolCallsStrategy: the key function of {show(use.name)} "
                    f"failed: {exc}"
                )
                raise CompactionError(msg) from exc
        key = hashable(value)
        return None if key is None else (use.name, key)

    def _apply(self, messages: Sequence[Message]) -> list[Message]:
        if not self.keys:
            return list(messages)
        structure = Structure.of(messages)
        old = superseded(tool_calls(structure), self._key)
        if not old:
            return list(messages)
        remove: dict[int, set[str]] = {}
        for call, _ in old:
            remove.setdefault(call.message, set()).add(call.use.id)
        if self.store is not None:
            structure = Structure.of(self._noted(messages, old, self.store))
        output = structure.without_calls(remove)
        log_compaction(
            "SupersededToolCallsStrategy",
            self.counter,
            messages,
            output,
            {"removed_calls": sorted(i for ids in remove.values() for i in ids)},
        )
        return output

    def _noted(
        self, messages: Sequence[Message], old: list[tuple[ToolCall, ToolCall]], store: Store
    ) -> list[Message]:
        """``messages`` with the calls each newer call supersedes offloaded, and a note of
        them after the newer call's result (no note where the put failed)."""
        by_newer: dict[tuple[int, int], list[ToolCall]] = {}
        newer_of: dict[tuple[int, int], ToolCall] = {}
        for call, newer in old:
            if newer.results:
                where = (newer.results[0].message, newer.results[0].block)
                by_newer.setdefault(where, []).append(call)
                newer_of[where] = newer
        notes: dict[tuple[int, int], ContentBlock] = {}
        for where, calls in by_newer.items():
            removed = [
                message
                for call in reversed(calls)  # oldest first
                for message in (
                    Message(role=Role.ASSISTANT, content=(call.use,)),
                    *(Message(role=Role.TOOL, content=(ref.result,)) for ref in call.results),
                )
            ]
            key = offload(store, removed, "SupersededToolCallsStrategy")
            if key is None:
                continue
            newer = newer_of[where]
            what = f"{describe_call(newer.use)}, {len(calls)} call{'s' if len(calls) > 1 else ''}"
            tokens = self.counter.estimate_messages(removed)
            note = Text(text=referenced("[superseded calls removed]", tokens, key, what))
            result = newer.results[0].result
            notes[where] = replace_content(result, (*result.content, note))
        return replace_blocks(messages, notes)
