"""Which run this is: a quick local loop, or CI's full one.

CI runs ``nox -s tests``, which sets ``HYPOTHESIS_PROFILE=ci``: Hypothesis draws more
examples, and the tests marked :data:`ci_only` run too (conftest.py skips them
elsewhere). A test marked so is a slow check whose property a cheaper sibling, or a
sample of it (:func:`sample`), also checks in every run: the full data set, the largest
sizes. Run them locally with ``HYPOTHESIS_PROFILE=ci pytest ...``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TypeVar

import pytest

__all__ = ["FULL", "SAMPLE_EVERY", "ci_only", "sample"]

T = TypeVar("T")

FULL = os.environ.get("HYPOTHESIS_PROFILE") == "ci"
"""Whether this is CI's full run."""

ci_only = pytest.mark.ci_only
"""Marks a test that only the full run runs (see the module docstring)."""

SAMPLE_EVERY = 8
"""A quick run keeps every this many items of a data set (see :func:`sample`)."""


def sample(items: Sequence[T]) -> list[object]:
    """``items`` as pytest parameters: all of them run in the full run, every
    :data:`SAMPLE_EVERY`-th (the first included) in a quick one."""
    return [
        item if index % SAMPLE_EVERY == 0 else pytest.param(item, marks=ci_only)
        for index, item in enumerate(items)
    ]
