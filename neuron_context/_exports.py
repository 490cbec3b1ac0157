"""How the public modules present their names: under their public name, some on first use.

**Public names.** Every class and function lives in a private room
(``neuron_context._strategies.default``), but users meet it through a public module: its
``repr``, a traceback, ``help()`` and a pickle should say ``neuron_context.DefaultStack``
or ``neuron_context.strategies.DefaultStack``, not the room it happens to live in today
(httpx sets ``__module__`` on its exports; trio runs ``fixup_module_metadata``).
:func:`publish` does that for the names a public module exports: a name the top level
exports reports ``neuron_context`` (wherever else it is exported), any other the
namespace that exports it. Only classes and functions defined in a private room and
exported under their own name are renamed, so a pickle, which finds a class by its module
and name, still finds it (the lazy names below included: pickle imports the module and
asks it for the name). As for httpx and trio, ``typing.get_type_hints(cls)`` then reads a
class's string annotations in its public module, where the names that module does not
export are missing: pass the private module's namespace as ``globalns`` to resolve them.

**Names loaded on first use.** ``import neuron_context`` loads the messages and the
errors; the counters, the strategies, the agent loop, the middlewares, the providers,
the stores and the public namespaces are loaded when first asked for (:func:`lazy`: the
PEP 562 module ``__getattr__`` and ``__dir__``), so a program pays for what it uses: one
that only counts never loads a strategy, one that compacts never pays for asyncio, anyio
or the middlewares. ``from neuron_context import Agent``,
``dir()``, ``__all__`` and ``import *`` behave as if every name were bound at import;
type checkers read the names from the modules' ``if TYPE_CHECKING:`` imports.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["PACKAGE", "lazy", "publish"]

PACKAGE = "neuron_context"


def _top_level() -> frozenset[str]:
    """The names the top level exports (its ``__all__``, defined before its imports)."""
    return frozenset(getattr(sys.modules.get(PACKAGE), "__all__", ()))


def _rename(value: object, name: str, module: str) -> None:
    """Report ``module`` as the home of ``value`` (and of the methods it defines)."""
    if not isinstance(value, type | types.FunctionType):
        return
    old = getattr(value, "__module__", "")
    parts = old.split(".")
    private = parts[0] == PACKAGE and any(part.startswith("_") for part in parts[1:])
    ours = private or (module == PACKAGE and parts[0] == PACKAGE and len(parts) > 1)
    if not ours or old == module or value.__qualname__ != name:
        return  # not ours, already public, or exported under another name
    value.__module__ = module
    if isinstance(value, type):
        for member in vars(value).values():
            function = getattr(member, "__func__", member)
            if isinstance(function, types.FunctionType) and function.__module__ == old:
                function.__module__ = module


def publish(module: str, namespace: Mapping[str, object], names: Iterable[str]) -> None:
    """Report each of ``names`` (bound in ``namespace``, the public ``module``'s globals)
    as living in ``neuron_context`` when the top level exports it, else in ``module``."""
    top = _top_level()
    for name in names:
        if name in namespace:
            _rename(namespace[name], name, PACKAGE if name in top else module)


def lazy(
    module: str, namespace: dict[str, Any], table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of the public ``module`` (whose globals are
    ``namespace``) for the names of ``table``: each maps a name to the module it is
    imported from (relative to ``module``'s package), or to ``""`` for a submodule of
    ``module`` itself. A name is imported when first asked for, published (see
    :func:`publish`) and bound, so later lookups cost nothing."""
    package = module if module == PACKAGE or "." not in module else module.rpartition(".")[0]
    if namespace.get("__path__") is not None:
        package = module  # a package: relative imports start from it

    def __getattr__(name: str) -> Any:  # noqa: N807
        source = table.get(name)
        if source is None:
            msg = f"module {module!r} has no attribute {name!r}"
            raise AttributeError(msg)
        if source:
            value = getattr(importlib.import_module(source, package), name)
            publish(module, {name: value}, (name,))
        else:
            value = importlib.import_module(f"{module}.{name}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*namespace, *table})

    return __getattr__, __dir__
