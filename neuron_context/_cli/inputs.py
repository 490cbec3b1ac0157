"""What a command works on: its transcripts, counter, summarizer and budget.

Each comes from the arguments, with the demo's defaults when ``--demo`` is given: the
bundled transcripts and a budget of the system messages plus a quarter of the rest,
which is tight enough that every stack must compact.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import attrs

from .._counting.counter import BaseCounter
from .._counting.heuristic import TokenCounter
from .._errors import ConfigurationError, InvalidConversationError, NeuronContextError, show
from .._messages.message import Message, ToolDefinition
from .._messages.wellformed import repair, validate
from .._validators import MAX_INT
from ..data import load_record, transcript_names
from ..formats._transcripts.files import (
    Transcript,
    expand,
    file_error,
    parse_document,
    read_file,
)
from ..formats._transcripts.storage import check_file, printable
from ..providers._base import Provider
from .simulate import fraction_budget

__all__ = [
    "COMPARED_STACKS",
    "DEMO_FRACTION",
    "DEMO_TRANSCRIPT",
    "budget",
    "budget_text",
    "counter",
    "provider",
    "transcripts",
]

DEMO_TRANSCRIPT = "sweagent-pydicom__pydicom-1458"
"""The bundled transcript that ``count --demo`` and ``compact --demo`` use."""
DEMO_FRACTION = 0.25
"""The demo's budget: the system messages plus this share of the rest."""
COMPARED_STACKS = ("default", "window:12")
"""What ``simulate`` compares when no ``--strategy`` is given (the demo too), beside every
peer whose package is installed (LangChain's ``trim_messages`` and middlewares)."""


def _demo(name: str, *, fmt: str | None) -> Transcript:
    return parse_document(load_record(name), f"demo:{name}", fmt=fmt, option="--format")


def well_formed(transcript: Transcript, *, fix: bool) -> Transcript:
    """``transcript`` checked well formed, or repaired (``fix``, ``--repair``).

    Raises:
        ConfigurationError: it is not well formed and ``fix`` is false; one line naming
            the transcript and the offending ids.
    """
    messages = list(transcript.messages)
    if fix:
        messages = repair(messages)
    else:
        try:
            validate(messages)
        except InvalidConversationError as exc:
            raise file_error(transcript.name, f"{exc} (pass --repair to fix it)") from exc
    return attrs.evolve(transcript, messages=tuple(messages))


def transcripts(args: argparse.Namespace, *, many: bool) -> list[Transcript]:
    """The transcripts the arguments name (files, folders, ``--demo``); ``many``: the
    command takes several (``count``, ``simulate``)."""
    fmt: str | None = args.format
    files: list[Path] = (args.files or []) if many else ([args.files] if args.files else [])
    if args.demo:
        names = transcript_names() if many and args.command == "simulate" else [DEMO_TRANSCRIPT]
        demo = [_demo(name, fmt=fmt) for name in names]
    else:
        demo = []
    if not files and not demo:
        msg = "give a transcript file (or --demo for a bundled one)"
        raise ConfigurationError(msg)
    out = [*demo]
    for path in expand(files):
        out.extend(read_file(path, fmt=fmt, option="--format"))
    return [well_formed(transcript, fix=args.repair) for transcript in out]


DEFAULT_TOKENIZER = "o200k_base"
"""What ``compact`` and ``simulate`` count with when no ``--tokenizer`` is given: the
exact counts ``default_stack`` makes by default, so a budget means real tokens."""


def counter(spec: str | None) -> tuple[str, BaseCounter]:
    """``--tokenizer``'s counter and its name: ``heuristic`` (the fast bytes / 4
    estimate), ``o200k_base`` (when ``spec`` is ``None``), ``cl100k_base`` or a
    ``tokenizer.json``."""
    if spec == "heuristic":
        return "heuristic", TokenCounter()
    if spec is None:
        spec = DEFAULT_TOKENIZER
    from .._counting.tokenizer import TokenizerCounter

    if spec not in ("o200k_base", "cl100k_base"):
        try:
            check_file(spec)
        except ConfigurationError as exc:
            msg = f"--tokenizer {exc}"
            raise ConfigurationError(msg) from exc
    try:
        if spec in ("o200k_base", "cl100k_base"):
            return spec, TokenizerCounter.from_encoding(spec)
        return printable(Path(spec).name), TokenizerCounter.from_file(spec)
    except (NeuronContextError, OSError, ValueError) as exc:
        msg = f"--tokenizer {spec}: {exc}"
        raise ConfigurationError(msg) from exc


def provider(spec: str) -> Provider:
    """``--provider``'s summarizer: ``extractive``, ``openai:MODEL`` or ``anthropic:MODEL``."""
    kind, _, model = spec.partition(":")
    try:
        if kind == "extractive" and not model:
            from .._summary.extractive import ExtractiveSummarizer

            return ExtractiveSummarizer()
        if kind == "openai" and model:
            from ..providers import OpenAIProvider

            return OpenAIProvider(model)
        if kind == "anthropic" and model:
            from ..providers import AnthropicProvider

            return AnthropicProvider(model)
    except (NeuronContextError, ImportError) as exc:
        msg = f"--provider {spec}: {exc}"
        raise ConfigurationError(msg) from exc
    msg = f"--provider must be extractive, openai:MODEL or anthropic:MODEL, got {show(spec)}"
    raise ConfigurationError(msg)


def budget(
    args: argparse.Namespace,
    messages: Sequence[Message],
    counter: BaseCounter,
    tools: Sequence[ToolDefinition] = (),
) -> int:
    """The budget for ``messages`` (sent with ``tools``): ``--max-tokens``, or
    ``--fraction`` of them."""
    if args.max_tokens is not None:
        if not 1 <= args.max_tokens <= MAX_INT:
            msg = (
                f"--max-tokens must be a whole number from 1 to {MAX_INT:,}, got {args.max_tokens}"
            )
            raise ConfigurationError(msg)
        return int(args.max_tokens)
    fraction = args.fraction if args.fraction is not None else _default_fraction(args)
    if fraction is None:
        msg = "give a budget: --max-tokens N or --fraction F"
        raise ConfigurationError(msg)
    if not 0 < fraction <= 1:
        msg = f"--fraction must be in (0, 1], got {fraction}"
        raise ConfigurationError(msg)
    return fraction_budget(messages, fraction, counter, tools)


def _default_fraction(args: argparse.Namespace) -> float | None:
    """The share of each transcript that is the budget when none is given: the demo's
    and ``simulate``'s (a comparison needs a budget that makes every stack compact)."""
    return DEMO_FRACTION if args.demo or args.command == "simulate" else None


def budget_text(args: argparse.Namespace) -> str:
    """The budget in words, for reports."""
    if args.max_tokens is not None:
        return f"{args.max_tokens:,} tokens"
    if args.fraction is not None:
        return f"the system messages + {args.fraction:.0%} of the rest of each transcript"
    text = f"the system messages + {DEMO_FRACTION:.0%} of the rest of each transcript"
    return text if args.demo else f"{text} (the default; --max-tokens or --fraction sets it)"
