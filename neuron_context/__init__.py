"""Keep long-running LLM agents inside their context window without breaking their
conversations."""

from ._agent.approval import Approval as Approval
from ._agent.approval import HumanInTheLoopMiddleware as HumanInTheLoopMiddleware
from ._agent.chain import MiddlewareChain as MiddlewareChain
from ._agent.editing import ContextEditingMiddleware as ContextEditingMiddleware
from ._agent.events import AgentEvent as AgentEvent
from ._agent.events import CompactionCompleted as CompactionCompleted
from ._agent.events import CompactionFailed as CompactionFailed
from ._agent.events import CompactionStarted as CompactionStarted
from ._agent.events import FallbackUsed as FallbackUsed
from ._agent.events import LimitReached as LimitReached
from ._agent.events import ModelCalled as ModelCalled
from ._agent.events import RequestEdited as RequestEdited
from ._agent.events import RunFinished as RunFinished
from ._agent.events import ToolCalled as ToolCalled
from ._agent.events import ToolRetried as ToolRetried
from ._agent.events import TurnStarted as TurnStarted
from ._agent.injection import SystemInjectionMiddleware as SystemInjectionMiddleware
from ._agent.limits import ModelCallLimitMiddleware as ModelCallLimitMiddleware
from ._agent.limits import ToolCallLimitMiddleware as ToolCallLimitMiddleware
from ._agent.loop import Agent as Agent
from ._agent.loop import create_agent as create_agent
from ._agent.middleware import AgentMiddleware as AgentMiddleware
from ._agent.middleware import ModelHandler as ModelHandler
from ._agent.middleware import ModelRequest as ModelRequest
from ._agent.middleware import ModelResponse as ModelResponse
from ._agent.middleware import ToolCallRequest as ToolCallRequest
from ._agent.middleware import ToolHandler as ToolHandler
from ._agent.options import AgentOptions as AgentOptions
from ._agent.options import AgentResult as AgentResult
from ._agent.resilience import ModelFallbackMiddleware as ModelFallbackMiddleware
from ._agent.resilience import ToolRetryMiddleware as ToolRetryMiddleware
from ._agent.routing import DynamicModelSelectionMiddleware as DynamicModelSelectionMiddleware
from ._agent.routing import ModelRoute as ModelRoute
from ._agent.routing import ModelRouted as ModelRouted
from ._agent.run import RunContext as RunContext
from ._agent.state import AgentState as AgentState
from ._agent.summarization import SummarizationMiddleware as SummarizationMiddleware
from ._agent.todos import TodoListMiddleware as TodoListMiddleware
from ._agent.tool_logging import ToolCallLoggingMiddleware as ToolCallLoggingMiddleware
from ._agent.tools import Tool as Tool
from ._context.injection import InjectionRule as InjectionRule
from ._context.injection import InjectionTrigger as InjectionTrigger
from ._context.injection import SystemInjector as SystemInjector
from ._context.persistent import ContextSection as ContextSection
from ._context.persistent import PersistentContext as PersistentContext
from ._counting.base import BaseCounter as BaseCounter
from ._counting.base import RunningCount as RunningCount
from ._counting.calibrated import CalibratedCounter as CalibratedCounter
from ._counting.encodings import load_encoding as load_encoding
from ._counting.heuristic import TokenCounter as TokenCounter
from ._counting.tokenizer import TokenizerCounter as TokenizerCounter
from ._errors import AgentError as AgentError
from ._errors import AgentLimitError as AgentLimitError
from ._errors import BudgetExceededError as BudgetExceededError
from ._errors import CompactionError as CompactionError
from ._errors import ConfigurationError as ConfigurationError
from ._errors import InvalidConversationError as InvalidConversationError
from ._errors import MaxTurnsExceededError as MaxTurnsExceededError
from ._errors import ModelCallLimitExceededError as ModelCallLimitExceededError
from ._errors import NeuronContextError as NeuronContextError
from ._errors import ProviderError as ProviderError
from ._errors import SummarizationError as SummarizationError
from ._errors import TokenizerError as TokenizerError
from ._errors import ToolCallLimitExceededError as ToolCallLimitExceededError
from ._messages.content import JSON as JSON
from ._messages.content import Compaction as Compaction
from ._messages.content import ContentBlock as ContentBlock
from ._messages.content import Document as Document
from ._messages.content import Image as Image
from ._messages.content import RedactedThinking as RedactedThinking
from ._messages.content import Text as Text
from ._messages.content import Thinking as Thinking
from ._messages.content import ToolResult as ToolResult
from ._messages.content import ToolUse as ToolUse
from ._messages.conversation import Exchange as Exchange
from ._messages.conversation import Structure as Structure
from ._messages.message import Message as Message
from ._messages.message import Role as Role
from ._messages.message import ToolDefinition as ToolDefinition
from ._messages.wellformed import repair as repair
from ._messages.wellformed import start_on_user as start_on_user
from ._messages.wellformed import validate as validate
from ._strategies.base import ContextStrategy as ContextStrategy
from ._strategies.clearing import ToolResultClearingStrategy as ToolResultClearingStrategy
from ._strategies.composite import CompositeStrategy as CompositeStrategy
from ._strategies.composite import FallbackStrategy as FallbackStrategy
from ._strategies.default import default_stack as default_stack
from ._strategies.fetches import DedupeFetchesStrategy as DedupeFetchesStrategy
from ._strategies.images import StripProcessedImagesStrategy as StripProcessedImagesStrategy
from ._strategies.large_results import TruncateLargeResultsStrategy as TruncateLargeResultsStrategy
from ._strategies.reads import StaleFileReadsStrategy as StaleFileReadsStrategy
from ._strategies.repeats import CollapseRepeatedCallsStrategy as CollapseRepeatedCallsStrategy
from ._strategies.strip import StripToolCallsStrategy as StripToolCallsStrategy
from ._strategies.summarization import SummarizationStrategy as SummarizationStrategy
from ._strategies.superseded import SupersededToolCallsStrategy as SupersededToolCallsStrategy
from ._strategies.window import SlidingWindowStrategy as SlidingWindowStrategy
from ._summary.extractive import ExtractiveSummarizer as ExtractiveSummarizer
from .providers import AnthropicProvider as AnthropicProvider
from .providers import OpenAIProvider as OpenAIProvider
from .providers._base import CompletionRequest as CompletionRequest
from .providers._base import CompletionResponse as CompletionResponse
from .providers._base import Provider as Provider
from .providers._base import StopReason as StopReason
from .providers._base import TokenUsage as TokenUsage

__all__ = [
    "JSON",
    "Agent",
    "AgentError",
    "AgentEvent",
    "AgentLimitError",
    "AgentMiddleware",
    "AgentOptions",
    "AgentResult",
    "AgentState",
    "AnthropicProvider",
    "Approval",
    "BaseCounter",
    "BudgetExceededError",
    "CalibratedCounter",
    "CollapseRepeatedCallsStrategy",
    "Compaction",
    "CompactionCompleted",
    "CompactionError",
    "CompactionFailed",
    "CompactionStarted",
    "CompletionRequest",
    "CompletionResponse",
    "CompositeStrategy",
    "ConfigurationError",
    "ContentBlock",
    "ContextEditingMiddleware",
    "ContextSection",
    "ContextStrategy",
    "DedupeFetchesStrategy",
    "Document",
    "DynamicModelSelectionMiddleware",
    "Exchange",
    "ExtractiveSummarizer",
    "FallbackStrategy",
    "FallbackUsed",
    "HumanInTheLoopMiddleware",
    "Image",
    "InjectionRule",
    "InjectionTrigger",
    "InvalidConversationError",
    "LimitReached",
    "MaxTurnsExceededError",
    "Message",
    "MiddlewareChain",
    "ModelCallLimitExceededError",
    "ModelCallLimitMiddleware",
    "ModelCalled",
    "ModelFallbackMiddleware",
    "ModelHandler",
    "ModelRequest",
    "ModelResponse",
    "ModelRoute",
    "ModelRouted",
    "NeuronContextError",
    "OpenAIProvider",
    "PersistentContext",
    "Provider",
    "ProviderError",
    "RedactedThinking",
    "RequestEdited",
    "Role",
    "RunContext",
    "RunFinished",
    "RunningCount",
    "SlidingWindowStrategy",
    "StaleFileReadsStrategy",
    "StopReason",
    "StripProcessedImagesStrategy",
    "StripToolCallsStrategy",
    "Structure",
    "SummarizationError",
    "SummarizationMiddleware",
    "SummarizationStrategy",
    "SupersededToolCallsStrategy",
    "SystemInjectionMiddleware",
    "SystemInjector",
    "Text",
    "Thinking",
    "TodoListMiddleware",
    "TokenCounter",
    "TokenUsage",
    "TokenizerCounter",
    "TokenizerError",
    "Tool",
    "ToolCallLimitExceededError",
    "ToolCallLimitMiddleware",
    "ToolCallLoggingMiddleware",
    "ToolCallRequest",
    "ToolCalled",
    "ToolDefinition",
    "ToolHandler",
    "ToolResult",
    "ToolResultClearingStrategy",
    "ToolRetried",
    "ToolRetryMiddleware",
    "ToolUse",
    "TruncateLargeResultsStrategy",
    "TurnStarted",
    "create_agent",
    "default_stack",
    "load_encoding",
    "repair",
    "start_on_user",
    "validate",
]
