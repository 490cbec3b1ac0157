"""Examples for the message value types (CONTRACT §1)."""

from __future__ import annotations

import enum
from types import MappingProxyType

import attrs
import pytest

from neuron_context import (
    Compaction,
    ConfigurationError,
    Document,
    Image,
    Message,
    RedactedThinking,
    Role,
    Text,
    Thinking,
    TokenCounter,
    ToolDefinition,
    ToolResult,
    ToolUse,
)

URL = "https://example.com/cat.png"


def _use(id_: str = "toolu_1", name: str = "get_time") -> ToolUse:
    return ToolUse(id=id_, name=name, input={})


class TestRole:
    """Role."""

    def test_is_a_str_enum_with_four_values(self) -> None:
        """Role is a str enum holding exactly system, user, assistant and tool."""
        assert issubclass(Role, str)
        assert issubclass(Role, enum.Enum)
        assert [role.value for role in Role] == ["system", "user", "assistant", "tool"]
        assert [role.name for role in Role] == ["SYSTEM", "USER", "ASSISTANT", "TOOL"]

    def test_compares_equal_to_its_string(self) -> None:
        """A role equals its value and is looked up from it."""
        tool: str = Role.TOOL
        assert tool == "tool"
        assert Role("assistant") is Role.ASSISTANT
        assert f"{Role.USER}" == "user"


class TestText:
    """Text."""

    def test_construction(self) -> None:
        """A Text holds its text, empty included."""
        assert Text(text="hi").text == "hi"
        assert Text(text="").text == ""

    @pytest.mark.parametrize("bad", [None, 1, b"bytes", ["a"]])
    def test_non_str_text_is_rejected(self, bad: object) -> None:
        """A non-str text raises ConfigurationError naming Text.text."""
        with pytest.raises(ConfigurationError, match=r"Text\.text"):
            Text(text=bad)  # type: ignore[arg-type]

    def test_is_keyword_only(self) -> None:
        """Positional construction is refused."""
        with pytest.raises(TypeError):
            Text("hi")  # type: ignore[call-arg]

    def test_frozen(self) -> None:
        """Assigning a field raises."""
        text = Text(text="hi")
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            text.text = "ho"  # type: ignore[misc]

    def test_equality_by_value(self) -> None:
        """Two texts with the same text are equal; different texts are not."""
        assert Text(text="a") == Text(text="a")
        assert Text(text="a") != Text(text="b")


class TestImage:
    """Image."""

    def test_by_url(self) -> None:
        """An image given by url has no data and no size by default."""
        image = Image(url=URL)
        assert (image.url, image.data, image.media_type) == (URL, None, None)
        assert (image.width, image.height) == (None, None)

    def test_by_data_with_size(self) -> None:
        """An image given inline keeps its media type and size."""
        image = Image(media_type="image/png", data="aGk=", width=640, height=480)
        assert (image.media_type, image.data, image.width, image.height) == (
            "image/png",
            "aGk=",
            640,
            480,
        )

    def test_both_data_and_url_is_rejected(self) -> None:
        """Giving data and url raises ConfigurationError naming both fields."""
        with pytest.raises(ConfigurationError, match=r"Image\.data.*Image\.url"):
            Image(data="aGk=", url=URL)

    def test_neither_data_nor_url_is_rejected(self) -> None:
        """Giving neither data nor url raises ConfigurationError naming both fields."""
        with pytest.raises(ConfigurationError, match=r"Image\.data.*Image\.url"):
            Image(media_type="image/png")

    @pytest.mark.parametrize(
        ("field", "value"),
        [("media_type", 1), ("data", b"x"), ("url", 3)],
    )
    def test_non_str_fields_are_rejected(self, field: str, value: object) -> None:
        """A non-str media_type, data or url raises ConfigurationError naming it."""
        kwargs: dict[str, object] = {"url": URL, field: value}
        with pytest.raises(ConfigurationError, match=rf"Image\.{field}"):
            Image(**kwargs)  # type: ignore[arg-type]

    @pytest.mark.parametrize("field", ["width", "height"])
    @pytest.mark.parametrize("value", [-1, 1.5, True, "10"])
    def test_bad_size_is_rejected(self, field: str, value: object) -> None:
        """A width or height that is not a non-negative int raises naming the field."""
        kwargs: dict[str, object] = {"url": URL, field: value}
        with pytest.raises(ConfigurationError, match=rf"Image\.{field}"):
            Image(**kwargs)  # type: ignore[arg-type]


class TestDocument:
    """Document."""

    def test_plain_text_document(self) -> None:
        """A text document needs no data or url."""
        document = Document(media_type="text/plain", text="hello")
        assert (document.text, document.data, document.url, document.pages) == (
            "hello",
            None,
            None,
            None,
        )

    def test_pdf_by_data_with_pages(self) -> None:
        """A PDF given inline keeps its page count."""
        document = Document(media_type="application/pdf", data="JVBERi0=", pages=3)
        assert document.pages == 3

    def test_no_source_is_rejected(self) -> None:
        """A document with no data, url or text raises naming the fields."""
        with pytest.raises(ConfigurationError, match=r"Document\.data"):
            Document(media_type="application/pdf")

    def test_data_and_url_are_exclusive(self) -> None:
        """A document with data and url raises naming both."""
        with pytest.raises(ConfigurationError, match=r"Document\.data.*Document\.url"):
            Document(media_type="application/pdf", data="JVBERi0=", url=URL)

    @pytest.mark.parametrize("bad", ["", None, 5])
    def test_bad_media_type_is_rejected(self, bad: object) -> None:
        """An empty or non-str media_type raises naming Document.media_type."""
        with pytest.raises(ConfigurationError, match=r"Document\.media_type"):
            Document(media_type=bad, text="x")  # type: ignore[arg-type]

    def test_bad_pages_is_rejected(self) -> None:
        """Negative pages raise naming Document.pages."""
        with pytest.raises(ConfigurationError, match=r"Document\.pages"):
            Document(media_type="application/pdf", url=URL, pages=-2)


class TestToolUse:
    """ToolUse."""

    def test_construction(self) -> None:
        """A tool use holds its id, name and input."""
        use = ToolUse(id="toolu_1", name="search", input={"q": "cats", "n": [1, 2]})
        assert (use.id, use.name, use.input) == ("toolu_1", "search", {"q": "cats", "n": [1, 2]})

    def test_input_is_copied_at_construction(self) -> None:
        """Mutating the caller's dict (even a nested list) afterwards does not change the block."""
        given: dict[str, object] = {"q": "cats", "tags": ["a"]}
        use = ToolUse(id="toolu_1", name="search", input=given)
        given["q"] = "dogs"
        tags = given["tags"]
        assert isinstance(tags, list)
        tags.append("b")
        assert use.input == {"q": "cats", "tags": ["a"]}

    def test_input_mapping_becomes_a_dict(self) -> None:
        """Any mapping is accepted and stored as a plain dict."""
        use = ToolUse(id="t", name="n", input=MappingProxyType({"a": 1}))
        assert type(use.input) is dict
        assert use.input == {"a": 1}

    @pytest.mark.parametrize("bad", [["a", 1], "text", 3, None])
    def test_non_mapping_input_is_rejected(self, bad: object) -> None:
        """A non-mapping input raises ConfigurationError naming ToolUse.input."""
        with pytest.raises(ConfigurationError, match=r"ToolUse\.input"):
            ToolUse(id="t", name="n", input=bad)

    def test_non_str_keys_are_rejected(self) -> None:
        """An input with a non-str key raises ConfigurationError naming ToolUse.input."""
        with pytest.raises(ConfigurationError, match=r"ToolUse\.input keys"):
            ToolUse(id="t", name="n", input={1: "x"})

    @pytest.mark.parametrize("field", ["id", "name"])
    @pytest.mark.parametrize("bad", ["", None, 7])
    def test_bad_id_or_name_is_rejected(self, field: str, bad: object) -> None:
        """An empty or non-str id or name raises naming the field."""
        kwargs: dict[str, object] = {"id": "t", "name": "n", field: bad}
        with pytest.raises(ConfigurationError, match=rf"ToolUse\.{field}"):
            ToolUse(**kwargs)  # type: ignore[arg-type]

    def test_input_defaults_to_empty(self) -> None:
        """Without input the tool use has an empty dict."""
        assert ToolUse(id="t", name="n").input == {}


class TestToolResult:
    """ToolResult."""

    def test_str_content_becomes_one_text(self) -> None:
        """A str content becomes a one-item tuple holding a Text."""
        result = ToolResult(tool_use_id="t", content="42")
        assert result.content == (Text(text="42"),)
        assert result.is_error is False

    def test_sequence_content_becomes_a_tuple(self) -> None:
        """A list of Text and Image items is stored as a tuple."""
        items = [Text(text="a"), Image(url=URL)]
        result = ToolResult(tool_use_id="t", content=items)
        assert result.content == (Text(text="a"), Image(url=URL))

    def test_single_item_content(self) -> None:
        """A single Text item is wrapped in a tuple."""
        result = ToolResult(tool_use_id="t", content=Text(text="a"))
        assert result.content == (Text(text="a"),)

    def test_empty_content(self) -> None:
        """A result may be empty."""
        assert ToolResult(tool_use_id="t").content == ()

    @pytest.mark.parametrize(
        "bad",
        [
            [Text(text="a"), "b"],
            [Document(media_type="text/plain", text="x")],
            [ToolUse(id="t", name="n")],
            [{"type": "text", "text": "a"}],
        ],
    )
    def test_bad_item_is_rejected(self, bad: list[object]) -> None:
        """An item that is not Text or Image raises naming ToolResult.content."""
        with pytest.raises(ConfigurationError, match=r"ToolResult\.content"):
            ToolResult(tool_use_id="t", content=bad)

    def test_non_iterable_content_is_rejected(self) -> None:
        """A content that is neither str nor sequence raises naming ToolResult.content."""
        with pytest.raises(ConfigurationError, match=r"ToolResult\.content"):
            ToolResult(tool_use_id="t", content=42)

    @pytest.mark.parametrize("bad", ["", None])
    def test_bad_tool_use_id_is_rejected(self, bad: object) -> None:
        """An empty or missing tool_use_id raises naming ToolResult.tool_use_id."""
        with pytest.raises(ConfigurationError, match=r"ToolResult\.tool_use_id"):
            ToolResult(tool_use_id=bad, content="x")  # type: ignore[arg-type]

    @pytest.mark.parametrize("bad", ["yes", 1, None])
    def test_non_bool_is_error_is_rejected(self, bad: object) -> None:
        """A non-bool is_error raises ConfigurationError naming ToolResult.is_error."""
        with pytest.raises(ConfigurationError, match=r"ToolResult\.is_error"):
            ToolResult(tool_use_id="t", content="x", is_error=bad)  # type: ignore[arg-type]

    def test_text_joins_text_items(self) -> None:
        """The text property joins the text items with a newline, skipping images."""
        content = (Text(text="a"), Image(url=URL), Text(text="b"))
        assert ToolResult(tool_use_id="t", content=content).text == "a\nb"


class TestThinking:
    """Thinking, RedactedThinking and Compaction."""

    def test_thinking(self) -> None:
        """A thinking block has an empty signature by default."""
        assert Thinking(thinking="hmm").signature == ""
        assert Thinking(thinking="hmm", signature="sig").signature == "sig"

    @pytest.mark.parametrize("field", ["thinking", "signature"])
    def test_thinking_non_str_is_rejected(self, field: str) -> None:
        """A non-str thinking or signature raises naming the field."""
        kwargs: dict[str, object] = {"thinking": "t", field: 1}
        with pytest.raises(ConfigurationError, match=rf"Thinking\.{field}"):
            Thinking(**kwargs)  # type: ignore[arg-type]

    def test_redacted_thinking(self) -> None:
        """A redacted thinking block holds its data; non-str data is rejected."""
        assert RedactedThinking(data="opaque").data == "opaque"
        with pytest.raises(ConfigurationError, match=r"RedactedThinking\.data"):
            RedactedThinking(data=None)  # type: ignore[arg-type]

    def test_compaction(self) -> None:
        """A compaction holds its summary; non-str content is rejected."""
        assert Compaction(content="summary").content == "summary"
        with pytest.raises(ConfigurationError, match=r"Compaction\.content"):
            Compaction(content=3)  # type: ignore[arg-type]


class TestMessagePlacement:
    """Which blocks a message of each role may hold."""

    @pytest.mark.parametrize(
        "block",
        [_use(), Thinking(thinking="t"), RedactedThinking(data="d")],
        ids=["ToolUse", "Thinking", "RedactedThinking"],
    )
    @pytest.mark.parametrize("role", [Role.SYSTEM, Role.USER])
    def test_assistant_only_blocks(self, role: Role, block: ToolUse) -> None:
        """ToolUse, Thinking and RedactedThinking are refused outside assistant messages."""
        with pytest.raises(ConfigurationError, match=type(block).__name__):
            Message(role=role, content=(block,))

    @pytest.mark.parametrize(
        "block",
        [_use(), Thinking(thinking="t"), RedactedThinking(data="d")],
        ids=["ToolUse", "Thinking", "RedactedThinking"],
    )
    def test_assistant_only_blocks_in_assistant(self, block: ToolUse) -> None:
        """ToolUse, Thinking and RedactedThinking are accepted in assistant messages."""
        assert Message(role=Role.ASSISTANT, content=(block,)).content == (block,)

    @pytest.mark.parametrize("role", [Role.SYSTEM, Role.USER, Role.ASSISTANT])
    def test_tool_result_only_in_tool_messages(self, role: Role) -> None:
        """A ToolResult outside a TOOL message raises ConfigurationError."""
        result = ToolResult(tool_use_id="t", content="x")
        with pytest.raises(ConfigurationError, match="ToolResult"):
            Message(role=role, content=(result,))

    def test_tool_message_needs_a_result(self) -> None:
        """An empty TOOL message raises ConfigurationError."""
        with pytest.raises(ConfigurationError, match=r"Message\.content"):
            Message(role=Role.TOOL, content=())

    @pytest.mark.parametrize("extra", [Text(text="note"), Image(url=URL)])
    def test_tool_message_holds_only_results(self, extra: Text) -> None:
        """A TOOL message holding anything beside ToolResult blocks raises."""
        result = ToolResult(tool_use_id="t", content="x")
        with pytest.raises(ConfigurationError, match=type(extra).__name__):
            Message(role=Role.TOOL, content=(result, extra))

    def test_tool_message_with_several_results(self) -> None:
        """A TOOL message may hold several results."""
        results = (
            ToolResult(tool_use_id="a", content="1"),
            ToolResult(tool_use_id="b", content="2"),
        )
        assert Message(role=Role.TOOL, content=results).tool_results == results

    @pytest.mark.parametrize(
        "block",
        [
            Text(text="t"),
            Image(url=URL),
            Document(media_type="text/plain", text="d"),
            Compaction(content="c"),
        ],
    )
    @pytest.mark.parametrize("role", [Role.SYSTEM, Role.USER, Role.ASSISTANT])
    def test_shared_blocks_everywhere_but_tool(self, role: Role, block: Text) -> None:
        """Text, Image, Document and Compaction are accepted in non-tool messages."""
        assert Message(role=role, content=(block,)).content == (block,)


class TestMessageConstruction:
    """Message fields and validation."""

    def test_role_from_string(self) -> None:
        """A role given as its string becomes the Role member."""
        assert Message(role="user", content=(Text(text="hi"),)).role is Role.USER

    def test_bad_role_is_rejected(self) -> None:
        """An unknown role raises ConfigurationError naming Message.role."""
        with pytest.raises(ConfigurationError, match=r"Message\.role"):
            Message(role="robot", content=())

    def test_content_list_becomes_tuple(self) -> None:
        """A list of blocks is stored as a tuple."""
        message = Message(role=Role.USER, content=[Text(text="a")])
        assert message.content == (Text(text="a"),)

    @pytest.mark.parametrize("bad", [[Text(text="a"), "b"], [{"type": "text"}], 5])
    def test_bad_content_is_rejected(self, bad: object) -> None:
        """Content that is not a sequence of blocks raises naming Message.content."""
        with pytest.raises(ConfigurationError, match=r"Message\.content"):
            Message(role=Role.USER, content=bad)

    def test_empty_content_is_allowed(self) -> None:
        """A non-tool message may have no content."""
        assert Message(role=Role.ASSISTANT, content=()).content == ()

    def test_frozen(self) -> None:
        """Assigning a field raises."""
        message = Message.user("hi")
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            message.role = Role.SYSTEM  # type: ignore[misc]

    def test_equality_by_value(self) -> None:
        """Messages with the same role and content are equal, whatever was cached on them."""
        first, second = Message.user("hi"), Message.user("hi")
        TokenCounter().estimate_message(first)
        assert first == second
        assert Message.user("hi") != Message.user("ho")
        assert Message.user("hi") != Message.system("hi")
        use = ToolUse(id="t", name="n", input={"a": [1]})
        assert Message.assistant(tool_uses=[use]) == Message.assistant(
            tool_uses=[ToolUse(id="t", name="n", input={"a": [1]})]
        )

    def test_evolve_copies(self) -> None:
        """attrs.evolve returns a changed copy and leaves the original as it was."""
        original = Message.user("hi")
        changed = attrs.evolve(original, content=(Text(text="ho"),))
        assert changed.text == "ho"
        assert original.text == "hi"
        assert changed.role is Role.USER

    def test_evolve_validates(self) -> None:
        """attrs.evolve into an invalid message raises ConfigurationError."""
        with pytest.raises(ConfigurationError):
            attrs.evolve(Message.user("hi"), role=Role.TOOL)

    def test_evolve_does_not_carry_the_cost_cache(self) -> None:
        """A message evolved with new content is counted afresh."""
        counter = TokenCounter()
        original = Message.user("a")
        assert counter.estimate_message(original) == 5
        changed = attrs.evolve(original, content=(Text(text="a" * 40),))
        assert counter.estimate_message(changed) == 14


class TestMessageConstructors:
    """Message.system, user, assistant and tool_result."""

    def test_system(self) -> None:
        """Message.system holds one Text."""
        message = Message.system("be brief")
        assert message == Message(role=Role.SYSTEM, content=(Text(text="be brief"),))

    def test_user(self) -> None:
        """Message.user holds one Text."""
        assert Message.user("hi") == Message(role=Role.USER, content=(Text(text="hi"),))

    def test_assistant_text(self) -> None:
        """Message.assistant with text holds one Text."""
        assert Message.assistant("ok").content == (Text(text="ok"),)

    def test_assistant_text_then_tool_uses(self) -> None:
        """Message.assistant puts the Text first, then the tool uses in order."""
        first, second = _use("a"), _use("b")
        message = Message.assistant("checking", tool_uses=[first, second])
        assert message.content == (Text(text="checking"), first, second)

    def test_assistant_empty_text_has_no_text_block(self) -> None:
        """Message.assistant with empty text holds only the tool uses."""
        use = _use()
        assert Message.assistant(tool_uses=(use,)).content == (use,)
        assert Message.assistant("", tool_uses=(use,)).content == (use,)
        assert Message.assistant().content == ()

    def test_tool_result(self) -> None:
        """Message.tool_result holds one ToolResult in a TOOL message."""
        message = Message.tool_result("toolu_1", "42")
        assert message.role is Role.TOOL
        assert message.content == (ToolResult(tool_use_id="toolu_1", content=(Text(text="42"),)),)

    def test_tool_result_error_with_items(self) -> None:
        """Message.tool_result passes is_error and a list of items through."""
        message = Message.tool_result("t", [Image(url=URL)], is_error=True)
        assert message.tool_results == (
            ToolResult(tool_use_id="t", content=(Image(url=URL),), is_error=True),
        )


class TestMessageProperties:
    """Message.text, tool_uses, tool_results and is_tool."""

    def test_text_joins_text_blocks(self) -> None:
        """The text property joins the Text and Compaction blocks with a newline, skipping
        others (CONTRACT §1)."""
        content = (Text(text="a"), Image(url=URL), Text(text="b"), Compaction(content="c"))
        assert Message(role=Role.USER, content=content).text == "a\nb\nc"

    def test_text_of_a_summary_is_the_summary(self) -> None:
        """A summary message's text is its summary."""
        summary = Message(role=Role.USER, content=(Compaction(content="the story so far"),))
        assert summary.text == "the story so far"

    def test_text_of_a_message_without_text(self) -> None:
        """A message without Text blocks has empty text."""
        assert Message.assistant(tool_uses=[_use()]).text == ""
        assert Message.tool_result("t", "result text").text == ""

    def test_tool_uses(self) -> None:
        """The tool_uses property lists the tool uses in order."""
        first, second = _use("a"), _use("b")
        message = Message.assistant("x", tool_uses=[first, second])
        assert message.tool_uses == (first, second)
        assert Message.user("x").tool_uses == ()

    def test_tool_results(self) -> None:
        """The tool_results property lists the results; other messages have none."""
        assert Message.tool_result("t", "x").tool_results == (
            ToolResult(tool_use_id="t", content=(Text(text="x"),)),
        )
        assert Message.assistant("x").tool_results == ()

    @pytest.mark.parametrize(
        ("message", "expected"),
        [
            (Message.tool_result("t", "x"), True),
            (Message.user("x"), False),
            (Message.assistant(tool_uses=[_use()]), False),
            (Message.system("x"), False),
        ],
    )
    def test_is_tool(self, message: Message, expected: bool) -> None:
        """is_tool is true exactly for TOOL messages."""
        assert message.is_tool is expected


class TestToolDefinition:
    """ToolDefinition."""

    def test_construction(self) -> None:
        """A tool definition holds its name, description and schema."""
        schema = {"type": "object", "properties": {"city": {"type": "string"}}}
        tool = ToolDefinition(name="weather", description="Weather.", input_schema=schema)
        assert (tool.name, tool.description, tool.input_schema) == ("weather", "Weather.", schema)

    def test_schema_is_copied(self) -> None:
        """Mutating the caller's schema afterwards does not change the definition."""
        schema: dict[str, object] = {"type": "object", "properties": {}}
        tool = ToolDefinition(name="t", description="", input_schema=schema)
        properties = schema["properties"]
        assert isinstance(properties, dict)
        properties["x"] = {"type": "string"}
        assert tool.input_schema == {"type": "object", "properties": {}}

    @pytest.mark.parametrize("bad", ["", None])
    def test_bad_name_is_rejected(self, bad: object) -> None:
        """An empty or non-str name raises naming ToolDefinition.name."""
        with pytest.raises(ConfigurationError, match=r"ToolDefinition\.name"):
            ToolDefinition(name=bad, description="", input_schema={})  # type: ignore[arg-type]

    def test_bad_description_is_rejected(self) -> None:
        """A non-str description raises naming ToolDefinition.description."""
        with pytest.raises(ConfigurationError, match=r"ToolDefinition\.description"):
            ToolDefinition(name="t", description=None, input_schema={})  # type: ignore[arg-type]

    def test_bad_schema_is_rejected(self) -> None:
        """A non-mapping schema raises naming ToolDefinition.input_schema."""
        with pytest.raises(ConfigurationError, match=r"ToolDefinition\.input_schema"):
            ToolDefinition(name="t", description="", input_schema=["x"])

    def test_frozen_and_equal_by_value(self) -> None:
        """Definitions compare by value and refuse assignment."""
        tool = ToolDefinition(name="t", description="d", input_schema={"type": "object"})
        assert tool == ToolDefinition(name="t", description="d", input_schema={"type": "object"})
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            tool.name = "u"  # type: ignore[misc]
