"""Transcript files as a library: load what an agent saved, write a compacted copy back.

:func:`load` reads a transcript file in any of :data:`TRANSCRIPT_FORMATS` into our
messages; :func:`load_transcripts` keeps, with each conversation, what writing it back
needs, and :func:`dumps` / :func:`dump` write it back with other messages in it, losing
nothing the messages did not change. The command line (``neuron-context``) reads and
writes through exactly these functions.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .._errors import ConfigurationError, show
from .._messages.message import Message
from .._validators import require_sequence_of
from ._transcripts.files import FORMATS, Transcript, read_file
from ._transcripts.files import dumps as _dumps
from ._transcripts.storage import printable, write_atomic

__all__ = ["TRANSCRIPT_FORMATS", "dump", "dumps", "load", "load_transcripts"]

TRANSCRIPT_FORMATS: tuple[str, ...] = FORMATS
"""The names :func:`load`'s ``format`` takes (the command line's ``--format`` values):
``openai``, ``anthropic``, ``neuron-context``, ``claude-code``, ``codex``, ``langchain``,
``pydantic-ai`` and ``openai-agents``."""


def _path(path: str | os.PathLike[str], name: str) -> Path:
    if isinstance(path, bytes) or not isinstance(path, str | os.PathLike):
        msg = f"{name} must be a path (a str or os.PathLike), got {type(path).__name__}"
        raise ConfigurationError(msg)
    return Path(os.fspath(path)).expanduser()


def _format(fmt: object) -> str | None:
    if fmt is None or (isinstance(fmt, str) and fmt in FORMATS):
        return fmt
    msg = f"format must be None (detect it) or one of {', '.join(FORMATS)}; got {show(fmt)}"
    raise ConfigurationError(msg)


def load_transcripts(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,  # the contract's name, as --format
) -> list[Transcript]:
    """Every conversation in the transcript file at ``path``, each with what writing it
    back needs: one, or one per record of a JSONL file of records.

    Args:
        path: a JSON or JSONL file.
        format: one of :data:`TRANSCRIPT_FORMATS`; ``None`` detects it.

    Raises:
        ConfigurationError: the file is missing, not a regular file, binary, not JSON or
            JSONL, or no reader takes it: one line naming the file, the path of what is
            wrong and the formats tried.
    """
    return read_file(_path(path, "path"), fmt=_format(format))


def load(
    path: str | os.PathLike[str],
    *,
    format: str | None = None,  # the contract's name, as --format
) -> list[Message]:
    """The conversation in the transcript file at ``path``, as our messages.

    Reads every transcript the command line reads (see :data:`TRANSCRIPT_FORMATS`),
    detecting the format unless ``format`` names it. No framework needs to be installed:
    every dump is plain JSON. The conversation is returned as read; check it with
    :func:`~neuron_context.validate` or fix it with :func:`~neuron_context.repair` before
    handing it to a strategy if the file may hold a broken history.

    Raises:
        ConfigurationError: as :func:`load_transcripts`; or the file holds several
            conversations (a JSONL file of records: :func:`load_transcripts` reads each).
    """
    found = load_transcripts(path, format=format)
    if len(found) != 1:
        where = printable(os.fspath(path))
        msg = (
            f"{where}: holds {len(found)} conversations (one per line); "
            "formats.load_transcripts reads each"
        )
        raise ConfigurationError(msg)
    return list(found[0].messages)


def _check(transcript: object, messages: object) -> tuple[Transcript, list[Message]]:
    if not isinstance(transcript, Transcript):
        msg = (
            "transcript must be a Transcript from formats.load_transcripts, "
            f"got {type(transcript).__name__}"
        )
        raise ConfigurationError(msg)
    found = require_sequence_of(messages, "messages", Message, "Message")
    return transcript, list(found)


def dumps(transcript: Transcript, messages: Iterable[Message]) -> str:
    """The text of ``transcript``'s file with ``messages`` in place of its conversation,
    written losslessly: the original text, byte for byte, when ``messages`` are the
    messages read; otherwise every message kept is written as the very JSON it was read
    from, a changed one over the JSON it came from (only what changed is replaced), and a
    new one (a summary) as the format writes one.

    Raises:
        ConfigurationError: ``transcript`` is not a :class:`Transcript`, ``messages`` not
            messages, or a message cannot be written in the file's format.
    """
    checked, found = _check(transcript, messages)
    return _dumps(checked, found)


def dump(transcript: Transcript, messages: Iterable[Message], path: str | os.PathLike[str]) -> None:
    """Write :func:`dumps` to ``path`` (UTF-8), whole or not at all: through a temporary
    file beside it, renamed over it when complete, so ``path`` may be the file read.

    Raises:
        ConfigurationError: as :func:`dumps`; or ``path`` is a folder, its folder is
            missing, or it cannot be written (the file at ``path`` is unchanged).
    """
    target = _path(path, "path")
    text = dumps(transcript, messages)
    write_atomic(target, text.encode("utf-8"), option="path")
