"""Files the user owns: read only regular files, write only whole files, print any text.

Transcripts are the user's files, read and written over when asked
(``compact t.json -o t.json``, :func:`~neuron_context.formats.dump`), so three rules
hold for every file touched:

- **Reading never blocks and never reads a device.** A path is opened without blocking
  (``O_NONBLOCK``) and refused unless it is a regular file: ``count`` on a named pipe
  would otherwise wait forever for a writer, and on ``/dev/zero`` fill the memory.
- **Writing never leaves a partial file.** What is written goes to a temporary file
  beside the target, is flushed to disk, and only then renamed over the target
  (``os.replace``, atomic on POSIX and Windows); a failure at any point removes the
  temporary file and leaves the target as it was, so ``-o`` may name the input itself.
  A target whose folder is missing, or that is a folder, is refused before any work.
- **Any text can be printed.** A transcript may hold lone surrogates (``"\\ud800"`` is
  valid JSON): JSON is written with lone surrogates escaped (``\\ud800``, so it reads
  back the same), and :func:`printable` shows any text safely (the command line's
  reports also escape what the terminal's encoding lacks).

JSON text is parsed here too: a document nested too deeply for the parser, or holding
an integer too long to convert, is a one-line error, not a ``RecursionError`` or a
``ValueError`` from the standard library.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import stat
import sys
from pathlib import Path

from ..._errors import ConfigurationError
from .._common import MAX_DEPTH, check_depth

__all__ = [
    "MAX_DOCUMENT_DEPTH",
    "MAX_FILE_BYTES",
    "check_file",
    "check_target",
    "json_text",
    "loads",
    "printable",
    "read_bytes",
    "write_atomic",
]

MAX_DOCUMENT_DEPTH = MAX_DEPTH + 28
"""How deeply a transcript file may nest: a tool's input may nest :data:`MAX_DEPTH`
(100) levels and the formats wrap it in a few more (a Claude Code row holds a message,
its content, a block, its input). Deeper documents are refused when read, so nothing
later (writing them back included) meets Python's recursion limit."""

MAX_FILE_BYTES = 1 << 30
"""The largest file read (1 GiB): a transcript is far smaller; anything larger is
refused before it is read."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def _where(path: Path | str) -> str:
    return printable(str(path))


def _error(path: Path | str, problem: str) -> ConfigurationError:
    return ConfigurationError(f"{_where(path)}: {problem}")


def printable(text: str) -> str:
    """``text`` with lone surrogates (from a file name that is not UTF-8, or a JSON
    escape) shown as ``\\udXXX``: safe to encode and print."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _oserror(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "is a folder, not a file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or type(exc).__name__


def _kind_problem(mode: int) -> str | None:
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a pipe, device or socket); save it to a file"
    return None


def _open(path: Path | str) -> int:
    """A descriptor of the regular file at ``path``, opened without blocking."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        problem = _oserror(exc) if isinstance(exc, OSError) else "is not a valid path"
        raise _error(path, problem) from exc
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise _error(path, _oserror(exc)) from exc
    refused = _kind_problem(info.st_mode)
    if refused is None and info.st_size > MAX_FILE_BYTES:
        refused = f"is too large ({info.st_size:,} bytes; at most 1 GiB)"
    if refused is not None:
        os.close(fd)
        raise _error(path, refused)
    return fd


def check_file(path: Path | str) -> None:
    """Refuse ``path`` unless it is a readable regular file (see :func:`read_bytes`),
    before a library reads it by name (a tokenizer)."""
    os.close(_open(path))


def read_bytes(path: Path | str) -> bytes:
    """The content of the regular file at ``path``.

    Raises:
        ConfigurationError: the path is missing, unreadable, not a regular file (a
            folder, named pipe, device or socket) or larger than :data:`MAX_FILE_BYTES`.
    """
    fd = _open(path)
    try:
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > MAX_FILE_BYTES:
                raise _error(path, "is too large (more than 1 GiB)")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise _error(path, _oserror(exc)) from exc
    finally:
        os.close(fd)


def check_target(path: Path, *, option: str) -> None:
    """Refuse an output path before any work: its folder must exist and it must not be
    a folder.

    Raises:
        ConfigurationError: naming ``option`` and what is wrong.
    """
    where = f"{option} {_where(path)}"
    try:
        is_folder = path.is_dir()
        has_folder = path.absolute().parent.is_dir()
    except (OSError, ValueError) as exc:  # a name too long, a NUL
        msg = f"{where}: is not a usable path"
        raise ConfigurationError(msg) from exc
    if is_folder:
        msg = f"{where}: is a folder; name a file"
        raise ConfigurationError(msg)
    if not has_folder:
        msg = f"{where}: the folder does not exist"
        raise ConfigurationError(msg)


def write_atomic(path: Path, data: bytes, *, option: str) -> None:
    """Write ``data`` to ``path`` whole or not at all (see the module docstring).

    A new file gets the usual permissions (the umask applies); a replaced one keeps its
    mode. A symbolic link is followed: the file it points to is replaced.

    Raises:
        ConfigurationError: the file cannot be written; the target is unchanged.
    """
    check_target(path, option=option)
    target = Path(os.path.realpath(path))
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    try:
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        fd = os.open(temporary, flags, 0o666)
    except OSError as exc:
        msg = f"{option} {_where(path)}: {_oserror(exc)}"
        raise ConfigurationError(msg) from exc
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            msg = f"{option} {_where(path)}: {_oserror(exc)}"
            raise ConfigurationError(msg) from exc
        raise


def loads(text: str, where: str) -> object:
    """``json.loads(text)``, with a one-line error naming ``where`` for a document nested
    deeper than :data:`MAX_DOCUMENT_DEPTH` or holding an integer too long to convert (the
    JSON syntax errors are left to the caller, which knows the layout).

    Raises:
        json.JSONDecodeError: the text is not JSON.
        ConfigurationError: nested too deeply, or an over-long integer.
    """
    too_deep = f"{where}: is nested deeper than {MAX_DOCUMENT_DEPTH} levels"
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise ConfigurationError(too_deep) from None
    except ValueError:  # "Exceeds the limit (4300 digits) for integer string conversion"
        limit = f"{sys.get_int_max_str_digits():,}"
        msg = f"{where}: holds an integer longer than {limit} digits, which JSON readers refuse"
        raise ConfigurationError(msg) from None
    if text.count("[") + text.count("{") > MAX_DOCUMENT_DEPTH:  # only then can it be
        try:
            check_depth(document, "", limit=MAX_DOCUMENT_DEPTH)
        except ConfigurationError:
            raise ConfigurationError(too_deep) from None
    return document


def json_text(data: object, *, indent: int | None = 1) -> str:
    """``data`` as JSON text that any UTF-8 stream can hold: non-ASCII kept as it is,
    lone surrogates escaped (the text reads back equal).

    Raises:
        ConfigurationError: the value nests too deeply to write.
    """
    try:
        text = json.dumps(data, ensure_ascii=False, indent=indent)
    except RecursionError:
        msg = "the result is nested too deeply to write as JSON"
        raise ConfigurationError(msg) from None
    return printable(text)
