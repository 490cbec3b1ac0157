"""JSON values: the one check that a tool's input or schema is JSON, and its compact text.

A ``ToolUse.input`` and a ``ToolDefinition.input_schema`` are JSON values: the counters
price their compact JSON text, the formats write them to the wire, the summarizers render
them. A value that is not JSON (a ``datetime``, a set, bytes, a ``Decimal``, ``NaN``, a
tuple key, a cycle) is refused at construction by :func:`check_json`, once, with an
error naming the field and the path inside the value (``ToolUse.input['rows'][3]['when']``):
accepted, it would fail later with a raw ``TypeError`` deep inside a strategy, where no
``FallbackStrategy`` could catch it.

Nesting is limited to :data:`MAX_JSON_DEPTH` levels: a model can send arbitrarily deep
arguments, and past a few hundred levels Python's recursion limit would turn them into a
``RecursionError`` anywhere they are walked (here, ``json``, ``copy``). The wire readers
call :func:`check_json` with their own path and the depth they have reached, so one
limit holds wherever a value enters.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from .._errors import ConfigurationError, show

__all__ = ["MAX_JSON_DEPTH", "check_json", "compact_json", "parsed_json", "utf8_size"]

MAX_JSON_DEPTH = 100
"""How deeply JSON values may nest (an object or array counts one level). Real tool
arguments and schemas nest a handful of levels; the limit stays far below Python's
recursion limit, so every walk over a checked value is safe."""

_JSON_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_INT_SAFE = 1 << 63  # ints below this in magnitude always have a short decimal form


def compact_json(value: object) -> str:
    """JSON with no spaces and non-ASCII kept, as the counting rules require.

    The same text as ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``.
    Values checked by :func:`check_json` always encode.
    """
    return _JSON_ENCODER.encode(value)


_STRICT_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def parsed_json(value: object, name: str, *, depth: int = 0) -> str:
    """The compact JSON of a value ``json.loads`` has just built, checked as
    :func:`check_json` checks it; cheaper, for the wire readers.

    Such a value has only ``str`` keys and no cycles, so what is left to check is that it
    holds no ``NaN`` or infinity (``json.loads`` reads them) and does not nest too deep:
    the encoder refuses the first, and a text with at most :data:`MAX_JSON_DEPTH` brackets
    cannot nest deeper. Anything else is walked by :func:`check_json` for its error.

    Raises:
        ConfigurationError: ``value`` is not a JSON value.
    """
    try:
        text = _STRICT_ENCODER.encode(value)
    except (ValueError, TypeError, RecursionError):
        check_json(value, name, depth=depth, copy=False)
        raise  # pragma: no cover - check_json raised for whatever the encoder refused
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH - depth:
        check_json(value, name, depth=depth, copy=False)
    return text


def utf8_size(text: str) -> int:
    """Bytes of ``text`` in UTF-8 (a lone surrogate counts the 3 bytes it takes in WTF-8)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def check_json(value: object, name: str, *, depth: int = 0, copy: bool = True) -> object:
    """``value`` if it is a JSON value (a copy of its containers with ``copy``).

    JSON values are ``dict`` (any ``Mapping``) with ``str`` keys, ``list`` and ``tuple``,
    ``str``, ``int`` (with at most a few thousand digits), finite ``float``, ``bool`` and
    ``None``, nested at most :data:`MAX_JSON_DEPTH` levels, without cycles.

    Args:
        value: the value.
        name: where it is, for the error (``"ToolUse.input"``, ``"messages[2].arguments"``);
            the path inside the value is appended.
        depth: how many levels the caller has already nested ``value`` in.
        copy: copy every container (a ``Mapping`` becomes a ``dict``), so the caller's
            value can change afterwards without changing ours. Without it the value is
            returned as it is: for values the library has just built itself.

    Returns:
        The value, or its copy.

    Raises:
        ConfigurationError: ``value`` is not a JSON value; the message names ``name`` and
            the path to the first offending part.
    """
    try:
        return _check(value, depth, copy, set())
    except _NotJSONError as exc:
        msg = f"{name}{''.join(reversed(exc.path))} {exc.problem}"
        raise ConfigurationError(msg) from None


class _NotJSONError(Exception):
    """What is wrong, and the path to it (innermost first), filled in while unwinding."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.path: list[str] = []


def _check(value: object, depth: int, copy: bool, active: set[int]) -> object:
    kind = type(value)
    if kind is str or value is None or kind is bool:
        return value
    if kind is int:
        if -_INT_SAFE < value < _INT_SAFE:  # type: ignore[operator]
            return value
        return _big_int(value)  # type: ignore[arg-type]
    if kind is float:
        if math.isfinite(value):  # type: ignore[arg-type]
            return value
        problem = f"is {show(value)}, which JSON cannot represent"
        raise _NotJSONError(problem)
    if kind is dict or kind is list or isinstance(value, Mapping | list | tuple):
        if depth >= MAX_JSON_DEPTH:
            problem = f"is nested deeper than {MAX_JSON_DEPTH} levels"
            raise _NotJSONError(problem)
        ident = id(value)
        if ident in active:
            problem = "contains itself (a cycle)"
            raise _NotJSONError(problem)
        active.add(ident)
        result = _container(value, depth + 1, copy, active)  # type: ignore[arg-type]
        active.discard(ident)
        return result
    if isinstance(value, str):
        return str(value) if copy else value
    if isinstance(value, int):  # an int subclass such as an IntEnum (bool is handled above)
        return _big_int(int(value))
    if isinstance(value, float):
        return _check(float(value), depth, copy, active)
    problem = f"is a {kind.__name__} ({show(value, 60)}), which is not a JSON value"
    raise _NotJSONError(problem)


def _container(
    value: Mapping[object, object] | list[object] | tuple[object, ...],
    depth: int,
    copy: bool,
    active: set[int],
) -> object:
    if isinstance(value, Mapping):
        keep = not copy and type(value) is dict
        out: dict[str, object] = {}
        key: object = None
        try:
            for key, item in value.items():
                if type(key) is not str and not isinstance(key, str):
                    break
                checked = _check(item, depth, copy, active)
                if not keep:
                    out[key] = checked
            else:
                return value if keep else out
        except _NotJSONError as exc:
            exc.path.append(f"[{show(key, 40)}]")
            raise
        problem = f"keys must be str (JSON object keys), got {type(key).__name__} {show(key, 40)}"
        raise _NotJSONError(problem)
    index = 0
    try:
        if not copy:
            for index, item in enumerate(value):  # noqa: B007 - read in the handler
                _check(item, depth, copy, active)
            return value
        items = []
        for index, item in enumerate(value):  # noqa: B007 - read in the handler
            items.append(_check(item, depth, copy, active))
    except _NotJSONError as exc:
        exc.path.append(f"[{index}]")
        raise
    return items if type(value) is list else tuple(items)


def _big_int(value: int) -> int:
    try:
        int.__repr__(value)
    except ValueError:
        problem = "is an int with too many digits to write as JSON"
        raise _NotJSONError(problem) from None
    return value
