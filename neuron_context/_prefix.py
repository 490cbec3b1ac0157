"""Whether a list starts with a list seen before: the test that keeps a turn O(new).

A loop hands the library the same history every turn, grown by a message or two: the
same objects, in a list that is often the same list too. Every memo that makes a turn
cost its new messages alone (the counter's history memo, the compacted view, the
adapters' conversions) asks one question, answered here once: does this list begin with
the items remembered from last time? One comparison of references at C speed (a list
comparison tests identity before equality) answers it in about 3 ns an item, where
anything done per item in Python costs 50 or more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

__all__ = ["starts_with"]

T = TypeVar("T")


def starts_with(items: Sequence[T], prefix: list[T]) -> bool:
    """Whether ``items`` begins with the items of ``prefix`` (the same objects, or equal
    ones: a history read back from storage), ``prefix`` not empty. The two ends are
    compared first, so a different list is told apart at once."""
    size = len(prefix)
    if not size or size > len(items):
        return False
    first, last = items[0], items[size - 1]
    if not (prefix[-1] is last or prefix[-1] == last) or not (
        prefix[0] is first or prefix[0] == first
    ):
        return False
    if type(items) is list and len(items) == size:
        return prefix == items  # no slice to copy
    window = items[:size]
    return prefix == (window if type(window) is list else list(window))
