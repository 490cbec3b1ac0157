"""The recommended stack, :func:`default_stack`, and the rooms it is made of.

- :mod:`.stack`: :class:`DefaultStack` itself: one budget, a target below the trigger,
  the attempts with and without a store;
- :mod:`.plan`: what one compaction pins, keeps and summarizes (planned before any
  summary is written);
- :mod:`.summaries`: the summaries that replace the older part;
- :mod:`.fit`: the last resort, in the order the next call needs least;
- :mod:`.offloading`: what a compaction with a store adds to the one without.
"""

from __future__ import annotations

from .stack import DefaultStack as DefaultStack
from .stack import SummaryOptions as SummaryOptions
from .stack import default_stack as default_stack

__all__ = ["DefaultStack", "SummaryOptions", "default_stack"]
