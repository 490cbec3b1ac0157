"""How many tokens: the counter interface, the heuristic and exact counters, calibration.

Every strategy takes a counter as ``counter=``; :class:`BaseCounter` is what a counter of
your own implements. A counter remembers the histories it counted (see the counting
page of the docs), so a history that grew costs only its new messages.
"""

from ._counting.cache import CostTable
from ._counting.calibrated import CalibratedCounter
from ._counting.counter import BaseCounter, RunningCount
from ._counting.encodings import load_encoding
from ._counting.heuristic import TokenCounter
from ._counting.tokenizer import TokenizerCounter

__all__ = [
    "BaseCounter",
    "CalibratedCounter",
    "CostTable",
    "RunningCount",
    "TokenCounter",
    "TokenizerCounter",
    "load_encoding",
]
