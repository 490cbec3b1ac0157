"""What the LangChain agent tests script: a chat model's replies calling ``read_file``,
then answering, and the ``read_file`` tool they call (imported only by tests that need
LangChain)."""

from __future__ import annotations

from collections.abc import Iterator

from langchain_core.messages import AIMessage
from langchain_core.tools import tool


def script(calls: int) -> Iterator[AIMessage]:
    """The scripted replies: ``calls`` turns calling ``read_file`` (``f0.py``, ...), then
    the answer ``done``."""
    for turn in range(calls):
        call = {"name": "read_file", "args": {"path": f"f{turn}.py"}, "id": f"call_{turn}"}
        yield AIMessage(content=f"reading f{turn}.py", tool_calls=[{**call, "type": "tool_call"}])
    yield AIMessage(content="done")


@tool
def read_file(path: str) -> str:
    """Read a file (4,000 characters: about 1,000 tokens, 2,000 of a scripted model's)."""
    return f"# {path}\n" + "x" * 4_000
