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
from .._stores.offload import describe_call, is_reference, offload, referenced, result_content
from .._stores.store import Store

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
    refs: Iterable[ResultRef],
    placeholder: str,
    counter: BaseCounter,
    *,
    store: Store | None = None,
    calls: Iterable[ToolCall] = (),
    strategy: str = "",
) -> dict[tuple[int, int], ContentBlock]:
    """The cleared copies of ``refs`` (content: ``placeholder``), by position, leaving out
    a result that costs no more than the placeholder or already is it (the clearing
    strategy's rule, so clearing never makes a history bigger).

    With a ``store``, each result is offloaded and its placeholder names the call (found
    among ``calls``), its size and its key; a result that is a reference already is left
    as it is, and one whose put failed gets the plain placeholder."""
    content = (Text(text=placeholder),)
    cost = counter.estimate_text(placeholder)
    uses = {(ref.message, ref.block): call.use for call in calls for ref in call.results}
    cleared: dict[tuple[int, int], ContentBlock] = {}
    for ref in refs:
        result = ref.result
        if store is not None and is_reference(result):
            continue
        result_cost = counter.estimate_content(result.content)
        if result.content == content or result_cost <= cost:
            continue
        where = (ref.message, ref.block)
        if store is not None:
            use = uses.get(where)
            key = offload(store, result_content(result, use), strategy)
            if key is not None:
                text = referenced(placeholder, result_cost, key, describe_call(use))
                if counter.estimate_text(text) < result_cost:
                    cleared[where] = replace_content(result, (Text(text=text),))
                continue
        cleared[where] = replace_content(result, content)
    return cleared
