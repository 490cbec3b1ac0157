"""Token counting: the counter interface, the block rules, the cost cache, and each counter.

Other rooms import what they need from here (``from .._counting import BaseCounter``):

- ``base``: :class:`BaseCounter` (the interface), :class:`RunningCount`.
- ``rules``: :class:`RuleCounter`, the block rules shared by the rule-based counters.
- ``cache``: the per-message cost cache and the history memo (their only owner).
- ``heuristic``: :class:`TokenCounter`; ``tokenizer``: :class:`TokenizerCounter`;
  ``encodings``: the tiktoken encodings; ``calibrated``: :class:`CalibratedCounter`.
"""

from .._messages.jsonvalue import compact_json as compact_json
from .calibrated import CalibratedCounter as CalibratedCounter
from .counter import BaseCounter as BaseCounter
from .counter import RunningCount as RunningCount
from .heuristic import TokenCounter as TokenCounter
from .rules import RuleCounter as RuleCounter
from .tokenizer import TokenizerCounter as TokenizerCounter

__all__ = [
    "BaseCounter",
    "CalibratedCounter",
    "RuleCounter",
    "RunningCount",
    "TokenCounter",
    "TokenizerCounter",
    "compact_json",
]
