"""Claude Code sessions: ``~/.claude/projects/<project>/<session>.jsonl``.

Each line is a row. A ``user`` or ``assistant`` row holds one Messages API message in
``message`` — an assistant reply is written one row per content block, the rows sharing
``message.id``; a tool's result is a ``user`` row of ``tool_result`` blocks. Rows link to
the row before them by ``parentUuid``. The other rows are not sent to the model and are
kept as they are: ``summary`` (the session's title), ``file-history-snapshot``,
``progress`` (hooks), ``queue-operation``, ``system`` (``compact_boundary``, durations).

**Which rows are the conversation.** The session is the chain of ``parentUuid`` links that
ends at its last message row (across a ``compact_boundary``, through its
``logicalParentUuid``; a link to a row the file does not hold goes on from the message
row before), plus what parallel tool calls branch off it: the other rows of an
assistant reply on the chain (same ``message.id``) and the rows answering its calls. A
branch the user abandoned (rewinding with Esc Esc and trying again) is not on the chain:
it is kept in the file and not read. Claude Code's own summaries (``isCompactSummary``)
are read as the user messages they are.

**Sub-agents.** Rows with ``isSidechain: true`` in a main session belong to a sub-agent
(older Claude Code versions wrote them there): they are kept and not read, as the main
agent never saw them. A sub-agent's own file (``agent-*.jsonl``, every row a sidechain) is
read as that sub-agent's transcript.

**Blocks** are read as the Anthropic reader reads them; blocks the library does not model
(a ``server_tool_use``, a ``tool_reference`` inside a result) are skipped, and kept.

**Writing.** A changed message's rows are the original rows with the new block grafted
in (``uuid``, timestamps, ``toolUseResult`` and the API message's ``id``, ``model`` and
``usage`` stay); a new message (a summary) is a new ``user`` row with the session's
fields; and where a compaction dropped a row's parent, the row is linked to the row now
before it, so the chain stays whole. The file still ends its conversation on the last row
written: an abandoned branch's rows that would follow it move to just before it.
"""

from __future__ import annotations

import bisect
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from ..._messages.content import ContentBlock, ToolResult
from ..._messages.message import Message, Role
from .._anthropic_messages import read_block, to_anthropic
from .._common import fail, text_or_compaction
from .codec import Codec, Fit, Parsed, tag
from .graft import Rules, graft_list

__all__ = ["ClaudeCodeCodec"]

_MESSAGE_ROWS = frozenset({"user", "assistant"})
_BLOCKS = frozenset(
    {"text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking"}
)
_RESULT_ITEMS = frozenset({"text", "image"})
_ENVELOPE = ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "agentId")
_NAMESPACE = uuid.UUID("7b3e6a52-3c55-4d1e-9f0b-2f6c1c9a4e10")


def _row(unit: object) -> Mapping[str, Any]:
    return unit if isinstance(unit, Mapping) else {}


def _is_message_row(unit: object) -> bool:
    row = _row(unit)
    return tag(row.get("type")) in _MESSAGE_ROWS and isinstance(row.get("message"), Mapping)


def _content(row: Mapping[str, Any]) -> object:
    return row["message"].get("content")


def _reply_id(unit: object) -> object:
    """The API message id of an assistant row (``None`` for any other row)."""
    row = _row(unit)
    return row["message"].get("id") if row.get("type") == "assistant" else None


def _blocks_of(unit: object) -> list[object]:
    content = _content(_row(unit))
    return content if isinstance(content, list) else []


def _skipped(block: object) -> bool:
    """A block the library does not model (kept in the file, not read)."""
    return not (isinstance(block, Mapping) and tag(block.get("type")) in _BLOCKS)


def _readable(block: Mapping[str, Any]) -> Mapping[str, Any]:
    """``block`` without the items of a tool result that the library does not model."""
    content = block.get("content")
    if block.get("type") != "tool_result" or not isinstance(content, list):
        return block
    items = [
        i for i in content if not isinstance(i, Mapping) or tag(i.get("type")) in _RESULT_ITEMS
    ]
    return block if len(items) == len(content) else {**block, "content": items}


def _conversation(units: Sequence[object]) -> list[int]:
    """The indices of the rows that make the conversation (see the module docstring)."""
    rows = [i for i, unit in enumerate(units) if _is_message_row(unit)]
    main = [i for i in rows if not _row(units[i]).get("isSidechain")]
    candidates = main or rows  # a sub-agent's own file: every row is a sidechain
    if not candidates:
        return []
    by_uuid = {
        row["uuid"]: i
        for i, unit in enumerate(units)
        if isinstance(row := _row(unit), Mapping) and isinstance(row.get("uuid"), str)
    }
    if not all(isinstance(_row(units[i]).get("uuid"), str) for i in candidates):
        return candidates  # no links to follow: the file's order
    chain: set[int] = set()
    index: int | None = candidates[-1]
    while index is not None and index not in chain:
        chain.add(index)
        row = _row(units[index])
        parent = row.get("parentUuid")
        if parent is None:
            parent = row.get("logicalParentUuid")
        found = by_uuid.get(parent) if isinstance(parent, str) else None
        if found is None:  # a link to a row not in the file: go on from the row before
            before = bisect.bisect_left(candidates, index)
            found = candidates[before - 1] if before else None
        index = found
    allowed = set(candidates)
    replies = {tag(_reply_id(units[i])) for i in chain & allowed} - {None}
    read = {i for i in allowed if i in chain or tag(_reply_id(units[i])) in replies}
    calls = {
        tag(block.get("id"))
        for i in read
        for block in _blocks_of(units[i])
        if isinstance(block, Mapping) and block.get("type") == "tool_use"
    }
    for i in allowed - read:
        answers = {
            tag(b.get("tool_use_id")) for b in _blocks_of(units[i]) if isinstance(b, Mapping)
        }
        if _row(units[i]).get("type") == "user" and answers & calls:
            read.add(i)
    return sorted(read)


def _blocks(row: Mapping[str, Any], path: str) -> list[ContentBlock]:
    content = _content(row)
    if isinstance(content, str):
        return [text_or_compaction(content)] if content else []
    if not isinstance(content, list):
        where = f"{path}.message"
        raise fail(where, "must be a string or a list of blocks", at="content")
    return [
        read_block(_readable(block), f"{path}.message.content[{k}]")
        for k, block in enumerate(content)
        if not _skipped(block)
    ]


class ClaudeCodeCodec(Codec):
    """Claude Code session files."""

    name = "claude-code"
    title = "Claude Code session"
    containers = frozenset({"lines"})
    rules = Rules(implied={"is_error": False}, skipped=_skipped)

    def fits(self, units: Sequence[object], header: Mapping[str, object]) -> int:
        for unit in units:
            row = _row(unit)
            if _is_message_row(row) and ("sessionId" in row or "parentUuid" in row):
                return Fit.DECLARED
        return Fit.NO

    def read(self, units: Sequence[object], header: Mapping[str, object]) -> Parsed:
        messages: list[Message] = []
        origins: list[tuple[int, ...]] = []
        reply: tuple[object, int] | None = None  # (API message id, index) of the open reply
        for index in _conversation(units):
            row = _row(units[index])
            blocks = _blocks(row, f"messages[{index}]")
            if not blocks and _content(row):
                continue  # only blocks the library does not model: kept, not read
            if row["type"] == "assistant":
                message_id = row["message"].get("id")
                if reply is not None and message_id is not None and message_id == reply[0]:
                    # More of the open reply, perhaps after results of its first calls
                    # (Claude Code runs tools while the reply streams).
                    last = messages[reply[1]]
                    content = (*last.content, *blocks)
                    messages[reply[1]] = Message(role=Role.ASSISTANT, content=content)
                    origins[reply[1]] = (*origins[reply[1]], index)
                else:
                    messages.append(Message(role=Role.ASSISTANT, content=tuple(blocks)))
                    origins.append((index,))
                    reply = (message_id, len(messages) - 1)
                continue
            results = [b for b in blocks if isinstance(b, ToolResult)]
            rest = [b for b in blocks if not isinstance(b, ToolResult)]
            if results:
                messages.append(Message(role=Role.TOOL, content=tuple(results)))
                origins.append((index,))
            if rest or not results:
                messages.append(Message(role=Role.USER, content=tuple(rest)))
                origins.append((index,))
                reply = None  # the user spoke: the reply is over
        return Parsed(tuple(messages), tuple(origins))

    def render(self, messages: Sequence[Message], sources: Sequence[object]) -> list[object]:
        rows: list[object] = []
        for message in messages:
            _, turns = to_anthropic([message])
            for turn in turns:
                role = turn["role"]
                blocks = turn["content"]
                assert isinstance(blocks, list)  # to_anthropic writes lists
                rows.extend(
                    {"type": role, "message": {"role": role, "content": _one(role, block)}}
                    for block in blocks
                )
        return graft_list(
            sources,
            rows,
            self.rules,
            identity=_block_identity,
            kind=_row_kind,
            skipped=lambda row: not _is_message_row(row),
        )

    def join(self, units: list[object], original: Sequence[object]) -> list[object]:
        written = {tag(_row(u).get("uuid")) for u in units}
        dropped = {tag(_row(u).get("uuid")) for u in original} - written - {None}
        read = {tag(_row(original[i]).get("uuid")) for i in _conversation(original)}
        template = next((u for u in units if _is_message_row(u) and "sessionId" in _row(u)), {})
        out: list[object] = []
        last: Mapping[str, Any] | None = None  # the last row of the conversation written
        for position, unit in enumerate(units):
            row = _row(unit)
            if not _is_message_row(unit) or ("uuid" in row and tag(row["uuid"]) not in read):
                out.append(unit)  # not a message, or not one of the conversation's
                continue
            wanted = last.get("uuid") if last is not None else None
            if "uuid" not in row:  # a new message: a row of this session, after the last
                base = last or _row(template)
                made = uuid.uuid5(_NAMESPACE, f"{base.get('uuid')}/{position}")
                row = {
                    "parentUuid": wanted,
                    **{key: base[key] for key in _ENVELOPE if key in base},
                    **row,
                    "uuid": str(made),
                    **({"timestamp": base["timestamp"]} if "timestamp" in base else {}),
                }
            elif tag(row.get("parentUuid")) in dropped - {None}:
                row = {**row, "parentUuid": wanted}
            out.append(row)
            last = row
        return _ending_on(out, last)


def _ending_on(rows: list[object], last: Mapping[str, Any] | None) -> list[object]:
    """``rows`` ending their conversation on ``last``, its last row written: message rows
    the reader would take for the session's end instead (an abandoned branch that
    followed a part the compaction removed) move to just before ``last``, in order."""
    if last is None:
        return rows
    at = next(i for i, row in enumerate(rows) if row is last)
    sidechains = all(_row(r).get("isSidechain") for r in rows if _is_message_row(r))
    moved = [
        r
        for r in rows[at + 1 :]
        if _is_message_row(r) and (sidechains or not _row(r).get("isSidechain"))
    ]
    if not moved:
        return rows
    stay = [r for r in rows[at + 1 :] if all(r is not m for m in moved)]
    return [*rows[:at], *moved, last, *stay]


def _one(role: object, block: object) -> object:
    """A row's content: a user's text as a string (as Claude Code writes prompts), else
    the one block in a list."""
    plain = isinstance(block, Mapping) and block.get("type") == "text" and len(block) == 2
    return block["text"] if role == "user" and plain else [block]  # type: ignore[index]


def _inner(row: object) -> object:
    content = _content(_row(row)) if _is_message_row(row) else None
    return content[0] if isinstance(content, list) and len(content) == 1 else content


def _block_identity(row: object) -> tuple[str, str] | None:
    block = _inner(row)
    if isinstance(block, Mapping):
        for key in ("id", "tool_use_id"):
            value = block.get(key)
            if isinstance(value, str):
                return key, value
    return None


def _row_kind(row: object) -> object:
    block = _inner(row)
    kind = block.get("type") if isinstance(block, Mapping) else "text"
    return _row(row).get("type"), kind
