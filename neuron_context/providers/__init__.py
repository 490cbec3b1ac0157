"""Model providers: the interface, its request and response, and the built-in providers.

:class:`Provider` is the interface (``async complete(request) -> response``);
:class:`OpenAIProvider` and :class:`AnthropicProvider` call the official SDKs;
:class:`ExtractiveSummarizer` summarizes offline, with no model.

Importing this package does not import ``openai`` or ``anthropic``: each SDK is imported
when a provider is built, and a missing one raises
:class:`~neuron_context.ConfigurationError` naming the extra that installs it.

The providers room never imports the summary room above it: ``ExtractiveSummarizer``
(an offline summarizer built in ``_summary``) is resolved when first asked for, as are
the SDK providers (see :mod:`neuron_context._exports`).
"""

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

import typing as _typing

from .._exports import lazy as _lazy
from .._exports import publish as _publish
from ._base import CompletionRequest as CompletionRequest
from ._base import CompletionResponse as CompletionResponse
from ._base import Provider as Provider
from ._base import StopReason as StopReason
from ._base import TokenUsage as TokenUsage

if _typing.TYPE_CHECKING:
    from .._summary.extractive import ExtractiveSummarizer as ExtractiveSummarizer
    from ._anthropic import AnthropicProvider as AnthropicProvider
    from ._openai import OpenAIProvider as OpenAIProvider

if not _typing.TYPE_CHECKING:  # a type checker reads the imports above instead
    __getattr__, __dir__ = _lazy(
        __name__,
        globals(),
        {
            "AnthropicProvider": "._anthropic",
            "ExtractiveSummarizer": ".._summary.extractive",
            "OpenAIProvider": "._openai",
        },
    )
_publish(__name__, globals(), __all__)
