"""Keep long-running LLM agents inside their context window without breaking their
conversations.

The top level is the menu: the messages, the counters, the strategies (and
``default_stack``, the one we recommend), the providers, the agent loop with the
middlewares most loops use, and the errors a caller catches. The rest lives in a
namespace named after what it is for, each complete on its own:

- :mod:`neuron_context.strategies`: every strategy, ``DefaultStack``, and the boundary
  API (``Structure``) for strategies of your own;
- :mod:`neuron_context.counting`: counters, the running count, the cost table;
- :mod:`neuron_context.middleware`: the hook protocol and every built-in middleware;
- :mod:`neuron_context.events`: what a run reports;
- :mod:`neuron_context.stores`: where compaction offloads what it removes, and the
  recall tool;
- :mod:`neuron_context.errors`: the whole exception tree;
- :mod:`neuron_context.overflow`: a provider's "too long" refusal, recognised;
- :mod:`neuron_context.providers`: the provider interface and the built-in providers;
- :mod:`neuron_context.formats`: our JSON and the wire formats; :mod:`neuron_context.ext`:
  the framework adapters; :mod:`neuron_context.testing`: test doubles.

The implementation lives in private rooms (``_messages``, ``_counting``,
``_strategies``, ...); only these modules are public. ``neuron_context.__version__`` is
the installed version (what ``neuron-context --version`` prints).
"""

__all__ = [
    "JSON",
    "Agent",
    "AgentMiddleware",
    "AgentOptions",
    "AgentResult",
    "AgentState",
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
    "ContextEditingMiddleware",
    "ContextSection",
    "ContextStrategy",
    "Document",
    "ExtractiveSummarizer",
    "FallbackStrategy",
    "HumanInTheLoopMiddleware",
    "Image",
    "InjectionRule",
    "InjectionTrigger",
    "InvalidConversationError",
    "MemoryStore",
    "Message",
    "MiddlewareChain",
    "ModelCallLimitMiddleware",
    "ModelFallbackMiddleware",
    "ModelRequest",
    "NeuronContextError",
    "OpenAIProvider",
    "PersistentContext",
    "Provider",
    "RedactedThinking",
    "RedisStore",
    "Role",
    "RunContext",
    "SQLiteStore",
    "SlidingWindowStrategy",
    "StopReason",
    "Store",
    "StripProcessedImagesStrategy",
    "StripToolCallsStrategy",
    "SummarizationError",
    "SummarizationMiddleware",
    "SummarizationStrategy",
    "SupersededToolCallsStrategy",
    "SystemInjector",
    "Text",
    "Thinking",
    "TodoListMiddleware",
    "TokenCounter",
    "TokenUsage",
    "TokenizerCounter",
    "TokenizerError",
    "Tool",
    "ToolCallLimitMiddleware",
    "ToolCallRequest",
    "ToolDefinition",
    "ToolResult",
    "ToolResultClearingStrategy",
    "ToolRetryMiddleware",
    "ToolUse",
    "counting",
    "create_agent",
    "default_stack",
    "errors",
    "events",
    "formats",
    "middleware",
    "overflow",
    "providers",
    "repair",
    "start_on_user",
    "stores",
    "strategies",
    "validate",
]

import typing as _typing

from ._errors import CompactionError as CompactionError
from ._errors import ConfigurationError as ConfigurationError
from ._errors import InvalidConversationError as InvalidConversationError
from ._errors import NeuronContextError as NeuronContextError
from ._errors import SummarizationError as SummarizationError
from ._errors import TokenizerError as TokenizerError
from ._exports import lazy as _lazy
from ._exports import publish as _publish
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
from ._messages.message import Message as Message
from ._messages.message import Role as Role
from ._messages.message import ToolDefinition as ToolDefinition
from ._messages.wellformed import repair as repair
from ._messages.wellformed import start_on_user as start_on_user
from ._messages.wellformed import validate as validate
from ._version import __version__ as __version__

if _typing.TYPE_CHECKING:
    from . import counting as counting
    from . import errors as errors
    from . import events as events
    from . import formats as formats
    from . import middleware as middleware
    from . import overflow as overflow
    from . import providers as providers
    from . import stores as stores
    from . import strategies as strategies
    from ._agent.loop import Agent as Agent
    from ._agent.loop import create_agent as create_agent
    from ._agent.options import AgentOptions as AgentOptions
    from ._agent.options import AgentResult as AgentResult
    from ._counting.calibrated import CalibratedCounter as CalibratedCounter
    from ._counting.counter import BaseCounter as BaseCounter
    from ._counting.heuristic import TokenCounter as TokenCounter
    from ._counting.tokenizer import TokenizerCounter as TokenizerCounter
    from ._injection.injector import InjectionRule as InjectionRule
    from ._injection.injector import InjectionTrigger as InjectionTrigger
    from ._injection.injector import SystemInjector as SystemInjector
    from ._injection.persistent import ContextSection as ContextSection
    from ._injection.persistent import PersistentContext as PersistentContext
    from ._middleware.approval import HumanInTheLoopMiddleware as HumanInTheLoopMiddleware
    from ._middleware.chain import MiddlewareChain as MiddlewareChain
    from ._middleware.editing import ContextEditingMiddleware as ContextEditingMiddleware
    from ._middleware.fallback import ModelFallbackMiddleware as ModelFallbackMiddleware
    from ._middleware.limits import ModelCallLimitMiddleware as ModelCallLimitMiddleware
    from ._middleware.limits import ToolCallLimitMiddleware as ToolCallLimitMiddleware
    from ._middleware.retry import ToolRetryMiddleware as ToolRetryMiddleware
    from ._middleware.summarizing import SummarizationMiddleware as SummarizationMiddleware
    from ._middleware.todos import TodoListMiddleware as TodoListMiddleware
    from ._middleware.types import AgentMiddleware as AgentMiddleware
    from ._middleware.types import ModelRequest as ModelRequest
    from ._middleware.types import ToolCallRequest as ToolCallRequest
    from ._run.run import RunContext as RunContext
    from ._run.state import AgentState as AgentState
    from ._run.tools import Tool as Tool
    from ._stores.memory import MemoryStore as MemoryStore
    from ._stores.redis import RedisStore as RedisStore
    from ._stores.sqlite import SQLiteStore as SQLiteStore
    from ._stores.store import Store as Store
    from ._strategies.clearing import ToolResultClearingStrategy as ToolResultClearingStrategy
    from ._strategies.composite import CompositeStrategy as CompositeStrategy
    from ._strategies.composite import FallbackStrategy as FallbackStrategy
    from ._strategies.default import default_stack as default_stack
    from ._strategies.images import StripProcessedImagesStrategy as StripProcessedImagesStrategy
    from ._strategies.strategy import ContextStrategy as ContextStrategy
    from ._strategies.strip import StripToolCallsStrategy as StripToolCallsStrategy
    from ._strategies.summarization import SummarizationStrategy as SummarizationStrategy
    from ._strategies.superseded import SupersededToolCallsStrategy as SupersededToolCallsStrategy
    from ._strategies.window import SlidingWindowStrategy as SlidingWindowStrategy
    from .providers import AnthropicProvider as AnthropicProvider
    from .providers import CompletionRequest as CompletionRequest
    from .providers import CompletionResponse as CompletionResponse
    from .providers import ExtractiveSummarizer as ExtractiveSummarizer
    from .providers import OpenAIProvider as OpenAIProvider
    from .providers import Provider as Provider
    from .providers import StopReason as StopReason
    from .providers import TokenUsage as TokenUsage

if not _typing.TYPE_CHECKING:  # a type checker reads the imports above instead
    __getattr__, __dir__ = _lazy(
        __name__,
        globals(),
        {
            "BaseCounter": "._counting.counter",
            "TokenCounter": "._counting.heuristic",
            "TokenizerCounter": "._counting.tokenizer",
            "ToolResultClearingStrategy": "._strategies.clearing",
            "CompositeStrategy": "._strategies.composite",
            "FallbackStrategy": "._strategies.composite",
            "StripProcessedImagesStrategy": "._strategies.images",
            "ContextStrategy": "._strategies.strategy",
            "StripToolCallsStrategy": "._strategies.strip",
            "SummarizationStrategy": "._strategies.summarization",
            "SupersededToolCallsStrategy": "._strategies.superseded",
            "SlidingWindowStrategy": "._strategies.window",
            "Agent": "._agent.loop",
            "AgentMiddleware": "._middleware.types",
            "AgentOptions": "._agent.options",
            "AgentResult": "._agent.options",
            "AgentState": "._run.state",
            "AnthropicProvider": ".providers",
            "CalibratedCounter": "._counting.calibrated",
            "CompletionRequest": ".providers",
            "CompletionResponse": ".providers",
            "ContextEditingMiddleware": "._middleware.editing",
            "ContextSection": "._injection.persistent",
            "ExtractiveSummarizer": ".providers",
            "HumanInTheLoopMiddleware": "._middleware.approval",
            "InjectionRule": "._injection.injector",
            "InjectionTrigger": "._injection.injector",
            "MemoryStore": "._stores.memory",
            "MiddlewareChain": "._middleware.chain",
            "ModelCallLimitMiddleware": "._middleware.limits",
            "ModelFallbackMiddleware": "._middleware.fallback",
            "ModelRequest": "._middleware.types",
            "OpenAIProvider": ".providers",
            "PersistentContext": "._injection.persistent",
            "Provider": ".providers",
            "RedisStore": "._stores.redis",
            "RunContext": "._run.run",
            "SQLiteStore": "._stores.sqlite",
            "StopReason": ".providers",
            "Store": "._stores.store",
            "SummarizationMiddleware": "._middleware.summarizing",
            "SystemInjector": "._injection.injector",
            "TodoListMiddleware": "._middleware.todos",
            "TokenUsage": ".providers",
            "Tool": "._run.tools",
            "ToolCallLimitMiddleware": "._middleware.limits",
            "ToolCallRequest": "._middleware.types",
            "ToolRetryMiddleware": "._middleware.retry",
            "counting": "",
            "create_agent": "._agent.loop",
            "default_stack": "._strategies.default",
            "errors": "",
            "events": "",
            "formats": "",
            "middleware": "",
            "overflow": "",
            "providers": "",
            "stores": "",
            "strategies": "",
        },
    )
_publish(__name__, globals(), __all__)
