"""Budgets from the model: an adapter's strategy sized by the window of the model a call
goes to, when the framework knows that window.

LangChain's chat models carry a profile (``model.profile["max_input_tokens"]``), as its own
``SummarizationMiddleware`` reads for ``("fraction", 0.8)``. An adapter given no strategy
(or a function of the budget that makes one) sizes a stack for each model it is called
with: ``fraction`` of the model's input window, made once per distinct budget and kept, so
a conversation that moves to a fallback model with another window is compacted for that
window (a view of its own), and continues its first view when it moves back.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping
from typing import Generic, TypeVar

from .._errors import ConfigurationError, show
from .._strategies.strategy import ContextStrategy

__all__ = ["DEFAULT_FRACTION", "Make", "ModelBudgets", "check_fraction", "profile_window"]

T = TypeVar("T")

DEFAULT_FRACTION = 0.8
"""The share of the model's input window an adapter budgets when none is given (the
share LangChain's own middlewares are documented with)."""

Make = Callable[[int], ContextStrategy]
"""What makes the strategy for a budget (``default_stack`` unless the user gives one)."""


def check_fraction(owner: str, fraction: object) -> float:
    """``fraction`` when it is a number in (0, 1], else a ``ConfigurationError``."""
    if (
        isinstance(fraction, bool)
        or not isinstance(fraction, int | float)
        or not math.isfinite(fraction)
        or not 0 < fraction <= 1
    ):
        msg = f"{owner}.fraction must be a number in (0, 1], got {show(fraction)}"
        raise ConfigurationError(msg)
    return float(fraction)


def profile_window(model: object) -> int | None:
    """The input window a LangChain chat model's profile gives (``max_input_tokens``), or
    ``None`` when it has none."""
    profile = getattr(model, "profile", None)
    if not isinstance(profile, Mapping):
        return None
    window = profile.get("max_input_tokens")
    if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
        return None
    return window


class ModelBudgets(Generic[T]):
    """What an adapter keeps per budget (``T``: its model calls, their sessions), made on
    first use from the strategy ``make(budget)`` returns. Thread-safe."""

    __slots__ = ("_built", "_lock", "_owner", "_wrap", "fraction", "make")

    def __init__(
        self, owner: str, make: Make, fraction: float, wrap: Callable[[ContextStrategy], T]
    ) -> None:
        self._owner = owner
        self.make = make
        self.fraction = fraction
        self._wrap = wrap
        self._built: dict[int, tuple[ContextStrategy, T]] = {}
        self._lock = threading.Lock()

    def budget(self, model: object) -> int:
        """``fraction`` of ``model``'s window, or a ``ConfigurationError`` naming what is
        missing."""
        window = profile_window(model)
        if window is None:
            name = type(model).__name__
            msg = (
                f"{self._owner} was given no strategy, so it budgets {self.fraction:g} of the "
                f"model's input window, and the model ({name}) has no profile with "
                "'max_input_tokens': give the model one (ChatModel(..., profile="
                "{'max_input_tokens': ...})) or give a strategy "
                f"({self._owner}(default_stack(100_000)))"
            )
            raise ConfigurationError(msg)
        return max(1, math.floor(window * self.fraction))

    def of(self, model: object) -> tuple[ContextStrategy, T]:
        """The strategy for ``model``'s budget and what the adapter keeps with it."""
        budget = self.budget(model)
        built = self._built.get(budget)
        if built is not None:
            return built
        with self._lock:
            built = self._built.get(budget)
            if built is None:
                strategy = self.make(budget)
                if not isinstance(strategy, ContextStrategy):
                    msg = (
                        f"{self._owner}: the function given as its strategy must return a "
                        f"ContextStrategy for a budget, got {show(strategy)}"
                    )
                    raise ConfigurationError(msg)
                built = (strategy, self._wrap(strategy))
                self._built[budget] = built
        return built
