"""Keep long-running LLM agents inside their context window without breaking their
conversations."""

from ._calibration import CalibratedCounter as CalibratedCounter
from ._clearing import ToolResultClearingStrategy as ToolResultClearingStrategy
from ._composite import CompositeStrategy as CompositeStrategy
from ._composite import FallbackStrategy as FallbackStrategy
from ._content import JSON as JSON
from ._content import Compaction as Compaction
from ._content import ContentBlock as ContentBlock
from ._content import Document as Document
from ._content import Image as Image
from ._content import RedactedThinking as RedactedThinking
from ._content import Text as Text
from ._content import Thinking as Thinking
from ._content import ToolResult as ToolResult
from ._content import ToolUse as ToolUse
from ._conversation import repair as repair
from ._conversation import validate as validate
from ._counter import BaseCounter as BaseCounter
from ._counter import TokenCounter as TokenCounter
from ._encodings import load_encoding as load_encoding
from ._errors import CompactionError as CompactionError
from ._errors import ConfigurationError as ConfigurationError
from ._errors import InvalidConversationError as InvalidConversationError
from ._errors import NeuronContextError as NeuronContextError
from ._errors import ProviderError as ProviderError
from ._errors import SummarizationError as SummarizationError
from ._errors import TokenizerError as TokenizerError
from ._extractive import ExtractiveSummarizer as ExtractiveSummarizer
from ._injection import InjectionRule as InjectionRule
from ._injection import InjectionTrigger as InjectionTrigger
from ._injection import SystemInjector as SystemInjector
from ._messages import Message as Message
from ._messages import Role as Role
from ._messages import ToolDefinition as ToolDefinition
from ._persistent import ContextSection as ContextSection
from ._persistent import PersistentContext as PersistentContext
from ._provider import CompletionRequest as CompletionRequest
from ._provider import CompletionResponse as CompletionResponse
from ._provider import Provider as Provider
from ._provider import StopReason as StopReason
from ._provider import TokenUsage as TokenUsage
from ._strategy import ContextStrategy as ContextStrategy
from ._strip import StripToolCallsStrategy as StripToolCallsStrategy
from ._summarization import SummarizationStrategy as SummarizationStrategy
from ._tokenizer_counter import TokenizerCounter as TokenizerCounter
from ._window import SlidingWindowStrategy as SlidingWindowStrategy
from .providers import AnthropicProvider as AnthropicProvider
from .providers import OpenAIProvider as OpenAIProvider

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
