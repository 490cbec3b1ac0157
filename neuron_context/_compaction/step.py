"""The compaction step: decide → compact → start on a user message → check → measure.

Every caller compacts through :func:`compact_step`: the agent loop (persisting the result
in its history), the summarization and context-editing middlewares, the framework
adapters and the command line. One policy, written here once:

- **What is counted** is what the provider receives: the messages, the system prompt
  and the tool definitions (:class:`~neuron_context._counting.request.RequestCounter`).
  The strategy's trigger gets that count; ``compact`` gets the messages with the system
  prompt and a stand-in for the tool definitions before them as system messages (so a
  budget-aware strategy prices both and never drops them: the whole request fits its
  budget), which the step takes out of the result again.
- **A failure keeps the input.** Whatever the strategy raises, in its trigger or its
  compaction (a library error or an exception of a user's strategy), the step returns
  the input unchanged with the error, and logs a warning; with ``errors="raise"`` it
  raises instead (a :class:`~neuron_context.NeuronContextError` as it is, anything
  else wrapped in a :class:`~neuron_context.CompactionError`). Cancellation always
  propagates.
- **A request a provider accepts.** The result starts on a user message whenever the
  input did (:func:`~neuron_context.start_on_user`: Anthropic rejects anything else).
  A malformed result is a failure when the input was well formed (the strategy broke
  it: the input is kept); when the input was already malformed (strategies do not
  validate their input) the result is repaired, with a warning, so what is sent is
  well formed either way.
- **Calls awaiting their results are not compacted.** When the conversation ends on an
  exchange whose calls are still pending (a long-running tool, a call waiting for a
  human's approval: :func:`~neuron_context._messages.wellformed.pending_start`), that
  exchange is held out: the strategy compacts what comes before it, and it is put back
  after, as it was, so the result that arrives later still has its call. A call the
  conversation moved on from is not pending but an orphan: the adapters and the loop
  close it with an error result (``repair``) before it gets here.
- **Measured once.** The result carries the request's tokens before and after, so the
  loop's events, the adapters' log lines and the step's OpenTelemetry span
  (``compact_context``, see :mod:`neuron_context._tracing`) are made from one value.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias

import anyio
import attrs

from .. import _tracing as tracing
from .._counting.request import RequestCounter
from .._errors import (
    CompactionError,
    InvalidConversationError,
    NeuronContextError,
    described,
)
from .._log import logger
from .._messages.message import Message, ToolDefinition, history_repr
from .._messages.wellformed import pending_start, repair, start_on_user, validate
from .._prefix import shared_prefix
from .._stores.batch import offloading
from .._strategies.strategy import ContextStrategy

if TYPE_CHECKING:
    from .._tracing.spans import Attributes

__all__ = [
    "Errors",
    "StepReport",
    "StepResult",
    "StepStarted",
    "budget_of",
    "compact_step",
    "decide",
]

Errors: TypeAlias = Literal["keep", "raise"]
"""What a failed compaction does: keep the input (and report it), or raise."""


@attrs.frozen
class StepStarted:
    """A compaction begins (the trigger fired)."""

    strategy: str
    """The strategy's class name."""
    tokens_before: int
    """The request's tokens."""
    messages_before: int
    """The conversation's messages (the system prompt not included)."""


@attrs.frozen
class StepResult:
    """What one step did: the conversation to send, and the figures of what happened."""

    messages: Sequence[Message] = attrs.field(repr=history_repr)
    """The conversation to send (the system prompt not included): the compaction, or
    the input itself when the trigger did not fire or the compaction failed."""
    strategy: str
    """The strategy's class name."""
    tokens_before: int
    """The request's tokens before: messages, system prompt and tools."""
    tokens_after: int
    """The request's tokens after (``tokens_before`` when nothing changed)."""
    messages_before: int
    """Messages in the input conversation."""
    triggered: bool = False
    """Whether the strategy's trigger fired (a compaction was attempted)."""
    compacted: bool = False
    """Whether :attr:`messages` is a new conversation (not the input)."""
    error: BaseException | None = None
    """Why the compaction failed (the input was kept), or ``None``."""
    cancelled: bool = False
    """Whether the compaction was cancelled (the step then re-raises the cancellation)."""
    duration: float = 0.0
    """Seconds spent compacting."""
    prefix_kept: int = 0
    """The request's tokens before the first message the compaction changed (system
    prompt and tools included): what a provider's prompt cache still serves on the next
    call. ``tokens_before`` when nothing changed."""
    budget: int | None = None
    """The strategy's budget (its ``max_tokens``), when it has one."""

    @property
    def over_budget(self) -> int:
        """How far a compaction's result is over :attr:`budget` (0 when within it, or
        when nothing was compacted)."""
        if not self.compacted or self.budget is None:
            return 0
        return max(0, self.tokens_after - self.budget)

    @property
    def tokens_rewritten(self) -> int:
        """``tokens_after - prefix_kept``: what the next call sends anew (cache misses),
        the compaction's cost in the prompt cache."""
        return self.tokens_after - self.prefix_kept

    @property
    def failed(self) -> bool:
        """Whether the compaction failed or was cancelled."""
        return self.error is not None

    @property
    def messages_removed(self) -> int:
        """``messages_before - len(messages)``."""
        return self.messages_before - len(self.messages)

    @property
    def reason(self) -> str:
        """The failure as one line: ``"ErrorType: message"`` (``""`` when none)."""
        error = self.error
        if error is None:
            return ""
        if self.cancelled:
            return "cancelled"
        text = described(error)
        if isinstance(error, InvalidConversationError):
            text += " (a malformed conversation)"
        return text


StepReport: TypeAlias = Callable[[StepStarted | StepResult], None]
"""Receives a :class:`StepStarted` when a compaction begins and the :class:`StepResult`
of every step that began one (including a cancelled one, before it propagates)."""


def decide(
    strategy: ContextStrategy,
    messages: Sequence[Message],
    *,
    counter: RequestCounter,
    system_prompt: str | None = None,
    tools: Sequence[ToolDefinition] = (),
    tokens: int | None = None,
) -> StepResult:
    """The step's first half, synchronous: count the request and ask the trigger.

    The result has ``triggered=False`` when the strategy does not ask to compact (it is
    then the step's final result); otherwise hand it to :func:`compact_step` as
    ``decided``. A sync caller (a framework's sync hook) needs an event loop only then.
    A trigger (or count) that raises is a triggered result carrying the error:
    :func:`compact_step` then fails under its one failure policy, without compacting.
    """
    try:
        if tokens is None:
            tokens = counter.count(messages, system_prompt, tools)
        triggered = strategy.should_compact(messages, tokens)
    except Exception as exc:
        count = tokens if tokens is not None else 0
        return StepResult(
            messages,
            type(strategy).__name__,
            count,
            count,
            len(messages),
            triggered=True,
            error=exc,
            budget=budget_of(strategy),
        )
    return StepResult(
        messages,
        type(strategy).__name__,
        tokens,
        tokens,
        len(messages),
        triggered=triggered,
        budget=budget_of(strategy),
    )


def budget_of(strategy: object) -> int | None:
    """The budget ``strategy`` keeps to (its ``max_tokens``), when it has one."""
    value = getattr(strategy, "max_tokens", None)
    return value if isinstance(value, int) and value > 0 else None


async def compact_step(
    strategy: ContextStrategy,
    messages: Sequence[Message],
    *,
    counter: RequestCounter,
    system_prompt: str | None = None,
    tools: Sequence[ToolDefinition] = (),
    tokens: int | None = None,
    decided: StepResult | None = None,
    errors: Errors = "keep",
    report: StepReport | None = None,
    label: str = "compaction",
    traced: Callable[[], Attributes] | None = None,
) -> StepResult:
    """Compact the conversation ``messages`` with ``strategy`` if its trigger fires.

    Args:
        strategy: decides (``should_compact``) and compacts.
        messages: the conversation, without the system prompt.
        counter: counts the request.
        system_prompt: sent before the messages; counted, handed to the strategy as a
            leading system message, never edited.
        tools: the tool definitions sent with the request; counted.
        tokens: the request's tokens when the caller counted them already.
        decided: what :func:`decide` said for these messages (the trigger is not asked
            again).
        errors: what a failure does (see the module docstring).
        report: told when a compaction starts and how it ended.
        label: who compacts, for the log lines (a middleware's name, ``"context"``).
        traced: further attributes of the step's span (the recovery step's refusal),
            read only when a span is recorded.

    Raises:
        NeuronContextError: the compaction failed and ``errors="raise"``.
    """
    if decided is None:
        decided = decide(
            strategy,
            messages,
            counter=counter,
            system_prompt=system_prompt,
            tools=tools,
            tokens=tokens,
        )
    if not decided.triggered:
        return decided
    tokens = decided.tokens_before
    name = decided.strategy
    before = decided.messages_before
    if report is not None:
        report(StepStarted(name, tokens, before))
    system = counter.system_message(system_prompt)
    stand_ins = [m for m in (system, counter.tools_message(tools)) if m is not None]
    started = time.perf_counter()

    def finished(
        result: Sequence[Message] | None = None,
        *,
        error: BaseException | None = None,
        cancelled: bool = False,
    ) -> StepResult:
        kept = tokens
        if result is not None:
            same = shared_prefix(result, messages)
            kept = counter.count(result[:same], system_prompt, tools)
        return attrs.evolve(
            decided,
            messages=messages if result is None else result,
            tokens_after=tokens if result is None else counter.count(result, system_prompt, tools),
            prefix_kept=kept,
            compacted=result is not None,
            error=error,
            cancelled=cancelled,
            duration=time.perf_counter() - started,
        )

    held = pending_start(messages)
    body = messages if held is None else messages[:held]
    with tracing.compaction(name, label, tokens, before, traced) as span:

        def tell(outcome: StepResult) -> StepResult:
            """Say how the step ended: to its span, then to ``report``."""
            span.compaction(outcome)
            if report is not None:
                report(outcome)
            return outcome

        try:
            sent = [*stand_ins, *body] if stand_ins else body
            result = await _compact(strategy, sent, decided.error)
            if stand_ins:
                result = [m for m in result if not any(m is s for s in stand_ins)]
            result = start_on_user(result, body)
            if held is not None:
                result = [*result, *messages[held:]]  # the pending exchange, as it was
            outcome = (
                finished()
                if _same(result, messages)
                else finished(_well_formed(result, messages, name))
            )
        except anyio.get_cancelled_exc_class() as exc:
            tell(finished(error=exc, cancelled=True))
            raise
        except Exception as exc:
            outcome = tell(finished(error=exc))
            if errors == "keep":
                logger.warning(
                    "%s: compaction by %s failed, input kept: %s", label, name, outcome.reason
                )
            else:
                if isinstance(exc, NeuronContextError):
                    raise
                msg = f"compaction by {name} failed: {outcome.reason}"
                raise CompactionError(msg) from exc
            return outcome
        return tell(outcome)


async def _compact(
    strategy: ContextStrategy, sent: Sequence[Message], failed_trigger: BaseException | None
) -> list[Message]:
    """The strategy's compaction of ``sent`` as one offloading compaction (a failing
    store fails once, caps spare it), or the trigger's failure raised."""
    if failed_trigger is not None:
        raise failed_trigger
    with offloading():
        return await strategy.compact(sent)


def _same(result: list[Message], messages: Sequence[Message]) -> bool:
    """Whether ``result`` is ``messages`` again (the same or equal messages, in order)."""
    if len(result) != len(messages):
        return False
    return result == (messages if type(messages) is list else list(messages))


def _well_formed(result: list[Message], messages: Sequence[Message], name: str) -> list[Message]:
    """``result`` if well formed; repaired when the input was malformed too; else the
    :class:`InvalidConversationError` saying what the strategy broke."""
    try:
        validate(result)
    except InvalidConversationError as exc:
        try:
            validate(messages)
        except InvalidConversationError:
            logger.warning("%s returned a malformed conversation (%s); repaired", name, exc)
            return repair(result)
        raise
    return result
