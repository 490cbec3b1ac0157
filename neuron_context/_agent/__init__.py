"""The agent loop: ``loop`` (:class:`Agent`, :func:`create_agent`), ``options`` and
``calls`` (running a reply's tool calls). Its middleware is in
:mod:`neuron_context._middleware`, what a run is made of in :mod:`neuron_context._run`."""
