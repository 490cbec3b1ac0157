"""Tool.from_function: schemas from type hints, argument validation, results."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Optional

import anyio
import pytest
from agent_support import answer, calls, scripted

from neuron_context import (
    JSON,
    ConfigurationError,
    RunContext,
    Tool,
    ToolResult,
    create_agent,
    validate,
)

pytestmark = pytest.mark.anyio


class Unit(enum.Enum):
    """Temperature units."""

    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


def weather(
    city: Annotated[str, "The city name."],
    *,
    unit: Unit = Unit.CELSIUS,
    days: list[int] | None = None,
    mode: Literal["fast", "slow"] = "fast",
    tags: dict[str, float] | None = None,
    verbose: Optional[bool] = None,  # noqa: UP045 (the old spelling is supported too)
    names: Sequence[str] = (),
    anything: Any = None,
) -> dict[str, str]:
    """Look up the weather.

    More details that are not the first paragraph.

    Args:
        city: ignored, Annotated wins.
        unit: The unit of the
            temperatures.
        days (list[int]): Which days.

    Returns:
        The weather.
    """
    return {"city": city, "unit": unit.value}


class TestSchema:
    """The JSON schema Tool.from_function writes."""

    def test_full_schema(self) -> None:
        """Every supported hint maps to its schema; defaults are optional."""
        tool = Tool.from_function(weather)
        assert tool.name == "weather"
        assert tool.description == (
            "Look up the weather.\n\nMore details that are not the first paragraph."
        )
        properties = tool.input_schema["properties"]
        assert isinstance(properties, dict)
        assert properties["city"] == {"type": "string", "description": "The city name."}
        assert properties["unit"] == {
            "type": "string",
            "enum": ["celsius", "fahrenheit"],
            "description": "The unit of the temperatures.",
            "default": "celsius",
        }
        assert properties["days"] == {
            "anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}],
            "description": "Which days.",
            "default": None,
        }
        assert properties["mode"] == {"type": "string", "enum": ["fast", "slow"], "default": "fast"}
        assert properties["tags"]["anyOf"][0] == {
            "type": "object",
            "additionalProperties": {"type": "number"},
        }
        assert properties["verbose"]["anyOf"] == [
            {"type": "boolean"},
            {"type": "null"},
        ]
        assert properties["names"] == {"type": "array", "items": {"type": "string"}, "default": []}
        assert properties["anything"] == {"default": None}
        assert tool.input_schema["required"] == ["city"]
        assert tool.input_schema["additionalProperties"] is False

    def test_name_and_description_override(self) -> None:
        """Keyword arguments win over the function's name and docstring."""
        tool = Tool.from_function(weather, name="wx", description="Weather.")
        assert (tool.definition.name, tool.definition.description) == ("wx", "Weather.")

    def test_context_parameter_is_not_in_the_schema(self) -> None:
        """A RunContext parameter receives the run's context instead."""

        async def remember(note: str, context: RunContext) -> str:
            return note

        tool = Tool.from_function(remember)
        assert tool.context_parameter == "context"
        properties = tool.input_schema["properties"]
        assert isinstance(properties, dict)
        assert list(properties) == ["note"]

    @pytest.mark.parametrize(
        "hint", [complex, tuple[int, str], dict[int, str], set[object], type(None) | object]
    )
    def test_unsupported_hints(self, hint: object) -> None:
        """A hint the schema cannot express is a ConfigurationError naming the parameter."""

        def fn(x: int) -> None:
            """Doc."""

        fn.__annotations__["x"] = hint
        with pytest.raises(ConfigurationError, match=r"fn\.x"):
            Tool.from_function(fn)

    def test_star_arguments_are_rejected(self) -> None:
        """*args and **kwargs cannot be described to a model."""

        def fn(*args: int) -> None:
            """Doc."""

        with pytest.raises(ConfigurationError, match="args"):
            Tool.from_function(fn)

    def test_not_callable(self) -> None:
        """A non-callable is a ConfigurationError."""
        with pytest.raises(ConfigurationError, match="callable"):
            Tool.from_function(3)  # type: ignore[arg-type]

    def test_callable_object(self) -> None:
        """A callable object's __call__ is read; name= names it."""

        class Adder:
            def __call__(self, a: int, b: int = 1) -> int:
                """Add."""
                return a + b

        tool = Tool.from_function(Adder(), name="add")
        assert tool.input_schema["required"] == ["a"]


class TestValidation:
    """Arguments from the model are checked against the schema before the call."""

    @pytest.mark.parametrize(
        ("arguments", "problem"),
        [
            ({}, "city: missing required argument"),
            ({"city": 3}, "city: expected string, got integer 3"),
            ({"city": "x", "unit": "kelvin"}, "unit: must be one of"),
            ({"city": "x", "days": [1, "2"]}, "days: integer 'days'"),
            ({"city": "x", "mode": "medium"}, "mode: must be one of"),
            ({"city": "x", "tags": {"a": "b"}}, "tags"),
            ({"city": "x", "verbose": 1}, "verbose"),
            ({"city": "x", "extra": 1}, "extra: unexpected argument"),
        ],
    )
    async def test_invalid_arguments_become_an_error_result(
        self, arguments: dict[str, JSON], problem: str
    ) -> None:
        """Invalid arguments are an error result naming the problem; the tool is not run."""
        ran: list[str] = []

        def tool_fn(
            city: str,
            *,
            unit: Unit = Unit.CELSIUS,
            days: list[int] | None = None,
            mode: Literal["fast", "slow"] = "fast",
            tags: dict[str, float] | None = None,
            verbose: bool | None = None,
        ) -> str:
            ran.append(city)
            return "ok"

        agent = create_agent(scripted([calls(("tool_fn", arguments)), answer("done")]), [tool_fn])
        result = await agent.run("go")
        error = result.messages[2].tool_results[0]
        assert error.is_error
        assert "invalid arguments for tool_fn" in error.text
        if problem != "days: integer 'days'":
            assert problem in error.text
        assert ran == []

    async def test_valid_arguments_are_converted(self) -> None:
        """Enum arguments arrive as members; integers are accepted where numbers are."""
        seen: list[object] = []

        def tool_fn(unit: Unit, ratio: float) -> str:
            seen.extend([unit, ratio])
            return "ok"

        agent = create_agent(
            scripted([calls(("tool_fn", {"unit": "fahrenheit", "ratio": 2})), answer("done")]),
            [tool_fn],
        )
        await agent.run("go")
        assert seen == [Unit.FAHRENHEIT, 2]


class TestResults:
    """What a tool's return value or exception becomes."""

    @pytest.mark.parametrize(
        ("value", "text"),
        [
            ("plain text", "plain text"),
            ({"a": [1, 2], "é": None}, '{"a":[1,2],"é":null}'),
            (3.5, "3.5"),
            (None, "null"),
        ],
    )
    async def test_return_values(self, value: object, text: str) -> None:
        """A str is the result text; anything else is its compact JSON."""

        async def tool_fn() -> object:
            return value

        agent = create_agent(scripted([calls(("tool_fn", {})), answer("done")]), [tool_fn])
        result = await agent.run("go")
        assert result.messages[2].tool_results[0] == ToolResult(
            tool_use_id=result.messages[1].tool_uses[0].id, content=text
        )

    async def test_exception_is_an_error_result(self) -> None:
        """A tool exception becomes is_error with the error text; the run goes on."""

        def tool_fn() -> str:
            msg = "disk full"
            raise OSError(msg)

        agent = create_agent(scripted([calls(("tool_fn", {})), answer("done")]), [tool_fn])
        result = await agent.run("go")
        error = result.messages[2].tool_results[0]
        assert error.is_error
        assert error.text == "OSError: disk full"
        assert result.text == "done"

    async def test_unserializable_value_is_an_error_result(self) -> None:
        """A value that is not JSON is an error result, not a crash."""

        def tool_fn() -> object:
            return object()

        agent = create_agent(scripted([calls(("tool_fn", {})), answer("done")]), [tool_fn])
        result = await agent.run("go")
        assert result.messages[2].tool_results[0].is_error

    async def test_nan_is_an_error_result(self) -> None:
        """A value holding NaN is an error result, never the invalid JSON `NaN`."""

        def tool_fn() -> object:
            return {"a": float("nan")}

        agent = create_agent(scripted([calls(("tool_fn", {})), answer("done")]), [tool_fn])
        result = await agent.run("go")
        (tool_result,) = result.messages[2].tool_results
        assert tool_result.is_error
        assert tool_result.text == (
            "ConfigurationError: tool 'tool_fn': its return value['a'] is nan, "
            "which JSON cannot represent"
        )

    @pytest.mark.parametrize(
        ("value", "problem"),
        [
            ({"a": {1, 2}}, "its return value['a'] is a set"),
            (b"bytes", "its return value is a bytes"),
            ([10**5000], "its return value[0] is an int with too many digits"),
        ],
    )
    async def test_a_value_that_is_not_json_is_named(self, value: object, problem: str) -> None:
        """A return value that is not JSON is an error result naming the tool and the
        path inside the value (the check a tool's input gets), never a raw TypeError."""

        def tool_fn() -> object:
            return value

        agent = create_agent(scripted([calls(("tool_fn", {})), answer("done")]), [tool_fn])
        result = await agent.run("go")
        (tool_result,) = result.messages[2].tool_results
        assert tool_result.is_error
        assert tool_result.text.startswith(f"ConfigurationError: tool 'tool_fn': {problem}")

    async def test_a_value_nested_too_deep_is_an_error_result(self) -> None:
        """A return value nested 2,000 levels deep is an error result, not a RecursionError."""
        deep: list[object] = []
        for _ in range(2_000):
            deep = [deep]

        def tool_fn() -> object:
            return deep

        agent = create_agent(scripted([calls(("tool_fn", {})), answer("done")]), [tool_fn])
        result = await agent.run("go")
        (tool_result,) = result.messages[2].tool_results
        assert tool_result.is_error
        assert "is nested deeper than 100 levels" in tool_result.text
        validate(result.messages)

    async def test_sync_tools_do_not_block_each_other(self) -> None:
        """Sync tools run in worker threads, async ones concurrently: calls overlap."""
        barrier = anyio.Event()
        arrived: list[str] = []

        async def waits() -> str:
            arrived.append("waits")
            with anyio.fail_after(5):
                await barrier.wait()
            return "released"

        async def releases() -> str:
            arrived.append("releases")
            barrier.set()
            return "set"

        agent = create_agent(
            scripted([calls(("waits", {}), ("releases", {})), answer("done")]), [waits, releases]
        )
        result = await agent.run("go")
        assert [r.text for r in result.messages[2].tool_results] == ["released", "set"]

    async def test_unknown_tool_is_an_error_result(self) -> None:
        """A name the agent does not know is an error result listing the tools."""

        def known() -> str:
            return "ok"

        agent = create_agent(scripted([calls(("unknown", {})), answer("done")]), [known])
        result = await agent.run("go")
        error = result.messages[2].tool_results[0]
        assert error.is_error
        assert "unknown tool 'unknown'" in error.text
        assert "known" in error.text

    def test_duplicate_names_are_rejected(self) -> None:
        """Two tools with one name are a ConfigurationError."""

        def same() -> None:
            """Doc."""

        with pytest.raises(ConfigurationError, match="same"):
            create_agent(scripted([]), [same, Tool.from_function(same)])
