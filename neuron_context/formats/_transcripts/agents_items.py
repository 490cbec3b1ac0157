"""OpenAI Agents SDK sessions: Responses input items (``result.to_input_list()``).

A dump is the list of items an Agents SDK run holds (as JSON, or one item per JSONL
line): ``message`` items (or the SDK's easy ``{"role", "content"}`` messages),
``function_call`` and ``function_call_output``, ``reasoning``. They are read with the
library's own conversion (:func:`neuron_context.ext.openai_agents.from_responses_items`,
which needs no framework: it works on plain JSON) — an assistant reply's run of items is
one assistant message — and written with its ``to_responses_items``, grafted onto the
items they came from (an item's ``id``, ``status``, ``annotations``, ``logprobs`` stay).
Items the library cannot express (hosted and computer tool calls, MCP items, item
references, ...) are not read and travel with the message before them; inside an item,
the parts it does not read (an image given by file id, an annotation) are kept, and the
parts it reads are replaced by what the message now holds, never written beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..._errors import ConfigurationError
from ..._messages.message import Message
from .._responses_items import read, to_responses_items
from .codec import Codec, Fit, Parsed, tag
from .graft import Rules, graft_list, kind_of

__all__ = ["ITEM_KINDS", "AgentsItemsCodec", "item_kind", "read_items", "render_items"]

ITEM_KINDS = frozenset({"message", "function_call", "function_call_output", "reasoning"})
"""The Responses items the library reads."""
_ROLES = frozenset({"user", "assistant", "system", "developer"})
_READ_PARTS = frozenset({"input_text", "output_text", "refusal", "summary_text", "reasoning_text"})


def item_kind(item: object) -> object:
    """The kind of a Responses item (an easy message is a ``message``)."""
    if isinstance(item, Mapping) and "type" not in item and "role" in item:
        return "message"
    return kind_of(item)


def _skipped(item: object) -> bool:
    if not isinstance(item, Mapping):
        return True
    kind = item_kind(item)
    return kind not in ITEM_KINDS or (kind == "message" and tag(item.get("role")) not in _ROLES)


def _skipped_part(part: object) -> bool:
    """Whether the reader skipped this element of a list inside an item (a content part,
    a reasoning summary, an annotation): the writer keeps such an element, and replaces
    the others with the parts of the message as it is now."""
    if not isinstance(part, Mapping):
        return True
    kind = tag(part.get("type"))
    if kind == "input_image":
        return not isinstance(part.get("image_url"), str)
    if kind == "input_file":
        return not isinstance(part.get("file_data") or part.get("file_url"), str)
    return kind not in _READ_PARTS


def _check(items: Sequence[object]) -> None:
    """The item shapes the conversion needs, checked with their path (the conversion
    itself trusts them)."""
    for index, item in enumerate(items):
        if _skipped(item):
            continue
        assert isinstance(item, Mapping)  # _skipped refuses the rest
        path = f"messages[{index}]"
        content = item.get("content")
        if item_kind(item) == "message" and not isinstance(content, str | list | None):
            msg = f"{path}.content must be a string or a list of parts"
            raise ConfigurationError(msg)
        if isinstance(content, list) and not all(isinstance(p, Mapping) for p in content):
            msg = f"{path}.content must be a list of parts (objects)"
            raise ConfigurationError(msg)
        for key in ("call_id", "name", "arguments", "encrypted_content"):
            if key in item and not isinstance(item[key], str | None):
                msg = f"{path}.{key} must be a string, got {type(item[key]).__name__}"
                raise ConfigurationError(msg)
        output = item.get("output")
        if item_kind(item) == "function_call_output" and not isinstance(output, str | list):
            msg = f"{path}.output must be a string or a list of parts"
            raise ConfigurationError(msg)
        for key in ("summary", "content"):
            value = item.get(key)
            if item_kind(item) == "reasoning" and not isinstance(value, list | None):
                msg = f"{path}.{key} must be a list of parts"
                raise ConfigurationError(msg)


def read_items(items: Sequence[object]) -> tuple[list[Message], list[tuple[int, ...]]]:
    """Our messages for Responses ``items`` and, for each, the items it was read from.

    Raises:
        ConfigurationError: an item's field has the wrong type, naming its path.
    """
    _check(items)
    modelled = [i for i, item in enumerate(items) if not _skipped(item)]
    try:
        messages, sources = read([items[i] for i in modelled])  # type: ignore[misc]
    except (ConfigurationError, TypeError, AttributeError, KeyError, ValueError) as exc:
        msg = f"messages: not Responses input items: {exc}"
        raise ConfigurationError(msg) from exc
    return messages, [tuple(modelled[i] for i in source) for source in sources]


def render_items(
    messages: Sequence[Message], sources: Sequence[object], rules: Rules
) -> list[object]:
    """Responses items for ``messages``, grafted onto the items they came from (``rules``
    apply inside the items; an item the reader skipped is kept)."""
    items: list[object] = list(to_responses_items(messages))
    return graft_list(sources, items, rules, kind=item_kind, skipped=_skipped)


class AgentsItemsCodec(Codec):
    """Agents SDK sessions (Responses input items)."""

    name = "openai-agents"
    title = "OpenAI Agents SDK items"
    rules = Rules(skipped=_skipped_part)

    def fits(self, units: Sequence[object], header: Mapping[str, object]) -> int:
        for unit in units:
            if not isinstance(unit, Mapping):
                continue
            kind = unit.get("type")
            if isinstance(kind, str) and kind in ITEM_KINDS - {"message"}:
                return Fit.DECLARED  # only Responses items have these
            content = unit.get("content")
            if kind == "message" or (
                isinstance(content, list)
                and any(
                    isinstance(p, Mapping) and p.get("type") in ("input_text", "output_text")
                    for p in content
                )
            ):
                return Fit.DECLARED
        return Fit.NO

    def read(self, units: Sequence[object], header: Mapping[str, object]) -> Parsed:
        messages, origins = read_items(units)
        return Parsed(tuple(messages), tuple(origins))

    def render(self, messages: Sequence[Message], sources: Sequence[object]) -> list[object]:
        return render_items(messages, sources, self.rules)
