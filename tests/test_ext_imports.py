"""The adapters are imported lazily and name their extra when the framework is missing."""

from __future__ import annotations

import importlib
import inspect
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from neuron_context import ConfigurationError

ROOT = Path(__file__).parents[1]

FRAMEWORKS = ("langchain", "langchain_core", "langgraph", "pydantic_ai", "agents")
"""The top-level packages of the three frameworks."""

ADAPTERS = {
    "neuron_context.ext.langchain": ("langchain", ("langchain", "langchain_core", "langgraph")),
    "neuron_context.ext.pydantic_ai": ("pydantic-ai", ("pydantic_ai",)),
    "neuron_context.ext.openai_agents": ("openai-agents", ("agents",)),
}
"""Each adapter module, its extra, and the packages it needs."""


def _python(code: str) -> str:
    """Run ``code`` in a fresh interpreter with this checkout first on the path."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    return done.stdout.strip()


class TestLazyImports:
    """import neuron_context and the adapter modules."""

    def test_package_imports_no_framework(self) -> None:
        """`import neuron_context` imports neither neuron_context.ext nor any framework."""
        loaded = _python(
            f"""
            import sys
            import neuron_context
            names = {{name.split(".")[0] for name in sys.modules}}
            print(sorted(names & {set(FRAMEWORKS)!r}), "neuron_context.ext" in sys.modules)
            """
        )
        assert loaded == "[] False"

    def test_ext_package_imports_no_framework(self) -> None:
        """`import neuron_context.ext` imports no framework either."""
        loaded = _python(
            f"""
            import sys
            import neuron_context.ext
            print(sorted({{n.split(".")[0] for n in sys.modules}} & {set(FRAMEWORKS)!r}))
            """
        )
        assert loaded == "[]"

    @pytest.mark.parametrize("adapter", sorted(ADAPTERS))
    def test_missing_framework_names_the_extra(self, adapter: str) -> None:
        """Without its framework an adapter raises a ConfigurationError naming its extra."""
        extra, blocked = ADAPTERS[adapter]
        message = _python(
            f"""
            import sys

            class Block:
                def find_spec(self, name, path=None, target=None):
                    if name.split(".")[0] in {blocked!r}:
                        raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
                    return None

            sys.meta_path.insert(0, Block())
            from neuron_context import ConfigurationError
            try:
                import {adapter}
            except ConfigurationError as exc:
                print(exc)
            """
        )
        # Not on a registry: the hint says how to install from a clone.
        assert f'python -m pip install ".[{extra}]"' in message
        assert "neuron-context[" not in message
        assert adapter in message


def _ruff_key(name: str) -> tuple[int, str]:
    # RUF022 ("isort-style"): SCREAMING_CASE first, then CamelCase, then the rest.
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


class TestAdapterSurface:
    """The public names of each adapter module."""

    @pytest.mark.parametrize("adapter", sorted(ADAPTERS))
    def test_all_is_sorted_and_documented(self, adapter: str) -> None:
        """__all__ is sorted; its classes and functions have docstrings."""
        module = importlib.import_module(adapter)
        names = list(module.__all__)
        assert names == sorted(names, key=_ruff_key)
        for name in names:
            value = getattr(module, name)
            if inspect.isclass(value) or inspect.isfunction(value):
                assert (value.__doc__ or "").strip(), name


class TestConvertersRefuseJunk:
    """Each adapter's reader refuses what is not the framework's messages."""

    @pytest.mark.parametrize(
        ("module", "reader", "junk"),
        [
            ("neuron_context.ext.langchain", "from_langchain", None),
            ("neuron_context.ext.langchain", "from_langchain", [1]),
            ("neuron_context.ext.pydantic_ai", "from_pydantic_ai", None),
            ("neuron_context.ext.pydantic_ai", "from_pydantic_ai", [1]),
            ("neuron_context.ext.openai_agents", "from_responses_items", None),
            ("neuron_context.ext.openai_agents", "from_responses_items", [5]),
        ],
    )
    def test_a_configuration_error(self, module: str, reader: str, junk: object) -> None:
        """Junk is a ConfigurationError naming what is wrong, never a raw exception."""
        convert = getattr(importlib.import_module(module), reader)
        with pytest.raises(ConfigurationError, match="must be"):
            convert(junk)
