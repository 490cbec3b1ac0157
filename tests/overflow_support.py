"""The overflow errors providers raise, as the official SDKs raise them (for the tests
of the recovery in the loop and in each adapter)."""

from __future__ import annotations

from typing import Any

import pytest

# The official SDKs' own exception classes (a test module using them is skipped where one
# is missing: an extra installed alone).
openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")
httpx = pytest.importorskip("httpx2")

OPENAI_TEXT = (
    "This model's maximum context length is 128000 tokens. However, your messages "
    "resulted in 130542 tokens. Please reduce the length of the messages."
)
OPENAI_BODY: dict[str, Any] = {
    "error": {
        "message": OPENAI_TEXT,
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
OPENAI_RESPONSES_BODY = {
    "error": {
        "message": "Your input exceeds the context window of this model. Please adjust "
        "your input and try again.",
        "type": "invalid_request_error",
        "param": "input",
        "code": "context_length_exceeded",
    }
}
ANTHROPIC_TEXT = "prompt is too long: 210000 tokens > 200000 maximum"
ANTHROPIC_BODY: dict[str, Any] = {
    "type": "error",
    "error": {"type": "invalid_request_error", "message": ANTHROPIC_TEXT},
}


def _response(status: int, url: str) -> Any:
    return httpx.Response(status, request=httpx.Request("POST", url))


def openai_error(body: dict[str, Any] = OPENAI_BODY) -> Exception:
    """The OpenAI SDK's own exception, as it raises it for a 400 with ``body``."""
    response = _response(400, "https://api.openai.com/v1/chat/completions")
    error: Exception = openai.BadRequestError(
        f"Error code: 400 - {body}", response=response, body=body
    )
    return error


def anthropic_error(body: dict[str, Any] = ANTHROPIC_BODY) -> Exception:
    """The Anthropic SDK's own exception, as it raises it for a 400 with ``body``."""
    response = _response(400, "https://api.anthropic.com/v1/messages")
    error: Exception = anthropic.BadRequestError(
        f"Error code: 400 - {body}", response=response, body=body
    )
    return error


def openai_overflow(tokens: int, limit: int) -> Exception:
    """OpenAI's refusal of a request of ``tokens`` for a window of ``limit``."""
    text = (
        f"This model's maximum context length is {limit} tokens. However, your messages "
        f"resulted in {tokens} tokens. Please reduce the length of the messages."
    )
    return openai_error({"error": {**OPENAI_BODY["error"], "message": text}})


def anthropic_overflow(tokens: int, limit: int) -> Exception:
    """Anthropic's refusal of a request of ``tokens`` for a window of ``limit``."""
    text = f"prompt is too long: {tokens} tokens > {limit} maximum"
    return anthropic_error({"type": "error", "error": {**ANTHROPIC_BODY["error"], "message": text}})
