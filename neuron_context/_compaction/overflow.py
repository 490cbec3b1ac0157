"""The strategy a caller recovering from a provider's overflow error compacts with (the
refusal is recognised, and the budget learned, by :mod:`neuron_context._overflow`)."""

from __future__ import annotations

import attrs

from .._counting.counter import BaseCounter
from .._errors import ContextOverflowError
from .._overflow import context_overflow
from .._stores.store import Store
from .._strategies.default import DefaultStack, default_stack
from .._strategies.strategy import ContextStrategy

__all__ = ["budget_of", "refused_again", "shrunk"]


def shrunk(strategy: ContextStrategy | None, budget: int, counter: BaseCounter) -> ContextStrategy:
    """The strategy that compacts to ``budget``: ``strategy`` itself with that budget
    when it is a :func:`default_stack` (its summarizer, store and options kept), else a
    :func:`default_stack` counting with ``counter`` that offloads to ``strategy``'s
    store when it has one (what the recovery removes is recallable as before)."""
    if isinstance(strategy, DefaultStack):
        return attrs.evolve(strategy, max_tokens=budget)
    store = getattr(strategy, "store", None)
    return default_stack(budget, counter=counter, store=store if isinstance(store, Store) else None)


def budget_of(strategy: ContextStrategy | None) -> int | None:
    """The budget ``strategy`` keeps to, when it has one."""
    value = getattr(strategy, "max_tokens", None)
    return value if isinstance(value, int) and value > 0 else None


def refused_again(exc: BaseException, budget: int) -> ContextOverflowError | None:
    """The error a caller raises (``from exc``) when its retry at ``budget`` tokens was
    refused as too long again; ``None`` when ``exc`` is another failure."""
    again = context_overflow(exc)
    if again is None:
        return None
    msg = (
        f"the request is still too long for the model after compacting it to {budget} "
        f"tokens and retrying: {again.message[:300]}"
    )
    status = getattr(exc, "status_code", None)
    return ContextOverflowError(
        msg,
        tokens=again.tokens,
        limit=again.limit,
        status_code=status if isinstance(status, int) and 100 <= status <= 999 else None,
    )
