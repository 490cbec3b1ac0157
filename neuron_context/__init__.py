"""Keep long-running LLM agents inside their context window without breaking their
conversations."""

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
from ._errors import CompactionError as CompactionError
from ._errors import ConfigurationError as ConfigurationError
from ._errors import InvalidConversationError as InvalidConversationError
from ._errors import NeuronContextError as NeuronContextError
from ._errors import ProviderError as ProviderError
from ._errors import SummarizationError as SummarizationError
from ._errors import TokenizerError as TokenizerError
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
from ._messages.conversation import repair as repair
from ._messages.conversation import validate as validate
from ._messages.message import Message as Message
from ._messages.message import Role as Role
from ._messages.message import ToolDefinition as ToolDefinition
from ._strategies.base import ContextStrategy as ContextStrategy
from ._strategies.clearing import ToolResultClearingStrategy as ToolResultClearingStrategy
from ._strategies.composite import CompositeStrategy as CompositeStrategy
from ._strategies.composite import FallbackStrategy as FallbackStrategy
from ._strategies.strip import StripToolCallsStrategy as StripToolCallsStrategy
from ._strategies.summarization import SummarizationStrategy as SummarizationStrategy
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
    "AnthropicProvider",
    "BaseCounter",
    "CalibratedCounter",
    "Compaction",
    "CompactionError",
    "CompletionRequest",
    "CompletionResponse",
    "CompositeStrategy",
    "ConfigurationError",
    "ContentBlock",
    "ContextSection",
    "ContextStrategy",
    "Document",
    "ExtractiveSummarizer",
    "FallbackStrategy",
    "Image",
    "InjectionRule",
    "InjectionTrigger",
    "InvalidConversationError",
    "Message",
    "NeuronContextError",
    "OpenAIProvider",
    "PersistentContext",
    "Provider",
    "ProviderError",
    "RedactedThinking",
    "Role",
    "RunningCount",
    "SlidingWindowStrategy",
    "StopReason",
    "StripToolCallsStrategy",
    "SummarizationError",
    "SummarizationStrategy",
    "SystemInjector",
    "Text",
    "Thinking",
    "TokenCounter",
    "TokenUsage",
    "TokenizerCounter",
    "TokenizerError",
    "ToolDefinition",
    "ToolResult",
    "ToolResultClearingStrategy",
    "ToolUse",
    "load_encoding",
    "repair",
    "validate",
]
