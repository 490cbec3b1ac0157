"""Each adapter scopes an unscoped store by its framework's conversation: LangChain's
``thread_id``, pydantic-ai's ``conversation_id``; the Agents SDK, which hands neither its
filter nor its tools the session, by the ``conversation(...)`` its run is inside. One
conversation's recall never reads what another offloaded."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from recall_support import FIRST_LINE, KEY, clearing, file_text

from neuron_context import MemoryStore
from neuron_context.stores import search


class TestLangChain:
    """ContextMiddleware and recall_tool in a LangGraph thread."""

    def test_thread_id(self) -> None:
        """What thread A offloads is in A's view: A's recall reads it, B's does not."""
        pytest.importorskip("langchain")
        from langchain.agents import create_agent
        from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
        from langchain_core.tools import tool
        from langchain_support import FunctionChatModel
        from langchain_support import tool_call as call
        from langgraph.checkpoint.memory import InMemorySaver

        from neuron_context.ext.langchain import ContextMiddleware, recall_tool

        def reply(messages: list[BaseMessage]) -> AIMessage:
            results = [m for m in messages if isinstance(m, ToolMessage)]
            if len(results) == 0:
                return call("read_file", {"path": "a.py"}, "c1")
            if len(results) == 1:
                return call("read_file", {"path": "b.py"}, "c2")
            if len(results) == 2:
                return call("recall", {"key": KEY}, "c3")
            return AIMessage(content=str(results[-1].content).split("\n", 1)[0])

        @tool
        def read_file(path: str) -> str:
            """Read a file."""
            return file_text(path)

        store = MemoryStore()
        agent = create_agent(
            FunctionChatModel(reply=reply),
            [read_file, recall_tool(store)],
            middleware=[ContextMiddleware(clearing(store))],
            checkpointer=InMemorySaver(),
        )
        state = agent.invoke(
            {"messages": [{"role": "user", "content": "What does a.py say?"}]},
            config={"configurable": {"thread_id": "A"}},
        )
        assert state["messages"][-1].content == FIRST_LINE
        assert KEY in set(store.scoped("A"))
        assert list(store) == []
        tool_ = recall_tool(store)
        in_a = tool_.invoke({"key": KEY}, config={"configurable": {"thread_id": "A"}})
        in_b = tool_.invoke({"key": KEY}, config={"configurable": {"thread_id": "B"}})
        assert str(in_a).startswith(FIRST_LINE)
        assert "no content under key" in str(in_b)

    def test_langgraph_namespaces(self) -> None:
        """A LangGraphStore's scope is its namespace with the name appended."""
        pytest.importorskip("langgraph")
        from langgraph.store.memory import InMemoryStore

        from neuron_context.ext.langchain import LangGraphStore

        backing = InMemoryStore()
        store = LangGraphStore(backing, namespace=("team",))
        key = store.scoped("thread.1").put("in the thread")
        assert backing.get(("team", "thread%2E1"), key) is not None
        assert store.get(key) is None
        assert list(store) == []


class TestPydanticAI:
    """HistoryProcessor and recall_tool in a pydantic-ai conversation."""

    def test_conversation_id(self) -> None:
        """What one conversation offloads is in its view; another's recall misses it."""
        pytest.importorskip("pydantic_ai")
        from pydantic_ai import Agent
        from pydantic_ai.capabilities import ProcessHistory
        from pydantic_ai.messages import (
            ModelMessage,
            ModelRequest,
            ModelResponse,
            TextPart,
            ToolCallPart,
            ToolReturnPart,
        )
        from pydantic_ai.models.function import AgentInfo, FunctionModel

        from neuron_context.ext.pydantic_ai import HistoryProcessor, recall_tool

        def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            returns = [
                part
                for message in messages
                if isinstance(message, ModelRequest)
                for part in message.parts
                if isinstance(part, ToolReturnPart)
            ]
            if len(returns) == 0:
                return ModelResponse(parts=[ToolCallPart("read_file", {"path": "a.py"}, "c1")])
            if len(returns) == 1:
                return ModelResponse(parts=[ToolCallPart("read_file", {"path": "b.py"}, "c2")])
            if len(returns) == 2:
                return ModelResponse(parts=[ToolCallPart("recall", {"key": KEY}, "c3")])
            return ModelResponse(parts=[TextPart(str(returns[-1].content).split("\n", 1)[0])])

        store = MemoryStore()
        agent = Agent(
            FunctionModel(reply),
            capabilities=[ProcessHistory(HistoryProcessor(clearing(store)))],
            tools=[recall_tool(store)],
        )

        @agent.tool_plain
        def read_file(path: str) -> str:
            """Read a file."""
            return file_text(path)

        async def run(name: str) -> str:
            result = await agent.run("What does a.py say?", conversation_id=name)
            return str(result.output)

        assert anyio.run(run, "conv-a") == FIRST_LINE
        assert KEY in set(store.scoped("conv-a"))
        assert list(store) == []

    def test_another_conversation_cannot_recall(self) -> None:
        """Conversation B, given A's key (a prompt injection in a tool result), recalls
        nothing: one store given to the processor and the tool, scoped by each run's
        ``conversation_id``; a store the user scoped by a name stays in that name."""
        pytest.importorskip("pydantic_ai")
        from pydantic_ai import Agent
        from pydantic_ai.capabilities import ProcessHistory
        from pydantic_ai.messages import (
            ModelMessage,
            ModelRequest,
            ModelResponse,
            TextPart,
            ToolCallPart,
            ToolReturnPart,
        )
        from pydantic_ai.models.function import AgentInfo, FunctionModel

        from neuron_context.ext.pydantic_ai import HistoryProcessor, recall_tool

        def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
            return [
                part
                for message in messages
                if isinstance(message, ModelRequest)
                for part in message.parts
                if isinstance(part, ToolReturnPart)
            ]

        def reader(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            done = returns(messages)
            if len(done) < 2:
                path = ("a.py", "b.py")[len(done)]
                return ModelResponse(parts=[ToolCallPart("read_file", {"path": path}, f"c{path}")])
            return ModelResponse(parts=[TextPart("read")])

        def thief(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            done = returns(messages)
            if not done:
                return ModelResponse(parts=[ToolCallPart("recall", {"key": KEY}, "steal")])
            return ModelResponse(parts=[TextPart(str(done[-1].content))])

        def agent(model: FunctionModel, store: MemoryStore | Any) -> Any:
            made = Agent(
                model,
                capabilities=[ProcessHistory(HistoryProcessor(clearing(store)))],
                tools=[recall_tool(store)],
            )

            @made.tool_plain
            def read_file(path: str) -> str:
                """Read a file."""
                return file_text(path)

            return made

        async def run(model: FunctionModel, store: Any, name: str | None) -> str:
            result = await agent(model, store).run("go", conversation_id=name)
            return str(result.output)

        store = MemoryStore()
        anyio.run(run, FunctionModel(reader), store, "conv-a")
        assert KEY in set(store.scoped("conv-a"))
        stolen = anyio.run(run, FunctionModel(thief), store, "conv-b")
        assert stolen.startswith("recall: no content under key")
        assert FIRST_LINE not in stolen
        # A store the user scoped by a name: the run's conversation does not widen it.
        named = MemoryStore()
        anyio.run(run, FunctionModel(reader), named.scoped("user-1"), "conv-a")
        assert KEY in set(named.scoped("user-1"))
        assert KEY not in set(named.scoped("conv-a"))
        elsewhere = anyio.run(run, FunctionModel(thief), named.scoped("user-2"), "conv-a")
        assert FIRST_LINE not in elsewhere
        assert FIRST_LINE in anyio.run(run, FunctionModel(thief), named.scoped("user-1"), None)


class TestOpenAIAgents:
    """The Agents SDK's filter, session and tool in the run's conversation."""

    def test_session_id(self) -> None:
        """A CompactingSession's compaction inside conversation(session id) offloads to
        that view, where the recall tool run in the same block reads it."""
        pytest.importorskip("agents")
        from agents import SQLiteSession

        from neuron_context.ext.openai_agents import CompactingSession, recall_tool
        from neuron_context.stores import conversation

        items: list[Any] = [
            {"role": "user", "content": "What does a.py say?"},
            {
                "type": "function_call",
                "call_id": "c1",
                "name": "read_file",
                "arguments": '{"path": "a.py"}',
            },
            {"type": "function_call_output", "call_id": "c1", "output": file_text("a.py")},
            {
                "type": "function_call",
                "call_id": "c2",
                "name": "read_file",
                "arguments": '{"path": "b.py"}',
            },
            {"type": "function_call_output", "call_id": "c2", "output": file_text("b.py")},
        ]
        store = MemoryStore()
        session = SQLiteSession("session-1")

        async def compacted() -> list[Any]:
            await session.add_items(items)
            with conversation(session.session_id):
                return await CompactingSession(session, clearing(store)).get_items()

        anyio.run(compacted)
        assert KEY in set(store.scoped("session-1"))
        assert list(store) == []
        tool = recall_tool(store)
        assert tool.name == "recall"
        with conversation("session-1"):
            assert KEY in search(store, "the answer is 42").text


class TestQueries:
    """Every adapter's recall tool takes a query as well as a key."""

    def test_langchain(self) -> None:
        """The LangChain tool searches with a query."""
        pytest.importorskip("langchain")
        from neuron_context.ext.langchain import recall_tool

        store = MemoryStore()
        store.put(file_text("a.py"))
        found = recall_tool(store).invoke({"query": "THE ANSWER"})
        assert str(found).startswith(f"{KEY}:1: a.py: the answer is 42")

    def test_pydantic_ai(self) -> None:
        """The pydantic-ai tool's schema offers a key or a query (the run is its context)."""
        pytest.importorskip("pydantic_ai")
        from neuron_context.ext.pydantic_ai import recall_tool

        schema = recall_tool(MemoryStore()).function_schema.json_schema
        assert {"key", "query", "start_line", "end_line", "regex"} == set(schema["properties"])
        assert schema.get("required", []) == []

    def test_openai_agents(self) -> None:
        """The Agents SDK tool's schema offers a key or a query."""
        pytest.importorskip("agents")
        from neuron_context.ext.openai_agents import recall_tool

        schema = recall_tool(MemoryStore()).params_json_schema
        assert {"key", "query", "start_line", "end_line", "regex"} == set(schema["properties"])
