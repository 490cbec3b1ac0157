"""DedupeFetchesStrategy: older results of a URL fetched again are cleared."""

from __future__ import annotations

import pytest

from neuron_context import (
    JSON,
    ConfigurationError,
    Message,
    Text,
    ToolResult,
    ToolUse,
    validate,
)
from neuron_context.strategies import DedupeFetchesStrategy

PAGE = "<html>" + "Example Domain. " * 50 + "</html>"
PLACEHOLDER = "[superseded: this URL was fetched again later]"


def fetch(
    use_id: str,
    arguments: dict[str, JSON],
    result: str,
    *,
    error: bool = False,
    name: str = "WebFetch",
) -> list[Message]:
    """A fetch call and its result."""
    return [
        Message.assistant(tool_uses=[ToolUse(id=use_id, name=name, input=arguments)]),
        Message.tool_result(use_id, result, is_error=error),
    ]


def cleared(message: Message) -> bool:
    """Whether the tool message's only result holds the default placeholder."""
    return message.tool_results[0].content == (Text(text=PLACEHOLDER),)


class TestDedupeFetchesStrategy:
    """Behaviour of DedupeFetchesStrategy."""

    def test_an_older_fetch_of_the_same_url_is_cleared(self) -> None:
        """The older result becomes the placeholder; the calls and the newest stay."""
        messages = [
            Message.user("Read example.com twice"),
            *fetch("f1", {"url": "https://example.com/", "prompt": "title"}, PAGE),
            *fetch("f2", {"url": "HTTPS://EXAMPLE.com/#more", "prompt": "links"}, PAGE + "!"),
        ]
        output = DedupeFetchesStrategy().apply(messages)
        validate(output)
        assert cleared(output[2])
        assert output[2].tool_results[0].tool_use_id == "f1"
        assert output[1] is messages[1]
        assert output[3:] == messages[3:]

    def test_urls_are_found_in_nested_arguments(self) -> None:
        """URLs inside lists and texts count; the set of URLs must match."""
        both: dict[str, JSON] = {"urls": ["https://a.test/x", "see https://b.test/y."]}
        same: dict[str, JSON] = {"query": {"pages": ["https://b.test/y", "https://a.test/x"]}}
        messages = [
            Message.user("go"),
            *fetch("f1", both, PAGE),
            *fetch("f2", {"url": "https://a.test/x"}, PAGE),
            *fetch("f3", same, PAGE),
        ]
        output = DedupeFetchesStrategy().apply(messages)
        assert cleared(output[2])
        assert output[4] is messages[4]
        assert output[6] is messages[6]

    def test_a_failed_fetch_does_not_replace_the_older_one(self) -> None:
        """Only a successful fetch makes older copies obsolete."""
        messages = [
            Message.user("go"),
            *fetch("f1", {"url": "https://a.test"}, PAGE),
            *fetch("f2", {"url": "https://a.test"}, "timeout", error=True),
        ]
        assert DedupeFetchesStrategy().apply(messages) == messages

    def test_tools_restricts_which_calls_fetch(self) -> None:
        """With ``tools`` only those tools count; other tools are compared by name too."""
        messages = [
            Message.user("go"),
            *fetch("f1", {"command": "curl https://a.test"}, PAGE, name="bash"),
            *fetch("f2", {"url": "https://a.test"}, PAGE),
            *fetch("f3", {"command": "curl https://a.test"}, PAGE, name="bash"),
        ]
        assert cleared(DedupeFetchesStrategy().apply(messages)[2])
        assert DedupeFetchesStrategy(tools={"WebFetch"}).apply(messages) == messages

    def test_small_results_and_custom_placeholder(self) -> None:
        """A result no larger than the placeholder stays; the placeholder is configurable."""
        small = [
            Message.user("go"),
            *fetch("f1", {"url": "https://a.test"}, "ok"),
            *fetch("f2", {"url": "https://a.test"}, "ok"),
        ]
        assert DedupeFetchesStrategy().apply(small) == small
        big = [Message.user("go"), *fetch("f1", {"url": "https://a.test"}, PAGE), *small[3:]]
        output = DedupeFetchesStrategy(placeholder="[old]").apply(big)
        assert output[2].content == (ToolResult(tool_use_id="f1", content="[old]"),)

    def test_configuration(self) -> None:
        """Options are keyword-only and validated."""
        assert DedupeFetchesStrategy().max_tokens == 0
        with pytest.raises(ConfigurationError, match=r"DedupeFetchesStrategy\.tools"):
            DedupeFetchesStrategy(tools="WebFetch")
        with pytest.raises(ConfigurationError, match=r"DedupeFetchesStrategy\.placeholder"):
            DedupeFetchesStrategy(placeholder=3)  # type: ignore[arg-type]
