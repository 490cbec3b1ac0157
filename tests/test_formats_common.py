"""Tests of neuron_context.formats shared by every format: the module, round-trip
properties, tool definitions, the depth limit and the entry points' argument types."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from formats_support import assert_names
from hypothesis import given
from hypothesis import strategies as st
from strategies import conversations, tool_definitions, well_formed_conversations

from neuron_context import (
    ConfigurationError,
    Document,
    Image,
    Message,
    ToolDefinition,
    ToolResult,
    ToolUse,
    formats,
    validate,
)
from neuron_context.formats import (
    from_anthropic,
    from_dict,
    from_json,
    from_openai,
    to_anthropic,
    to_dict,
    to_json,
    to_openai,
    tools_from_anthropic,
    tools_from_openai,
    tools_to_anthropic,
    tools_to_openai,
)


class TestModule:
    def test_all_is_sorted_and_complete(self) -> None:
        """__all__ is sorted as ruff sorts it (constants, then classes, then functions)
        and names only attributes the module has."""
        kinds = [(0 if n.isupper() else 1 if n[:1].isupper() else 2, n) for n in formats.__all__]
        assert kinds == sorted(kinds)
        for name in formats.__all__:
            assert hasattr(formats, name)


def _openai_cannot_send(messages: list[Message]) -> bool:
    """Whether a block is one that to_openai rejects (URL-only document, untyped data)."""
    for message in messages:
        for block in message.content:
            items = block.content if isinstance(block, ToolResult) else (block,)
            for item in items:
                if isinstance(item, Document) and item.data is None and item.text is None:
                    return True
                if isinstance(item, Image) and item.data is not None and item.media_type is None:
                    return True
    return False


def _anthropic_cannot_send(messages: list[Message]) -> bool:
    """Whether a block is one that to_anthropic rejects (an image of untyped data)."""
    return any(
        isinstance(item, Image) and item.data is not None and item.media_type is None
        for message in messages
        for block in message.content
        for item in (block.content if isinstance(block, ToolResult) else (block,))
    )


def _calls(messages: list[Message]) -> tuple[list[ToolUse], list[str]]:
    """The tool uses and the ids of the tool results, in order."""
    uses = [use for message in messages for use in message.tool_uses]
    results = [result.tool_use_id for message in messages for result in message.tool_results]
    return uses, results


class TestProperties:
    @given(conversations())
    def test_our_format_round_trips(self, messages: list[Message]) -> None:
        """from_dict(to_dict(x)) == x, also through a JSON string."""
        assert from_dict(to_dict(messages)) == messages
        assert from_json(to_json(messages)) == messages

    @given(conversations())
    def test_openai_rendering_is_stable(self, messages: list[Message]) -> None:
        """Reading a rendering back and rendering it again gives the same messages."""
        if _openai_cannot_send(messages):
            with pytest.raises(ConfigurationError):
                to_openai(messages)
            return
        rendered = to_openai(messages)
        assert to_openai(from_openai(rendered)) == rendered
        assert _calls(from_openai(rendered)) == _calls(messages)

    @given(conversations())
    def test_anthropic_rendering_is_stable(self, messages: list[Message]) -> None:
        """Reading a rendering back and rendering it again gives the same turns."""
        if _anthropic_cannot_send(messages):
            with pytest.raises(ConfigurationError):
                to_anthropic(messages)
            return
        system, rendered = to_anthropic(messages)
        back = from_anthropic(rendered, system=system)
        assert to_anthropic(back) == (system, rendered)
        assert _calls(back) == _calls(messages)
        roles = [turn["role"] for turn in rendered]
        assert all(a != b for a, b in itertools.pairwise(roles))

    @given(well_formed_conversations())
    def test_openai_keeps_conversations_well_formed(self, messages: list[Message]) -> None:
        """A well-formed conversation read back from Chat Completions is well formed."""
        if not _openai_cannot_send(messages):
            validate(from_openai(to_openai(messages)))

    @given(well_formed_conversations(running=False))
    def test_anthropic_keeps_conversations_well_formed(self, messages: list[Message]) -> None:
        """A well-formed conversation read back from the Messages API is well formed."""
        # No calls still running: a system message after them would become user text.
        if not _anthropic_cannot_send(messages):
            system, rendered = to_anthropic(messages)
            validate(from_anthropic(rendered, system=system))


WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
)


class TestToolDefinitions:
    """tools_to_openai / tools_from_openai and tools_to_anthropic / tools_from_anthropic."""

    def test_openai_shape(self) -> None:
        """A tool is a Chat Completions function tool."""
        assert tools_to_openai([WEATHER]) == [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Current weather for a city.",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            }
        ]

    def test_anthropic_shape(self) -> None:
        """A tool is a Messages API client tool."""
        assert tools_to_anthropic([WEATHER]) == [
            {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            }
        ]

    def test_schema_is_a_copy(self) -> None:
        """Changing a rendered schema leaves the definition as it was."""
        rendered = tools_to_anthropic([WEATHER])[0]["input_schema"]
        assert isinstance(rendered, dict)
        rendered["properties"] = {}
        assert WEATHER.input_schema["properties"] == {"city": {"type": "string"}}

    @given(tools=st.lists(tool_definitions(), max_size=4))
    def test_round_trips(self, tools: list[ToolDefinition]) -> None:
        """Both readers give back exactly what the writers wrote."""
        assert tools_from_openai(tools_to_openai(tools)) == tools
        assert tools_from_anthropic(tools_to_anthropic(tools)) == tools

    def test_missing_description_and_schema(self) -> None:
        """A missing description reads as "" and a missing schema as the empty object schema."""
        assert tools_from_openai([{"type": "function", "function": {"name": "now"}}]) == [
            ToolDefinition(name="now")
        ]
        assert tools_from_anthropic([{"name": "now", "cache_control": {}}]) == [
            ToolDefinition(name="now")
        ]

    @pytest.mark.parametrize(
        ("read", "tools", "path"),
        [
            (tools_from_openai, [{"type": "custom", "custom": {}}], "tools[0].type"),
            (tools_from_openai, [{"function": {"name": 5}}], "tools[0].function.name"),
            (
                tools_from_openai,
                [{"function": {"name": "a", "parameters": []}}],
                "tools[0].function.parameters",
            ),
            (tools_from_openai, ["get_time"], "tools[0]"),
            (tools_from_anthropic, [{"type": "web_search_20250305"}], "tools[0].type"),
            (tools_from_anthropic, [{"name": "a", "description": 3}], "tools[0].description"),
            (tools_from_anthropic, {"name": "a"}, "tools"),
        ],
    )
    def test_bad_input_names_the_path(self, read: Any, tools: object, path: str) -> None:
        """A tool list that is not the API's names the path of what is wrong."""
        with pytest.raises(ConfigurationError) as info:
            read(tools)
        assert_names(info, path)

    @pytest.mark.parametrize("write", [tools_to_openai, tools_to_anthropic])
    @pytest.mark.parametrize("tools", [None, WEATHER, [{"name": "x"}], "get_weather"])
    def test_writers_take_definitions(self, write: Any, tools: object) -> None:
        """The writers take a list of ToolDefinition and nothing else."""
        with pytest.raises(ConfigurationError, match="ToolDefinition"):
            write(tools)


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


class TestDepthLimit:
    """Free-form JSON read from the wire nests at most formats.MAX_DEPTH levels."""

    def test_limit(self) -> None:
        """The documented limit is 100, and a value at the limit is read."""
        assert formats.MAX_DEPTH == 100
        deepest = {"x": _nested(formats.MAX_DEPTH - 1)}
        block = {"type": "tool_use", "id": "a", "name": "n", "input": deepest}
        (message,) = from_anthropic([{"role": "assistant", "content": [block]}])
        assert message.tool_uses[0].input == deepest

    @pytest.mark.parametrize("depth", [101, 1_000, 50_000])
    def test_anthropic_input(self, depth: int) -> None:
        """A tool input nested too deeply is a ConfigurationError naming its path."""
        block = {"type": "tool_use", "id": "a", "name": "n", "input": {"x": _nested(depth)}}
        with pytest.raises(ConfigurationError, match="nested deeper than 100") as info:
            from_anthropic([{"role": "assistant", "content": [block]}])
        assert_names(info, "messages[0].content[0].input")

    @pytest.mark.parametrize("depth", [101, 1_000, 100_000])
    def test_openai_arguments(self, depth: int) -> None:
        """Arguments nested too deeply, as text or as an object, name their path."""
        text = '{"x": ' + "[" * depth + "]" * depth + "}"
        for arguments in (text, {"x": _nested(depth)}):
            function = {"name": "n", "arguments": arguments}
            call = {"id": "a", "type": "function", "function": function}
            with pytest.raises(ConfigurationError, match="nested deeper") as info:
                from_openai([{"role": "assistant", "content": None, "tool_calls": [call]}])
            assert_names(info, "messages[0].tool_calls[0].function.arguments")

    def test_raw_arguments_nested_too_deeply_are_written_verbatim(self) -> None:
        """A `_raw` string too deep to parse is still sent back as it is."""
        raw = "[" * 5_000 + "]" * 5_000
        use = ToolUse(id="a", name="n", input={formats.RAW_ARGUMENTS: raw})
        (rendered,) = to_openai([Message.assistant(tool_uses=[use])])
        assert json.dumps(rendered["tool_calls"]) == json.dumps(
            [{"id": "a", "type": "function", "function": {"name": "n", "arguments": raw}}]
        )

    @pytest.mark.parametrize("depth", [101, 100_000])
    def test_our_json(self, depth: int) -> None:
        """from_json and from_dict refuse deep input with a ConfigurationError."""
        use = {"type": "tool_use", "id": "a", "name": "n", "input": {"x": _nested(depth)}}
        data = {
            "format": "neuron-context",
            "version": 1,
            "messages": [{"role": "assistant", "content": [use]}],
        }
        if depth < 500:
            with pytest.raises(ConfigurationError, match="nested deeper") as info:
                from_dict(data)
            assert_names(info, "messages[0].content[0].input")
            with pytest.raises(ConfigurationError, match="nested deeper"):
                from_json(json.dumps(data))
        else:
            text = '{"format": "neuron-context", "version": 1, "messages": '
            with pytest.raises(ConfigurationError, match="nested deeper"):
                from_json(text + "[" * depth + "]" * depth + "}")

    def test_cyclic_input(self) -> None:
        """A cyclic tool input (only Python can build one) is refused, not looped over."""
        cyclic: dict[str, object] = {}
        cyclic["self"] = cyclic
        block = {"type": "tool_use", "id": "a", "name": "n", "input": cyclic}
        with pytest.raises(ConfigurationError, match="nested deeper"):
            from_anthropic([{"role": "assistant", "content": [block]}])


class TestEntryPointTypes:
    """Wrong types given to a reader or writer are ConfigurationErrors naming the argument."""

    @pytest.mark.parametrize("write", [to_openai, to_anthropic])
    @pytest.mark.parametrize("system", [5, b"x", ["x"], {"text": "x"}])
    def test_system_must_be_a_str(self, write: Any, system: object) -> None:
        """``system=5`` is refused, not sent as ``{"content": 5}``."""
        with pytest.raises(ConfigurationError, match="system must be a str"):
            write([Message.user("hi")], system=system)

    @pytest.mark.parametrize("write", [to_openai, to_anthropic, to_dict, to_json])
    @pytest.mark.parametrize("messages", [None, 5, "hi", Message.user("hi"), {"role": "user"}])
    def test_writers_take_a_list_of_messages(self, write: Any, messages: object) -> None:
        """A writer names its messages argument when it is not a list of Message."""
        with pytest.raises(ConfigurationError, match="messages must be a list of Message"):
            write(messages)

    @pytest.mark.parametrize("write", [to_openai, to_anthropic, to_dict])
    def test_wire_dicts_point_to_the_readers(self, write: Any) -> None:
        """An OpenAI-style dict among the messages is named, with the reader to use."""
        with pytest.raises(ConfigurationError, match=r"formats\.from_openai") as info:
            write([Message.user("hi"), {"role": "user", "content": "x"}])
        assert_names(info, "messages[1]")

    @pytest.mark.parametrize("read", [from_openai, from_anthropic])
    @pytest.mark.parametrize("messages", [None, 5, "hi", b"hi", {"role": "user"}])
    def test_readers_take_a_list(self, read: Any, messages: object) -> None:
        """A reader names its messages argument when it is not a list."""
        with pytest.raises(ConfigurationError, match="messages must be a list"):
            read(messages)

    @pytest.mark.parametrize("text", [None, 5, ["{}"], {"format": "neuron-context"}])
    def test_from_json_takes_text(self, text: object) -> None:
        """from_json takes a str or bytes."""
        with pytest.raises(ConfigurationError, match="text must be a str or bytes"):
            from_json(text)  # type: ignore[arg-type]

    @pytest.mark.parametrize("indent", [-1, "2", 2.0, True])
    def test_to_json_indent(self, indent: object) -> None:
        """to_json's indent is an int >= 0 or None."""
        with pytest.raises(ConfigurationError, match="indent"):
            to_json([], indent=indent)  # type: ignore[arg-type]

    def test_anthropic_system_of_a_wrong_type(self) -> None:
        """from_anthropic names a system prompt that is neither a str nor a list of blocks."""
        with pytest.raises(ConfigurationError, match="system must be a list"):
            from_anthropic([], system=5)  # type: ignore[arg-type]
