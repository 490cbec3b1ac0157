"""What the Agents SDK tests script: a model's reply calling ``read_file`` or answering,
and the ``read_file`` tool it calls (imported only by tests that need the SDK)."""

from __future__ import annotations

from typing import Any

from agents import ModelResponse, Usage, function_tool
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)


def reply(turn: int, calls: int) -> ModelResponse:
    """The scripted reply of model call ``turn`` (1-based): a ``read_file`` call while
    ``turn <= calls``, then the answer ``done``."""
    output: list[Any]
    if turn <= calls:
        output = [
            ResponseFunctionToolCall(
                type="function_call",
                call_id=f"call_{turn}",
                name="read_file",
                arguments=f'{{"path": "f{turn}.py"}}',
                id=f"fc_{turn}",
                status="completed",
            )
        ]
    else:
        text = ResponseOutputText(type="output_text", text="done", annotations=[])
        output = [
            ResponseOutputMessage(
                id="msg_1", type="message", role="assistant", status="completed", content=[text]
            )
        ]
    return ModelResponse(output=output, usage=Usage(), response_id=None)


@function_tool
def read_file(path: str) -> str:
    """Read a file (4,000 characters: about 1,000 tokens, 2,000 of a scripted model's)."""
    return f"# {path}\n" + "x" * 4_000
