"""Providers over the official SDKs: :class:`OpenAIProvider` and :class:`AnthropicProvider`.

Importing this package does not import ``openai`` or ``anthropic``: each SDK is imported
when a provider is built, and a missing one raises
:class:`~neuron_context.ConfigurationError` naming the extra that installs it
(``pip install 'neuron-context[openai]'`` or ``'neuron-context[anthropic]'``).
"""

from ._anthropic import AnthropicProvider as AnthropicProvider
from ._openai import OpenAIProvider as OpenAIProvider

__all__ = ["AnthropicProvider", "OpenAIProvider"]
