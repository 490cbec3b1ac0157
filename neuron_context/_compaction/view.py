"""The compacted view of a history that only grows, kept between calls.

A caller that keeps the full history and sends a compacted view of it (LangChain's
middleware without ``persist``, the Agents SDK's input filter: the framework keeps every
message) would otherwise compact the whole history again on every call over budget:
the same summary work each time, a slightly different summary each time, and requests
whose prefix never repeats, so the provider's prompt cache never hits.

:class:`ContextView` keeps the last view and the history it stood for. When the next
history starts with that one (the same messages, compared by reference at C speed), the
view is extended with the new messages alone and compacted again only when the view
itself crosses the trigger, as a loop that persists its compactions would: as few
compactions, the same stable prefix. Any other history (edited, another conversation)
starts a new view from it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._counting.request import RequestCounter
from .._messages.message import Message, ToolDefinition
from .._prefix import starts_with
from .._strategies.strategy import ContextStrategy
from .recovery import recompact
from .refusal import Overflow
from .step import Errors, StepReport, StepResult, compact_step, decide

__all__ = ["ContextView"]


class ContextView:
    """The compacted view of one growing history (see the module docstring).

    One view follows one conversation; a caller serving many keeps one per conversation.
    Not thread-safe: one call at a time.
    """

    __slots__ = ("_source", "_view", "counter", "strategy")

    def __init__(self, strategy: ContextStrategy, counter: RequestCounter) -> None:
        self.strategy = strategy
        self.counter = counter
        self._source: list[Message] = []  # the history the view stands for
        self._view: list[Message] | None = None  # None: the view is the history itself

    def __repr__(self) -> str:
        view = "the history" if self._view is None else f"{len(self._view)} messages"
        return f"ContextView({len(self._source)} messages, view: {view})"

    @property
    def compacted(self) -> bool:
        """Whether the view differs from the history it stands for."""
        return self._view is not None

    @property
    def started(self) -> bool:
        """Whether the view stands for a history yet (a new view does not)."""
        return bool(self._source)

    def restore(self, source: Sequence[Message], view: Sequence[Message]) -> None:
        """Stand for ``source`` with ``view``: a compacted view another process built
        for the same history (kept where the framework keeps the conversation), so this
        one continues it exactly, with the same prefix, instead of compacting anew."""
        self._source = list(source)
        self._view = list(view)

    def follows(self, messages: Sequence[Message]) -> bool:
        """Whether ``messages`` starts with the history this view stands for."""
        return starts_with(messages, self._source)

    def prepare(
        self,
        messages: Sequence[Message],
        *,
        system_prompt: str | None = None,
        tools: Sequence[ToolDefinition] = (),
    ) -> StepResult:
        """The first half of :meth:`update`, synchronous: take in the new messages and ask
        the trigger. When the result is ``triggered``, finish with :meth:`compact`."""
        view: list[Message] | None = None
        if self.follows(messages):
            new = messages[len(self._source) :]
            self._source.extend(new)
            if self._view is not None:
                view = [*self._view, *new]
        else:
            self._source = list(messages)
        self._view = view
        return decide(
            self.strategy,
            messages if view is None else view,
            counter=self.counter,
            system_prompt=system_prompt,
            tools=tools,
        )

    async def compact(
        self,
        decided: StepResult,
        *,
        system_prompt: str | None = None,
        tools: Sequence[ToolDefinition] = (),
        errors: Errors = "keep",
        report: StepReport | None = None,
        label: str = "view",
    ) -> StepResult:
        """The second half of :meth:`update`: compact the view :meth:`prepare` decided on."""
        result = await compact_step(
            self.strategy,
            decided.messages,
            counter=self.counter,
            system_prompt=system_prompt,
            tools=tools,
            decided=decided,
            errors=errors,
            report=report,
            label=label,
        )
        if result.compacted:
            self._view = list(result.messages)
        return result

    async def update(
        self,
        messages: Sequence[Message],
        *,
        system_prompt: str | None = None,
        tools: Sequence[ToolDefinition] = (),
        errors: Errors = "keep",
        report: StepReport | None = None,
        label: str = "view",
    ) -> StepResult:
        """The view of ``messages``: the last view extended with what is new, compacted
        when it crosses the trigger (see :func:`compact_step`)."""
        decided = self.prepare(messages, system_prompt=system_prompt, tools=tools)
        if not decided.triggered:
            return decided
        return await self.compact(
            decided,
            system_prompt=system_prompt,
            tools=tools,
            errors=errors,
            report=report,
            label=label,
        )

    async def recover(
        self,
        overflow: Overflow,
        messages: Sequence[Message],
        *,
        system_prompt: str | None = None,
        tools: Sequence[ToolDefinition] = (),
        label: str = "overflow",
    ) -> tuple[StepResult, int]:
        """``messages`` (what was sent) recompacted to the size ``overflow`` showed (see
        :func:`~neuron_context._compaction.recovery.recompact`), and that budget: the
        view's strategy becomes the smaller one (kept for the next calls) and the view
        is the result. When it raises, the view and its strategy are as they were.

        Raises:
            ContextOverflowError: the request cannot be made to fit.
            NeuronContextError: the compaction failed.
        """
        done = await recompact(
            overflow,
            messages,
            strategy=self.strategy,
            counter=self.counter,
            system_prompt=system_prompt,
            tools=tools,
            label=label,
        )
        self.strategy = done.strategy
        if done.result.compacted:
            self._view = list(done.result.messages)
        return done.result, done.budget
