"""StaleFileReadsStrategy: reads made stale by a later write or read, or too old, are cleared."""

from __future__ import annotations

import pytest

from neuron_context import (
    JSON,
    ConfigurationError,
    Message,
    Text,
    ToolUse,
    validate,
)
from neuron_context.strategies import StaleFileReadsStrategy

SOURCE = "def main():\n    return 1\n" * 40
PLACEHOLDER = "[stale file read cleared; read the file again if needed]"


def call(
    use_id: str, name: str, arguments: dict[str, JSON], result: str, *, error: bool = False
) -> list[Message]:
    """A call and its result."""
    return [
        Message.assistant(tool_uses=[ToolUse(id=use_id, name=name, input=arguments)]),
        Message.tool_result(use_id, result, is_error=error),
    ]


def is_cleared(message: Message) -> bool:
    """Whether the tool message's result is the default placeholder."""
    return message.tool_results[0].content == (Text(text=PLACEHOLDER),)


class TestStaleFileReadsStrategy:
    """Behaviour of StaleFileReadsStrategy."""

    def test_a_later_write_makes_a_read_stale(self) -> None:
        """Read, then Edit of the same path: the read is cleared, the edit stays."""
        messages = [
            Message.user("fix main"),
            *call("r1", "Read", {"file_path": "/src/app.py"}, SOURCE),
            *call("e1", "Edit", {"file_path": "/src/./app.py", "old_string": "1"}, "ok"),
            Message.assistant("Done."),
        ]
        output = StaleFileReadsStrategy().apply(messages)
        validate(output)
        assert is_cleared(output[2])
        assert output[3:] == messages[3:]

    def test_a_failed_write_leaves_the_read(self) -> None:
        """A write that failed did not change the file."""
        messages = [
            Message.user("fix"),
            *call("r1", "Read", {"file_path": "a.py"}, SOURCE),
            *call("w1", "Write", {"file_path": "a.py"}, "denied", error=True),
        ]
        assert StaleFileReadsStrategy().apply(messages) == messages

    def test_reading_the_same_range_again_clears_the_older_copy(self) -> None:
        """The same read again replaces the older one; a different range does not."""
        messages = [
            Message.user("look"),
            *call("r1", "read_file", {"path": "a.py"}, SOURCE),
            *call("r2", "read_file", {"path": "a.py", "offset": 10}, SOURCE),
            *call("r3", "read_file", {"path": "a.py"}, SOURCE),
        ]
        output = StaleFileReadsStrategy().apply(messages)
        assert is_cleared(output[2])
        assert output[4] is messages[4]
        assert output[6] is messages[6]

    def test_editor_tools_read_with_view_and_write_otherwise(self) -> None:
        """str_replace_editor's ``view`` reads; ``create`` and ``str_replace`` write."""
        path = "/workspace/a.c"
        messages = [
            Message.user("fix"),
            *call("v1", "str_replace_editor", {"command": "view", "path": path}, SOURCE),
            *call("s1", "str_replace_editor", {"command": "str_replace", "path": path}, "ok"),
            *call("v2", "str_replace_editor", {"command": "view", "path": path}, SOURCE),
        ]
        output = StaleFileReadsStrategy().apply(messages)
        assert is_cleared(output[2])
        assert output[6] is messages[6]

    def test_max_age_clears_old_reads(self) -> None:
        """A read followed by more than max_age assistant messages is cleared."""
        messages = [
            Message.user("look"),
            *call("r1", "Read", {"file_path": "a.py"}, SOURCE),
            Message.assistant("one"),
            Message.user("more"),
            Message.assistant("two"),
        ]
        assert StaleFileReadsStrategy().apply(messages) == messages
        assert StaleFileReadsStrategy(max_age=2).apply(messages) == messages
        assert is_cleared(StaleFileReadsStrategy(max_age=1).apply(messages)[2])

    def test_tool_names_and_path_arguments_are_configurable(self) -> None:
        """Custom tools and argument names are recognised; others are ignored."""
        messages = [
            Message.user("go"),
            *call("r1", "load", {"target": "a.py"}, SOURCE),
            *call("w1", "save", {"target": "a.py"}, "ok"),
        ]
        assert StaleFileReadsStrategy().apply(messages) == messages
        custom = StaleFileReadsStrategy(
            read_tools={"load"}, write_tools={"save"}, path_arguments=["target"]
        )
        assert is_cleared(custom.apply(messages)[2])

    def test_configuration(self) -> None:
        """Options are keyword-only and validated."""
        assert StaleFileReadsStrategy().max_age is None
        with pytest.raises(ConfigurationError, match=r"StaleFileReadsStrategy\.max_age"):
            StaleFileReadsStrategy(max_age=-1)
        with pytest.raises(ConfigurationError, match=r"StaleFileReadsStrategy\.read_tools"):
            StaleFileReadsStrategy(read_tools="Read")
        with pytest.raises(ConfigurationError, match=r"StaleFileReadsStrategy\.path_arguments"):
            StaleFileReadsStrategy(path_arguments=[1])
