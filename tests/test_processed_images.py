"""StripProcessedImagesStrategy: images the model has answered become text stubs."""

from __future__ import annotations

import pytest

from neuron_context import (
    ConfigurationError,
    Image,
    Message,
    Role,
    StripProcessedImagesStrategy,
    Text,
    TokenCounter,
    ToolResult,
    ToolUse,
    validate,
)

PNG = Image(media_type="image/png", data="aGVsbG8=")


def user_image(image: Image, text: str = "What is this?") -> Message:
    """A user message with a text and an image."""
    return Message(role=Role.USER, content=(Text(text=text), image))


class TestStripProcessedImagesStrategy:
    """Behaviour of StripProcessedImagesStrategy."""

    def test_an_answered_image_becomes_the_contract_stub(self) -> None:
        """An image a later assistant message answered becomes the CONTRACT's stub."""
        messages = [user_image(PNG), Message.assistant("A cat.")]
        output = StripProcessedImagesStrategy().apply(messages)
        assert output == [
            Message(
                role=Role.USER,
                content=(
                    Text(text="What is this?"),
                    Text(text="[image/png image, already processed]"),
                ),
            ),
            messages[1],
        ]
        assert output[1] is messages[1]

    def test_the_newest_unanswered_image_stays(self) -> None:
        """Only images before the last assistant message are stubbed."""
        newest = user_image(PNG, "And this?")
        messages = [user_image(PNG), Message.assistant("A cat."), newest]
        output = StripProcessedImagesStrategy().apply(messages)
        assert output[2] is newest
        assert output[0].content[1] == Text(text="[image/png image, already processed]")

    def test_the_stub_names_size_and_url(self) -> None:
        """Size and URL appear when known; a data: URL is not repeated."""
        sized = Image(media_type="image/jpeg", url="https://x.test/a.jpg", width=800, height=600)
        inline = Image(media_type=None, url="data:image/png;base64,aGVsbG8=")
        messages = [user_image(sized), user_image(inline), Message.assistant("Two photos.")]
        output = StripProcessedImagesStrategy().apply(messages)
        assert output[0].content[1] == Text(
            text="[image/jpeg image, 800x600, at https://x.test/a.jpg, already processed]"
        )
        assert output[1].content[1] == Text(text="[image, already processed]")

    def test_images_in_tool_results_name_the_tool(self) -> None:
        """An answered image in a tool result is stubbed; id, flag and texts are kept."""
        call = ToolUse(id="s1", name="screenshot", input={})
        result = ToolResult(tool_use_id="s1", content=[Text(text="page 1"), PNG], is_error=True)
        messages = [
            Message.user("Look"),
            Message.assistant(tool_uses=[call]),
            Message(role=Role.TOOL, content=(result,)),
            Message.assistant("I see a login page."),
        ]
        output = StripProcessedImagesStrategy().apply(messages)
        validate(output)
        stubbed = output[2].content[0]
        assert stubbed == ToolResult(
            tool_use_id="s1",
            content=[
                Text(text="page 1"),
                Text(text="[image/png image, from tool screenshot, already processed]"),
            ],
            is_error=True,
        )

    def test_a_stub_costing_as_much_as_the_image_is_not_used(self) -> None:
        """With images priced at 0 tokens nothing changes (never worse)."""
        messages = [user_image(PNG), Message.assistant("A cat.")]
        strategy = StripProcessedImagesStrategy(counter=TokenCounter(image_tokens=0))
        assert strategy.apply(messages) == messages

    def test_system_messages_are_never_changed(self) -> None:
        """An image in a system message stays as it is."""
        system = Message(role=Role.SYSTEM, content=(Text(text="Logo:"), PNG))
        messages = [system, Message.user("hi"), Message.assistant("hello")]
        output = StripProcessedImagesStrategy().apply(messages)
        assert output[0] is system

    def test_configuration(self) -> None:
        """max_tokens is keyword-only, default 0; a negative one is refused."""
        assert StripProcessedImagesStrategy().max_tokens == 0
        assert StripProcessedImagesStrategy(max_tokens=5).should_compact([], 6)
        with pytest.raises(ConfigurationError, match=r"StripProcessedImagesStrategy\.max_tokens"):
            StripProcessedImagesStrategy(max_tokens=-1)
