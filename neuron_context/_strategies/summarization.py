"""Summarization: replace older messages with one summary written by a model.

The cut comes from the shared conversation structure, so a tool use is never separated
from its result. The summary request is a readable transcript (see
:mod:`neuron_context._transcript`), so it needs no tool definitions. A summary already
in the history is handed to the provider to update (anchored incremental summaries), so
the output holds exactly one. Failures raise :class:`SummarizationError` and leave the
caller's messages untouched; a summary that would not make the history smaller is not
used.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import anyio
import attrs

from .._errors import ConfigurationError, ProviderError, SummarizationError, described
from .._log import log_compaction, logger
from .._messages.checks import CheckOnFailure
from .._messages.content import Compaction
from .._messages.conversation import Structure
from .._messages.message import Message, Role, ToolDefinition
from .._stores.index import index_text
from .._stores.store import Store, optional_store
from .._summary.format import ALIGNED_MARK, ALIGNED_REQUEST, DEFAULT_INSTRUCTIONS
from .._summary.transcript import entries_of, render_request
from .._validators import (
    Validator,
    bool_,
    instance_of,
    non_negative_int,
    number,
    optional,
    positive_int,
    require_sequence_of,
    string,
)
from ..providers._base import CompletionRequest, CompletionResponse, Provider, StopReason
from .strategy import BudgetedStrategy, max_tokens_field

__all__ = ["DEFAULT_INSTRUCTIONS", "SummarizationStrategy"]


def _seconds(*, positive: bool) -> Validator:
    """A finite number of seconds (> 0 with ``positive``, else >= 0)."""
    return number(minimum=0, exclusive_minimum=positive)


def _to_definitions(value: Iterable[ToolDefinition]) -> tuple[ToolDefinition, ...]:
    return require_sequence_of(
        value, "SummarizationStrategy.tools", ToolDefinition, "tool definitions"
    )


def _not_blank(instance: object, attribute: attrs.Attribute[Any], value: str) -> None:
    if not value.strip():
        msg = f"{type(instance).__name__}.{attribute.name} must not be blank"
        raise ConfigurationError(msg)


def _instructions_repr(value: str) -> str:
    return "DEFAULT_INSTRUCTIONS" if value == DEFAULT_INSTRUCTIONS else repr(value)


@attrs.frozen
class _Plan:
    """What one compaction will do, computed before any provider call."""

    systems: list[Message]
    """System messages of the summarized part, in order (they go first)."""
    summarized: list[Message]
    """Non-system, non-summary messages of the summarized part."""
    previous: str | None
    """The text of every existing summary, joined; ``None`` when there is none."""
    kept: list[Message]
    """The messages after the cut, existing summaries taken out."""
    request: CompletionRequest


@attrs.define
class SummarizationStrategy(BudgetedStrategy):
    """Replaces the older non-system messages with one summary written by ``provider``.

    The newest ``preserve_recent`` non-system messages are kept as they are (existing
    summaries do not count); the cut before them moves forward past any tool exchange
    it would split. The older part's system messages stay, in order, followed by one
    ``USER`` message holding one :class:`~neuron_context.Compaction` with the summary,
    then the kept messages. Every summary already in the history is handed to the
    provider as the previous summary to update and is not repeated, so the output holds
    exactly one. When nothing would be summarized, no request is made and an equal list
    is returned.

    Failures raise :class:`~neuron_context.SummarizationError` (the cause chained) and
    never change the caller's messages: the provider raises, a call takes longer than
    ``timeout``, or the summary is empty or cut off (``stop_reason == "max_tokens"``).
    Timeouts and :class:`~neuron_context.errors.ProviderError` s marked ``retryable`` are
    retried up to ``retries`` times, waiting ``retry_delay`` seconds and doubling (or
    the provider's ``retry_after``, when longer); anything else fails at once.
    Cancellation propagates as it is. A summary that would not make the history smaller
    is not used: the messages come back unchanged (logged at INFO). Put this strategy
    first in a :class:`~neuron_context.CompositeStrategy` with a cheaper one after it, or
    in a :class:`~neuron_context.FallbackStrategy`, so the budget is still met.

    Examples:
        >>> from neuron_context.testing import FunctionProvider
        >>> strategy = SummarizationStrategy(
        ...     FunctionProvider(lambda request: "The user wants a haiku."), 4, 100_000
        ... )
    """

    provider: Provider = attrs.field(validator=instance_of(Provider, "a Provider"))
    """Writes the summaries."""
    preserve_recent: int = attrs.field(validator=non_negative_int())
    """How many of the newest non-system messages to keep as they are, at most."""
    max_tokens: int = max_tokens_field()
    """The trigger: compact when the history costs more than this."""
    instructions: str = attrs.field(
        default=DEFAULT_INSTRUCTIONS,
        kw_only=True,
        validator=[string(nonempty=True), _not_blank],
        repr=_instructions_repr,
    )
    """The system prompt of each summary request."""
    max_summary_tokens: int = attrs.field(default=1024, kw_only=True, validator=positive_int())
    """The ``max_tokens`` of each summary request."""
    model: str | None = attrs.field(
        default=None, kw_only=True, validator=optional(string(nonempty=True))
    )
    """The model of each summary request; ``None`` means the provider's default."""
    timeout: float | None = attrs.field(
        default=None, kw_only=True, validator=optional(_seconds(positive=True))
    )
    """Seconds one provider call may take; ``None`` means no limit."""
    retries: int = attrs.field(default=2, kw_only=True, validator=non_negative_int())
    """How many times a retryable failure is retried after the first attempt."""
    retry_delay: float = attrs.field(default=0.5, kw_only=True, validator=_seconds(positive=False))
    """Seconds before the first retry; doubled before each next one."""
    cache_aligned: bool = attrs.field(default=False, kw_only=True, validator=bool_())
    """Send the agent's own prefix instead of a transcript: the system messages at the
    start as the system prompt, ``tools``, the older messages as they are, then one user
    message with the instructions. A provider's prompt cache then serves most of the
    summary request (it is the prefix the agent's last call sent); the summary is the same
    kind of text. Off by default: the transcript request works with any provider and
    needs no tool definitions."""
    tools: tuple[ToolDefinition, ...] = attrs.field(
        default=(), kw_only=True, converter=_to_definitions
    )
    """The agent's tool definitions, sent with a ``cache_aligned`` request (the prefix
    the provider caches includes them, and some providers require them when the
    messages hold tool calls)."""
    max_retry_delay: float = attrs.field(
        default=30.0, kw_only=True, validator=_seconds(positive=False)
    )
    """The longest wait before a retry: the doubling stops there, and a provider asking
    to wait longer (``retry_after``) fails at once, so a fallback can run instead."""
    store: Store | None = attrs.field(default=None, kw_only=True, validator=optional_store())
    """Where the messages a summary replaces go, entry by entry: the summary then ends
    with an index of them, a line per entry (``- read_file a.py (812 tokens) — recall:
    <key>``; the oldest rolled up when the lines outgrow a recall page)."""

    # -- planning -----------------------------------------------------------------------

    def _plan(self, messages: Sequence[Message]) -> _Plan | None:
        structure = Structure.of(messages)
        cut = structure.cut_keeping_last(self.preserve_recent, skip_summaries=True)
        systems: list[Message] = []
        summarized: list[Message] = []
        previous: list[str] = []
        for message in messages[:cut]:
            if message.role is Role.SYSTEM:
                systems.append(message)
                continue
            previous.extend(_summaries_in(message))
            if not _only_summaries(message):
                summarized.append(message)
        if not summarized:
            return None
        kept: list[Message] = []
        for message in messages[cut:]:
            if message.role is Role.SYSTEM or not message.is_compaction:
                kept.append(message)
                continue
            previous.extend(_summaries_in(message))
            rest = tuple(b for b in message.content if not isinstance(b, Compaction))
            if rest:  # a summary block sharing a message: keep the rest of the message
                kept.append(attrs.evolve(message, content=rest))
        joined = "\n\n".join(text for text in previous if text.strip()) or None
        if self.cache_aligned:
            request = self._aligned_request(messages[:cut])
        else:
            entries = entries_of(messages[:cut], structure)
            request = CompletionRequest(
                [Message.user(render_request(joined, entries))],
                system=self.instructions,
                model=self.model,
                max_tokens=self.max_summary_tokens,
                temperature=0.0,
            )
        return _Plan(systems, summarized, joined, kept, request)

    def _aligned_request(self, part: Sequence[Message]) -> CompletionRequest:
        """The agent's own prefix (its system prompt, tools and the messages as they are)
        and one instruction message: a provider's prompt cache serves the prefix."""
        leading = 0
        while leading < len(part) and part[leading].role is Role.SYSTEM:
            leading += 1
        system = "\n\n".join(m.text for m in part[:leading]) or None
        instruction = f"{ALIGNED_MARK}\n{self.instructions}\n\n{ALIGNED_REQUEST}"
        return CompletionRequest(
            [*part[leading:], Message.user(instruction)],
            system=system,
            tools=self.tools,
            model=self.model,
            max_tokens=self.max_summary_tokens,
        )

    def summary_request(self, messages: Sequence[Message]) -> CompletionRequest | None:
        """The request :meth:`compact` would send, or ``None`` when nothing would be
        summarized."""
        plan = self._plan(messages)
        return plan.request if plan is not None else None

    # -- compacting ---------------------------------------------------------------------

    async def compact(self, messages: Sequence[Message]) -> list[Message]:
        """Summarize the older messages; see the class for what is kept and what fails.

        Raises:
            SummarizationError: the provider failed, timed out, or returned an empty
                or cut-off summary (``messages`` are left as they were).
        """
        with CheckOnFailure(messages, "SummarizationStrategy"):
            plan = self._plan(messages)
        if plan is None:
            return list(messages)
        summary = await self._summarize(plan.request)
        if self.store is not None:
            summary = self._referenced(summary, messages, plan)
        output = [
            *plan.systems,
            Message(role=Role.USER, content=(Compaction(content=summary),)),
            *plan.kept,
        ]
        before, after = self.token_estimate(messages), self.token_estimate(output)
        if after >= before:
            logger.info(
                "SummarizationStrategy: the summary would not make the history smaller "
                "(%d -> %d tokens); keeping the messages unchanged",
                before,
                after,
                extra={"strategy": "SummarizationStrategy", "tokens_before": before},
            )
            return list(messages)
        log_compaction(
            "SummarizationStrategy",
            self.counter,
            messages,
            output,
            {
                "summarized": len(plan.summarized),
                "kept": len(plan.kept),
                "summary_tokens": self.counter.estimate_text(summary),
                "updated_previous": plan.previous is not None,
            },
        )
        return output

    def _referenced(self, summary: str, messages: Sequence[Message], plan: _Plan) -> str:
        """``summary`` with the index of the messages it replaces (offloaded to the
        store entry by entry; the summary alone when a put failed)."""
        assert self.store is not None
        kept = {id(message) for message in (*plan.systems, *plan.kept)}
        replaced = [message for message in messages if id(message) not in kept]
        reference = index_text(
            self.store, replaced, self.counter, "SummarizationStrategy", kept=messages
        )
        return summary if reference is None else f"{summary}\n\n{reference}"

    async def _summarize(self, request: CompletionRequest) -> str:
        attempts = self.retries + 1
        delay = self.retry_delay
        for attempt in range(1, attempts + 1):
            backoff = min(delay, self.max_retry_delay)
            try:
                response = await self._call(request)
            except TimeoutError as exc:
                error: Exception = exc
                wait = backoff
                problem = (
                    f"timed out after {self.timeout} s"
                    if self.timeout is not None
                    else f"timed out: {exc}"
                )
            except ProviderError as exc:
                if not exc.retryable:
                    msg = f"the summary provider failed: {exc}"
                    raise SummarizationError(msg) from exc
                error, wait = exc, max(backoff, exc.retry_after or 0.0)
                problem = f"failed: {exc}"
            except Exception as exc:
                msg = f"the summary provider failed: {described(exc)}"
                raise SummarizationError(msg) from exc
            else:
                return _summary_text(response)
            if attempt == attempts or wait > self.max_retry_delay:
                tries = f"{attempt} attempt{'s' if attempt > 1 else ''}"
                msg = f"the summary provider {problem} ({tries})"
                raise SummarizationError(msg) from error
            logger.info(
                "SummarizationStrategy: the summary provider %s; retrying in %.2f s (%d/%d)",
                problem,
                wait,
                attempt,
                self.retries,
            )
            await anyio.sleep(wait)
            delay *= 2
        msg = "unreachable"  # pragma: no cover
        raise AssertionError(msg)  # pragma: no cover

    async def _call(self, request: CompletionRequest) -> CompletionResponse:
        scope: AbstractContextManager[object] = (
            anyio.fail_after(self.timeout) if self.timeout is not None else nullcontext()
        )
        with scope:
            return await self.provider.complete(request)


def _summaries_in(message: Message) -> list[str]:
    return [block.content for block in message.content if isinstance(block, Compaction)]


def _only_summaries(message: Message) -> bool:
    return all(isinstance(block, Compaction) for block in message.content) and bool(message.content)


def _summary_text(response: object) -> str:
    if not isinstance(response, CompletionResponse):
        msg = f"the summary provider returned a {type(response).__name__}, not a CompletionResponse"
        raise SummarizationError(msg)
    if response.stop_reason is StopReason.MAX_TOKENS:
        msg = (
            "the summary provider's reply was cut off at max_tokens "
            "(raise max_summary_tokens); the summary is not used"
        )
        raise SummarizationError(msg)
    text = response.text.strip()
    if not _visible(text):
        msg = "the summary provider returned an empty summary (nothing visible in it)"
        raise SummarizationError(msg)
    return text


def _visible(text: str) -> bool:
    """Whether ``text`` holds a character a reader can see: not only whitespace, format
    characters (zero-width spaces, byte-order marks), controls or separators."""
    return any(not char.isspace() and unicodedata.category(char)[0] not in "CZ" for char in text)
