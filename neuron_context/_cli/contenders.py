"""Other frameworks' context managers as ``simulate`` contenders, replayed as they run.

The question ``simulate`` answers is which context manager an agent should use, so the
table sets our stacks beside what a user would otherwise pick, each run the way its
framework runs it:

- **LangChain's** ``SummarizationMiddleware`` (in ``langchain.agents.middleware``, the
  ``langchain`` extra): its ``abefore_model`` hook sees the agent's state (the messages,
  without the system prompt) before each model call and, past its trigger, replaces the
  state with a summary and the messages it keeps — the state is what the next call
  starts from. Configured as LangChain's docs show it: ``trigger=("tokens", budget)``,
  ``keep=("messages", 20)``.
- **LangChain's** ``ContextEditingMiddleware`` with ``ClearToolUsesEdit`` (``langchain``
  extra): its ``awrap_model_call`` edits a copy of each request (old tool results
  cleared past its trigger, the state untouched). Configured with
  ``ClearToolUsesEdit(trigger=budget, keep=3)``, LangChain's defaults but the trigger.
- **LangChain's** ``trim_messages`` (``langchain-core``, in the ``langchain`` extra) on the
  full history for each request: the last messages, the system message, starting on a
  human message, counted with its own ``count_tokens_approximately``.

LangChain's middlewares count the messages only, as they do in an agent; the report
counts each request whole (the tool definitions included) for every contender alike.
Every summarizing contender summarizes with the same summarizer as our stacks
(``--provider``, the offline :class:`~neuron_context.providers.ExtractiveSummarizer` by
default), wrapped as a LangChain chat model and bounded to a quarter of the budget, as the
``summarize`` step is; so the rows differ by what each manager does, not by the model
behind it. Messages cross with the library's own conversions
(:mod:`neuron_context.ext.langchain`). pydantic-ai and the OpenAI Agents SDK ship only
provider-side compaction (a model API call), which cannot be replayed offline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._messages.message import Message, Role, ToolDefinition
from ..providers._base import CompletionRequest, Provider
from .simulate import Replayer

__all__ = [
    "CONTENDERS",
    "LangChainContextEditing",
    "LangChainSummarization",
    "LangChainTrim",
    "available",
]


def _split(history: list[Message]) -> tuple[list[Message], list[Message]]:
    """The leading system messages (a LangChain agent's system prompt) and the rest."""
    k = 0
    while k < len(history) and history[k].role is Role.SYSTEM:
        k += 1
    return history[:k], history[k:]


class LangChainTrim(Replayer):
    """LangChain's ``trim_messages`` on the full history for each request (nothing kept)."""

    label = "langchain trim_messages"

    def __init__(self, provider: Provider | None = None) -> None:
        from langchain_core.messages import convert_to_messages, convert_to_openai_messages
        from langchain_core.messages.utils import count_tokens_approximately, trim_messages

        self._to_lc = convert_to_messages
        self._to_openai = convert_to_openai_messages
        self._count = count_tokens_approximately
        self._trim = trim_messages
        self._budget = 0

    def start(self, budget: int, tools: Sequence[ToolDefinition] = ()) -> None:
        self._budget = budget

    async def request(self, history: list[Message]) -> tuple[list[Message], list[Message], bool]:
        from ..formats import from_openai, to_openai

        trimmed = self._trim(
            self._to_lc(to_openai(history)),
            max_tokens=self._budget,
            strategy="last",
            token_counter=self._count,
            include_system=True,
            start_on="human",
        )
        request = from_openai(self._to_openai(trimmed))
        return request, history, len(request) != len(history)


def _chat_model(provider: Provider, budget: int) -> Any:
    """``provider`` as a LangChain chat model whose replies are bounded to a quarter of
    ``budget`` (the summarizer of a summarizing contender)."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    from ..ext.langchain import from_langchain

    class ProviderChatModel(BaseChatModel):
        """A neuron-context provider as a LangChain chat model."""

        provider: Any
        max_tokens: int

        @property
        def _llm_type(self) -> str:
            return "neuron-context-provider"

        def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:  # pragma: no cover
            msg = "the replay calls the summarizer asynchronously"
            raise NotImplementedError(msg)

        async def _agenerate(self, messages: list[Any], *args: Any, **kwargs: Any) -> ChatResult:
            request = CompletionRequest(from_langchain(messages), max_tokens=self.max_tokens)
            response = await self.provider.complete(request)
            reply = AIMessage(content=response.message.text)
            return ChatResult(generations=[ChatGeneration(message=reply)])

    return ProviderChatModel(provider=provider, max_tokens=max(1, budget // 4))


class LangChainSummarization(Replayer):
    """LangChain's ``SummarizationMiddleware`` in an agent: its result is the new state."""

    label = "langchain SummarizationMiddleware"

    def __init__(self, provider: Provider) -> None:
        from langchain.agents.middleware import SummarizationMiddleware

        from ..ext.langchain import from_langchain, to_langchain

        self._make = SummarizationMiddleware
        self._provider = provider
        self._from, self._to = from_langchain, to_langchain
        self._middleware: Any = None
        self._state: list[Any] = []
        self._seen = 0

    def start(self, budget: int, tools: Sequence[ToolDefinition] = ()) -> None:
        model = _chat_model(self._provider, budget)
        self._middleware = self._make(model, trigger=("tokens", budget), keep=("messages", 20))
        self._state, self._seen = [], 0

    async def request(self, history: list[Message]) -> tuple[list[Message], list[Message], bool]:
        system, rest = _split(history)
        new = rest if not self._seen else history[self._seen :]  # the system prompt aside
        self._seen = len(history)
        self._state.extend(self._to(new))
        try:
            update = await self._middleware.abefore_model({"messages": self._state}, None)
        except Exception:  # a failed summary keeps the state (a failure, as for our stacks)
            self.failures += 1
            update = None
        if update is not None:
            self._state = list(update["messages"][1:])  # after RemoveMessage(REMOVE_ALL)
        return [*system, *self._from(self._state)], history, update is not None


class LangChainContextEditing(Replayer):
    """LangChain's ``ContextEditingMiddleware`` in an agent: each request is an edited
    copy of the full history."""

    label = "langchain ContextEditingMiddleware"

    def __init__(self, provider: Provider | None = None) -> None:
        from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware
        from langchain.agents.middleware.types import ModelRequest
        from langchain_core.language_models.fake_chat_models import FakeListChatModel

        from ..ext.langchain import from_langchain, to_langchain

        self._edit, self._make = ClearToolUsesEdit, ContextEditingMiddleware
        self._request, self._model = ModelRequest, FakeListChatModel(responses=["-"])
        self._from, self._to = from_langchain, to_langchain
        self._middleware: Any = None

    def start(self, budget: int, tools: Sequence[ToolDefinition] = ()) -> None:
        self._middleware = self._make(edits=[self._edit(trigger=budget, keep=3)])

    async def request(self, history: list[Message]) -> tuple[list[Message], list[Message], bool]:
        system, rest = _split(history)
        messages: Any = self._to(rest)
        sent: list[Any] = []

        async def handler(request: Any) -> Any:
            sent.extend(request.messages)
            return None

        call = self._request(model=self._model, messages=messages, state={"messages": messages})
        await self._middleware.awrap_model_call(call, handler)
        if sent == messages:
            return history, history, False
        return [*system, *self._from(sent)], history, True


CONTENDERS: dict[str, tuple[Callable[[Provider], Replayer], str, str]] = {
    "trim_messages": (LangChainTrim, "langchain_core", "langchain"),
    "SummarizationMiddleware": (LangChainSummarization, "langchain", "langchain"),
    "ContextEditingMiddleware": (LangChainContextEditing, "langchain", "langchain"),
}
"""Each contender: its replayer, the package it needs, and the extra that installs it."""


def available(provider: Provider) -> tuple[list[Replayer], list[str]]:
    """The contenders whose framework is installed, and for the others the extra to
    install (``"LangChain's SummarizationMiddleware: the langchain extra"``)."""
    replayers: list[Replayer] = []
    missing: list[str] = []
    for name, (make, package, extra) in CONTENDERS.items():
        try:
            replayers.append(make(provider))
        except ImportError as exc:
            if (exc.name or "").partition(".")[0] not in (package, "langchain_core", "langgraph"):
                raise
            missing.append(f"LangChain's {name} (the {extra} extra)")
    return replayers, missing
