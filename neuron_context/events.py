"""What an agent run reports: plain, frozen, serializable events.

Each has a ``type`` discriminator and ``to_dict()``; a run delivers them, in order, to
``AgentOptions(on_event=...)`` and keeps them in ``AgentResult.events``. See the loop's
events page in the docs.
"""

from ._exports import publish as _publish
from ._run.events import (
    AgentEvent,
    CompactionCompleted,
    CompactionFailed,
    CompactionOverBudget,
    CompactionStarted,
    Event,
    FallbackUsed,
    LimitReached,
    ModelCalled,
    ModelRouted,
    OffloadFailed,
    RequestEdited,
    RunFinished,
    ToolCalled,
    ToolRetried,
    TurnStarted,
)

__all__ = [
    "AgentEvent",
    "CompactionCompleted",
    "CompactionFailed",
    "CompactionOverBudget",
    "CompactionStarted",
    "Event",
    "FallbackUsed",
    "LimitReached",
    "ModelCalled",
    "ModelRouted",
    "OffloadFailed",
    "RequestEdited",
    "RunFinished",
    "ToolCalled",
    "ToolRetried",
    "TurnStarted",
]

_publish(__name__, globals(), __all__)
