"""JSON schemas from Python type hints, and a validator for exactly that subset.

:func:`schema_for` turns one annotation into a JSON schema; :func:`validate_arguments`
checks what a model sent against a schema. The validator knows the keywords the
generator writes (``type``, ``enum``, ``anyOf``, ``items``, ``properties``,
``required``, ``additionalProperties``) and ignores the rest, which is why the loop
needs no ``jsonschema`` dependency: a hand-written schema using other keywords is
checked on what it shares with ours.

Supported hints: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Any``,
``X | None`` / ``Optional[X]``, unions, ``Literal[...]``, :class:`enum.Enum`
subclasses (by value), ``list[X]``, ``tuple[X, ...]``, ``Sequence[X]``, ``set[X]``,
``dict[str, X]`` / ``Mapping[str, X]`` and ``Annotated[X, "description"]``.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from .._errors import ConfigurationError, show
from .._messages.content import JSON

__all__ = ["schema_for", "validate_arguments"]

_SCALARS: dict[object, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_ARRAYS = (list, tuple, set, frozenset, Sequence, typing.Sequence, typing.List)  # noqa: UP006
_OBJECTS = (dict, Mapping, typing.Mapping, typing.Dict)  # noqa: UP006


def _json_type(value: object) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return None


def _enum_schema(values: list[JSON]) -> dict[str, JSON]:
    kinds = {_json_type(v) for v in values}
    schema: dict[str, JSON] = {"enum": values}
    if len(kinds) == 1 and None not in kinds:
        schema = {"type": kinds.pop(), "enum": values}
    return schema


def schema_for(hint: object, where: str) -> dict[str, JSON]:
    """The JSON schema of ``hint``; ``where`` names it in errors (``"fn.city"``).

    Raises:
        ConfigurationError: the hint is not one of the supported ones.
    """
    if hint is Any:
        return {}
    if hint is None or hint is type(None):
        return {"type": "null"}
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum_schema([member.value for member in hint])
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        schema = schema_for(args[0], where)
        notes = [a for a in args[1:] if isinstance(a, str)]
        if notes:
            schema["description"] = " ".join(notes)
        return schema
    if origin is typing.Literal:
        return _enum_schema(list(args))
    if origin is typing.Union or origin is types.UnionType:
        options = [schema_for(arg, where) for arg in args]
        return {"anyOf": options}
    if origin in _ARRAYS or hint in _ARRAYS:
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            msg = f"{where}: only tuple[X, ...] is supported, got {show(hint)}"
            raise ConfigurationError(msg)
        return {"type": "array", "items": schema_for(args[0], where) if args else {}}
    if origin in _OBJECTS or hint in _OBJECTS:
        if args and args[0] is not str:
            msg = f"{where}: dict keys must be str, got {show(hint)}"
            raise ConfigurationError(msg)
        schema = {"type": "object"}
        if args:
            schema["additionalProperties"] = schema_for(args[1], where)
        return schema
    msg = f"{where}: unsupported type hint {show(hint)} (see Tool.from_function for what is)"
    raise ConfigurationError(msg)


_CHECKS: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "object": dict,
    "array": list,
}


def _matches_type(value: object, kind: object) -> bool:
    if kind == "null":
        return value is None
    if not isinstance(kind, str) or kind not in _CHECKS:
        return True  # a keyword we do not generate: not checked
    if kind != "boolean" and isinstance(value, bool):
        return False
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _CHECKS[kind])


def _describe(value: object) -> str:
    kind = _json_type(value)
    if kind is not None:
        return f"{kind} {show(value, 60)}"
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else "value"


def _check(value: object, schema: Mapping[str, Any], path: str, problems: list[str]) -> None:
    if "anyOf" in schema:
        options = schema["anyOf"]
        if isinstance(options, list) and not any(
            not _problems(value, option, path) for option in options if isinstance(option, dict)
        ):
            problems.append(f"{path}: {_describe(value)} matches none of the allowed types")
        return
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_matches_type(value, k) for k in kinds):
            expected = " or ".join(str(k) for k in kinds)
            problems.append(f"{path}: expected {expected}, got {_describe(value)}")
            return
    if "enum" in schema and isinstance(schema["enum"], list):
        allowed = schema["enum"]
        if not any(value == a and isinstance(value, bool) == isinstance(a, bool) for a in allowed):
            problems.append(f"{path}: must be one of {show(allowed)}, got {show(value, 60)}")
            return
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            _check(item, schema["items"], f"{path}[{index}]", problems)
    if isinstance(value, dict):
        _check_object(value, schema, path, problems)


def _check_object(
    value: dict[str, object], schema: Mapping[str, Any], path: str, problems: list[str]
) -> None:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    for name in required if isinstance(required, list) else []:
        if name not in value:
            problems.append(f"{_join(path, name)}: missing required argument")
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        if name in properties and isinstance(properties[name], dict):
            _check(item, properties[name], _join(path, name), problems)
        elif extra is False:
            problems.append(f"{_join(path, name)}: unexpected argument")
        elif isinstance(extra, dict):
            _check(item, extra, _join(path, name), problems)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _problems(value: object, schema: Mapping[str, Any], path: str) -> list[str]:
    problems: list[str] = []
    _check(value, schema, path, problems)
    return problems


def validate_arguments(arguments: Mapping[str, JSON], schema: Mapping[str, JSON]) -> list[str]:
    """Every way ``arguments`` break ``schema``, one line each; ``[]`` when they fit."""
    return _problems(dict(arguments), schema, "")
