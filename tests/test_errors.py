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
from neuron_context.errors import ProviderError


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


class TestErrorValues:
    """Values carried by errors are checked when the error is built."""

    @pytest.mark.parametrize(
        ("kwargs", "field"),
        [
            ({"retry_after": "5"}, "retry_after"),
            ({"retry_after": -1}, "retry_after"),
            ({"retry_after": float("nan")}, "retry_after"),
            ({"retry_after": float("inf")}, "retry_after"),
            ({"retry_after": 10**400}, "retry_after"),
            ({"retry_after": True}, "retry_after"),
            ({"retryable": "yes"}, "retryable"),
            ({"retryable": 1}, "retryable"),
            ({"status_code": "429"}, "status_code"),
            ({"status_code": 42}, "status_code"),
            ({"status_code": True}, "status_code"),
        ],
    )
    def test_bad_provider_error(self, kwargs: dict[str, object], field: str) -> None:
        """ProviderError refuses a wait that is not a finite number >= 0, and bad flags."""
        with pytest.raises(ConfigurationError, match=rf"ProviderError\.{field}"):
            ProviderError("x", **kwargs)  # type: ignore[arg-type]

    def test_good_provider_error(self) -> None:
        """A wait in seconds is kept as a float; None means the server said nothing."""
        error = ProviderError("x", retryable=True, status_code=429, retry_after=5)
        assert (error.retryable, error.status_code, error.retry_after) == (True, 429, 5.0)
        assert ProviderError("x").retry_after is None

    @pytest.mark.parametrize("ids", [None, 5, "abc", [1, 2]])
    def test_bad_ids(self, ids: object) -> None:
        """InvalidConversationError.ids is an iterable of str."""
        with pytest.raises(ConfigurationError, match=r"InvalidConversationError\.ids"):
            InvalidConversationError("x", ids=ids)  # type: ignore[arg-type]
