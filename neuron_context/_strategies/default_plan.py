"""The default stack's plan under the name the measurement tools of ``../shared/tools``
(``evidence.py``'s attribution of each lost fact to a step) import it by; the plan lives in
:mod:`neuron_context._strategies.default.plan`."""

from .default.plan import Plan

__all__ = ["Plan"]
