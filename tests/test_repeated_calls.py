"""CollapseRepeatedCallsStrategy: the same call with the same output, kept once with a count."""

from __future__ import annotations

import pytest

from neuron_context import (
    ConfigurationError,
    Message,
    Text,
    ToolUse,
    validate,
)
from neuron_context.strategies import CollapseRepeatedCallsStrategy

OUTPUT = "Error: job 42 is still running (status=pending, queue=gpu-a100)\n" * 3
NOTE = "[this call returned the same output {} times; the older repeats were removed]"


def poll(use_id: str, output: str = OUTPUT, *, job: str = "42") -> list[Message]:
    """A ``job_status`` call and its result."""
    use = ToolUse(id=use_id, name="job_status", input={"job": job})
    return [Message.assistant(tool_uses=[use]), Message.tool_result(use_id, output)]


class TestCollapseRepeatedCallsStrategy:
    """Behaviour of CollapseRepeatedCallsStrategy."""

    def test_sixty_four_identical_calls_become_one_with_a_count(self) -> None:
        """The failure mode of a real transcript: 64 identical calls, one kept, counted."""
        messages = [Message.user("wait for job 42")]
        for number in range(64):
            messages += poll(f"p{number}")
        output = CollapseRepeatedCallsStrategy().apply(messages)
        validate(output)
        assert len(output) == 3
        assert output[1] is messages[-2]
        (result,) = output[2].tool_results
        assert result.tool_use_id == "p63"
        assert result.content == (Text(text=OUTPUT), Text(text=NOTE.format(64)))

    def test_different_arguments_or_outputs_are_kept(self) -> None:
        """Another job, or another output of the same call, is not a repeat."""
        messages = [
            Message.user("go"),
            *poll("p1"),
            *poll("p2", job="43"),
            *poll("p3", OUTPUT.replace("pending", "done")),
        ]
        assert CollapseRepeatedCallsStrategy().apply(messages) == messages

    def test_near_identical_outputs_with_similarity(self) -> None:
        """Below 1.0, outputs that differ a little count as the same."""
        messages = [
            Message.user("go"),
            *poll("p1", OUTPUT + "elapsed 1.02s"),
            *poll("p2", OUTPUT + "elapsed 1.07s"),
        ]
        assert CollapseRepeatedCallsStrategy().apply(messages) == messages
        output = CollapseRepeatedCallsStrategy(similarity=0.9).apply(messages)
        assert output[1:] == [
            messages[3],
            Message.tool_result(
                "p2", [Text(text=OUTPUT + "elapsed 1.07s"), Text(text=NOTE.format(2))]
            ),
        ]

    def test_the_count_carries_over_between_passes(self) -> None:
        """Collapsing, then collapsing again after more repeats, counts them all."""
        strategy = CollapseRepeatedCallsStrategy()
        first = strategy.apply([Message.user("go"), *poll("p1"), *poll("p2"), *poll("p3")])
        second = strategy.apply([*first, *poll("p4"), *poll("p5")])
        assert len(second) == 3
        assert second[2].tool_results[0].content[-1] == Text(text=NOTE.format(5))
        assert strategy.apply(second) == second

    def test_errors_repeat_only_with_errors(self) -> None:
        """An error result and a success with the same text are not repeats."""
        use = ToolUse(id="p2", name="job_status", input={"job": "42"})
        messages = [
            Message.user("go"),
            *poll("p1"),
            Message.assistant(tool_uses=[use]),
            Message.tool_result("p2", OUTPUT, is_error=True),
        ]
        assert CollapseRepeatedCallsStrategy().apply(messages) == messages

    def test_nothing_is_collapsed_when_the_note_costs_more(self) -> None:
        """Two tiny repeats would cost more with the note: left alone."""
        messages = [Message.user("go"), *poll("p1", "ok"), *poll("p2", "ok")]
        assert CollapseRepeatedCallsStrategy().apply(messages) == messages

    def test_min_repeats(self) -> None:
        """A call is collapsed only once it repeated at least min_repeats times."""
        messages = [Message.user("go"), *poll("p1"), *poll("p2"), *poll("p3")]
        assert CollapseRepeatedCallsStrategy(min_repeats=4).apply(messages) == messages
        assert len(CollapseRepeatedCallsStrategy(min_repeats=3).apply(messages)) == 3

    def test_configuration(self) -> None:
        """Options are keyword-only and validated."""
        assert CollapseRepeatedCallsStrategy().similarity == 1.0
        with pytest.raises(ConfigurationError, match=r"CollapseRepeatedCallsStrategy\.similarity"):
            CollapseRepeatedCallsStrategy(similarity=1.5)
        with pytest.raises(ConfigurationError, match=r"CollapseRepeatedCallsStrategy\.min_repeats"):
            CollapseRepeatedCallsStrategy(min_repeats=-1)
