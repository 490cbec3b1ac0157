"""What the strategies log under the ``neuron_context`` logger."""

from __future__ import annotations

import logging

import pytest

from neuron_context import (
    CompositeStrategy,
    Message,
    SlidingWindowStrategy,
    StripToolCallsStrategy,
    ToolResultClearingStrategy,
    ToolUse,
)

BIG = "x" * 400


def history() -> list[Message]:
    """Two tool calls with big results, then an answer: 7 messages, 240 tokens."""
    return [
        Message.system("rules"),  # 6 tokens
        Message.user("go"),  # 5
        Message.assistant(tool_uses=[ToolUse(id="call_1", name="read_file")]),  # 8
        Message.tool_result("call_1", BIG),  # 104
        Message.assistant(tool_uses=[ToolUse(id="call_2", name="read_file")]),  # 8
        Message.tool_result("call_2", BIG),  # 104
        Message.assistant("done"),  # 5
    ]


def _info(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno == logging.INFO]


def _debug(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno == logging.DEBUG]


class TestCompactionLogging:
    """The INFO line and DEBUG details of each strategy."""

    @pytest.mark.anyio
    async def test_sliding_window(self, caplog: pytest.LogCaptureFixture) -> None:
        """The window logs messages and tokens before/after, and how many it dropped."""
        caplog.set_level(logging.DEBUG, logger="neuron_context")
        await SlidingWindowStrategy(1).compact(history())
        (info,) = _info(caplog)
        assert info.name == "neuron_context"
        assert info.getMessage() == "SlidingWindowStrategy: 7 -> 2 messages, 240 -> 11 tokens"
        assert info.__dict__["strategy"] == "SlidingWindowStrategy"
        assert (info.__dict__["messages_before"], info.__dict__["messages_after"]) == (7, 2)
        assert (info.__dict__["tokens_before"], info.__dict__["tokens_after"]) == (240, 11)
        (debug,) = _debug(caplog)
        assert "dropped=5" in debug.getMessage()

    @pytest.mark.anyio
    async def test_clearing(self, caplog: pytest.LogCaptureFixture) -> None:
        """Clearing logs the counts and names the cleared ids."""
        caplog.set_level(logging.DEBUG, logger="neuron_context")
        await ToolResultClearingStrategy(0).compact(history())
        (info,) = _info(caplog)
        assert info.getMessage() == (
            "ToolResultClearingStrategy: 7 -> 7 messages, 240 -> 52 tokens"
        )
        (debug,) = _debug(caplog)
        assert "cleared=2" in debug.getMessage()
        assert "cleared_ids=['call_1', 'call_2']" in debug.getMessage()

    @pytest.mark.anyio
    async def test_clearing_skipped_below_min_reclaim(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """Clearing that would reclaim too little says so."""
        caplog.set_level(logging.DEBUG, logger="neuron_context")
        await ToolResultClearingStrategy(0, min_reclaim_tokens=10_000).compact(history())
        (info,) = _info(caplog)
        assert "240 -> 240 tokens" in info.getMessage()
        (debug,) = _debug(caplog)
        assert "would reclaim 188 < 10000" in debug.getMessage()

    @pytest.mark.anyio
    async def test_strip(self, caplog: pytest.LogCaptureFixture) -> None:
        """Stripping logs the counts and names the removed results' ids."""
        caplog.set_level(logging.DEBUG, logger="neuron_context")
        await StripToolCallsStrategy().compact(history())
        (info,) = _info(caplog)
        assert info.getMessage() == "StripToolCallsStrategy: 7 -> 3 messages, 240 -> 16 tokens"
        (debug,) = _debug(caplog)
        assert "removed_messages=4" in debug.getMessage()
        assert "removed_result_ids=['call_1', 'call_2']" in debug.getMessage()

    @pytest.mark.anyio
    async def test_composite(self, caplog: pytest.LogCaptureFixture) -> None:
        """A composite logs each child's line and its own, naming the children that ran."""
        caplog.set_level(logging.DEBUG, logger="neuron_context")
        composite = CompositeStrategy(
            [ToolResultClearingStrategy(0), SlidingWindowStrategy(1), StripToolCallsStrategy()],
            52,
        )
        await composite.compact(history())
        messages = [r.getMessage() for r in _info(caplog)]
        assert messages == [
            "ToolResultClearingStrategy: 7 -> 7 messages, 240 -> 52 tokens",
            "CompositeStrategy: 7 -> 7 messages, 240 -> 52 tokens",
        ]
        assert "ran=['ToolResultClearingStrategy']" in _debug(caplog)[-1].getMessage()

    @pytest.mark.anyio
    async def test_nothing_to_do_logs_nothing(self, caplog: pytest.LogCaptureFixture) -> None:
        """A strategy that changes nothing logs nothing."""
        caplog.set_level(logging.DEBUG, logger="neuron_context")
        short = [Message.user("hi"), Message.assistant("hello")]
        await SlidingWindowStrategy(5).compact(short)
        await ToolResultClearingStrategy(0).compact(short)
        await StripToolCallsStrategy().compact(short)
        await CompositeStrategy([SlidingWindowStrategy(5)], 100).compact(short)
        assert caplog.records == []

    @pytest.mark.anyio
    async def test_silent_above_info(self, caplog: pytest.LogCaptureFixture) -> None:
        """With the logger at WARNING a compaction logs nothing."""
        caplog.set_level(logging.WARNING, logger="neuron_context")
        await SlidingWindowStrategy(1).compact(history())
        assert caplog.records == []

    @pytest.mark.anyio
    async def test_no_debug_details_at_info(self, caplog: pytest.LogCaptureFixture) -> None:
        """At INFO only the summary line is logged."""
        caplog.set_level(logging.INFO, logger="neuron_context")
        await StripToolCallsStrategy().compact(history())
        assert [r.levelno for r in caplog.records] == [logging.INFO]


class TestPackageLogger:
    """The package logger as a library should leave it."""

    def test_has_a_null_handler(self) -> None:
        """A NullHandler is attached, so an unconfigured application prints nothing."""
        handlers = logging.getLogger("neuron_context").handlers
        assert any(isinstance(handler, logging.NullHandler) for handler in handlers)
