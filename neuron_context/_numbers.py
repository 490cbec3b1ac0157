"""A share of an int by a float factor, exact at any size.

Budgets and counts are Python ints of any size (``2**64 - 1`` is the usual "never
compact"), while the shares taken of them are floats (a reserve of 5 %, a target of 60 %,
a calibration factor). ``int(n * 0.95)`` turns ``n`` into a float: beyond ``2**53`` that
is no longer exact, and beyond about ``1.8e308`` it raises ``OverflowError``. The
functions here compute exactly that float product wherever a float holds ``n`` exactly,
so every realistic count gets the result it always had, and the exact rational product
(the float factor is a binary fraction) beyond.
"""

from __future__ import annotations

import math

__all__ = ["EXACT", "ceil_scale", "scale"]

EXACT = 2**53
"""Ints up to this size (either sign) are exact as floats."""


def scale(count: int, factor: float) -> int:
    """``int(count * factor)`` (rounded toward zero) for a finite ``factor`` >= 0, at
    any size of ``count``.

    Examples:
        >>> scale(1000, 0.95)
        950
        >>> scale(2**64 - 1, 0.5) == (2**64 - 1) // 2
        True
    """
    if -EXACT <= count <= EXACT:
        return int(count * factor)
    numerator, denominator = factor.as_integer_ratio()
    magnitude = abs(count) * numerator // denominator
    return magnitude if count >= 0 else -magnitude


def ceil_scale(count: int, factor: float, *, slack: float = 0.0) -> int:
    """``math.ceil(count * factor - slack)`` for a finite ``factor`` >= 0 and a finite
    ``slack``, at any size of ``count``.

    Examples:
        >>> ceil_scale(100, 1.1, slack=1e-9)
        110
        >>> ceil_scale(2**64 - 1, 1.5) == -(-(2**64 - 1) * 3 // 2)
        True
    """
    if -EXACT <= count <= EXACT:
        return math.ceil(count * factor - slack)
    numerator, denominator = factor.as_integer_ratio()
    slack_numerator, slack_denominator = slack.as_integer_ratio()
    top = count * numerator * slack_denominator - slack_numerator * denominator
    return -(-top // (denominator * slack_denominator))
