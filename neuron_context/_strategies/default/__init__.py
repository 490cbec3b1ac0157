"""The recommended stack, :func:`default_stack`, and the rooms it is made of.

- :mod:`.factory`: :func:`default_stack`, the stack configured once;
- :mod:`.stack`: :class:`DefaultStack` itself: one budget, a target below the trigger,
  the attempts with and without a store;
- :mod:`.plan`: what one compaction pins, keeps and summarizes (planned before any
  summary is written);
- :mod:`.summaries`: the summaries that replace the older part;
- :mod:`.fit`: the last resort, in the order the next call needs least;
- :mod:`.offloading`: what a compaction with a store adds to the one without.
"""

from __future__ import annotations

from .factory import default_stack as default_stack
from .stack import DefaultStack as DefaultStack
from .stack import SummaryOptions as SummaryOptions

__all__ = ["DefaultStack", "SummaryOptions", "default_stack"]
