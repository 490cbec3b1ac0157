"""Examples for the exception tree (CONTRACT §6)."""

from __future__ import annotations

import pytest

from neuron_context import (
    CompactionError,
    ConfigurationError,
    InvalidConversationError,
    NeuronContextError,
    SummarizationError,
    TokenizerError,
)


class TestErrorTree:
    """The exception tree."""

    @pytest.mark.parametrize(
        "error",
        [
            ConfigurationError,
            InvalidConversationError,
            TokenizerError,
            CompactionError,
            SummarizationError,
        ],
    )
    def test_rooted_at_neuron_context_error(self, error: type[Exception]) -> None:
        """Every library error is a NeuronContextError."""
        assert issubclass(error, NeuronContextError)

    def test_root_is_an_exception(self) -> None:
        """NeuronContextError is an Exception, not a ValueError."""
        assert issubclass(NeuronContextError, Exception)
        assert not issubclass(NeuronContextError, ValueError)

    @pytest.mark.parametrize("error", [ConfigurationError, InvalidConversationError])
    def test_value_errors(self, error: type[Exception]) -> None:
        """ConfigurationError and InvalidConversationError are ValueErrors."""
        assert issubclass(error, ValueError)

    @pytest.mark.parametrize("error", [TokenizerError, CompactionError, SummarizationError])
    def test_not_value_errors(self, error: type[Exception]) -> None:
        """The other errors are not ValueErrors."""
        assert not issubclass(error, ValueError)

    def test_summarization_is_a_compaction_error(self) -> None:
        """SummarizationError is a CompactionError."""
        assert issubclass(SummarizationError, CompactionError)

    @pytest.mark.parametrize(
        ("left", "right"),
        [
            (ConfigurationError, InvalidConversationError),
            (TokenizerError, CompactionError),
            (ConfigurationError, CompactionError),
            (InvalidConversationError, TokenizerError),
        ],
    )
    def test_branches_are_separate(self, left: type[Exception], right: type[Exception]) -> None:
        """Sibling errors are not subclasses of each other."""
        assert not issubclass(left, right)
        assert not issubclass(right, left)

    def test_caught_as_value_error(self) -> None:
        """A ConfigurationError is caught by an except ValueError clause."""
        msg = "bad"
        with pytest.raises(ValueError, match="bad"):
            raise ConfigurationError(msg)

    def test_invalid_conversation_error_carries_ids(self) -> None:
        """InvalidConversationError keeps its message and its ids as a tuple."""
        error = InvalidConversationError("broken", ids=["a", "b"])
        assert str(error) == "broken"
        assert error.ids == ("a", "b")
        assert InvalidConversationError("broken").ids == ()

    def test_cause_is_chained(self) -> None:
        """A SummarizationError raised from a provider error keeps it as __cause__."""
        cause = TimeoutError("slow")
        msg = "provider timed out"
        with pytest.raises(SummarizationError) as info:
            raise SummarizationError(msg) from cause
        assert info.value.__cause__ is cause
