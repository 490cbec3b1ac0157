"""Replay a transcript as an agent loop would run it, and measure what each call costs.

Compacting a whole transcript once says little about a stack: an agent calls it before
every model call, keeps what it returns, and pays for every request. So the replay
grows the history by the transcript's own messages, one at a time, and before each model
call (each assistant message of the transcript) runs the compaction step the agent loop
runs (the stack's ``should_compact``, then ``compact``) and keeps the result, as the loop
does (a compaction that fails keeps the history it was given). What the model would
have received is then measured:

- its tokens (the tool definitions the transcript's request holds included, as the agent
  loop counts them), and whether they exceed the budget;
- whether it starts on a user message where the uncompacted history did (Anthropic
  rejects a conversation whose first message is an assistant message);
- whether it still holds the task (the first user request) and the newest user request,
  by their first 200 characters, verbatim or quoted in a summary (user messages that
  start with ``<``, ``[`` or ``###`` are harness notices, not requests);
- the tokens a provider's prompt cache could reuse: those of the longest run of leading
  messages equal to the previous request's (every compaction rewrites the prompt and
  loses the cache, which is why a stack compacts to a target below its trigger);
- the input cost, with cached tokens at a tenth of the price, as providers bill cache
  reads: ``tokens - 0.9 * cached``;
- with a :class:`~neuron_context.counting.CacheCostModel` (``--cost-model``), the net
  cost after the cache's reads and writes, with ``gap`` seconds of wall clock between
  calls (a prefix whose entry expired in the gap is written again, not read), the cache
  hit rate, and the compaction calls' own cost (a summarizer's input and output). A
  stack with a :class:`~neuron_context.strategies.CacheSchedule` is told the gap before
  each call, as a loop would tell it.

A *replayer* decides what each request is: a stack (compacting, keeping the result), or
another framework's context manager run the way that framework runs it
(:mod:`.contenders`). Several transcripts are summed like one.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence

import attrs

from .._compaction.step import compact_step
from .._counting.counter import BaseCounter
from .._counting.pricing import CacheCostModel
from .._counting.request import RequestCounter
from .._messages.content import Compaction, Text, ToolResult
from .._messages.conversation import first_is_user
from .._messages.message import Message, Role, ToolDefinition
from .._prefix import shared_prefix
from .._strategies.default.schedule import CacheSchedule
from .._strategies.strategy import ContextStrategy, counter_of
from ..formats._transcripts.files import Transcript
from .metered import Metered

__all__ = [
    "Call",
    "Replayer",
    "Run",
    "StackReplayer",
    "Totals",
    "fraction_budget",
    "replay",
    "user_request",
]

NEEDLE = 200
"""Characters of a user request looked for in each request."""
CACHE_PRICE = 0.1
"""The price of a cached input token, relative to an uncached one."""
_NOTICE = ("<", "[", "###")


class Replayer(abc.ABC):
    """Decides what each model call receives."""

    label: str
    """What the reports call it."""
    failures: int = 0
    """Compactions that raised (the history was kept as it was)."""
    gap: float | None = None
    """Seconds between calls, told to a stack's cache schedule (``None``: not told)."""
    summarizer_tokens: tuple[int, int] = (0, 0)
    """Input and output tokens of the summarizer calls so far (a metered summarizer's)."""

    @abc.abstractmethod
    def start(self, budget: int, tools: Sequence[ToolDefinition] = ()) -> None:
        """Prepare for a new transcript with ``budget`` tokens, whose requests send
        ``tools``."""

    @abc.abstractmethod
    async def request(self, history: list[Message]) -> tuple[list[Message], list[Message], bool]:
        """For ``history``: ``(request, history to keep, compacted)``."""


class StackReplayer(Replayer):
    """A strategy stack, run before each call; its result is kept."""

    def __init__(
        self,
        label: str,
        build: Callable[[int], ContextStrategy],
        *,
        meter: Metered | None = None,
    ) -> None:
        self.label = label
        self._build = build
        self._meter = meter
        self._stack: ContextStrategy | None = None
        self._requests: RequestCounter | None = None
        self._tools: Sequence[ToolDefinition] = ()

    def start(self, budget: int, tools: Sequence[ToolDefinition] = ()) -> None:
        self._stack = stack = self._build(budget)
        self._requests = RequestCounter(counter_of(stack))
        self._tools = tools

    async def request(self, history: list[Message]) -> tuple[list[Message], list[Message], bool]:
        stack = self._stack
        if stack is None:  # pragma: no cover - replay() always starts first
            msg = "StackReplayer.start() was not called"
            raise RuntimeError(msg)
        requests = self._requests or RequestCounter(counter_of(stack))
        schedule = getattr(stack, "schedule", None)
        if self.gap is not None and isinstance(schedule, CacheSchedule):
            schedule.note_gap(self.gap)
        step = await compact_step(
            stack, history, counter=requests, tools=self._tools, label=self.label
        )
        if self._meter is not None:
            self.summarizer_tokens = self._meter.tokens
        if step.failed:
            self.failures += 1
        if not step.triggered or step.failed:
            return history, history, False
        compacted = list(step.messages)
        return compacted, compacted, True


@attrs.frozen
class Call:
    """One model call of a replay."""

    transcript: str
    """The transcript it belongs to."""
    tokens: int
    """What the model received."""
    budget: int
    """The budget of that transcript."""
    compacted: bool
    """Whether the history was compacted before this call."""
    cached: int
    """Tokens of the leading messages equal to the previous request's."""
    on_user: bool
    """Starts on a user message, or the uncompacted history did not either."""
    task_kept: bool
    """Still holds the first user request (or there was none yet)."""
    last_kept: bool
    """Still holds the newest user request (or there was none yet)."""
    served: int = 0
    """Tokens the cache served under the cost model (``cached``, or 0 when the entry
    expired in the gap between calls)."""
    net_cost: float = 0.0
    """Input cost under the cost model: reads of ``served``, writes of the rest."""
    compaction_cost: float = 0.0
    """What the compaction before this call cost of its own (its summarizer's calls)."""

    @property
    def cost(self) -> float:
        """Input cost in uncached-token units."""
        return self.tokens - (1 - CACHE_PRICE) * self.cached


@attrs.frozen
class Totals:
    """The figures of a replay, summed over its transcripts."""

    calls: int
    compactions: int
    failed: int
    peak: int
    final: int
    over_budget: int
    not_on_user: int
    task_kept: int
    last_kept: int
    input_tokens: int
    cached_tokens: int
    input_cost: float
    served_tokens: int = 0
    """Tokens the cache served under the cost model (0 without one)."""
    net_input_cost: float = 0.0
    """Input cost after the cache's reads and writes, under the cost model."""
    compaction_cost: float = 0.0
    """The compaction calls' own cost (summarizer input and output)."""

    @property
    def cache_hit_rate(self) -> float:
        """The share of input tokens the cache served (under the cost model)."""
        return self.served_tokens / self.input_tokens if self.input_tokens else 0.0

    @property
    def net_cost(self) -> float:
        """Net input cost plus the compaction calls' own."""
        return self.net_input_cost + self.compaction_cost

    @classmethod
    def of(cls, calls: Sequence[Call], finals: Sequence[int], failed: int) -> Totals:
        """Sum ``calls``; ``finals`` holds the last call's tokens of each transcript."""
        return cls(
            calls=len(calls),
            compactions=sum(c.compacted for c in calls),
            failed=failed,
            peak=max((c.tokens for c in calls), default=0),
            final=max(finals, default=0),
            over_budget=sum(c.tokens > c.budget for c in calls),
            not_on_user=sum(not c.on_user for c in calls),
            task_kept=sum(c.task_kept for c in calls),
            last_kept=sum(c.last_kept for c in calls),
            input_tokens=sum(c.tokens for c in calls),
            cached_tokens=sum(c.cached for c in calls),
            input_cost=round(sum(c.cost for c in calls), 1),
            served_tokens=sum(c.served for c in calls),
            net_input_cost=round(sum(c.net_cost for c in calls), 1),
            compaction_cost=round(sum(c.compaction_cost for c in calls), 1),
        )


@attrs.frozen
class Run:
    """One replayer over all transcripts."""

    label: str
    """The stack's label."""
    calls: tuple[Call, ...]
    """Every model call, transcript after transcript."""
    totals: Totals
    """The figures, summed."""


def user_request(message: Message) -> str | None:
    """The text of ``message`` if it is a user's request (not a harness notice)."""
    if message.role is not Role.USER or message.is_compaction:
        return None
    text = message.text.strip()
    if not text or text.startswith(_NOTICE):
        return None
    return text


def _texts(message: Message) -> str:
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, Text):
            parts.append(block.text)
        elif isinstance(block, Compaction):
            parts.append(block.content)
        elif isinstance(block, ToolResult):
            parts.extend(item.text for item in block.content if isinstance(item, Text))
    return "\n".join(parts)


class _Holds:
    """Whether a request holds a needle, remembered per message (they are immutable)."""

    def __init__(self) -> None:
        self._needle: str | None = None
        self._seen: dict[int, tuple[Message, bool]] = {}

    def __call__(self, needle: str | None, request: Sequence[Message]) -> bool:
        if needle is None:
            return True
        if needle != self._needle:
            self._needle, self._seen = needle, {}
        for message in request:
            hit = self._seen.get(id(message))
            if hit is None or hit[0] is not message:
                hit = (message, needle in _texts(message))
                self._seen[id(message)] = hit
            if hit[1]:
                return True
        return False


def fraction_budget(
    messages: Sequence[Message],
    fraction: float,
    counter: BaseCounter,
    tools: Sequence[ToolDefinition] = (),
) -> int:
    """The system messages and the tool definitions plus ``fraction`` of the rest (at
    least 1 token)."""
    system = counter.estimate_messages([m for m in messages if m.role is Role.SYSTEM])
    rest = counter.estimate_messages(messages) - system
    fixed = system + (counter.estimate_tools(tools) if tools else 0)
    return max(1, fixed + int(rest * fraction))


async def replay(
    replayer: Replayer,
    transcripts: Sequence[Transcript],
    budgets: Sequence[int],
    counter: BaseCounter,
    *,
    tick: Callable[[], None] | None = None,
    cost_model: CacheCostModel | None = None,
    gap: float = 30.0,
) -> Run:
    """Replay ``transcripts`` (with their ``budgets``) through ``replayer``.

    ``tick`` is called after each model call (for a progress bar). With ``cost_model``,
    each call is priced after the cache's reads and writes, ``gap`` seconds after the
    one before (the gap is also told to a stack's cache schedule).
    """
    if cost_model is not None:
        replayer.gap = gap
    warm = cost_model is None or cost_model.is_warm(gap)
    calls: list[Call] = []
    finals: list[int] = []
    failed_before = replayer.failures
    for transcript, budget in zip(transcripts, budgets, strict=True):
        replayer.start(budget, transcript.tools)
        overhead = counter.estimate_tools(transcript.tools) if transcript.tools else 0
        holds_task, holds_last = _Holds(), _Holds()
        history: list[Message] = []
        first_role: Role | None = None  # of the uncompacted history's first non-system message
        previous: list[Message] | None = None
        task: str | None = None
        last: str | None = None
        tokens = 0
        for message in transcript.messages:
            if message.role is Role.ASSISTANT and history:
                read, written = replayer.summarizer_tokens
                request, history, compacted = await replayer.request(history)
                read = replayer.summarizer_tokens[0] - read
                written = replayer.summarizer_tokens[1] - written
                tokens = overhead + counter.estimate_messages(request)
                shared = shared_prefix(previous, request) if previous is not None else 0
                cached = counter.estimate_messages(request[:shared]) if shared else 0
                if previous is not None:
                    cached += overhead  # the tool definitions come first, unchanged
                served, net, own = 0, 0.0, 0.0
                if cost_model is not None:
                    served = cached if warm else 0
                    net = cost_model.request_cost(tokens, cached=served)
                    own = cost_model.call_cost(read, written)
                calls.append(
                    Call(
                        transcript=transcript.name,
                        tokens=tokens,
                        budget=budget,
                        compacted=compacted,
                        cached=cached,
                        on_user=first_is_user(request) or first_role is not Role.USER,
                        task_kept=holds_task(task and task[:NEEDLE], request),
                        last_kept=holds_last(last and last[:NEEDLE], request),
                        served=served,
                        net_cost=net,
                        compaction_cost=own,
                    )
                )
                previous = list(request)
                if tick is not None:
                    tick()
            if first_role is None and message.role is not Role.SYSTEM:
                first_role = message.role
            history = [*history, message]
            request_text = user_request(message)
            if request_text is not None:
                task = task or request_text
                last = request_text
        finals.append(tokens)
    failed = replayer.failures - failed_before
    return Run(replayer.label, tuple(calls), Totals.of(calls, finals, failed))
