"""What crosses into a run, checked where it crosses: its input, its tools, the history a
``before_agent``/``after_agent`` chain leaves, and the events handed to the observer.

The loop (:mod:`.loop`) calls these once per run (the per-turn boundaries — the provider's
reply, each hook's value — are checked by :class:`~neuron_context._middleware.types.ModelResponse`
and the middleware chain).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from .._errors import ConfigurationError, show
from .._log import logger
from .._messages.message import Message, Role
from .._messages.wellformed import close_pending, pending_start, validate, validate_appended
from .._prefix import starts_with
from .._run.events import AgentEvent
from .._run.tools import Tool
from .._validators import require_sequence_of

__all__ = ["checked", "joined", "same", "tell", "to_input", "tools_of"]


def to_input(value: object) -> list[Message]:
    """A run's input as messages: a user string, one message, or a sequence of them."""
    if isinstance(value, str):
        return [Message.user(value)]
    if isinstance(value, Message):
        return [value]
    return list(require_sequence_of(value, "Agent.run: messages", Message, "messages (or a str)"))


def tools_of(value: object, name: str) -> tuple[Tool | Callable[..., object], ...]:
    """``value`` as tools: one :class:`Tool`, or a collection of tools and functions."""
    if isinstance(value, Tool):
        return (value,)
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        msg = f"{name} must be a collection of tools or functions, got {show(value, 60)}"
        raise ConfigurationError(msg)
    items = tuple(value)
    for index, item in enumerate(items):
        if not isinstance(item, Tool) and not callable(item):
            msg = f"{name}[{index}] must be a Tool or a function, got {show(item, 60)}"
            raise ConfigurationError(msg)
    return items


def same(messages: list[Message], history: list[Message]) -> bool:
    """Whether ``messages`` are the history's messages, in order (C speed)."""
    return len(messages) == len(history) and messages == history


def joined(history: list[Message], given: list[Message]) -> list[Message]:
    """The history with the run's input appended, checked (O(input)).

    A call of the history awaiting its result is answered by the input (tool messages
    first); when the input moves on without answering it, or when the run would start
    with it unanswered, it is closed with the interrupted error result (logged), as a
    run closes its own calls: the model is never sent a call without its result, and a
    history that ended on one does not block the agent.

    Raises:
        InvalidConversationError: the input is not well formed after the history.
    """
    base = history
    if pending_start(history) is not None and not (given and given[0].role is Role.TOOL):
        base = close_pending(history)
    validate_appended(base, given)
    joined = [*base, *given]
    if pending_start(joined) is not None:
        joined = close_pending(joined)
    if len(joined) != len(history) + len(given):
        logger.warning("Agent.run: calls awaiting their results were closed as interrupted")
    return joined


def checked(before: list[Message], after: list[Message]) -> list[Message]:
    """The history a ``before_agent``/``after_agent`` chain left (its items checked by
    the chain), if it is well formed: an extension costs what it added."""
    if after is before or same(after, before):
        return after
    if starts_with(after, before):
        validate_appended(before, after[len(before) :])
    else:
        validate(after)
    return after


def tell(on_event: Callable[[AgentEvent], object], event: AgentEvent) -> None:
    """Hand ``event`` to the user's callback: an observer, so what it raises is logged
    and the run goes on (the event is still in ``AgentResult.events``)."""
    try:
        on_event(event)
    except Exception:
        logger.warning(
            "AgentOptions.on_event raised on a %s event; the run goes on",
            event.type,
            exc_info=True,
        )
