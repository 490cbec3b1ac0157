"""Tools: a Python function the model may call, with the JSON schema of its arguments.

:meth:`Tool.from_function` is the only place in the package that inspects a user's
callable (its signature, type hints and docstring), once, when the tool is built; the
loop afterwards only calls :meth:`Tool.invoke` with arguments already validated against
:attr:`Tool.input_schema`. A parameter annotated :class:`RunContext` is not part of the
schema: the loop passes the run's context to it.
"""

from __future__ import annotations

import enum
import functools
import inspect
import json
import re
import typing
from collections.abc import Callable, Mapping
from typing import Any

import anyio.to_thread
import attrs

from .._errors import ConfigurationError, show
from .._messages.content import JSON, ToolResult
from .._messages.jsonvalue import check_json, compact_json
from .._messages.message import ToolDefinition
from .._validators import require_str
from .run import RunContext
from .schema import schema_for

__all__ = ["Tool", "result_of"]

_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Keyword Args|Returns|Return|Raises|Yields|"
    r"Examples?|Notes?|Attributes|See Also|Warnings?):\s*$"
)
_ARG = re.compile(r"^(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The summary (text before the first section) and the ``Args:`` descriptions."""
    lines = doc.splitlines()
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    indent: int | None = None
    for line in lines:
        stripped = line.strip()
        match = _SECTION.match(stripped)
        if match and (len(line) - len(line.lstrip())) == 0:
            section, current, indent = match.group(1), None, None
            continue
        if section is None:
            summary.append(line)
            continue
        if section not in {"Args", "Arguments", "Parameters", "Params", "Keyword Args"}:
            continue
        if not stripped:
            continue
        depth = len(line) - len(line.lstrip())
        arg = _ARG.match(stripped)
        if arg and (indent is None or depth <= indent):
            indent = depth
            current = arg.group(1).lstrip("*")
            params[current] = arg.group(2).strip()
        elif current is not None:
            params[current] = f"{params[current]} {stripped}".strip()
    return "\n".join(summary).strip(), params


def _unwrap(hint: object) -> object:
    """``X`` from ``Annotated[X, ...]``, ``X | None`` and ``Optional[X]``."""
    while True:
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if origin is typing.Annotated:
            hint = args[0]
        elif origin is typing.Union or type(hint).__name__ == "UnionType":
            rest = [a for a in args if a is not type(None)]
            if len(rest) != 1:
                return hint
            hint = rest[0]
        else:
            return hint


def _default(value: object, where: str) -> JSON:
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        return typing.cast("JSON", json.loads(json.dumps(value)))
    except (TypeError, ValueError):
        msg = f"{where}: the default {show(value, 60)} is not a JSON value"
        raise ConfigurationError(msg) from None


def _callable_target(fn: Callable[..., object]) -> Callable[..., object]:
    if inspect.isfunction(fn) or inspect.ismethod(fn) or isinstance(fn, functools.partial):
        return fn
    call = getattr(fn, "__call__", None)  # noqa: B004 (a callable object)
    return call if call is not None else fn


def _is_async(fn: Callable[..., object]) -> bool:
    target = fn.func if isinstance(fn, functools.partial) else _callable_target(fn)
    return inspect.iscoroutinefunction(target)


def _to_schema(value: Mapping[str, JSON]) -> dict[str, JSON]:
    if not isinstance(value, Mapping):
        msg = f"Tool.input_schema must be a mapping, got {type(value).__name__}"
        raise ConfigurationError(msg)
    return dict(value)


@attrs.frozen(eq=False)
class Tool:
    """A function the model may call.

    Build one with :meth:`from_function`; the constructor takes a hand-written schema
    (the function is then called with the arguments as keywords).

    Examples:
        >>> def get_time(city: str) -> str:
        ...     '''The local time in a city.'''
        ...     return "12:00"
        >>> tool = Tool.from_function(get_time)
        >>> tool.name, tool.input_schema["required"]
        ('get_time', ['city'])
    """

    name: str = attrs.field(validator=lambda _, __, v: require_str(v, "Tool.name", nonempty=True))
    """The name the model calls it by."""
    description: str = attrs.field(validator=lambda _, __, v: require_str(v, "Tool.description"))
    """What it does, for the model."""
    input_schema: Mapping[str, JSON] = attrs.field(converter=_to_schema)
    """The JSON schema of its arguments (an ``object``)."""
    function: Callable[..., object] = attrs.field(repr=False)
    """Called with the arguments as keywords; sync (run in a worker thread) or async."""
    context_parameter: str | None = attrs.field(default=None, kw_only=True)
    """The keyword that receives the :class:`RunContext`, if any."""
    enums: Mapping[str, type[enum.Enum]] = attrs.field(factory=dict, kw_only=True, repr=False)
    """Arguments converted from their value to an :class:`enum.Enum` member."""

    is_async: bool = attrs.field(init=False, repr=False)
    """Whether the function is a coroutine function (decided once, here)."""

    def __attrs_post_init__(self) -> None:
        if not callable(self.function):
            msg = f"Tool.function must be callable, got {show(self.function, 60)}"
            raise ConfigurationError(msg)
        object.__setattr__(self, "is_async", _is_async(self.function))

    @property
    def definition(self) -> ToolDefinition:
        """The :class:`~neuron_context.ToolDefinition` sent to the model."""
        return ToolDefinition(
            name=self.name, description=self.description, input_schema=self.input_schema
        )

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., object],
        *,
        name: str | None = None,
        description: str | None = None,
    ) -> Tool:
        """A tool from a sync or async function, its type hints and its docstring.

        Each parameter becomes a property of the schema (required unless it has a
        default); ``Annotated[X, "text"]`` or a Google-style ``Args:`` entry describes
        it. The description is the docstring's text before its first section.
        A parameter annotated :class:`RunContext` receives the run's context instead.

        Raises:
            ConfigurationError: ``fn`` is not callable, takes ``*args``/``**kwargs``,
                or has a hint the schema cannot express.
        """
        if not callable(fn):
            msg = f"Tool.from_function: fn must be callable, got {show(fn, 60)}"
            raise ConfigurationError(msg)
        tool_name = name if name is not None else getattr(fn, "__name__", None)
        if not isinstance(tool_name, str) or not tool_name:
            msg = f"Tool.from_function: {show(fn, 60)} has no __name__; pass name="
            raise ConfigurationError(msg)
        target = _callable_target(fn)
        try:
            signature = inspect.signature(fn)
            hints = typing.get_type_hints(
                target.func if isinstance(target, functools.partial) else target,
                include_extras=True,
            )
        except (NameError, TypeError, ValueError) as exc:
            msg = f"Tool.from_function: cannot read the signature of {tool_name}: {exc}"
            raise ConfigurationError(msg) from exc
        summary, documented = _parse_docstring(inspect.getdoc(fn) or "")
        properties: dict[str, JSON] = {}
        required: list[str] = []
        enums: dict[str, type[enum.Enum]] = {}
        context_parameter: str | None = None
        for parameter in signature.parameters.values():
            where = f"{tool_name}.{parameter.name}"
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                msg = f"Tool.from_function: {where}: *args and **kwargs are not supported"
                raise ConfigurationError(msg)
            if parameter.kind is parameter.POSITIONAL_ONLY:
                msg = f"Tool.from_function: {where}: positional-only parameters are not supported"
                raise ConfigurationError(msg)
            hint = hints.get(parameter.name, Any)
            if _unwrap(hint) is RunContext:
                context_parameter = parameter.name
                continue
            schema = schema_for(hint, f"Tool.from_function: {where}")
            if parameter.name in documented and "description" not in schema:
                schema["description"] = documented[parameter.name]
            if parameter.default is parameter.empty:
                required.append(parameter.name)
            else:
                schema["default"] = _default(parameter.default, where)
            inner = _unwrap(hint)
            if isinstance(inner, type) and issubclass(inner, enum.Enum):
                enums[parameter.name] = inner
            properties[parameter.name] = schema
        input_schema: dict[str, JSON] = {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }
        return cls(
            tool_name,
            description if description is not None else summary,
            input_schema,
            fn,
            context_parameter=context_parameter,
            enums=enums,
        )

    async def invoke(self, arguments: Mapping[str, JSON], context: RunContext) -> object:
        """Call the function with ``arguments`` (already validated); return its value.

        A sync function runs in a worker thread, so it does not block the other calls.
        """
        kwargs: dict[str, object] = dict(arguments)
        for key, kind in self.enums.items():
            if kwargs.get(key) is not None:
                kwargs[key] = kind(kwargs[key])
        if self.context_parameter is not None:
            kwargs[self.context_parameter] = context
        if self.is_async:
            return await typing.cast("typing.Awaitable[object]", self.function(**kwargs))
        value = await anyio.to_thread.run_sync(functools.partial(self.function, **kwargs))
        if inspect.isawaitable(value):
            value = await value
        return value


def result_of(tool_use_id: str, value: object, name: str = "the tool") -> ToolResult:
    """A tool's return value as its result: a ``str`` as it is, anything else as JSON.

    A :class:`~neuron_context.ToolResult` is taken as it is (with ``tool_use_id`` set).
    Any other value is checked as a tool's input is (:func:`check_json`: no sets, bytes,
    NaN, cycles, nothing nested deeper than the JSON depth limit), so what reaches the
    history always serializes.

    Raises:
        ConfigurationError: the value is not a JSON value, naming ``name`` (the tool)
            and the path inside the value (the loop answers the call with it as an
            error result).
    """
    if isinstance(value, ToolResult):
        return attrs.evolve(value, tool_use_id=tool_use_id)
    if isinstance(value, str):
        text = value
    else:
        text = compact_json(check_json(value, f"{name}: its return value", copy=False))
    return ToolResult(tool_use_id=tool_use_id, content=text)
