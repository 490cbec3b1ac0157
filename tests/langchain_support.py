"""What the LangChain agent tests script: a chat model's replies calling ``read_file``,
then answering, the ``read_file`` tool they call, and LangChain's fake chat model able
to take tools and recording what it is sent (imported only by tests that need
LangChain)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from pydantic import Field


class ScriptedChatModel(GenericFakeChatModel):
    """LangChain's fake chat model, able to take tools, recording every request it gets."""

    requests: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        """Tools change nothing: the replies are scripted."""
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.requests.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)


class FunctionChatModel(BaseChatModel):
    """A chat model answering with ``reply`` of the messages it receives; it takes tools
    (and ignores them)."""

    reply: Callable[[list[BaseMessage]], AIMessage]

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.reply(messages))])

    @property
    def _llm_type(self) -> str:
        return "function"

    def bind_tools(self, tools: Any, **kwargs: Any) -> FunctionChatModel:
        """Tools change nothing: the replies are scripted."""
        return self


class ReadingChatModel(ScriptedChatModel):
    """Replies from the request alone, so any instance replies alike: a question gets a
    ``read_file`` call (its id and path numbered by the questions so far), a tool result
    an answer."""

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.requests.append(list(messages))
        asked = sum(isinstance(message, HumanMessage) for message in messages)
        if isinstance(messages[-1], ToolMessage):
            reply = AIMessage(content=f"Read it ({asked}).")
        else:
            call = {"name": "read_file", "args": {"path": f"m{asked}.py"}, "id": f"c{asked}"}
            reply = AIMessage(content="", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=reply)])


def tool_call(name: str, args: dict[str, Any], id_: str) -> AIMessage:
    """An assistant message calling tool ``name`` with ``args`` (call id ``id_``)."""
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": args, "id": id_, "type": "tool_call"}]
    )


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
