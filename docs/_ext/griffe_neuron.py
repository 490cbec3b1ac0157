"""A griffe extension for the API reference (used by mkdocstrings, see mkdocs.yml).

The package's docstrings use Sphinx roles (``:class:`Message```) and reST literal-block
markers (``::``), which Markdown shows as they are: each role becomes a code span that
links to the object when the reference documents it, and the markers go. It also gives
``attrs`` classes the ``__init__`` signature that ``attrs`` generates at run time, so
the reference shows how to build them.

Only the docs build loads this file; the package does not depend on it.
"""

from __future__ import annotations

import functools
import html
import re
from typing import Any

import griffe

__all__ = ["NeuronDocs"]

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|exc|data|mod|obj|const):`(~?)([^`]+)`")
# reST's literal-block marker: "text::" reads "text:", a lone "::" line goes.
_LITERAL_ALONE = re.compile(r"^[ \t]*::[ \t]*\n", re.MULTILINE)
_LITERAL_AFTER = re.compile(r"(\S)::[ \t]*$", re.MULTILINE)
_EMPTY = {"tuple": "()", "list": "[]", "dict": "{}"}
_ATTRS_DECORATORS = {"attrs.frozen", "attrs.define", "attr.s", "attrs.mutable", "attr.attrs"}


class NeuronDocs(griffe.Extension):
    """Rewrite Sphinx roles as links and add ``__init__`` to ``attrs`` classes."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Process every object of the loaded package once."""
        for obj in _walk(pkg):
            if obj.docstring is not None:
                obj.docstring.value = _markdown(obj, obj.docstring.value)
            if isinstance(obj, griffe.Class) and "__init__" not in obj.members:
                _add_attrs_init(obj)


def _walk(obj: griffe.Object) -> list[griffe.Object]:
    found = [obj]
    for member in obj.members.values():
        if not member.is_alias and isinstance(member, griffe.Object):
            found.extend(_walk(member))
    return found


def _markdown(obj: griffe.Object, text: str) -> str:
    text = _LITERAL_AFTER.sub(r"\1:", _LITERAL_ALONE.sub("", text))
    return _ROLE.sub(functools.partial(_link, obj), text)


def _link(obj: griffe.Object, match: re.Match[str]) -> str:
    short, target = match.group(1) == "~", match.group(2).removesuffix("()")
    title = target.rsplit(".", 1)[-1] if short else target
    try:
        identifier = obj.resolve(target.split(".", 1)[0])
        if "." in target:
            identifier += "." + target.split(".", 1)[1]
    except griffe.NameResolutionError:
        identifier = target if target.startswith("neuron_context") else f"neuron_context.{target}"
    return (
        f'<autoref identifier="{html.escape(identifier)}" optional>'
        f"<code>{html.escape(title)}</code></autoref>"
    )


def _call_name(expr: object) -> str:
    function = getattr(expr, "function", expr)
    return str(getattr(function, "canonical_path", function))


def _decorator_args(cls: griffe.Class) -> dict[str, str] | None:
    for decorator in cls.decorators:
        if _call_name(decorator.value) in _ATTRS_DECORATORS:
            return _keywords(decorator.value)
    return None


def _keywords(expr: object) -> dict[str, str]:
    args: dict[str, str] = {}
    for argument in getattr(expr, "arguments", ()):
        name = getattr(argument, "name", None)
        if name is not None:
            args[name] = str(argument.value)
    return args


def _add_attrs_init(cls: griffe.Class) -> None:
    options = _decorator_args(cls)
    if options is None:
        return
    all_kw_only = options.get("kw_only") == "True"
    parameters: list[griffe.Parameter] = []
    for member in cls.members.values():
        if member.is_alias or not isinstance(member, griffe.Attribute):
            continue
        if member.annotation is None or "property" in member.labels:
            continue
        value = member.value
        field = (
            _keywords(value)
            if value is not None and _call_name(value) in {"attrs.field", "attr.ib"}
            else None
        )
        if field is not None and field.get("init") == "False":
            continue
        if field is None:
            default: str | None = None if value is None else str(value)
        elif "default" in field:
            default = field["default"]
        elif "factory" in field:
            factory = field["factory"]
            default = _EMPTY.get(factory, f"{factory}()")
        else:
            default = None
        name = (field or {}).get("alias", "").strip("'\"") or member.name.lstrip("_")
        kw_only = all_kw_only or (field or {}).get("kw_only") == "True"
        kind = (
            griffe.ParameterKind.keyword_only
            if kw_only
            else griffe.ParameterKind.positional_or_keyword
        )
        parameters.append(
            griffe.Parameter(name, annotation=member.annotation, kind=kind, default=default)
        )
    positional = [p for p in parameters if p.kind is not griffe.ParameterKind.keyword_only]
    keyword = [p for p in parameters if p.kind is griffe.ParameterKind.keyword_only]
    init = griffe.Function(
        "__init__",
        lineno=0,
        endlineno=0,
        parent=cls,
        parameters=griffe.Parameters(
            griffe.Parameter("self", kind=griffe.ParameterKind.positional_or_keyword),
            *positional,
            *keyword,
        ),
        returns="None",
    )
    cls.set_member("__init__", init)
    cls.labels.add("attrs")
