"""``CompactingSession``: an Agents SDK ``Session`` whose ``get_items`` returns a compaction."""

from __future__ import annotations

from typing import Any

from agents import Session, SessionSettings, TResponseInputItem

from ..._compaction.step import compact_step
from ..._counting.request import RequestCounter
from ..._errors import show
from ..._stores.scope import conversation
from ..._strategies.strategy import ContextStrategy, counter_of
from .._core import check_strategy
from .identity import name_of, note_session
from .reader import as_given, held, items_reader, rebuild

__all__ = ["CompactingSession"]


class CompactingSession:
    """A ``Session`` whose ``get_items`` returns the compaction of what the wrapped one holds.

    Writes go to the wrapped session unchanged, so it keeps the whole history.

    Args:
        session: the session to wrap (any implementation of the SDK's protocol).
        strategy: the strategy to compact with.
    """

    def __init__(self, session: Session, strategy: ContextStrategy) -> None:
        self.session = session
        self.strategy = check_strategy("CompactingSession", strategy)
        self.session_id: str = session.session_id
        self.session_settings: SessionSettings | None = session.session_settings

    def __repr__(self) -> str:
        return f"CompactingSession({show(self.session)}, {show(self.strategy)})"

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The wrapped session's items (the newest ``limit``), compacted when needed.

        Nothing is repaired: a ``limit`` can cut a function call away from its output,
        and the SDK drops such an output itself when it prepares the run's input (as it
        does without us), so the outputs that lead the items with no call before them go
        on as they came and only the items after them are compacted. Items that cannot
        be read, an output without its call after other items (what the SDK completes is
        then not ours to edit), or a compaction that cannot be written back as items come
        back as the wrapped session gave them (the last with a warning in the
        ``neuron_context`` log).

        The run this is called in is noted as the session's (``session_id``): the run's
        ``CallModelInputFilter`` keys its view by it, and an unscoped store of the
        strategy (or the filter's) is this session's view while they compact.
        """
        items: list[Any] = await self.session.get_items(limit)
        note_session(self.session_id)
        try:
            converted = items_reader()(items)
        except Exception as exc:
            as_given("CompactingSession", "cannot read the session's items", exc)
            return items
        own = converted.messages
        leading = held(converted)
        if leading is None:
            return items
        with conversation(name_of(self.session_id)):
            result = await compact_step(
                self.strategy,
                own[leading:] if leading else own,
                counter=RequestCounter(counter_of(self.strategy)),
                label="CompactingSession",
            )
        if not result.compacted:
            return items
        try:
            first = converted.sources[leading][0] if leading < len(own) else len(items)
            return [*items[:first], *rebuild(result.messages, converted)]
        except Exception as exc:
            as_given("CompactingSession", "cannot write the compaction back as items", exc)
            return items

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        """Add ``items`` to the wrapped session."""
        await self.session.add_items(items)

    async def pop_item(self) -> TResponseInputItem | None:
        """Remove and return the wrapped session's newest item."""
        return await self.session.pop_item()

    async def clear_session(self) -> None:
        """Clear the wrapped session."""
        await self.session.clear_session()
