"""Shared helpers of the wire formats: reading untrusted JSON with error paths.

Every reader takes the *path* of the value it reads (``messages[3].content[1]``) so a
:class:`ConfigurationError` names exactly where the input is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from .._errors import ConfigurationError
from .._messages.content import Compaction, Text

__all__ = [
    "SUMMARY_HEADING",
    "build",
    "fail",
    "get_bool",
    "get_count",
    "get_list",
    "get_mapping",
    "get_messages",
    "get_str",
    "get_text",
    "parse_data_url",
    "render_compaction",
    "text_or_compaction",
]

SUMMARY_HEADING = "[Summary of earlier conversation]"
"""The line put before a :class:`Compaction` summary when it is rendered for a provider."""

_SUMMARY_PREFIX = SUMMARY_HEADING + "\n"
_DATA_URL = re.compile(r"data:([^;,]*)((?:;[^;,]*)*);base64,(.*)", re.DOTALL)
_MISSING = object()

T = TypeVar("T")


def fail(path: str, problem: str, *, at: str = "") -> ConfigurationError:
    """A :class:`ConfigurationError` saying that the value at ``path.at`` has ``problem``."""
    where = f"{path}.{at}" if at and path else (at or path)
    msg = f"{where} {problem}"
    return ConfigurationError(msg)


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def get_mapping(value: object, path: str) -> Mapping[str, object]:
    """``value`` as a mapping, or an error naming ``path``."""
    if not isinstance(value, Mapping):
        raise fail(path, f"must be an object, got {_kind(value)}")
    return value


def get_list(value: object, path: str) -> Sequence[object]:
    """``value`` as a list (a ``list`` or ``tuple``), or an error naming ``path``."""
    if not isinstance(value, list | tuple):
        raise fail(path, f"must be a list, got {_kind(value)}")
    return value


def get_messages(value: object) -> Iterable[object]:
    """The messages argument of a reader: any iterable but a string or a mapping."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        msg = f"messages must be a list of messages, got {_kind(value)}"
        raise ConfigurationError(msg)
    return value


def get_str(obj: Mapping[str, object], key: str, path: str) -> str:
    """The string at ``obj[key]``, or an error naming ``path.key``."""
    value = obj.get(key, _MISSING)
    if value is _MISSING:
        raise fail(path, "is missing", at=key)
    if not isinstance(value, str):
        raise fail(path, f"must be a string, got {_kind(value)}", at=key)
    return value


def get_text(obj: Mapping[str, object], key: str, path: str) -> str | None:
    """The string at ``obj[key]``, or ``None`` when the key is missing or null."""
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise fail(path, f"must be a string or null, got {_kind(value)}", at=key)
    return value


def get_count(obj: Mapping[str, object], key: str, path: str) -> int | None:
    """The non-negative int at ``obj[key]``, or ``None`` when missing or null."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise fail(path, f"must be a non-negative integer or null, got {value!r}", at=key)
    return value


def get_bool(obj: Mapping[str, object], key: str, path: str) -> bool:
    """The bool at ``obj[key]``; a missing key or null is ``False``."""
    value = obj.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise fail(path, f"must be a boolean, got {_kind(value)}", at=key)
    return value


def build(path: str, factory: Callable[[], T]) -> T:
    """Call ``factory``; a :class:`ConfigurationError` it raises is re-raised naming ``path``."""
    try:
        return factory()
    except ConfigurationError as exc:
        msg = f"{path}: {exc}"
        raise ConfigurationError(msg) from exc


def render_compaction(block: Compaction) -> str:
    """The text a provider sees for a summary: the heading line, then the summary."""
    return _SUMMARY_PREFIX + block.content


def text_or_compaction(text: str) -> Text | Compaction:
    """A :class:`Compaction` for text that starts with the heading line, else a :class:`Text`."""
    if text.startswith(_SUMMARY_PREFIX):
        return Compaction(content=text[len(_SUMMARY_PREFIX) :])
    return Text._of(text)


def parse_data_url(url: str) -> tuple[str | None, str] | None:
    """``(media_type, base64 data)`` of a ``data:...;base64,...`` URL, else ``None``."""
    match = _DATA_URL.fullmatch(url)
    if match is None:
        return None
    return (match.group(1) or None), match.group(3)
