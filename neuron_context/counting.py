"""How many tokens: the counter interface, the heuristic and exact counters, calibration,
and what tokens cost once the provider's prompt cache is counted (:class:`CacheCostModel`).

Every strategy takes a counter as ``counter=``; :class:`BaseCounter` is what a counter of
your own implements. A counter remembers the histories it counted (see the counting
page of the docs), so a history that grew costs only its new messages.
"""

from ._counting.cache import CostTable
from ._counting.calibrated import CalibratedCounter
from ._counting.counter import BaseCounter, RunningCount
from ._counting.encodings import load_encoding
from ._counting.heuristic import TokenCounter
from ._counting.pricing import CacheCostModel, cost_model
from ._counting.tokenizer import TokenizerCounter
from ._exports import publish as _publish

__all__ = [
    "BaseCounter",
    "CacheCostModel",
    "CalibratedCounter",
    "CostTable",
    "RunningCount",
    "TokenCounter",
    "TokenizerCounter",
    "cost_model",
    "load_encoding",
]

_publish(__name__, globals(), __all__)
