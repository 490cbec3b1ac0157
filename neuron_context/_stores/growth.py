"""The bounded-growth fields every built-in store shares, declared once."""

from __future__ import annotations

from typing import Any

import attrs

from .._validators import number, optional

__all__ = ["max_age_field"]


def max_age_field() -> Any:
    """``max_age``: seconds after its last put that an entry is forgotten (``None``: never)."""
    return attrs.field(
        default=None, kw_only=True, validator=optional(number(minimum=0, exclusive_minimum=True))
    )
