"""The strategy a caller recovering from a provider's overflow error compacts with (the
refusal is recognised, and the budget learned, by :mod:`neuron_context._overflow`)."""

from __future__ import annotations

import attrs

from .._counting.counter import BaseCounter
from .._strategies.default import DefaultStack, default_stack
from .._strategies.strategy import ContextStrategy

__all__ = ["budget_of", "shrunk"]


def shrunk(strategy: ContextStrategy | None, budget: int, counter: BaseCounter) -> ContextStrategy:
    """The strategy that compacts to ``budget``: ``strategy`` itself with that budget
    when it is a :func:`default_stack` (its summarizer and options kept), else a
    :func:`default_stack` counting with ``counter``."""
    if isinstance(strategy, DefaultStack):
        return attrs.evolve(strategy, max_tokens=budget)
    return default_stack(budget, counter=counter)


def budget_of(strategy: ContextStrategy | None) -> int | None:
    """The budget ``strategy`` keeps to, when it has one."""
    value = getattr(strategy, "max_tokens", None)
    return value if isinstance(value, int) and value > 0 else None
