"""The recall tool in each framework: a scripted agent, driven by the framework's own
test doubles, reads two files, recalls the cleared one by the key its reference shows
and answers with it; an unknown key is an error result, not an exception."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from recall_support import FIRST_LINE, KEY, clearing, file_text, key_in

from neuron_context import MemoryStore, Message
from neuron_context.stores import RECALL_INSTRUCTIONS

MISSING = "0123456789abcdef"


class TestLangChain:
    """neuron_context.ext.langchain.recall_tool in create_agent, and LangGraphStore."""

    def test_recalls_a_cleared_result(self) -> None:
        """The agent recalls a.py through ContextMiddleware's cleared view."""
        pytest.importorskip("langchain")
        from langchain.agents import create_agent
        from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
        from langchain_core.tools import tool
        from langchain_support import FunctionChatModel
        from langchain_support import tool_call as call

        from neuron_context.ext.langchain import ContextMiddleware, recall_tool

        requests: list[list[BaseMessage]] = []

        def reply(messages: list[BaseMessage]) -> AIMessage:
            requests.append(messages)
            results = [m for m in messages if isinstance(m, ToolMessage)]
            if len(requests) == 1:
                return call("read_file", {"path": "a.py"}, "c1")
            if len(requests) == 2:
                return call("read_file", {"path": "b.py"}, "c2")
            if len(requests) == 3:
                assert key_in(str(m.content) for m in results) == KEY
                return AIMessage(
                    content="",
                    tool_calls=[
                        {"name": "recall", "args": {"key": KEY}, "id": "c3", "type": "tool_call"},
                        {
                            "name": "recall",
                            "args": {"key": MISSING},
                            "id": "c4",
                            "type": "tool_call",
                        },
                    ],
                )
            recalled, missing = results[-2], results[-1]
            assert str(recalled.content).startswith(FIRST_LINE)
            assert missing.status == "error"
            assert "no content under key" in str(missing.content)
            return AIMessage(content=FIRST_LINE)

        @tool
        def read_file(path: str) -> str:
            """Read a file."""
            return file_text(path)

        store = MemoryStore()
        agent = create_agent(
            FunctionChatModel(reply=reply),
            [read_file, recall_tool(store)],
            system_prompt=RECALL_INSTRUCTIONS,
            middleware=[ContextMiddleware(clearing(store))],
        )
        state = agent.invoke({"messages": [{"role": "user", "content": "What does a.py say?"}]})
        assert state["messages"][-1].content == FIRST_LINE

    def test_langgraph_store(self) -> None:
        """LangGraphStore keeps the store contract over LangGraph's InMemoryStore."""
        pytest.importorskip("langgraph")
        from langgraph.store.memory import InMemoryStore

        from neuron_context import ConfigurationError
        from neuron_context.ext.langchain import LangGraphStore
        from neuron_context.stores import content_key

        backing = InMemoryStore()
        store = LangGraphStore(backing, namespace=("team", "offloaded"))
        messages = [Message.user("the task"), Message.assistant("done")]
        keys = {store.put(messages), store.put("a log"), store.put(messages)}
        assert keys == {content_key(messages), content_key("a log")}
        assert store.get(content_key(messages)) == messages
        assert store.get(content_key("a log")) == "a log"
        assert store.get(MISSING) is None
        assert set(store) == keys
        assert set(LangGraphStore(backing, namespace=("team", "other"))) == set()
        with pytest.raises(ConfigurationError, match=r"LangGraphStore\.namespace"):
            LangGraphStore(backing, namespace=())


class TestPydanticAI:
    """neuron_context.ext.pydantic_ai.recall_tool with HistoryProcessor."""

    def test_recalls_a_cleared_result(self) -> None:
        """The agent recalls a.py through the processed history."""
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

        requests: list[list[ModelMessage]] = []

        def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            requests.append(messages)
            returns = [
                part
                for message in messages
                if isinstance(message, ModelRequest)
                for part in message.parts
                if isinstance(part, ToolReturnPart)
            ]
            if len(requests) == 1:
                return ModelResponse(parts=[ToolCallPart("read_file", {"path": "a.py"}, "c1")])
            if len(requests) == 2:
                return ModelResponse(parts=[ToolCallPart("read_file", {"path": "b.py"}, "c2")])
            if len(requests) == 3:
                assert key_in(str(part.content) for part in returns) == KEY
                return ModelResponse(
                    parts=[
                        ToolCallPart("recall", {"key": KEY}, "c3"),
                        ToolCallPart("recall", {"key": MISSING}, "c4"),
                    ]
                )
            recalled, missing = returns[-2], returns[-1]
            assert str(recalled.content).startswith(FIRST_LINE)
            assert "no content under key" in str(missing.content)
            return ModelResponse(parts=[TextPart(FIRST_LINE)])

        store = MemoryStore()
        agent = Agent(
            FunctionModel(reply),
            instructions=RECALL_INSTRUCTIONS,
            capabilities=[ProcessHistory(HistoryProcessor(clearing(store)))],
            tools=[recall_tool(store)],
        )

        @agent.tool_plain
        def read_file(path: str) -> str:
            """Read a file."""
            return file_text(path)

        result = anyio.run(agent.run, "What does a.py say?")
        assert result.output == FIRST_LINE


class TestOpenAIAgents:
    """neuron_context.ext.openai_agents.recall_tool with CallModelInputFilter."""

    def test_recalls_a_cleared_result(self) -> None:
        """The agent recalls a.py through the filtered model input."""
        pytest.importorskip("agents")
        from agents import Agent, ModelResponse, RunConfig, Runner, Usage, function_tool
        from agents.models.interface import Model
        from openai.types.responses import (
            ResponseFunctionToolCall,
            ResponseOutputMessage,
            ResponseOutputText,
        )

        from neuron_context.ext.openai_agents import CallModelInputFilter, recall_tool

        def call(name: str, arguments: str, id_: str) -> ResponseFunctionToolCall:
            return ResponseFunctionToolCall(
                type="function_call",
                call_id=id_,
                name=name,
                arguments=arguments,
                id=f"fc_{id_}",
                status="completed",
            )

        class ScriptedModel(Model):
            """Replies to the filtered input of each call."""

            def __init__(self) -> None:
                self.requests: list[list[Any]] = []

            async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
                """The next scripted reply."""
                items = kwargs.get("input", args[1] if len(args) > 1 else [])
                self.requests.append(list(items) if not isinstance(items, str) else [])
                outputs = [
                    str(item.get("output"))
                    for item in self.requests[-1]
                    if isinstance(item, dict) and item.get("type") == "function_call_output"
                ]
                turn = len(self.requests)
                output: list[Any]
                if turn == 1:
                    output = [call("read_file", '{"path": "a.py"}', "c1")]
                elif turn == 2:
                    output = [call("read_file", '{"path": "b.py"}', "c2")]
                elif turn == 3:
                    assert key_in(outputs) == KEY
                    output = [
                        call("recall", f'{{"key": "{KEY}"}}', "c3"),
                        call("recall", f'{{"key": "{MISSING}"}}', "c4"),
                    ]
                else:
                    assert outputs[-2].startswith(FIRST_LINE)
                    assert "no content under key" in outputs[-1]
                    text = ResponseOutputText(type="output_text", text=FIRST_LINE, annotations=[])
                    output = [
                        ResponseOutputMessage(
                            id="msg",
                            type="message",
                            role="assistant",
                            status="completed",
                            content=[text],
                        )
                    ]
                return ModelResponse(output=output, usage=Usage(), response_id=None)

            def stream_response(self, *args: Any, **kwargs: Any) -> Any:
                """Streaming is not scripted."""
                raise NotImplementedError

        @function_tool
        def read_file(path: str) -> str:
            """Read a file."""
            return file_text(path)

        store = MemoryStore()
        agent = Agent(
            name="reader",
            instructions=RECALL_INSTRUCTIONS,
            model=ScriptedModel(),
            tools=[read_file, recall_tool(store)],
        )
        config = RunConfig(
            call_model_input_filter=CallModelInputFilter(clearing(store)), tracing_disabled=True
        )
        result = anyio.run(lambda: Runner.run(agent, "What does a.py say?", run_config=config))
        assert result.final_output == FIRST_LINE


class TestOneSchema:
    """Every recall tool is made from one read function: the same arguments, types and
    defaults in each framework, and the same descriptions where the framework keeps
    them (read from that function's docstring)."""

    def test_the_same_arguments_everywhere(self) -> None:
        pytest.importorskip("langchain")
        pytest.importorskip("pydantic_ai")
        pytest.importorskip("agents")
        from neuron_context.ext.langchain import recall_tool as langchain_tool
        from neuron_context.ext.openai_agents import recall_tool as agents_tool
        from neuron_context.ext.pydantic_ai import recall_tool as pydantic_ai_tool
        from neuron_context.stores import recall_tool

        store = MemoryStore()
        ours: dict[str, Any] = dict(recall_tool(store).input_schema["properties"])  # type: ignore[arg-type]
        schemas = {
            "pydantic-ai": pydantic_ai_tool(store).function_schema.json_schema["properties"],
            "agents": agents_tool(store).params_json_schema["properties"],
            "langchain": langchain_tool(store).args,
        }
        shapes = _shapes(ours)
        assert list(shapes) == ["key", "start_line", "end_line", "query", "regex"]
        assert all(ours[name]["description"] for name in ours)
        for framework, properties in schemas.items():
            shown = {
                k: (v.get("anyOf") or v.get("type"), v["default"]) for k, v in properties.items()
            }
            assert shown == shapes, framework
            if framework != "langchain":  # LangChain's tool keeps only the description
                described = {k: v["description"] for k, v in properties.items()}
                assert described == {k: v["description"] for k, v in ours.items()}, framework


def _shapes(properties: dict[str, Any]) -> dict[str, tuple[object, object]]:
    """Each argument's type and default, as a JSON schema's properties say them."""
    return {name: (p.get("anyOf") or p.get("type"), p["default"]) for name, p in properties.items()}
