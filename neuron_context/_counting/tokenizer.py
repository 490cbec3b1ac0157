"""The exact counter: texts are tokenized with a HuggingFace ``tokenizers.Tokenizer``.

Same block rules as :class:`~neuron_context.TokenCounter` (they live in
:class:`~neuron_context._counting.rules.RuleCounter`); only the cost of a text differs.
Texts are counted as the model sees plain text: no special tokens are added around them,
no padding or truncation applies, and text that looks like a special token
(``<|endoftext|>``, ``</s>``) is tokenized as the characters it is made of.

``tokenizers`` (and its dependencies, some 50 MB) is imported when the first
:class:`TokenizerCounter` is made, not with ``neuron_context``.

**The encodings count with tiktoken when it is installed.** A counter of ``o200k_base`` or
``cl100k_base`` tokenizes with tiktoken's encoder built from the same ranks
(:func:`~neuron_context._counting.encodings.fast_encoding`; identical counts, about five
times faster on a turn's texts) where the ``tiktoken`` package is installed, and with
the converted ``tokenizers`` tokenizer otherwise; :attr:`TokenizerCounter.tokenizer` is
the latter either way (loaded when first read).

**A bound that needs no tokenizer.** Every token of these encodings is at least one byte
of the text's UTF-8: tiktoken splits the text into pieces and each piece's bytes into
tokens that cover them without overlap (text with lone surrogates is first made valid,
each surrogate becoming U+FFFD, 3 bytes as in the WTF-8 that the blocks measure). So a
text's UTF-8 size (which every block measured when it was built) is never below its
count, and :meth:`TokenizerCounter.bound_messages` adds those sizes for the messages it
has not counted yet, tokenizing only when the sum passes the limit it is asked about.
Other tokenizers (a ``tokenizer.json`` may normalize text into more bytes, or add
tokens) have no such bound: their counters count exactly.

**Long texts in bounded memory.** A text of the tiktoken encodings longer than
:data:`~neuron_context._counting.chunked.CHUNK` is counted in pieces whose counts sum to
the whole text's (:mod:`~neuron_context._counting.chunked`); other tokenizers (a
``tokenizer.json`` may normalize, or have no pre-tokenizer at all) are given each text
whole.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any, Self, TypedDict, Unpack

import attrs

from .._errors import ConfigurationError, TokenizerError, show
from .chunked import batched_counts, fast_counts
from .counter import not_text
from .encodings import ENCODING_NAMES, FORMAT_VERSION, fast_encoding, load_encoding
from .heuristic import TokenCounter
from .huge import HUGE as _HUGE
from .huge import HUGE_COUNTS as _HUGE_COUNTS
from .rules import DocumentPricing, ImagePricing, RuleCounter

if TYPE_CHECKING:
    from tokenizers import Encoding, Tokenizer

__all__ = ["TokenizerCounter"]


class CounterOptions(TypedDict, total=False):
    """The keyword options shared by every way to make a :class:`TokenizerCounter`."""

    image_tokens: int
    document_tokens: int
    message_overhead: int
    image_pricing: ImagePricing
    document_pricing: DocumentPricing
    tokens_per_page: int


def _check_options(options: CounterOptions) -> None:
    unknown = set(options) - set(CounterOptions.__annotations__)
    if unknown:
        msg = f"unknown TokenizerCounter options: {sorted(unknown)}"
        raise ConfigurationError(msg)


_SHARED: dict[str, Tokenizer] = {}
"""Prepared tokenizers of the tiktoken encodings, one per process and name."""
_SHARED_LOCKS = {name: threading.Lock() for name in ENCODING_NAMES}


@attrs.frozen(init=False, repr=False)
class TokenizerCounter(RuleCounter):
    """Exact token counts from a HuggingFace ``tokenizers.Tokenizer``.

    The block rules are :class:`~neuron_context.TokenCounter`'s: ``message_overhead`` per
    message, fixed (or opt-in sized) images and documents, a tool use costs its name plus
    its compact JSON input. Each text is tokenized without added special tokens, padding
    or truncation, and special-looking text such as ``<|endoftext|>`` counts as ordinary
    text. Non-special added tokens of a ``tokenizer.json`` still apply, as they do for the
    model.

    The counter changes a copy when the tokenizer it is given has padding, truncation or
    special added tokens; otherwise it uses the tokenizer as it is, which must then not
    be changed afterwards (copying a large tokenizer takes seconds).

    Examples:
        >>> counter = TokenizerCounter.from_encoding("o200k_base")
        >>> counter.estimate_text("hello world")
        2

    Args:
        tokenizer: the tokenizer.
        **options: the options of :class:`~neuron_context.TokenCounter` (``image_tokens``,
            ``document_tokens``, ``message_overhead``, ``image_pricing``,
            ``document_pricing``, ``tokens_per_page``), with the same defaults.

    Raises:
        ConfigurationError: an option has a bad value, or ``tokenizer`` is not a
            ``tokenizers.Tokenizer``.
        TokenizerError: the tokenizer has to be copied and cannot be (it has custom
            Python components).
    """

    _tokenizer: Tokenizer | None = attrs.field(eq=False, repr=False, alias="tokenizer")
    encoding: str | None = attrs.field(kw_only=True)
    """The tiktoken encoding name for counters made by :meth:`from_encoding`, else ``None``."""

    _ident: Hashable = attrs.field(kw_only=True, alias="ident", repr=False)
    _bytes: TokenCounter | None = attrs.field(init=False, eq=False, repr=False, default=None)

    def __init__(
        self,
        tokenizer: Tokenizer,
        **options: Unpack[CounterOptions],
    ) -> None:
        _check_options(options)
        self.__attrs_init__(
            _prepare(tokenizer), encoding=None, ident=("instance", os.urandom(16).hex()), **options
        )

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], **options: Unpack[CounterOptions]) -> Self:
        """A counter for a ``tokenizer.json`` file.

        Args:
            path: the ``tokenizer.json``.
            **options: the keyword options of :class:`TokenizerCounter`.

        Returns:
            The counter.

        Raises:
            TokenizerError: the file cannot be read or is not a tokenizer.
            ConfigurationError: an option has a bad value.
        """
        if not isinstance(path, str | os.PathLike):
            msg = f"TokenizerCounter.from_file: path must be a str or a path, got {show(path)}"
            raise ConfigurationError(msg)
        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_file(os.fspath(path))
        except Exception as exc:
            msg = f"cannot load a tokenizer from {show(os.fspath(path))}: {exc}"
            raise TokenizerError(msg) from exc
        return cls._make(_prepare(tokenizer, owned=True), None, options)

    @classmethod
    def from_encoding(cls, name: str, **options: Unpack[CounterOptions]) -> Self:
        """A counter with exactly tiktoken's counts for ``"o200k_base"`` or ``"cl100k_base"``.

        Works offline (see :func:`~neuron_context.counting.load_encoding`). The tokenizer is loaded
        once per process and shared by every counter of the same encoding, as are the
        cached costs of messages (between counters with the same options).

        Args:
            name: ``"o200k_base"`` or ``"cl100k_base"``.
            **options: the keyword options of :class:`TokenizerCounter`.

        Returns:
            The counter.

        Raises:
            ConfigurationError: ``name`` is not a known encoding, or an option has a bad
                value.
            TokenizerError: the encoding could not be loaded.
        """
        if not isinstance(name, str) or name not in ENCODING_NAMES:
            msg = f"encoding must be one of {list(ENCODING_NAMES)}, got {show(name)}"
            raise ConfigurationError(msg)
        if fast_encoding(name) is not None:  # counts with tiktoken: no tokenizer to load
            return cls._make(None, name, options)
        return cls._make(_shared_encoding(name), name, options)

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer that counts (the counter's own copy when one was needed; for an
        encoding, the one shared by the process, loaded on first use by a lazy counter)."""
        tokenizer = self._tokenizer
        if tokenizer is None:
            assert self.encoding is not None  # only an encoding's counter defers it
            return _shared_encoding(self.encoding)
        return tokenizer

    @classmethod
    def lazy(cls, name: str, **options: Unpack[CounterOptions]) -> Self:
        """A counter of the encoding ``name`` (see :meth:`from_encoding`) that loads it
        when it first counts a text: making one costs nothing, and imports nothing
        (``tokenizers`` included). The first count pays the load (reading the converted
        vocabulary from the disk cache takes about a second; converting it the first
        time on a machine, a few more), and raises :class:`TokenizerError` if it fails.

        Raises:
            ConfigurationError: ``name`` is not a known encoding, or an option has a bad
                value.
        """
        if not isinstance(name, str) or name not in ENCODING_NAMES:
            msg = f"encoding must be one of {list(ENCODING_NAMES)}, got {show(name)}"
            raise ConfigurationError(msg)
        return cls._make(None, name, options)

    @classmethod
    def _make(
        cls, tokenizer: Tokenizer | None, encoding: str | None, options: CounterOptions
    ) -> Self:
        _check_options(options)
        ident: Hashable = (
            ("encoding", encoding, FORMAT_VERSION)
            if encoding is not None
            else ("instance", os.urandom(16).hex())
        )
        counter = cls.__new__(cls)
        counter.__attrs_init__(tokenizer, encoding=encoding, ident=ident, **options)
        if encoding is not None:  # see "A bound that needs no tokenizer"
            upper = TokenCounter(1.0, **options)
            object.__setattr__(counter, "_bytes", upper)
        return counter

    def _upper(self) -> TokenCounter | None:
        return self._bytes

    def _rules(self) -> tuple[object, ...]:
        return (self._ident, *super()._rules())

    def __reduce__(self) -> tuple[Any, ...]:
        options = {name: getattr(self, name) for name in CounterOptions.__annotations__}
        if self.encoding is not None:
            lazy = self._tokenizer is None and self.encoding not in _SHARED
            return (_lazy if lazy else _from_encoding, (self.encoding, options))
        return (_from_json, (self.tokenizer.to_str(), options))

    def __copy__(self) -> TokenizerCounter:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> TokenizerCounter:
        return self

    def estimate_text(self, text: str) -> int:
        """The number of tokens of ``text``; ``""`` is 0.

        Raises:
            TokenizerError: the tokenizer failed.
        """
        if type(text) is not str and not isinstance(text, str):
            raise not_text(text)
        if not text:
            return 0
        return self._counts([text])[0]

    def estimate_texts(self, texts: Sequence[str]) -> list[int]:
        """The number of tokens of each text, tokenized in parallel batches.

        Empty texts count 0 and equal texts are tokenized once.

        Raises:
            TokenizerError: the tokenizer failed.
        """
        distinct = dict.fromkeys(texts)
        distinct.pop("", None)
        if not distinct:
            return [0] * len(texts)
        unique = list(distinct)
        counts = dict(zip(unique, self._counts(unique), strict=True))
        counts[""] = 0
        return list(map(counts.__getitem__, texts))

    def _counts(self, texts: list[str]) -> list[int]:
        """The count of each (non-empty) text; a huge text of the encodings counted once
        while it is among the last few (:mod:`.huge`)."""
        encoding = self.encoding
        if encoding is None or max(map(len, texts)) < _HUGE:
            return self._fresh_counts(texts)
        known = [_HUGE_COUNTS.get(encoding, text) for text in texts]
        missing = [text for text, count in zip(texts, known, strict=True) if count is None]
        fresh = iter(self._fresh_counts(missing) if missing else ())
        counts: list[int] = []
        for text, count in zip(texts, known, strict=True):
            if count is not None:
                counts.append(count)
                continue
            counted = next(fresh)
            _HUGE_COUNTS.put(encoding, text, counted)
            counts.append(counted)
        return counts

    def _fresh_counts(self, texts: list[str]) -> list[int]:
        """The count of each (non-empty) text; long texts of the encodings in pieces."""
        if self.encoding is not None:
            fast = fast_encoding(self.encoding)
            if fast is not None:
                return fast_counts(fast.encode_ordinary, texts)
        return batched_counts(self._encode, texts, in_pieces=self.encoding is not None)

    def _encode(self, texts: list[str]) -> list[Encoding]:
        encode = self.tokenizer.encode_batch_fast
        try:
            return encode(texts, add_special_tokens=False)
        except Exception as exc:
            error = exc
        # Text with lone surrogates cannot cross into Rust; tiktoken replaces them.
        try:
            return encode([_without_surrogates(text) for text in texts], add_special_tokens=False)
        except Exception:
            msg = f"the tokenizer failed to encode text: {error}"
            raise TokenizerError(msg) from error


def _without_surrogates(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (paired ones joined), as tiktoken."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _prepare(tokenizer: object, *, owned: bool = False) -> Tokenizer:
    """A tokenizer set up for counting: ``tokenizer`` itself when it already is, else a
    copy (or ``tokenizer`` changed in place when ``owned``)."""
    from tokenizers import Tokenizer

    if not isinstance(tokenizer, Tokenizer):
        msg = f"tokenizer must be a tokenizers.Tokenizer, got {type(tokenizer).__name__}"
        raise ConfigurationError(msg)
    try:
        special = not tokenizer.encode_special_tokens and any(
            token.special for token in tokenizer.get_added_tokens_decoder().values()
        )
        if tokenizer.padding is None and tokenizer.truncation is None and not special:
            return tokenizer
        if not owned:
            tokenizer = Tokenizer.from_str(tokenizer.to_str())
        tokenizer.no_padding()
        tokenizer.no_truncation()
        # Special added tokens are then tokenized as the text they are made of.
        tokenizer.encode_special_tokens = True
    except Exception as exc:
        msg = f"cannot prepare the tokenizer for counting: {exc}"
        raise TokenizerError(msg) from exc
    return tokenizer


def _shared_encoding(name: str) -> Tokenizer:
    tokenizer = _SHARED.get(name)
    if tokenizer is not None:
        return tokenizer
    lock = _SHARED_LOCKS.get(name)
    if lock is None:
        return load_encoding(name)  # raises ConfigurationError
    with lock:
        tokenizer = _SHARED.get(name)
        if tokenizer is None:
            tokenizer = load_encoding(name)
            _SHARED[name] = tokenizer
    return tokenizer


def _from_encoding(name: str, options: CounterOptions) -> TokenizerCounter:
    return TokenizerCounter.from_encoding(name, **options)


def _lazy(name: str, options: CounterOptions) -> TokenizerCounter:
    return TokenizerCounter.lazy(name, **options)


def _from_json(text: str, options: CounterOptions) -> TokenizerCounter:
    from tokenizers import Tokenizer

    return TokenizerCounter._make(_prepare(Tokenizer.from_str(text), owned=True), None, options)
