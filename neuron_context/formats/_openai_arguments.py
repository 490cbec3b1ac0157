"""A tool call's arguments as OpenAI carries them: a string that should hold a JSON object.

Chat Completions (:mod:`~neuron_context.formats._openai_chat`) and the Responses API
(:mod:`~neuron_context.formats._responses_items`) send a tool call's input as the string
``arguments``, and a model may write one that holds no JSON object (cut off, or not JSON
at all). Such a string is read as ``{"_raw": "<the string>"}`` (:data:`RAW_ARGUMENTS`) and
written back verbatim, so that a conversation round-trips byte for byte; one nested
deeper than :data:`~neuron_context.formats.MAX_DEPTH` is refused, naming its path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from .._messages.content import JSON
from .._messages.jsonvalue import compact_json
from ._common import MAX_DEPTH, check_depth, fail

__all__ = ["RAW_ARGUMENTS", "arguments_from_openai", "arguments_to_openai", "parse_arguments"]

RAW_ARGUMENTS = "_raw"
"""The key under which :func:`from_openai` keeps tool-call arguments that are not a JSON
object (``{"_raw": "<the string>"}``); :func:`to_openai` sends such a string back verbatim."""


def arguments_to_openai(arguments: Mapping[str, JSON]) -> str:
    """A tool use's input as the ``arguments`` string of Chat Completions (and of the
    Responses API): its JSON, or a ``_raw`` string given back as it was read."""
    return _arguments(arguments)


def arguments_from_openai(text: str, path: str = "arguments") -> dict[str, JSON]:
    """A tool use's input read from an ``arguments`` string: its JSON object, ``{}`` for a
    blank string, or ``{"_raw": text}`` when it holds no JSON object.

    Raises:
        ConfigurationError: ``text`` nests deeper than :data:`MAX_DEPTH`, naming ``path``.
    """
    parsed = parse_arguments(text, path)
    return {RAW_ARGUMENTS: text} if parsed is None else parsed


def _arguments(arguments: Mapping[str, JSON]) -> str:
    raw = arguments.get(RAW_ARGUMENTS)
    if len(arguments) == 1 and isinstance(raw, str) and not _is_json_object(raw):
        return raw
    return compact_json(arguments)


def _is_json_object(text: str) -> bool:
    """Whether :func:`from_openai` would read ``text`` as arguments (not as ``_raw``)."""
    if not text.strip():
        return True
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


def parse_arguments(text: str, path: str) -> dict[str, JSON] | None:
    """The JSON object ``text`` holds (blank is ``{}``), or ``None`` when it holds none.

    Raises:
        ConfigurationError: ``text`` is JSON nested too deeply to parse.
    """
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except RecursionError:
        raise fail(path, f"is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:
        return None
    if text.count("[") + text.count("{") > MAX_DEPTH:  # C-speed: only then can it be too deep
        check_depth(value, path)
    return value if isinstance(value, dict) else None
