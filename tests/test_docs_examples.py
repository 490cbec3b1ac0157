"""The documentation's Python examples run as written.

Every ```` ```python ```` block of ``docs/`` runs, page by page in the order of the page,
in one namespace per page (a later block may use what an earlier one defined). A block
that needs an API key is fenced ```` ```python title="needs an API key" ````: it does not
run with the page, but on its own, in a fresh interpreter whose SDK finds its key and base
URL in the environment, pointed at a fake server on 127.0.0.1 (``fake_llm_server``). The
test below pins exactly which blocks those are.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import pytest

if TYPE_CHECKING:
    from fake_llm_server import FakeLLMServer

DOCS = Path(__file__).parents[1] / "docs"
NEEDS_KEY = 'title="needs an API key"'
FENCE = re.compile(r"^```python([^\n]*)\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)

SKIPPED = {("strategies/summarization.md", 6), ("strategies/summarization.md", 7)}
"""``(page, block index)`` of every block marked as needing an API key."""

SDK_OF_PROVIDER = {"OpenAIProvider": "openai", "AnthropicProvider": "anthropic"}
"""Which SDK a key block needs, by the provider it imports."""


@attrs.frozen
class Block:
    """One python block of a page."""

    page: str
    index: int
    source: str
    line: int
    needs_key: bool


def blocks(page: Path) -> list[Block]:
    """The python blocks of ``page``, in order."""
    text = page.read_text(encoding="utf-8")
    name = page.relative_to(DOCS).as_posix()
    return [
        Block(
            page=name,
            index=index,
            source=match.group(2),
            line=text.count("\n", 0, match.start(2)),
            needs_key=NEEDS_KEY in match.group(1),
        )
        for index, match in enumerate(FENCE.finditer(text))
    ]


PAGES = sorted(page for page in DOCS.rglob("*.md") if blocks(page))


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """Examples may configure logging; undo it after each page."""
    logger = logging.getLogger("neuron_context")
    root = logging.getLogger()
    level, root_level, handlers = logger.level, root.level, list(root.handlers)
    yield
    logger.setLevel(level)
    root.setLevel(root_level)
    for handler in root.handlers[:]:
        if handler not in handlers:
            root.removeHandler(handler)


class TestDocsExamples:
    """The python blocks of every documentation page."""

    @pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(DOCS).as_posix() for p in PAGES])
    def test_page_examples_run(self, page: Path) -> None:
        """Each runnable block of the page executes without error, in order."""
        namespace: dict[str, object] = {"__name__": "docs_example"}
        for block in blocks(page):
            if block.needs_key:
                continue
            # Pad with newlines so tracebacks point at the block's line in the page.
            source = "\n" * block.line + block.source
            code = compile(source, str(DOCS / block.page), "exec")
            exec(code, namespace)

    def test_only_api_key_blocks_are_skipped(self) -> None:
        """Exactly the blocks listed in SKIPPED are marked as needing an API key."""
        marked = {
            (block.page, block.index)
            for page in DOCS.rglob("*.md")
            for block in blocks(page)
            if block.needs_key
        }
        assert marked == SKIPPED

    @pytest.mark.parametrize(
        "key_block",
        sorted(SKIPPED),
        ids=[f"{page}-{index}" for page, index in sorted(SKIPPED)],
    )
    def test_api_key_blocks_run_against_a_local_server(
        self, key_block: tuple[str, int], server: FakeLLMServer
    ) -> None:
        """A block that needs an API key runs as written, alone, with its SDK's key and
        base URL in the environment pointing at the fake server."""
        page, index = key_block
        block = blocks(DOCS / page)[index]
        sdks = {sdk for name, sdk in SDK_OF_PROVIDER.items() if name in block.source}
        for sdk in sorted(sdks):
            if importlib.util.find_spec(sdk) is None:
                pytest.skip(f"the {sdk!r} SDK is not installed")
        environment = {
            **os.environ,
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": server.openai_base_url,
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": server.url,
        }
        result = subprocess.run(
            [sys.executable, "-c", block.source],
            capture_output=True,
            text=True,
            timeout=120,
            env=environment,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert server.requests, "the example made no call"

    def test_docs_have_examples(self) -> None:
        """The documentation holds runnable examples on its main pages."""
        names = {page.relative_to(DOCS).as_posix() for page in PAGES}
        assert {"index.md", "quickstart.md", "concepts.md", "counting.md"} <= names
