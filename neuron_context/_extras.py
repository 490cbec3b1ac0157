"""How to install an extra, said in one place.

neuron-context is not on a package registry: ``pip install "neuron-context[openai]"``
finds nothing. What works is pip on a clone of the repository (the README's Install
section), so every error and hint that names an extra says that, through
:func:`install_hint`.
"""

from __future__ import annotations

__all__ = ["install_hint"]


def install_hint(extra: str) -> str:
    """How to install ``extra``: ``install the 'openai' extra: python -m pip install ...``."""
    return (
        f"install the {extra!r} extra from a clone of neuron-context: "
        f'python -m pip install ".[{extra}]"'
    )
