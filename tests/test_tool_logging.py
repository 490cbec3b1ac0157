"""ToolCallLoggingMiddleware: one structured record per tool call, secrets redacted."""

from __future__ import annotations

import logging
from collections.abc import Mapping

import pytest

from neuron_context import (
    JSON,
    AgentOptions,
    CompletionRequest,
    CompletionResponse,
    ConfigurationError,
    Message,
    ToolUse,
    create_agent,
)
from neuron_context.middleware import ToolCallLoggingMiddleware
from neuron_context.testing import FunctionProvider


def read_file(path: str, api_key: str = "") -> str:
    """Read a file."""
    return f"contents of {path}"


def explode(path: str) -> str:
    """Always fails."""
    msg = f"no such file: {path}"
    raise FileNotFoundError(msg)


def calls_then_answers(*uses: ToolUse) -> FunctionProvider:
    """A provider that makes the given calls on its first turn, then answers."""

    def reply(request: CompletionRequest) -> CompletionResponse | str:
        if len(request.messages) == 1:
            return CompletionResponse(Message.assistant(tool_uses=uses), stop_reason="tool_use")
        return "done"

    return FunctionProvider(reply)


def tool_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The records the middleware wrote."""
    return [r for r in caplog.records if hasattr(r, "tool_use_id")]


class TestToolCallLoggingMiddleware:
    """Records of ToolCallLoggingMiddleware."""

    def test_a_successful_call_is_logged_with_its_fields(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """Tool, redacted arguments, duration, outcome and turn are in extra=."""
        use = ToolUse(id="c1", name="read_file", input={"path": "a.md", "api_key": "sk-123"})
        agent = create_agent(
            calls_then_answers(use),
            [read_file],
            AgentOptions(middleware=[ToolCallLoggingMiddleware()]),
        )
        with caplog.at_level(logging.INFO, logger="neuron_context"):
            assert agent.run_sync("read a.md").text == "done"
        (record,) = tool_records(caplog)
        assert record.levelno == logging.INFO
        assert record.name == "neuron_context"
        fields = record.__dict__
        assert fields["tool"] == "read_file"
        assert fields["tool_use_id"] == "c1"
        assert fields["arguments"] == {"path": "a.md", "api_key": "[redacted]"}
        assert fields["outcome"] == "success"
        assert fields["error"] is None
        assert fields["turn"] == 1
        assert fields["duration"] >= 0
        assert "sk-123" not in record.getMessage()
        assert record.getMessage().startswith("tool read_file success in ")

    def test_an_exception_is_logged_as_an_error_and_re_raised(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A raising tool is logged at error_level; the model still gets an error result."""
        use = ToolUse(id="c1", name="explode", input={"path": "x"})
        agent = create_agent(
            calls_then_answers(use),
            [explode],
            AgentOptions(middleware=[ToolCallLoggingMiddleware()]),
        )
        with caplog.at_level(logging.INFO, logger="neuron_context"):
            result = agent.run_sync("go")
        assert result.messages[2].tool_results[0].is_error
        (record,) = tool_records(caplog)
        assert record.levelno == logging.WARNING
        assert record.__dict__["outcome"] == "error"
        assert record.__dict__["error"] == "FileNotFoundError: no such file: x"

    def test_an_error_result_and_an_unknown_tool(self, caplog: pytest.LogCaptureFixture) -> None:
        """An error result (here: an unknown tool) is an error outcome with its text."""
        use = ToolUse(id="c1", name="missing", input={})
        agent = create_agent(
            calls_then_answers(use),
            options=AgentOptions(middleware=[ToolCallLoggingMiddleware()]),
        )
        with caplog.at_level(logging.INFO, logger="neuron_context"):
            agent.run_sync("go")
        (record,) = tool_records(caplog)
        assert record.__dict__["outcome"] == "error"
        assert "unknown tool 'missing'" in record.__dict__["error"]

    def test_custom_logger_levels_and_redaction(self, caplog: pytest.LogCaptureFixture) -> None:
        """A user logger, level, secret keys and redact hook are honoured; nesting too."""

        def drop_body(tool: str, arguments: Mapping[str, JSON]) -> Mapping[str, JSON]:
            return {k: v for k, v in arguments.items() if k != "body"}

        mine = logging.getLogger("my_app.tools")
        middleware = ToolCallLoggingMiddleware(
            logger=mine,
            level=logging.DEBUG,
            error_level=logging.DEBUG,
            secret_keys={"session"},
            redact=drop_body,
        )
        use = ToolUse(
            id="c1",
            name="read_file",
            input={"path": "p", "body": "x" * 100, "headers": {"Session-Id": "s", "ok": 1}},
        )
        agent = create_agent(
            calls_then_answers(use), [read_file], AgentOptions(middleware=[middleware])
        )
        with caplog.at_level(logging.DEBUG, logger="my_app.tools"):
            agent.run_sync("go")
        (record,) = tool_records(caplog)
        assert record.name == "my_app.tools"
        assert record.levelno == logging.DEBUG
        assert record.__dict__["arguments"] == {
            "path": "p",
            "headers": {"Session-Id": "[redacted]", "ok": 1},
        }

    def test_parallel_calls_get_one_record_each(self, caplog: pytest.LogCaptureFixture) -> None:
        """Each of several parallel calls is logged once."""
        uses = [ToolUse(id=f"c{i}", name="read_file", input={"path": str(i)}) for i in range(3)]
        agent = create_agent(
            calls_then_answers(*uses),
            [read_file],
            AgentOptions(middleware=[ToolCallLoggingMiddleware()]),
        )
        with caplog.at_level(logging.INFO, logger="neuron_context"):
            agent.run_sync("go")
        assert sorted(r.__dict__["tool_use_id"] for r in tool_records(caplog)) == [
            "c0",
            "c1",
            "c2",
        ]

    def test_nothing_is_formatted_when_the_level_is_off(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """Below the logger's level no record is made."""
        use = ToolUse(id="c1", name="read_file", input={"path": "a"})
        agent = create_agent(
            calls_then_answers(use),
            [read_file],
            AgentOptions(middleware=[ToolCallLoggingMiddleware(level=logging.DEBUG)]),
        )
        with caplog.at_level(logging.INFO, logger="neuron_context"):
            agent.run_sync("go")
        assert tool_records(caplog) == []

    def test_configuration(self) -> None:
        """Bad options are refused, naming the field."""
        with pytest.raises(ConfigurationError, match=r"ToolCallLoggingMiddleware\.logger"):
            ToolCallLoggingMiddleware(logger="app")  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match=r"ToolCallLoggingMiddleware\.secret_keys"):
            ToolCallLoggingMiddleware(secret_keys="token")
        with pytest.raises(ConfigurationError, match=r"ToolCallLoggingMiddleware\.redact"):
            ToolCallLoggingMiddleware(redact=3)  # type: ignore[arg-type]
