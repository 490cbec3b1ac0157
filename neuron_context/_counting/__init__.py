"""Token counting: the counter interface, the block rules, the cost cache, and each counter.

Other rooms import each piece from its module (``from .._counting.counter import
BaseCounter``); this package imports nothing, so a room that needs the heuristic counter
never loads the calibrated one:

- ``counter``: :class:`BaseCounter` (the interface), :class:`RunningCount`.
- ``rules``: :class:`RuleCounter`, the block rules shared by the rule-based counters.
- ``cache``: the per-message cost cache and the history memo (their only owner).
- ``heuristic``: :class:`TokenCounter`; ``tokenizer``: :class:`TokenizerCounter`;
  ``encodings``: the tiktoken encodings; ``calibrated``: :class:`CalibratedCounter`;
  ``pricing``: :class:`CacheCostModel`.
"""
