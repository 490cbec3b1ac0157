"""Writing a changed message over the JSON it was read from, keeping what we do not model.

A format's writer (``to_anthropic``, ``to_openai``, ...) renders only what the library
models. When a strategy changes a message (clears a tool result, strips calls, truncates
a text), the file must still keep everything else the message held: a ``cache_control``
breakpoint, citations, a message id, a Claude Code row's ``uuid`` and timestamps. So the
new rendering is *grafted* onto the original JSON:

- an object keeps every key of the original; a key the new rendering also has takes the
  new value (grafted in turn), a key only the original has is kept — unless the writer
  leaves it out on purpose (``is_error`` when false, ``tool_calls`` when there are none:
  :attr:`Rules.implied`), in which case it is kept only while it still means the same;
- a list is matched element by element: by id where the new element carries one
  (``id``, ``tool_use_id``, ``call_id``, ``tool_call_id``), else by kind in order; a new
  element takes the place and the extra fields of its match, an original element with no
  match is dropped (the strategy removed it) unless the reader skipped it
  (:attr:`Rules.skipped`: an item it cannot express), which stays after the element it
  followed;
- content stays in its shape: a string stays a string when the new rendering is a single
  text part, and a JSON string (tool-call ``arguments``) whose value did not change keeps
  its spelling;
- anything equal to the original is the original object.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

__all__ = ["ID_KEYS", "Rules", "graft", "graft_list", "kind_of", "never"]

ID_KEYS = ("id", "tool_use_id", "call_id", "tool_call_id")
"""Keys that identify an element of a list (a tool call, a tool result) across renderings."""

_JSON_STRINGS = frozenset({"arguments", "args"})
_KIND_KEYS = ("type", "part_kind", "kind", "role")
_TEXT_PART = frozenset({"type", "text"})


def never(_value: object) -> bool:
    """Nothing is skipped."""
    return False


@attrs.frozen
class Rules:
    """What one format's writer leaves out, for :func:`graft`."""

    implied: Mapping[str, object] = attrs.field(factory=dict)
    """Keys the writer omits when they hold this value (``{"is_error": False}``): an
    original key with that value is kept, with any other value dropped."""
    skipped: Callable[[object], bool] = never
    """Whether the reader skipped this list element (an item it cannot express): such an
    element is kept, after the element it followed."""


def kind_of(value: object) -> object:
    """What kind of element ``value`` is: its ``type`` (or ``part_kind``, ``kind``,
    ``role``) for an object, its Python type otherwise."""
    if isinstance(value, Mapping):
        for key in _KIND_KEYS:
            kind = value.get(key)
            if isinstance(kind, str):
                return kind
        return None
    return type(value)


def _same_kind(raw: Mapping[str, object], new: Mapping[str, object]) -> bool:
    """Whether two objects are the same kind of thing, by the first discriminator both
    have (an API message's ``type`` is absent from a rendering that has only its role)."""
    for key in _KIND_KEYS:
        if key in raw and key in new:
            return raw[key] == new[key]
    return True


def _same_json_string(raw: object, new: object) -> bool:
    if not isinstance(raw, str) or not isinstance(new, str):
        return False
    try:
        return bool(json.loads(raw) == json.loads(new))
    except (ValueError, RecursionError):
        return False


def _is_text_part(value: object) -> bool:
    return isinstance(value, Mapping) and set(value) == _TEXT_PART and value["type"] == "text"


def _is_text(value: object) -> bool:
    return isinstance(value, Mapping) and value.get("type") == "text"


def graft(raw: object, new: object, rules: Rules, *, key: str | None = None) -> object:
    """``new`` written over ``raw`` (see the module docstring); ``key`` is the key both
    are found under, if any."""
    if raw is new or raw == new:
        return raw
    if key in _JSON_STRINGS and _same_json_string(raw, new):
        return raw
    if isinstance(raw, Mapping) and isinstance(new, Mapping):
        if not _same_kind(raw, new):
            return new
        out: dict[str, Any] = {}
        for name, value in raw.items():
            if name in new:
                out[name] = graft(value, new[name], rules, key=name)
            elif name not in rules.implied or value == rules.implied[name]:
                out[name] = value
        for name, value in new.items():
            if name not in raw:
                out[name] = value
        return out
    if isinstance(raw, list) and isinstance(new, list):
        return graft_list(raw, new, rules)
    if isinstance(raw, str) and isinstance(new, list) and len(new) == 1 and _is_text_part(new[0]):
        return new[0]["text"]  # the original was a string: it stays one
    if isinstance(raw, list) and isinstance(new, str) and len(raw) == 1 and _is_text(raw[0]):
        return [graft(raw[0], {"type": "text", "text": new}, rules)]
    return new


def _identity(value: object) -> tuple[str, str] | None:
    if not isinstance(value, Mapping):
        return None
    for name in ID_KEYS:
        ident = value.get(name)
        if isinstance(ident, str) and ident:
            return name, ident
    return None


def graft_list(
    raw: Sequence[object],
    new: Sequence[object],
    rules: Rules,
    *,
    identity: Callable[[object], tuple[str, str] | None] = _identity,
    kind: Callable[[object], object] = kind_of,
    skipped: Callable[[object], bool] | None = None,
) -> list[object]:
    """The elements of ``new``, each grafted onto its match in ``raw`` (see the module
    docstring); ``identity`` and ``kind`` say how elements match, ``skipped`` which
    elements the reader skipped (default :attr:`Rules.skipped`: the rules of the
    elements' own lists, when these are the units of a file)."""
    is_skipped = rules.skipped if skipped is None else skipped

    def join(original: object, fresh: object) -> object:
        return graft(original, fresh, rules)

    used: set[int] = set()
    match: list[int | None] = []
    for element in new:
        ident = identity(element)
        element_kind = kind(element)
        found: int | None = None
        for index, original in enumerate(raw):
            if index in used or is_skipped(original) or kind(original) != element_kind:
                continue
            if ident is None or identity(original) == ident:
                found = index
                break
        if found is not None:
            used.add(found)
        match.append(found)
    followers: dict[int, list[object]] = {}
    anchor = -1
    for index, original in enumerate(raw):
        if index in used:
            anchor = index
        elif is_skipped(original):
            followers.setdefault(anchor, []).append(original)
    out: list[object] = list(followers.get(-1, ()))
    for element, found in zip(new, match, strict=True):
        if found is None:
            out.append(element)
            continue
        out.append(join(raw[found], element))
        out.extend(followers.get(found, ()))
    return out
