"""The README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


@pytest.mark.parametrize("source", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(source: str) -> None:
    """Each python block of the README executes without error."""
    exec(compile(source, str(README), "exec"), {"__name__": "readme"})


def test_readme_has_examples() -> None:
    """The README holds at least one python example."""
    assert BLOCKS
