"""Codex CLI sessions: ``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``.

Each line is ``{"timestamp", "type", "payload"}``. The conversation is the
``response_item`` lines: Responses items (``message``, ``reasoning``, ``function_call``
and ``function_call_output``) read as the Agents SDK items are (:mod:`.agents_items`),
and Codex's own tool items read as the function calls they are — ``custom_tool_call``
(``apply_patch``: its ``input`` is the tool use's ``{"input": ...}``) with its
``custom_tool_call_output``, ``local_shell_call`` (its ``action``), and an output given
as ``{"content": ..., "success": ...}``. The other lines are kept as they are and travel
with the message before them: ``session_meta`` (the header), ``turn_context``,
``event_msg`` (the UI's copy of each message), and ``compacted`` (Codex's own summary:
the transcript is every item as it happened, so the items before it are read too).
Items the library cannot express (``web_search_call``, ``ghost_snapshot``, an encrypted
``compaction``) are kept and not read.

Written back, a changed item keeps its line's ``timestamp`` and its own shape: a cleared
``custom_tool_call_output`` stays one, with the new output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..._messages.message import Message
from .._responses_items import to_responses_items
from .agents_items import item_kind, read_items
from .codec import Codec, Fit, Parsed, tag
from .graft import Rules, graft_list

__all__ = ["CodexRolloutCodec"]

_LINES = frozenset({"session_meta", "response_item", "turn_context", "event_msg", "compacted"})


def _line(unit: object) -> Mapping[str, Any]:
    return unit if isinstance(unit, Mapping) else {}


def _payload(unit: object) -> Mapping[str, Any] | None:
    line = _line(unit)
    payload = line.get("payload")
    if line.get("type") == "response_item" and isinstance(payload, Mapping):
        return payload
    return None


def _as_item(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    """A Codex item as the Responses item it stands for."""
    kind = payload.get("type")
    if kind == "custom_tool_call":
        arguments = json.dumps({"input": payload.get("input")}, ensure_ascii=False)
        return {**payload, "type": "function_call", "arguments": arguments}
    if kind == "custom_tool_call_output":
        return {**payload, "type": "function_call_output"}
    if kind == "local_shell_call":
        arguments = json.dumps(payload.get("action"), ensure_ascii=False)
        return {"type": "function_call", "call_id": payload.get("call_id") or payload.get("id"),
                "name": "local_shell", "arguments": arguments}  # fmt: skip
    output = payload.get("output")
    if kind == "function_call_output" and isinstance(output, Mapping):
        return {**payload, "output": output.get("content")}
    return payload


def _as_codex(item: dict[str, Any], original: Mapping[str, Any] | None) -> dict[str, Any]:
    """A rendered Responses item in the shape of the Codex item it replaces."""
    if original is None:
        return item
    kind = original.get("type")
    if kind == "custom_tool_call_output" and item.get("type") == "function_call_output":
        return {**item, "type": kind}
    if kind == "function_call_output" and isinstance(original.get("output"), Mapping):
        return {**item, "output": {**original["output"], "content": item.get("output")}}
    if kind in ("custom_tool_call", "local_shell_call"):
        return dict(original)  # calls are kept or removed, never changed
    return item


def _call_id(unit: object) -> tuple[str, str] | None:
    payload = _payload(unit)
    if payload is not None:
        value = payload.get("call_id") or (
            payload.get("id") if payload.get("type") == "local_shell_call" else None
        )
        if isinstance(value, str):
            return "call_id", value
    return None


def _kind(unit: object) -> object:
    payload = _payload(unit)
    return item_kind(_as_item(payload)) if payload is not None else None


class CodexRolloutCodec(Codec):
    """Codex CLI rollouts."""

    name = "codex"
    title = "Codex CLI rollout"
    containers = frozenset({"lines"})
    rules = Rules()

    def fits(self, units: Sequence[object], header: Mapping[str, object]) -> int:
        for unit in units:
            line = _line(unit)
            if tag(line.get("type")) in _LINES and "payload" in line:
                return Fit.DECLARED
        return Fit.NO

    def read(self, units: Sequence[object], header: Mapping[str, object]) -> Parsed:
        rows = [i for i, unit in enumerate(units) if _payload(unit) is not None]
        items = [_as_item(_payload(units[i]) or {}) for i in rows]
        messages, origins = read_items(items)
        return Parsed(tuple(messages), tuple(tuple(rows[i] for i in o) for o in origins))

    def render(self, messages: Sequence[Message], sources: Sequence[object]) -> list[object]:
        originals = {}
        for unit in sources:
            ident = _call_id(unit)
            payload = _payload(unit)
            if ident is not None and payload is not None:
                originals[(_kind(unit), ident[1])] = payload
        lines: list[object] = []
        for item in to_responses_items(messages):
            call = item.get("call_id")
            original = originals.get((item_kind(item), call)) if isinstance(call, str) else None
            lines.append({"type": "response_item", "payload": _as_codex(item, original)})
        return graft_list(
            sources,
            lines,
            self.rules,
            identity=_call_id,
            kind=_kind,
            skipped=lambda unit: _payload(unit) is None,
        )

    def join(self, units: list[object], original: Sequence[object]) -> list[object]:
        out: list[object] = []
        stamp: object = None
        for unit in units:
            line = _line(unit)
            if "timestamp" in line:
                stamp = line["timestamp"]
            elif stamp is not None and line.get("type") == "response_item":
                line = {"timestamp": stamp, **line}
            out.append(line if isinstance(unit, Mapping) else unit)
        return out
