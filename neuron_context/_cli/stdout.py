"""What the commands write to stdout: text as it comes, JSON in its standard form.

JSON is standard everywhere (no ``Infinity`` or ``NaN``: strict readers refuse them) and
written with ``\\u`` escapes where stdout cannot take every character (a terminal in a
legacy encoding).
"""

from __future__ import annotations

import json
import math
import sys

from ..formats._transcripts.storage import json_text

__all__ = ["ascii_stdout", "emit", "emit_json"]


def ascii_stdout() -> bool:
    """Whether stdout cannot take every character (a terminal in a legacy encoding):
    JSON written there uses its ``\\u`` escapes instead."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        "\u00e9\U0001f642".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return True
    return False


def emit(text: str) -> None:
    """Write ``text`` to stdout, flushed."""
    sys.stdout.write(text)
    sys.stdout.flush()


def _standard(data: object) -> object:
    """``data`` with every non-finite float as ``null``: standard JSON has no
    ``Infinity`` or ``NaN``, and strict readers refuse them."""
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, dict):
        return {key: _standard(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [_standard(value) for value in data]
    return data


def emit_json(data: object) -> None:
    """Write ``data`` to stdout as standard JSON (see the module docstring)."""
    data = _standard(data)
    if ascii_stdout():
        emit(json.dumps(data, ensure_ascii=True, indent=1, allow_nan=False) + "\n")
    else:
        emit(json_text(data) + "\n")
