"""How to shrink a conversation: every strategy, the recommended stack, the boundary API.

``ContextStrategy`` is the interface (``should_compact``, ``compact``,
``token_estimate``); ``default_stack(max_tokens)`` builds the stack the project
recommends (a :class:`DefaultStack`). ``Structure`` and ``Exchange`` are the one place
that knows how tool calls pair with their results: a strategy of your own cuts through
them, as the built-in ones do.
"""

from ._exports import publish as _publish
from ._messages.conversation import Exchange, Structure
from ._strategies.clearing import ToolResultClearingStrategy
from ._strategies.composite import CompositeStrategy, FallbackStrategy
from ._strategies.default import DefaultStack, SummaryOptions, default_stack
from ._strategies.default.schedule import CacheSchedule
from ._strategies.fetches import DedupeFetchesStrategy
from ._strategies.images import StripProcessedImagesStrategy
from ._strategies.large_results import TruncateLargeResultsStrategy
from ._strategies.reads import StaleFileReadsStrategy
from ._strategies.repeats import CollapseRepeatedCallsStrategy
from ._strategies.strategy import ContextStrategy
from ._strategies.strip import StripToolCallsStrategy
from ._strategies.summarization import DEFAULT_INSTRUCTIONS, SummarizationStrategy
from ._strategies.superseded import SupersededToolCallsStrategy
from ._strategies.window import SlidingWindowStrategy

__all__ = [
    "DEFAULT_INSTRUCTIONS",
    "CacheSchedule",
    "CollapseRepeatedCallsStrategy",
    "CompositeStrategy",
    "ContextStrategy",
    "DedupeFetchesStrategy",
    "DefaultStack",
    "Exchange",
    "FallbackStrategy",
    "SlidingWindowStrategy",
    "StaleFileReadsStrategy",
    "StripProcessedImagesStrategy",
    "StripToolCallsStrategy",
    "Structure",
    "SummarizationStrategy",
    "SummaryOptions",
    "SupersededToolCallsStrategy",
    "ToolResultClearingStrategy",
    "TruncateLargeResultsStrategy",
    "default_stack",
]

_publish(__name__, globals(), __all__)
