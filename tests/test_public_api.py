"""The public surface of neuron_context: __all__ and docstrings."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import inspect
import re
import types
from pathlib import Path

import pytest

import neuron_context

INIT = Path(neuron_context.__file__)
ROOT = Path(__file__).resolve().parents[1]


def _top_level_statements(tree: ast.Module) -> list[ast.stmt]:
    """The module's statements, those of ``if TYPE_CHECKING:`` blocks included (the names
    loaded on first use are imported there for type checkers)."""
    statements: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "_typing.TYPE_CHECKING",
        ):
            statements.extend(node.body)
        else:
            statements.append(node)
    return statements


def _names_bound_in_init() -> set[str]:
    """Every public name that neuron_context/__init__.py imports or defines (eagerly or
    for type checkers, when it is loaded on first use)."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in _top_level_statements(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if not name.startswith("_")}


class TestAll:
    """neuron_context.__all__."""

    def test_sorted(self) -> None:
        """__all__ is sorted (case-sensitively, as ruff's RUF022 sorts it)."""
        assert neuron_context.__all__ == sorted(neuron_context.__all__, key=_ruff_key)

    def test_no_duplicates(self) -> None:
        """__all__ names each export once."""
        assert len(set(neuron_context.__all__)) == len(neuron_context.__all__)

    def test_complete(self) -> None:
        """Every public name of __init__.py is in __all__, and nothing else is."""
        assert set(neuron_context.__all__) == _names_bound_in_init()

    def test_importable(self) -> None:
        """Every name in __all__ is an attribute of the package."""
        for name in neuron_context.__all__:
            assert hasattr(neuron_context, name), name

    def test_star_import(self) -> None:
        """`from neuron_context import *` binds exactly __all__."""
        namespace: dict[str, object] = {}
        exec("from neuron_context import *", namespace)
        namespace.pop("__builtins__")
        assert set(namespace) == set(neuron_context.__all__)

    def test_no_unlisted_public_attributes(self) -> None:
        """The package exposes no public non-module attribute missing from __all__."""
        public = {
            name
            for name, value in vars(neuron_context).items()
            if not name.startswith("_") and not isinstance(value, types.ModuleType)
        }
        assert public <= set(neuron_context.__all__)

    def test_version(self) -> None:
        """``__version__`` is the installed distribution's version, a PEP 440 string."""
        assert neuron_context.__version__ == importlib.metadata.version("neuron-context")
        assert re.fullmatch(
            r"\d+\.\d+\.\d+((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?", neuron_context.__version__
        )


def _ruff_key(name: str) -> tuple[int, str]:
    # RUF022 ("isort-style"): SCREAMING_CASE first, then CamelCase, then the rest.
    if name.isupper():
        return (0, name)
    if name[:1].isupper():
        return (1, name)
    return (2, name)


def _public_objects() -> list[tuple[str, object]]:
    return [(name, getattr(neuron_context, name)) for name in neuron_context.__all__]


class TestDocstrings:
    """Docstrings of the public API."""

    def test_package_docstring(self) -> None:
        """The package has a docstring."""
        assert inspect.getdoc(neuron_context)

    def test_public_classes(self) -> None:
        """Every public class has its own docstring."""
        missing = [
            name
            for name, value in _public_objects()
            if isinstance(value, type) and not (value.__doc__ or "").strip()
        ]
        assert missing == []

    def test_public_functions(self) -> None:
        """Every public function has a docstring."""
        missing = [
            name
            for name, value in _public_objects()
            if inspect.isfunction(value) and not (value.__doc__ or "").strip()
        ]
        assert missing == []

    def test_public_methods(self) -> None:
        """Every public method a public class defines has a docstring."""
        missing: list[str] = []
        for name, value in _public_objects():
            if not isinstance(value, type) or value.__module__.startswith("builtins"):
                continue
            for attribute, member in vars(value).items():
                if attribute.startswith("_"):
                    continue
                function = (
                    member.__func__ if isinstance(member, classmethod | staticmethod) else member
                )
                if isinstance(function, property):
                    function = function.fget
                if inspect.isfunction(function) and not (function.__doc__ or "").strip():
                    missing.append(f"{name}.{attribute}")
        assert missing == []


def _private_imports(path: Path) -> list[str]:
    """Every import of a private part of neuron_context in the module at ``path``."""
    found: list[str] = []
    label = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
            modules += [f"{node.module}.{alias.name}" for alias in node.names]
        for module in modules:
            parts = module.split(".")
            if parts[0] == "neuron_context" and any(_private(p) for p in parts[1:]):
                found.append(f"{label}:{node.lineno}: {module}")
    return found


def _private(part: str) -> bool:
    """A private module or name: ``_x``, but not a dunder such as ``__main__``."""
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


class TestTestsUsePublicNames:
    """Tests and benchmarks import only the public API, so moving a private module breaks
    none of them."""

    # The only exceptions, each with its reason: a private room is their subject.
    WHITE_BOX = frozenset(
        {
            # The offline tiktoken conversion: its regex patterns and disk cache are what it
            # tests (and it patches the builder to test the cache's failure paths).
            "tests/test_encodings.py",
            # The item-by-item offload: its entries' page bounds and the index's carried
            # lines are what it tests, below the strategies that use them.
            "tests/test_offload_index.py",
            # The choice of a JSON result's segments: its cap and verbatim-order invariants
            # are what it tests, below default_stack's cut that uses it.
            "tests/test_segment_choice.py",
            # A user's words cut to a goal: its monotonicity in the goal and the earlier
            # markers it keeps whole are what it tests, over every goal, below the last
            # resort of default_stack that uses it.
            "tests/test_cut_words.py",
            # The team's measurement tools wrap default_stack's private steps to trace
            # them: the steps' signatures, which they call, are what it tests.
            "tests/test_measurement_tools.py",
            # Counts the pydantic-ai reader's conversions (a fleet worker reads only what
            # is new), which no public name shows.
            "tests/test_ext_pydantic_ai_fleet.py",
            # Not a test: the script that regenerates tests/data/tiktoken_reference.json.
            "tests/data/make_tiktoken_reference.py",
        }
    )

    def test_no_private_imports(self) -> None:
        """No module under tests/ or benches/ imports neuron_context._x or a private name
        (but the white-box modules listed, each with its reason)."""
        modules = sorted(
            path
            for path in [*ROOT.glob("tests/**/*.py"), *ROOT.glob("benches/*.py")]
            if path.relative_to(ROOT).as_posix() not in self.WHITE_BOX
        )
        assert modules
        offending = [line for path in modules for line in _private_imports(path)]
        assert offending == []

    def test_detects_private_imports(self, tmp_path: Path) -> None:
        """The check finds each form of private import, and passes public ones."""
        module = tmp_path / "probe.py"
        module.write_text(
            "import neuron_context._errors\n"
            "from neuron_context._messages.content import Text\n"
            "from neuron_context.providers._sdk import SDKProvider\n"
            "from neuron_context.providers import _sdk\n"
            "from neuron_context import Message, formats\n"
            "from neuron_context.formats import to_openai\n",
            encoding="utf-8",
        )
        found = _private_imports(module)
        assert [line.rsplit(": ", 1)[1] for line in found] == [
            "neuron_context._errors",
            "neuron_context._messages.content",
            "neuron_context._messages.content.Text",
            "neuron_context.providers._sdk",
            "neuron_context.providers._sdk.SDKProvider",
            "neuron_context.providers._sdk",
        ]


NAMESPACES = ("counting", "errors", "events", "middleware", "overflow", "providers", "strategies")
"""The curated public namespaces beside the top level (and formats, ext, testing)."""

CONTRACT_NAMES = frozenset(
    {
        # CONTRACT.md's names, importable from the top level whatever else moves.
        "AgentMiddleware",
        "AgentOptions",
        "AgentResult",
        "AnthropicProvider",
        "Compaction",
        "CompactionError",
        "CompletionRequest",
        "CompletionResponse",
        "CompositeStrategy",
        "ConfigurationError",
        "ContextEditingMiddleware",
        "ContextSection",
        "ContextStrategy",
        "Document",
        "FallbackStrategy",
        "HumanInTheLoopMiddleware",
        "Image",
        "InjectionTrigger",
        "InvalidConversationError",
        "Message",
        "MiddlewareChain",
        "ModelCallLimitMiddleware",
        "ModelFallbackMiddleware",
        "ModelRequest",
        "NeuronContextError",
        "OpenAIProvider",
        "PersistentContext",
        "Provider",
        "RedactedThinking",
        "Role",
        "SlidingWindowStrategy",
        "StopReason",
        "StripProcessedImagesStrategy",
        "StripToolCallsStrategy",
        "SummarizationError",
        "SummarizationMiddleware",
        "SummarizationStrategy",
        "SupersededToolCallsStrategy",
        "SystemInjector",
        "Text",
        "Thinking",
        "TodoListMiddleware",
        "TokenCounter",
        "TokenUsage",
        "TokenizerCounter",
        "TokenizerError",
        "Tool",
        "ToolCallLimitMiddleware",
        "ToolCallRequest",
        "ToolDefinition",
        "ToolResult",
        "ToolResultClearingStrategy",
        "ToolRetryMiddleware",
        "ToolUse",
        "create_agent",
        "default_stack",
        "formats",
        "repair",
        "validate",
    }
)


class TestNamespaces:
    """The curated namespaces: each a complete, sorted __all__ of documented names."""

    def test_the_contract_names_import_from_the_top(self) -> None:
        """Every name CONTRACT.md pins is exported by neuron_context."""
        assert set(neuron_context.__all__) >= CONTRACT_NAMES

    @pytest.mark.parametrize("name", NAMESPACES)
    def test_each_namespace_is_a_complete_sorted_all(self, name: str) -> None:
        """A namespace binds exactly its __all__ (sorted as ruff sorts it), each name
        importable and documented."""
        module = importlib.import_module(f"neuron_context.{name}")
        exported = list(module.__all__)
        assert exported == sorted(exported, key=_ruff_key)
        assert len(set(exported)) == len(exported)
        for attribute in exported:  # a lazy name is bound on first use: use each once
            getattr(module, attribute)
        public = {
            attribute
            for attribute, value in vars(module).items()
            if not attribute.startswith("_") and not isinstance(value, types.ModuleType)
        }
        assert public == set(exported)
        assert inspect.getdoc(module)
        undocumented = [
            attribute
            for attribute in exported
            if isinstance(getattr(module, attribute), type)
            and not (getattr(module, attribute).__doc__ or "").strip()
        ]
        assert undocumented == []

    @pytest.mark.parametrize("name", NAMESPACES)
    def test_each_namespace_has_a_reference_page(self, name: str) -> None:
        """The reference docs are organised by namespace: each has its page."""
        page = ROOT / "docs" / "reference" / f"{name}.md"
        assert page.read_text(encoding="utf-8").startswith(f"# `neuron_context.{name}`")

    def test_a_top_level_name_is_the_namespace_s_object(self) -> None:
        """A name exported both at the top and by a namespace is the same object."""
        for name in NAMESPACES:
            module = importlib.import_module(f"neuron_context.{name}")
            for attribute in module.__all__:
                if attribute in neuron_context.__all__:
                    assert getattr(neuron_context, attribute) is getattr(module, attribute)


class TestRooms:
    """The private rooms: one concept per module, no name used twice, each on the map."""

    def test_every_room_is_on_the_map(self) -> None:
        """docs/architecture.md names every module and package of the library, each as a
        whole name (``_base`` inside ``o200k_base`` is not ``providers/_base.py``)."""
        package = ROOT / "neuron_context"
        drawn = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
        missing = [
            path.relative_to(package).as_posix()
            for path in sorted(package.rglob("*"))
            if "__pycache__" not in path.parts
            and (path.suffix == ".py" or (path.is_dir() and (path / "__init__.py").exists()))
            and path.name not in {"__init__.py", "__main__.py"}
            and re.search(rf"(?<![\w.]){re.escape(path.stem)}(?!\w)", drawn) is None
        ]
        assert missing == []

    def test_no_two_private_modules_share_a_name(self) -> None:
        """No module name occurs in two rooms, underscores aside (``_overflow.py`` and
        ``_compaction/overflow.py`` are one name; a public namespace module may share its
        private implementation's name, as ``events`` does; the adapters' packages under
        ``ext/`` are shaped alike, so a role has one name in each of them)."""
        package = ROOT / "neuron_context"
        seen: dict[str, list[str]] = {}
        for path in package.rglob("*.py"):
            relative = path.relative_to(package)
            if path.name == "__init__.py" or (len(relative.parts) == 1 and path.name[0] != "_"):
                continue
            adapter = len(relative.parts) == 3 and relative.parts[0] == "ext"
            room = f"ext/_*/{path.name}" if adapter else relative.as_posix()
            paths = seen.setdefault(path.name.lstrip("_"), [])
            if room not in paths:
                paths.append(room)
        collisions = {name: sorted(paths) for name, paths in seen.items() if len(paths) > 1}
        assert collisions == {}
