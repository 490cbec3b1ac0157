"""SupersededToolCallsStrategy: of the calls writing the same thing, only the newest stays."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import anyio
import pytest

from neuron_context import (
    JSON,
    CompactionError,
    ConfigurationError,
    Message,
    SupersededToolCallsStrategy,
    ToolResult,
    ToolUse,
    validate,
)

KEYS = {"create_python_script": "path"}


def create(use_id: str, path: str, code: str) -> ToolUse:
    """A ``create_python_script`` call."""
    return ToolUse(id=use_id, name="create_python_script", input={"path": path, "code": code})


class TestSupersededToolCallsStrategy:
    """Behaviour of SupersededToolCallsStrategy."""

    def test_the_seed_example(self) -> None:
        """[Human, AI create(v1), Tool, Human, AI create(v2), Tool] loses the v1 pair."""
        messages = [
            Message.user("Create script"),
            Message.assistant(tool_uses=[create("c1", "script.py", "print('v1')")]),
            Message.tool_result("c1", "Created script.py"),
            Message.user("Update it"),
            Message.assistant(tool_uses=[create("c2", "script.py", "print('v2')")]),
            Message.tool_result("c2", "Created script.py"),
        ]
        output = SupersededToolCallsStrategy(KEYS).apply(messages)
        assert output == [
            Message.user("Create script"),
            Message.user("Update it"),
            Message.assistant(tool_uses=[create("c2", "script.py", "print('v2')")]),
            Message.tool_result("c2", "Created script.py"),
        ]
        validate(output)

    def test_a_parallel_call_keeps_its_pair(self) -> None:
        """A call beside a superseded one in the same message keeps its call and result."""
        ls = ToolUse(id="c2", name="ls", input={})
        messages = [
            Message.user("go"),
            Message.assistant(tool_uses=[create("c1", "a.py", "1"), ls]),
            Message(
                role="tool",
                content=(
                    ToolResult(tool_use_id="c1", content="ok"),
                    ToolResult(tool_use_id="c2", content="a.py"),
                ),
            ),
            Message.assistant(tool_uses=[create("c3", "a.py", "2")]),
            Message.tool_result("c3", "ok"),
        ]
        output = SupersededToolCallsStrategy(KEYS).apply(messages)
        assert output == [
            Message.user("go"),
            Message.assistant(tool_uses=[ls]),
            Message.tool_result("c2", "a.py"),
            *messages[3:],
        ]
        validate(output)

    def test_text_of_an_emptied_assistant_message_stays(self) -> None:
        """An assistant message with text and a superseded call keeps its text."""
        messages = [
            Message.user("go"),
            Message.assistant("Writing it.", tool_uses=[create("c1", "a.py", "1")]),
            Message.tool_result("c1", "ok"),
            Message.assistant(tool_uses=[create("c2", "a.py", "2")]),
            Message.tool_result("c2", "ok"),
        ]
        output = SupersededToolCallsStrategy(KEYS).apply(messages)
        assert output == [Message.user("go"), Message.assistant("Writing it."), *messages[3:]]

    def test_only_a_successful_call_supersedes(self) -> None:
        """A newer write that failed, or is still running, leaves the older one in place."""
        older = [
            Message.user("go"),
            Message.assistant(tool_uses=[create("c1", "a.py", "1")]),
            Message.tool_result("c1", "ok"),
        ]
        failed = [
            Message.assistant(tool_uses=[create("c2", "a.py", "2")]),
            Message.tool_result("c2", "disk full", is_error=True),
        ]
        running = [Message.assistant(tool_uses=[create("c3", "a.py", "3")])]
        strategy = SupersededToolCallsStrategy(KEYS)
        assert strategy.apply([*older, *failed]) == [*older, *failed]
        assert strategy.apply([*older, *running]) == [*older, *running]
        fixed = [Message.assistant(tool_uses=[create("c4", "a.py", "4")])]
        answer = [Message.tool_result("c4", "ok")]
        assert strategy.apply([*older, *failed, *fixed, *answer]) == [
            Message.user("go"),
            *fixed,
            *answer,
        ]

    def test_same_message_keeps_the_later_call(self) -> None:
        """Of two calls with the same key in one message, the later one is the newer."""
        messages = [
            Message.user("go"),
            Message.assistant(tool_uses=[create("c1", "a.py", "1"), create("c2", "a.py", "2")]),
            Message.tool_result("c1", "ok"),
            Message.tool_result("c2", "ok"),
        ]
        output = SupersededToolCallsStrategy(KEYS).apply(messages)
        assert output == [
            Message.user("go"),
            Message.assistant(tool_uses=[create("c2", "a.py", "2")]),
            Message.tool_result("c2", "ok"),
        ]

    def test_a_key_function_and_untracked_calls(self) -> None:
        """A function of the arguments names the target; ``None`` leaves a call alone."""

        def created(arguments: Mapping[str, JSON]) -> object:
            return arguments.get("path") if arguments.get("command") == "create" else None

        def editor(use_id: str, command: str) -> ToolUse:
            return ToolUse(id=use_id, name="editor", input={"command": command, "path": "/a.py"})

        messages = [Message.user("go")]
        for number, command in enumerate(("create", "view", "create", "view")):
            use_id = f"c{number}"
            messages += [
                Message.assistant(tool_uses=[editor(use_id, command)]),
                Message.tool_result(use_id, command),
            ]
        output = SupersededToolCallsStrategy({"editor": created}).apply(messages)
        assert output == [messages[0], *messages[3:]]

    def test_other_tools_and_keys_are_untouched(self) -> None:
        """Different paths, other tools and calls without the argument all stay."""
        messages = [
            Message.user("go"),
            Message.assistant(tool_uses=[create("c1", "a.py", "1")]),
            Message.tool_result("c1", "ok"),
            Message.assistant(tool_uses=[create("c2", "b.py", "1")]),
            Message.tool_result("c2", "ok"),
            Message.assistant(tool_uses=[ToolUse(id="c3", name="create_python_script", input={})]),
            Message.tool_result("c3", "no path", is_error=True),
            Message.assistant(tool_uses=[ToolUse(id="c4", name="run", input={"path": "a.py"})]),
            Message.tool_result("c4", "1"),
        ]
        assert SupersededToolCallsStrategy(KEYS).apply(messages) == messages
        assert SupersededToolCallsStrategy({}).apply(messages) == messages

    def test_compact_logs_what_it_removed(self, caplog: pytest.LogCaptureFixture) -> None:
        """compact gives apply's result and logs the removed call ids."""
        messages = [
            Message.user("go"),
            Message.assistant(tool_uses=[create("c1", "a.py", "1")]),
            Message.tool_result("c1", "ok"),
            Message.assistant(tool_uses=[create("c2", "a.py", "2")]),
            Message.tool_result("c2", "ok"),
        ]
        strategy = SupersededToolCallsStrategy(KEYS)
        with caplog.at_level(logging.INFO, logger="neuron_context"):
            output = anyio.run(strategy.compact, messages)
        assert output == strategy.apply(messages)
        record = next(r for r in caplog.records if r.msg.startswith("%s:"))
        assert record.strategy == "SupersededToolCallsStrategy"  # type: ignore[attr-defined]
        assert record.nc_removed_calls == ["c1"]  # type: ignore[attr-defined]

    def test_a_failing_key_function_is_a_compaction_error(self) -> None:
        """A key function that raises becomes a CompactionError naming the tool."""

        def broken(arguments: Mapping[str, JSON]) -> object:
            msg = "path"
            raise KeyError(msg)

        messages = [Message.user("go"), Message.assistant(tool_uses=[create("c1", "a", "")])]
        with pytest.raises(CompactionError, match="create_python_script"):
            SupersededToolCallsStrategy({"create_python_script": broken}).apply(messages)

    def test_configuration(self) -> None:
        """max_tokens is keyword-only (default 0: always); bad keys are refused."""
        strategy = SupersededToolCallsStrategy(KEYS, max_tokens=10)
        assert SupersededToolCallsStrategy(KEYS).max_tokens == 0
        assert strategy.should_compact([], 11)
        assert not strategy.should_compact([], 10)
        with pytest.raises(TypeError):
            SupersededToolCallsStrategy(KEYS, 10)  # type: ignore[arg-type, call-arg]
        with pytest.raises(ConfigurationError, match=r"SupersededToolCallsStrategy\.keys"):
            SupersededToolCallsStrategy(["path"])
        with pytest.raises(ConfigurationError, match=r"SupersededToolCallsStrategy\.keys"):
            SupersededToolCallsStrategy({"t": 3})
        with pytest.raises(ConfigurationError, match=r"SupersededToolCallsStrategy\.max_tokens"):
            SupersededToolCallsStrategy(KEYS, max_tokens=-1)
