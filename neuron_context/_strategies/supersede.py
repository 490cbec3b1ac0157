"""Which tool calls a later call makes obsolete: the one rule behind several strategies.

Superseded script versions, re-fetched URLs and re-read files are the same question:
group calls by a key (the path written, the URL fetched) and ask which older calls a
newer one of the same key replaces. The answer is computed here once, from the calls
the boundary API pairs with their results (:func:`tool_calls`), so no strategy scans
exchanges itself.

Only a call that *succeeded* supersedes: a write that failed left the file as the older
write made it, and a fetch that failed says nothing about the page, so the older call
and its result are still the truth. A call still running (no result yet) supersedes
nothing for the same reason.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping

from .._counting.counter import BaseCounter, compact_json
from .._messages.content import JSON, ContentBlock, Text
from .._messages.conversation import ResultRef, ToolCall, replace_content

__all__ = ["KeyOf", "clear_results", "group", "hashable", "superseded"]

KeyOf = Callable[[ToolCall], Hashable | None]
"""The key of a call (``None``: the call is not tracked)."""


def hashable(value: JSON | object) -> Hashable | None:
    """A JSON argument value as a dict key: strings as they are, anything else as its
    compact JSON (so ``1`` and ``True`` stay apart); ``None`` stays ``None`` (no key)."""
    if value is None or isinstance(value, str):
        return value
    try:
        return compact_json(value)
    except (TypeError, ValueError):
        return repr(value)


def superseded(
    calls: Iterable[ToolCall],
    key_of: KeyOf,
    *,
    supersedes: Callable[[ToolCall], bool] | None = None,
) -> list[tuple[ToolCall, ToolCall]]:
    """The calls a newer call of the same key makes obsolete, each with that newer call
    (``(old, newer)`` pairs, newest old call first).

    Calls are taken newest first (a later tool use of the same message is newer); a call
    supersedes the older calls of its key when ``supersedes(call)`` says so (default:
    it succeeded). Keys come from ``key_of``; a call whose key is ``None`` is ignored.
    """
    can_supersede = supersedes if supersedes is not None else _succeeded
    newest: dict[Hashable, ToolCall] = {}
    found: list[tuple[ToolCall, ToolCall]] = []
    for call in reversed(list(calls)):
        key = key_of(call)
        if key is None:
            continue
        newer = newest.get(key)
        if newer is not None:
            found.append((call, newer))
        elif can_supersede(call):
            newest[key] = call
    return found


def _succeeded(call: ToolCall) -> bool:
    return call.succeeded


def group(calls: Iterable[ToolCall], key_of: KeyOf) -> Mapping[Hashable, list[ToolCall]]:
    """Calls by key, oldest first within each key (calls without a key left out)."""
    groups: dict[Hashable, list[ToolCall]] = {}
    for call in calls:
        key = key_of(call)
        if key is not None:
            groups.setdefault(key, []).append(call)
    return groups


def clear_results(
    refs: Iterable[ResultRef], placeholder: str, counter: BaseCounter
) -> dict[tuple[int, int], ContentBlock]:
    """The cleared copies of ``refs`` (content: ``placeholder``), by position, leaving out
    a result that costs no more than the placeholder or already is it (the clearing
    strategy's rule, so clearing never makes a history bigger)."""
    content = (Text(text=placeholder),)
    cost = counter.estimate_text(placeholder)
    cleared: dict[tuple[int, int], ContentBlock] = {}
    for ref in refs:
        result = ref.result
        if result.content != content and counter.estimate_content(result.content) > cost:
            cleared[ref.message, ref.block] = replace_content(result, content)
    return cleared
