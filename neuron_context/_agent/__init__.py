"""The agent loop and its middleware (see :mod:`neuron_context._agent.loop`)."""
