"""Model providers: the interface, its request and response, and the built-in providers.

:class:`Provider` is the interface (``async complete(request) -> response``);
:class:`OpenAIProvider` and :class:`AnthropicProvider` call the official SDKs;
:class:`ExtractiveSummarizer` summarizes offline, with no model.

Importing this package does not import ``openai`` or ``anthropic``: each SDK is imported
when a provider is built, and a missing one raises
:class:`~neuron_context.ConfigurationError` naming the extra that installs it.
"""

from .._summary.extractive import ExtractiveSummarizer as ExtractiveSummarizer
from ._anthropic import AnthropicProvider as AnthropicProvider
from ._base import CompletionRequest as CompletionRequest
from ._base import CompletionResponse as CompletionResponse
from ._base import Provider as Provider
from ._base import StopReason as StopReason
from ._base import TokenUsage as TokenUsage
from ._openai import OpenAIProvider as OpenAIProvider

__all__ = [
    "AnthropicProvider",
    "CompletionRequest",
    "CompletionResponse",
    "ExtractiveSummarizer",
    "OpenAIProvider",
    "Provider",
    "StopReason",
    "TokenUsage",
]
