"""Tool definitions on the wire: Chat Completions ``tools`` and Anthropic ``tools``.

A :class:`~neuron_context.ToolDefinition` is sent differently by each API, and read back
by framework adapters that receive another library's tool list. Both directions live
here, next to the message formats, so the providers and the adapters render tools the
same way::

    OpenAI:    {"type": "function", "function": {"name", "description", "parameters"}}
    Anthropic: {"name", "description", "input_schema"}

The writers return new plain dicts (the schemas are deep copies); the readers check
every field and name the path of what is wrong (``tools[2].function.name``). A missing
description reads as ``""`` and a missing schema as the empty object schema; keys the
readers do not know (``strict``, ``cache_control``, ``type`` of an Anthropic client
tool) are ignored.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping

from .._errors import ConfigurationError, show
from .._messages.content import JSON
from .._messages.message import ToolDefinition
from ._common import build, check_depth, fail, get_mapping, get_messages, get_str, get_text

__all__ = ["tools_from_anthropic", "tools_from_openai", "tools_to_anthropic", "tools_to_openai"]


def _require_tools(tools: object) -> list[ToolDefinition]:
    if isinstance(tools, str | bytes | Mapping | ToolDefinition) or not isinstance(tools, Iterable):
        msg = f"tools must be a list of ToolDefinition, got {type(tools).__name__}"
        raise ConfigurationError(msg)
    checked = list(tools)
    for index, tool in enumerate(checked):
        if not isinstance(tool, ToolDefinition):
            msg = f"tools[{index}] must be a ToolDefinition, got {type(tool).__name__}"
            raise ConfigurationError(msg)
    return checked


def _schema(tool: ToolDefinition) -> dict[str, JSON]:
    return copy.deepcopy(dict(tool.input_schema))


def tools_to_openai(tools: Iterable[ToolDefinition]) -> list[dict[str, JSON]]:
    """``tools`` as Chat Completions function tools, ready for ``create(tools=...)``.

    Examples:
        >>> from neuron_context import ToolDefinition
        >>> tools_to_openai([ToolDefinition(name="now")])[0]["function"]["name"]
        'now'

    Raises:
        ConfigurationError: ``tools`` is not a list of :class:`ToolDefinition`.
    """
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": _schema(tool),
            },
        }
        for tool in _require_tools(tools)
    ]


def tools_to_anthropic(tools: Iterable[ToolDefinition]) -> list[dict[str, JSON]]:
    """``tools`` as Messages API client tools, ready for ``create(tools=...)``.

    Raises:
        ConfigurationError: ``tools`` is not a list of :class:`ToolDefinition`.
    """
    return [
        {"name": tool.name, "description": tool.description, "input_schema": _schema(tool)}
        for tool in _require_tools(tools)
    ]


def _definition(obj: Mapping[str, object], schema_key: str, path: str) -> ToolDefinition:
    name = get_str(obj, "name", path)
    description = get_text(obj, "description", path) or ""
    raw_schema = obj.get(schema_key)
    if raw_schema is None:
        return build(path, lambda: ToolDefinition(name=name, description=description))
    schema = get_mapping(raw_schema, f"{path}.{schema_key}")
    check_depth(schema, f"{path}.{schema_key}")
    return build(
        path, lambda: ToolDefinition(name=name, description=description, input_schema=schema)
    )


def tools_from_openai(tools: Iterable[Mapping[str, object]]) -> list[ToolDefinition]:
    """Read Chat Completions function tools (what :func:`tools_to_openai` writes).

    Raises:
        ConfigurationError: an entry is not a function tool; the message names its path,
            e.g. ``tools[1].function.parameters``.
    """
    out: list[ToolDefinition] = []
    for index, raw in enumerate(get_messages(tools, "tools")):
        path = f"tools[{index}]"
        obj = get_mapping(raw, path)
        kind = obj.get("type", "function")
        if kind != "function":
            raise fail(path, f"must be 'function', got {show(kind)}", at="type")
        function = get_mapping(obj.get("function"), f"{path}.function")
        out.append(_definition(function, "parameters", f"{path}.function"))
    return out


def tools_from_anthropic(tools: Iterable[Mapping[str, object]]) -> list[ToolDefinition]:
    """Read Messages API client tools (what :func:`tools_to_anthropic` writes).

    Raises:
        ConfigurationError: an entry is not a client tool (a server tool such as
            ``web_search`` has no ``input_schema`` to read); the message names its path.
    """
    out: list[ToolDefinition] = []
    for index, raw in enumerate(get_messages(tools, "tools")):
        path = f"tools[{index}]"
        obj = get_mapping(raw, path)
        kind = obj.get("type")
        if kind not in (None, "custom"):
            raise fail(path, f"is a server tool ({show(kind)}), not a client tool", at="type")
        out.append(_definition(obj, "input_schema", path))
    return out
