"""The exact counter: texts are tokenized with a HuggingFace ``tokenizers.Tokenizer``.

Same block rules as :class:`~neuron_context.TokenCounter` (they live in
:class:`~neuron_context._counter.BaseCounter`); only the cost of a text differs. Texts are
counted as the model sees plain text: no special tokens are added around them, no padding
or truncation applies, and text that looks like a special token (``<|endoftext|>``,
``</s>``) is tokenized as the characters it is made of.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Hashable, Sequence
from typing import Any, TypedDict, Unpack

import attrs
from tokenizers import Encoding, Tokenizer

from .._errors import ConfigurationError, TokenizerError
from .base import (
    BaseCounter,
    DocumentPricing,
    ImagePricing,
    _check_choice,
    _check_count,
    _HistoryMemo,
)
from .encodings import _FORMAT_VERSION, ENCODING_NAMES, load_encoding

__all__ = ["TokenizerCounter"]


class CounterOptions(TypedDict, total=False):
    """The keyword options shared by every way to make a :class:`TokenizerCounter`."""

    image_tokens: int
    document_tokens: int
    message_overhead: int
    image_pricing: ImagePricing
    document_pricing: DocumentPricing
    tokens_per_page: int


_SHARED: dict[str, Tokenizer] = {}
"""Prepared tokenizers of the tiktoken encodings, one per process and name."""
_SHARED_LOCKS = {name: threading.Lock() for name in ENCODING_NAMES}


@attrs.frozen(init=False)
class TokenizerCounter(BaseCounter):
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
        image_tokens: cost of an image (the fixed price).
        document_tokens: cost of a document (the fixed price).
        message_overhead: cost of a message beyond its blocks.
        image_pricing: ``"fixed"``, ``"openai"`` or ``"anthropic"``.
        document_pricing: ``"fixed"`` or ``"content"``.
        tokens_per_page: with ``document_pricing="content"``, tokens per page of a
            document without text.

    Raises:
        ConfigurationError: an option has a bad value, or ``tokenizer`` is not a
            ``tokenizers.Tokenizer``.
        TokenizerError: the tokenizer has to be copied and cannot be (it has custom
            Python components).
    """

    tokenizer: Tokenizer = attrs.field(eq=False, repr=False)
    """The tokenizer that counts (the counter's own copy when one was needed)."""
    encoding: str | None = attrs.field(kw_only=True)
    """The tiktoken encoding name for counters made by :meth:`from_encoding`, else ``None``."""
    image_tokens: int = attrs.field(kw_only=True, validator=_check_count)
    """Cost of an image (the fixed price)."""
    document_tokens: int = attrs.field(kw_only=True, validator=_check_count)
    """Cost of a document (the fixed price)."""
    message_overhead: int = attrs.field(kw_only=True, validator=_check_count)
    """Cost of a message beyond its blocks."""
    image_pricing: ImagePricing = attrs.field(
        kw_only=True, validator=_check_choice("fixed", "openai", "anthropic")
    )
    """``"fixed"`` (crate-exact), ``"openai"`` or ``"anthropic"`` for sized images."""
    document_pricing: DocumentPricing = attrs.field(
        kw_only=True, validator=_check_choice("fixed", "content")
    )
    """``"fixed"`` (crate-exact) or ``"content"`` (text, else pages)."""
    tokens_per_page: int = attrs.field(kw_only=True, validator=_check_count)
    """With ``document_pricing="content"``: tokens per page of a document without text."""

    _ident: Hashable = attrs.field(kw_only=True, alias="ident", repr=False)
    _key: Hashable = attrs.field(init=False, eq=False, repr=False)
    _memo: _HistoryMemo = attrs.field(init=False, eq=False, repr=False, factory=_HistoryMemo)

    def __init__(
        self,
        tokenizer: Tokenizer,
        *,
        image_tokens: int = 300,
        document_tokens: int = 500,
        message_overhead: int = 4,
        image_pricing: ImagePricing = "fixed",
        document_pricing: DocumentPricing = "fixed",
        tokens_per_page: int = 1500,
    ) -> None:
        self.__attrs_init__(
            _prepare(tokenizer),
            encoding=None,
            ident=("instance", uuid.uuid4().hex),
            image_tokens=image_tokens,
            document_tokens=document_tokens,
            message_overhead=message_overhead,
            image_pricing=image_pricing,
            document_pricing=document_pricing,
            tokens_per_page=tokens_per_page,
        )

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], **options: Unpack[CounterOptions]
    ) -> TokenizerCounter:
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
        try:
            tokenizer = Tokenizer.from_file(os.fspath(path))
        except Exception as exc:
            msg = f"cannot load a tokenizer from {os.fspath(path)!r}: {exc}"
            raise TokenizerError(msg) from exc
        return cls._make(_prepare(tokenizer, owned=True), None, options)

    @classmethod
    def from_encoding(cls, name: str, **options: Unpack[CounterOptions]) -> TokenizerCounter:
        """A counter with exactly tiktoken's counts for ``"o200k_base"`` or ``"cl100k_base"``.

        Works offline (see :func:`~neuron_context.load_encoding`). The tokenizer is loaded
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
        return cls._make(_shared_encoding(name), name, options)

    @classmethod
    def _make(
        cls, tokenizer: Tokenizer, encoding: str | None, options: CounterOptions
    ) -> TokenizerCounter:
        unknown = set(options) - set(CounterOptions.__annotations__)
        if unknown:
            msg = f"unknown TokenizerCounter options: {sorted(unknown)}"
            raise ConfigurationError(msg)
        ident: Hashable = (
            ("encoding", encoding, _FORMAT_VERSION)
            if encoding is not None
            else ("instance", uuid.uuid4().hex)
        )
        counter = cls.__new__(cls)
        counter.__attrs_init__(
            tokenizer,
            encoding=encoding,
            ident=ident,
            image_tokens=options.get("image_tokens", 300),
            document_tokens=options.get("document_tokens", 500),
            message_overhead=options.get("message_overhead", 4),
            image_pricing=options.get("image_pricing", "fixed"),
            document_pricing=options.get("document_pricing", "fixed"),
            tokens_per_page=options.get("tokens_per_page", 1500),
        )
        return counter

    def __attrs_post_init__(self) -> None:
        key = (
            "tokenizer",
            self._ident,
            self.image_tokens,
            self.document_tokens,
            self.message_overhead,
            self.image_pricing,
            self.document_pricing,
            self.tokens_per_page,
        )
        object.__setattr__(self, "_key", key)

    def __reduce__(self) -> tuple[Any, ...]:
        options = {name: getattr(self, name) for name in CounterOptions.__annotations__}
        if self.encoding is not None:
            return (_from_encoding, (self.encoding, options))
        return (_from_json, (self.tokenizer.to_str(), options))

    def __copy__(self) -> TokenizerCounter:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> TokenizerCounter:
        return self

    def _cache_key(self) -> Hashable:
        return self._key

    def estimate_text(self, text: str) -> int:
        """The number of tokens of ``text``; ``""`` is 0.

        Raises:
            TokenizerError: the tokenizer failed.
        """
        if not text:
            return 0
        return len(self._encode([text])[0])

    def estimate_texts(self, texts: Sequence[str]) -> list[int]:
        """The number of tokens of each text, tokenized in one parallel batch.

        Empty texts count 0 and equal texts are tokenized once.

        Raises:
            TokenizerError: the tokenizer failed.
        """
        unique = list(dict.fromkeys(text for text in texts if text))
        if not unique:
            return [0] * len(texts)
        counts = dict(zip(unique, map(len, self._encode(unique)), strict=True))
        counts[""] = 0
        return [counts[text] for text in texts]

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


def _from_json(text: str, options: CounterOptions) -> TokenizerCounter:
    return TokenizerCounter._make(_prepare(Tokenizer.from_str(text), owned=True), None, options)
