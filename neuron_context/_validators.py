"""The validators every public constructor and entry point uses: one rule, written once.

Each factory returns an attrs validator (``field(validator=non_negative_int())``) that
names the field as ``Owner.field`` (the owner is the class being built, so a subclass
is named as itself) and raises :class:`~neuron_context.ConfigurationError`, a
``ValueError``. The ``require_*`` functions are the same checks for plain arguments,
named by the caller (``require_int(n, "SlidingWindowStrategy.window_size")``).

Why one module: a rule such as "a non-negative int, not a bool" holds with one wording
wherever it applies, and cannot drift between copies. Floats are checked for finiteness
and range here, once, so no ``float('nan')`` or ``10**400`` reaches arithmetic that
would overflow later. Ints have no upper bound by default: a Python int does not
overflow, so a budget, a count or a priority may be any size (``2**64 - 1``, "never
compact", is a common idiom), and the few places where one meets a float take a share of
it through :func:`~neuron_context._numbers.scale`, exactly. A bound (:data:`MAX_INT`) is
kept only where a value feeds float formulas of its own (an image's pixels, a document's
pages, a counter's fixed prices, which are part of every count) or is read from a JSON
state that could not hold more (a calibration's count of observations).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, TypeAlias

import attrs

from ._errors import ConfigurationError, show

__all__ = [
    "MAX_INT",
    "Validator",
    "bool_",
    "callable_",
    "fail",
    "instance_of",
    "non_negative_int",
    "number",
    "one_of",
    "optional",
    "positive_int",
    "require_bool",
    "require_callable",
    "require_int",
    "require_names",
    "require_number",
    "require_sequence_of",
    "require_str",
    "string",
]

Validator: TypeAlias = "Callable[[Any, attrs.Attribute[Any], Any], None]"

MAX_INT = 2**53
"""The bound of the ints that feed float formulas (an image's pixels, a document's pages,
a counter's fixed prices) or are read from JSON state: beyond it a float is not exact."""


def fail(name: str, problem: str) -> ConfigurationError:
    """The error for ``name`` (``"Owner.field"``) and what is wrong with it."""
    msg = f"{name} {problem}"
    return ConfigurationError(msg)


def _name(instance: object, attribute: attrs.Attribute[Any]) -> str:
    return f"{type(instance).__name__}.{attribute.name}"


def _type_name(value: object) -> str:
    return type(value).__name__


# -- plain checks (return the value, so they can be used inline) ---------------------


def require_int(
    value: object, name: str, *, minimum: int | None = 0, maximum: int | None = None
) -> int:
    """``value`` if it is an ``int`` (not a ``bool``) in ``minimum..maximum`` (``None``:
    unbounded on that side)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(name, f"must be an int, got {_type_name(value)} {show(value)}")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        if maximum is None:
            bound = f">= {minimum}"
        elif minimum is None:
            bound = f"<= {maximum}"
        else:
            bound = f"in {minimum}..{maximum}"
        raise fail(name, f"must be {bound}, got {show(value)}")
    return value


def require_number(
    value: object,
    name: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
) -> float:
    """``value`` if it is a finite real number (not a ``bool``) in range.

    ``int`` values too large to be a ``float`` (``10**400``) are rejected rather than
    overflowing in later arithmetic.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(name, f"must be a number, got {_type_name(value)} {show(value)}")
    try:
        as_float = float(value)
    except OverflowError:
        raise fail(name, f"must be a finite number, got {show(value)}") from None
    if not math.isfinite(as_float):
        raise fail(name, f"must be a finite number, got {show(value)}")
    if minimum is not None and (as_float <= minimum if exclusive_minimum else as_float < minimum):
        raise fail(
            name, f"must be {'>' if exclusive_minimum else '>='} {minimum}, got {show(value)}"
        )
    if maximum is not None and as_float > maximum:
        raise fail(name, f"must be <= {maximum}, got {show(value)}")
    return as_float


def require_str(value: object, name: str, *, nonempty: bool = False) -> str:
    """``value`` if it is a ``str`` (and not empty, with ``nonempty``)."""
    if not isinstance(value, str):
        raise fail(name, f"must be a str, got {_type_name(value)}")
    if nonempty and not value:
        raise fail(name, "must not be empty")
    return value


def require_names(value: object, name: str, *, what: str = "tool names") -> frozenset[str]:
    """``value`` as a frozenset of names (``what`` they are: ``"tool names"``), if it is a
    collection of ``str`` (a set, list, tuple, any iterable; a mapping gives its keys).

    One behaviour for every field that takes names: a lone ``str`` is refused, never
    read as one name nor as its characters (``"read_file"`` would otherwise be eleven
    one-letter names, or one name where a collection was meant; pass ``{"read_file"}``),
    and every item must be a ``str``. A field whose ``None`` means "every tool" checks
    ``None`` itself, before calling this.
    """
    if isinstance(value, str):
        raise fail(name, f"must be a collection of {what}, not a str")
    try:
        names = frozenset(value)  # type: ignore[call-overload]
    except TypeError:
        raise fail(name, f"must be a collection of {what}, got {show(value)}") from None
    for item in names:
        if not isinstance(item, str):
            raise fail(name, f"holds a non-str {show(item)}")
    return frozenset(str(item) for item in names)


def require_sequence_of(
    value: object,
    name: str,
    kind: type | tuple[type, ...],
    what: str,
    *,
    mapping_hint: str = "",
    sequence: bool = False,
) -> tuple[Any, ...]:
    """``value`` as a tuple, if it is an iterable of ``kind`` instances (not a ``str``,
    ``bytes`` or mapping, nor one ``kind`` instance on its own; with ``sequence``, only a
    :class:`~collections.abc.Sequence`, for a caller that reads it more than once).

    The one check of "a sequence of X" at every entry point, and its wording: ``what``
    names the items (``"LangChain messages"``); an item that is not one is named by its
    index (``name[3]``), followed by ``mapping_hint`` when it is a mapping (how to convert
    a provider's dicts).
    """
    container = Sequence if sequence else Iterable
    if isinstance(value, kind):
        raise fail(name, f"must be a sequence of {what}, not one")
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, container):
        raise fail(name, f"must be a sequence of {what}, got {_type_name(value)} {show(value)}")
    items = tuple(value)
    # The types present, gathered at C speed (a history of 10,000 messages has a handful):
    # checking those costs nothing per item, and an agent builds a request every turn.
    if all(issubclass(present, kind) for present in set(map(type, items))):
        return items
    for index, item in enumerate(items):
        if not isinstance(item, kind):
            kinds = kind if isinstance(kind, tuple) else (kind,)
            wanted = " or ".join(k.__name__ for k in kinds)
            hint = mapping_hint if isinstance(item, Mapping) else ""
            where = f"{name}[{index}]"
            raise fail(where, f"must be a {wanted}, got {_type_name(item)}{hint}")
    return items


def require_bool(value: object, name: str) -> bool:
    """``value`` if it is a ``bool``."""
    if not isinstance(value, bool):
        raise fail(name, f"must be a bool, got {show(value)}")
    return value


def require_callable(value: object, name: str) -> object:
    """``value`` if it is callable (a function, a method, an object with ``__call__``)."""
    if not callable(value):
        raise fail(name, f"must be callable, got {_type_name(value)} {show(value, 60)}")
    return value


# -- attrs validators ------------------------------------------------------------------


def non_negative_int(*, maximum: int | None = None) -> Validator:
    """An ``int`` >= 0 (not a ``bool``), of any size unless ``maximum`` is given."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        require_int(value, _name(instance, attribute), maximum=maximum)

    return check


def positive_int(*, maximum: int | None = None) -> Validator:
    """An ``int`` >= 1 (not a ``bool``), of any size unless ``maximum`` is given."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        require_int(value, _name(instance, attribute), minimum=1, maximum=maximum)

    return check


def number(
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
) -> Validator:
    """A finite real number in range (not a ``bool``)."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        require_number(
            value,
            _name(instance, attribute),
            minimum=minimum,
            maximum=maximum,
            exclusive_minimum=exclusive_minimum,
        )

    return check


def string(*, nonempty: bool = False) -> Validator:
    """A ``str`` (not empty, with ``nonempty``)."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        require_str(value, _name(instance, attribute), nonempty=nonempty)

    return check


def bool_() -> Validator:
    """A ``bool``."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        require_bool(value, _name(instance, attribute))

    return check


def callable_() -> Validator:
    """A callable (checked when it is stored, not when it is first called mid-run)."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        require_callable(value, _name(instance, attribute))

    return check


def one_of(choices: Collection[object]) -> Validator:
    """One of ``choices``."""
    allowed = list(choices)

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if value not in allowed:
            raise fail(_name(instance, attribute), f"must be one of {allowed}, got {show(value)}")

    return check


def instance_of(kind: type | tuple[type, ...], what: str) -> Validator:
    """An instance of ``kind``, described as ``what`` in the error (``"a Provider"``)."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if not isinstance(value, kind):
            raise fail(_name(instance, attribute), f"must be {what}, got {_type_name(value)}")

    return check


def optional(validator: Validator) -> Validator:
    """``None``, or what ``validator`` accepts."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if value is not None:
            validator(instance, attribute, value)

    return check
