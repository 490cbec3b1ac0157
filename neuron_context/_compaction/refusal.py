"""The refusal of a request too long for the model: recognised, and the window it shows.

Every counter is an estimate of the model's own count unless it is the model's own
tokenizer (Claude's is unpublished), so a request the strategy judged within budget can
still be refused. :func:`context_overflow` is the one recogniser of that refusal,
whichever shape it takes: OpenAI's ``context_length_exceeded`` code (an
``openai.BadRequestError``, or our :class:`~neuron_context.errors.ProviderError` carrying
its body), ``This model's maximum context length is M tokens. However, your messages
resulted in N tokens`` (OpenAI, and the many servers that copy its API: vLLM, Mistral,
Together), Anthropic's ``prompt is too long: N tokens > M maximum``, ``input length and
`max_tokens` exceed context limit: N + R > M``, Gemini's ``The input token count (N)
exceeds the maximum number of tokens allowed (M)``, Bedrock's ``Input is too long for
requested model``, llama.cpp's and Ollama's ``exceeds the available context size``. It
walks the exception's causes, so a framework's wrapper (pydantic-ai's ``ModelHTTPError``,
a LangChain error) is seen through. A rate limit that mentions tokens (``tokens per
min``) is not an overflow.

:meth:`Overflow.budget` learns the real size: where the error gives the provider's count
``N`` and its maximum ``M``, the request the strategy counted as ``sent`` is worth
``N / sent`` provider tokens per counted token, so a budget of ``sent * M / N`` counted
tokens fits (less a margin of :data:`MARGIN`); where it gives only the maximum, or
nothing, the request is cut by a quarter.

A refusal's numbers are text from outside: they are read by their length first, so a
count of thousands of digits is a very large count (:data:`HUGE`), never Python's
int-digits error. What a caller does with the refusal is the recovery step's
(:mod:`neuron_context._compaction.recovery`).
"""

from __future__ import annotations

import json
import re

import attrs

from .._numbers import scale
from .._validators import require_int

__all__ = ["HUGE", "MARGIN", "Overflow", "context_overflow"]

MARGIN = 0.1
"""The share of a learned budget kept free: the provider's count of the compacted
request is a ratio's estimate too."""
_CUT = 0.75
"""What is kept of a request whose refusal gives no count to learn from."""
_DEPTH = 8
"""How many causes deep the recogniser looks."""
_DIGITS = 18
"""The most digits a refusal's number is read with; a longer one is :data:`HUGE`."""
HUGE: int = 10**_DIGITS
"""What a number of more than 18 digits in a refusal is read as: larger than any real
count, and small enough to compute with."""

_NUMBER = r"(\d[\d,_]*)"
_COUNTS = (
    # Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"
    re.compile(rf"prompt is too long:\s*{_NUMBER}\s*tokens?\s*>\s*{_NUMBER}", re.IGNORECASE),
    # Anthropic: "input length and `max_tokens` exceed context limit: 187254 + 20000 > 200000"
    re.compile(
        rf"exceed context limit:\s*{_NUMBER}\s*\+\s*{_NUMBER}\s*>\s*{_NUMBER}", re.IGNORECASE
    ),
    # Gemini: "The input token count (N) exceeds the maximum number of tokens allowed (M)"
    re.compile(
        rf"input token count[^\d]{{0,20}}{_NUMBER}\D{{0,10}}exceeds the maximum number of "
        rf"tokens allowed[^\d]{{0,20}}{_NUMBER}",
        re.IGNORECASE,
    ),
)
_OPENAI_LIMIT = re.compile(rf"maximum context length is\s*{_NUMBER}\s*tokens", re.IGNORECASE)
_OPENAI_SENT = re.compile(
    rf"(?:messages resulted in|you requested|prompt contains|input contains|"
    rf"your request has|requested)\s*{_NUMBER}\s*tokens",
    re.IGNORECASE,
)
_OPENAI_PARTS = re.compile(
    rf"\(\s*{_NUMBER}\s*in (?:the )?messages,?\s*{_NUMBER}\s*in (?:the )?completion",
    re.IGNORECASE,
)
"""OpenAI's "you requested N tokens (X in the messages, Y in the completion)": the
messages' own count, and the reply the request reserved (as Anthropic's "input +
max_tokens > limit", the input may take the window less the reply)."""
_PHRASES = re.compile(
    r"context_length_exceeded|context[ _]window[ _]exceeded|maximum context length|"
    r"prompt is too long|exceed(?:s|ed)? (?:the )?context (?:limit|window|length)|"
    r"exceeds the available context size|input is too long|"
    r"exceeds the maximum number of tokens allowed|too many (?:input )?tokens|"
    r"reduce the length of the messages|context length exceeded",
    re.IGNORECASE,
)
_NOT_OVERFLOW = re.compile(
    r"per min|per day|rate.?limit|tokens? per|TPM|RPM|quota|output tokens", re.IGNORECASE
)
"""A refusal that says these is a rate limit or an output cap, not an overflow."""


@attrs.frozen
class Overflow:
    """A provider's refusal of a request too long for its model, as it stated it (see
    :func:`context_overflow`)."""

    tokens: int | None
    """The provider's count of the refused request's input, when it says (without the
    reply it reserved when it states the two apart; :attr:`limit` is then the window
    less that reply)."""
    limit: int | None
    """The model's window as the provider states it, when it says."""
    message: str
    """The refusal's text."""

    def budget(self, sent: int, current: int | None = None) -> int:
        """The budget, in a caller's counted tokens, that the refused request fits:
        ``sent`` is what the caller counted for it, ``current`` the budget it had (never
        exceeded). With the provider's count ``N`` and maximum ``M``, ``sent * M / N``;
        with the maximum alone, that maximum when below ``sent``; else three quarters of
        ``sent``; each less :data:`MARGIN`.

        Raises:
            ConfigurationError: ``sent`` or ``current`` is not an int (a float, NaN,
                infinity; a negative one counts as 1).

        Examples:
            >>> Overflow(130_000, 128_000, "").budget(100_000)
            88615
        """
        sent = max(1, require_int(sent, "Overflow.budget: sent", minimum=None))
        if current is not None:
            current = require_int(current, "Overflow.budget: current", minimum=None)
        if self.tokens is not None and self.tokens > 0 and self.limit is not None:
            learned = sent * self.limit // self.tokens
        elif self.limit is not None and self.limit < sent:
            learned = self.limit  # the counter overcounts, or nothing was counted
        else:
            learned = scale(sent, _CUT)
        budget = learned - scale(learned, MARGIN)
        if current is not None:
            budget = min(budget, current)
        return max(1, budget)


def _int(text: str) -> int:
    """A refusal's number (``"130,542"``), read by its length first: more than
    :data:`_DIGITS` digits is :data:`HUGE` (``int()`` of thousands of digits raises)."""
    digits = text.replace(",", "").replace("_", "").lstrip("0")
    if len(digits) > _DIGITS:
        return HUGE
    return int(digits or "0")


def _texts(exc: BaseException) -> list[str]:
    """What one exception says: its text, and an SDK error's ``code``, ``message`` and
    ``body`` (pydantic-ai's ``ModelHTTPError`` carries the body too)."""
    try:
        texts = [str(exc)]
    except Exception:  # an exception whose __str__ raises: its attributes may still say
        texts = []
    for name in ("code", "message", "body", "type"):
        value = getattr(exc, name, None)
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict | list):
            try:
                texts.append(json.dumps(value, default=str))
            except (TypeError, ValueError):  # pragma: no cover - a body of odd objects
                texts.append(repr(value))
    return texts


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and its causes (``__cause__``, else ``__context__``), a few deep."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(seen) < _DEPTH and all(current is not s for s in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _counts(text: str) -> tuple[int | None, int | None]:
    """The provider's count and maximum, when ``text`` states them."""
    for index, pattern in enumerate(_COUNTS):
        match = pattern.search(text)
        if match is None:
            continue
        numbers = [_int(g) for g in match.groups()]
        if index == 1:  # input + reserved reply > limit: the input may take limit - reply
            return numbers[0], numbers[2] - numbers[1]
        return numbers[0], numbers[1]
    limit = _OPENAI_LIMIT.search(text)
    parts = _OPENAI_PARTS.search(text)
    if limit is not None and parts is not None:  # the messages' share, and the window less
        messages, reply = _int(parts.group(1)), _int(parts.group(2))  # the reply asked for
        return messages, max(1, _int(limit.group(1)) - reply)
    sent = _OPENAI_SENT.search(text)
    return (
        _int(sent.group(1)) if sent is not None else None,
        _int(limit.group(1)) if limit is not None else None,
    )


def context_overflow(exc: BaseException) -> Overflow | None:
    """The overflow ``exc`` reports, or ``None`` when it is another failure.

    Recognises OpenAI's ``context_length_exceeded`` (and ``maximum context length is M
    tokens ... resulted in N tokens``, which OpenAI-compatible servers copy), Anthropic's
    ``prompt is too long: N tokens > M maximum`` and ``input length and `max_tokens`
    exceed context limit: N + R > M``, Gemini's ``input token count (N) exceeds the
    maximum number of tokens allowed (M)``, Bedrock's ``Input is too long for requested
    model`` and llama.cpp's ``exceeds the available context size``, in the exception's
    text, an SDK error's ``code``, ``message`` or ``body``, or any of its causes (a
    framework's wrapper is seen through). A rate limit that mentions tokens is not one.

    Examples:
        >>> refusal = ValueError("prompt is too long: 210000 tokens > 200000 maximum")
        >>> overflow = context_overflow(refusal)
        >>> overflow.tokens, overflow.limit
        (210000, 200000)
        >>> context_overflow(ValueError("connection reset")) is None
        True
    """
    for error in _chain(exc):
        for text in _texts(error):
            if not text or _PHRASES.search(text) is None:
                continue
            tokens, limit = _counts(text)
            if tokens is None and limit is None and _NOT_OVERFLOW.search(text):
                continue  # "too many tokens per min": a rate limit
            if tokens is not None and limit is not None and tokens <= limit:
                tokens = None  # a count that does not exceed the limit explains nothing
            # a stated window of 0 or less (a reserved reply as large as the window) is
            # a window nothing fits, not an unknown one
            return Overflow(tokens, limit if limit is None else max(0, limit), text)
    return None
