"""How the public modules present their names: public ``__module__``, loaded on first use,
and a light ``import neuron_context``."""

from __future__ import annotations

import importlib
import inspect
import os
import pickle
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

import neuron_context

ROOT = Path(__file__).resolve().parents[1]
PUBLIC_MODULES = (
    "neuron_context",
    "neuron_context.counting",
    "neuron_context.errors",
    "neuron_context.events",
    "neuron_context.formats",
    "neuron_context.middleware",
    "neuron_context.providers",
    "neuron_context.stores",
    "neuron_context.strategies",
    "neuron_context.testing",
)
"""The modules whose ``__all__`` users import from (the adapters: :data:`ADAPTERS`)."""

ADAPTERS = (
    "neuron_context.ext.langchain",
    "neuron_context.ext.openai_agents",
    "neuron_context.ext.pydantic_ai",
)
"""The adapters' public modules, each importable only with its framework."""

IMPORT_BUDGET = 0.10
"""CPU seconds ``import neuron_context`` may cost over a bare interpreter."""

LOADED_ON_FIRST_USE = (
    "asyncio",
    "importlib.metadata",
    "tokenizers",
    "tiktoken",
    "neuron_context._agent.loop",
    "neuron_context._middleware.types",
    "neuron_context._counting.calibrated",
    "neuron_context._stores.sqlite",
    "neuron_context._strategies.default",
    "neuron_context.middleware",
    "neuron_context.providers._openai",
)
"""What ``import neuron_context`` must not load."""


def _python(code: str, *, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env or {**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
        cwd=ROOT,
    )
    return done.stdout.strip()


def _exports() -> list[tuple[str, str, type | types.FunctionType]]:
    """``(module, name, value)`` of every class and function a public module exports."""
    found: list[tuple[str, str, type | types.FunctionType]] = []
    for module_name in PUBLIC_MODULES + ADAPTERS:
        try:
            module = importlib.import_module(module_name)
        except neuron_context.ConfigurationError:  # its framework is not installed
            continue
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, type | types.FunctionType):
                found.append((module_name, name, value))
    return found


class TestPublicModule:
    def test_every_export_reports_a_public_module(self) -> None:
        """A class or function exported by a public module reports ``neuron_context`` when
        the top level exports it, else the namespace that does; never a private room."""
        top = set(neuron_context.__all__)
        wrong = []
        for module, name, value in _exports():
            if not value.__module__.startswith("neuron_context"):
                continue  # re-exported from elsewhere (none today)
            expected = "neuron_context" if name in top else module
            if value.__module__ != expected and value.__qualname__ == name:
                wrong.append(f"{module}.{name}: {value.__module__}")
        assert wrong == []

    def test_reprs_show_the_public_name(self) -> None:
        """A class's repr and a method's module are the public ones."""
        from neuron_context.strategies import DefaultStack

        assert repr(DefaultStack) == "<class 'neuron_context.strategies.DefaultStack'>"
        assert repr(neuron_context.TokenCounter) == "<class 'neuron_context.TokenCounter'>"
        assert neuron_context.Message.user.__module__ == "neuron_context"
        assert neuron_context.TokenCounter.estimate_text.__module__ == "neuron_context"

    def test_a_traceback_names_the_public_module(self) -> None:
        """An error raised by the library shows its public class name."""
        import traceback

        with pytest.raises(neuron_context.ConfigurationError) as caught:
            neuron_context.TokenCounter(-1.0)
        shown = "".join(traceback.format_exception(caught.value))
        assert "\nneuron_context.ConfigurationError: " in shown

    @pytest.mark.parametrize(
        "make",
        [
            lambda: neuron_context.TokenCounter(3.0),
            lambda: neuron_context.TokenizerCounter.lazy("o200k_base"),
            lambda: neuron_context.Message.user("hi"),
            lambda: neuron_context.Role.TOOL,
            lambda: neuron_context.SlidingWindowStrategy(3, 10),
            lambda: neuron_context.default_stack(1000),
            lambda: neuron_context.ConfigurationError("bad"),
            lambda: neuron_context.strategies.Structure.of([neuron_context.Message.user("x")]),
        ],
    )
    def test_values_still_pickle(self, make: object) -> None:
        """Values of renamed classes pickle and unpickle to equal values (pickle finds the
        class under its public module, lazily loaded names included)."""
        value = make()  # type: ignore[operator]
        restored = pickle.loads(pickle.dumps(value))
        assert type(restored) is type(value)
        if not isinstance(value, BaseException):
            assert repr(restored) == repr(value)

    def test_pickle_in_a_fresh_process(self) -> None:
        """A pickle of a lazily loaded class loads in a process that never touched it."""
        data = pickle.dumps(neuron_context.MemoryStore)
        out = _python(
            f"""
            import pickle
            print(pickle.loads({data!r}).__module__)
            """
        )
        assert out == "neuron_context"


class TestLazyLoading:
    def test_import_loads_only_the_core(self) -> None:
        """``import neuron_context`` loads the messages, counters and strategies alone."""
        out = _python(
            f"""
            import sys
            import neuron_context
            print(sorted(set(sys.modules) & {set(LOADED_ON_FIRST_USE)!r}))
            """
        )
        assert out == "[]"

    def test_names_resolve_on_first_use(self) -> None:
        """``from neuron_context import X`` and attribute access load what they name."""
        out = _python(
            """
            import sys
            from neuron_context import Agent, default_stack
            import neuron_context
            print(Agent is neuron_context.Agent, "Agent" in vars(neuron_context),
                  "neuron_context._agent.loop" in sys.modules, callable(default_stack))
            """
        )
        assert out == "True True True True"

    def test_dir_and_star_import_list_every_name(self) -> None:
        """``dir()`` lists the lazy names too, and ``import *`` binds all of ``__all__``."""
        out = _python(
            """
            import neuron_context
            names = set(dir(neuron_context))
            namespace = {}
            exec("from neuron_context import *", namespace)
            exported = set(neuron_context.__all__)
            print(exported <= names, set(namespace) >= exported)
            """
        )
        assert out == "True True"

    @pytest.mark.parametrize("module", PUBLIC_MODULES)
    def test_unknown_names_raise_attribute_error(self, module: str) -> None:
        """A name no public module has is an AttributeError naming the module."""
        with pytest.raises(AttributeError, match=module.replace(".", r"\.")):
            getattr(importlib.import_module(module), "NoSuchName")  # noqa: B009

    def test_type_checkers_see_every_lazy_name(self) -> None:
        """Every name ``__all__`` lists is bound in ``__init__.py`` for a type checker
        (eagerly, or under ``if TYPE_CHECKING:``)."""
        source = inspect.getsource(neuron_context)
        for name in neuron_context.__all__:
            assert f" as {name}\n" in source, name


def _cpu(code: str, env: dict[str, str]) -> float:
    """The least CPU time of five processes running ``code`` (after one to warm up)."""
    probe = textwrap.dedent(
        """
        import resource, sys
        exec(sys.argv[1])
        usage = resource.getrusage(resource.RUSAGE_SELF)
        print(usage.ru_utime + usage.ru_stime)
        """
    )
    runs = []
    for _ in range(6):
        done = subprocess.run(
            [sys.executable, "-c", probe, code],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            cwd=ROOT,
        )
        runs.append(float(done.stdout))
    return min(runs[1:])


@pytest.mark.skipif(sys.platform == "win32", reason="resource is POSIX only")
class TestImportTime:
    def test_import_costs_at_most_a_tenth_of_a_second(self, tmp_path: Path) -> None:
        """``import neuron_context`` costs at most 0.1 s of CPU over a bare interpreter
        (bytecode cached; the least of several runs, so a busy machine does not count)."""
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONPYCACHEPREFIX": str(tmp_path)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        bare = _cpu("pass", env)
        loaded = _cpu("import neuron_context", env)
        assert loaded - bare <= IMPORT_BUDGET, f"{loaded - bare:.3f} s over {bare:.3f} s"
