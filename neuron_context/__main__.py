"""``python -m neuron_context``: the ``neuron-context`` command line."""

from __future__ import annotations

import sys

from ._cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
