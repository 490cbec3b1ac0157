"""Whether a value is a conversation: the one check of it, and when the hot paths run it.

Every entry point that takes messages (the strategies, the counters, ``validate`` and
``repair``, ``CompletionRequest``) refuses what is not a sequence of :class:`Message`
with :func:`check_messages`, in one wording: the entry point, the index of the first
item that is not a message and, for a dict (an OpenAI or Anthropic message), the readers
that convert it.

The strategies and the counters run that check only when their work fails
(:class:`CheckOnFailure`; the counters, whose methods run once per message, inline the
same ``try`` with :func:`not_messages`). A history of messages goes through the work
with no type test per message, so a turn pays nothing for the check; a value that is not
one makes the work raise ``AttributeError`` or ``TypeError``, and only then does the
check run, turning that error into a :class:`ConfigurationError` naming the bad item. An
error that is not about the input (the input is messages after all) passes unchanged.
"""

from __future__ import annotations

from types import TracebackType

from .._errors import ConfigurationError, show
from .._validators import require_sequence_of
from .message import Message, Role

__all__ = [
    "DICT_HINT",
    "CheckOnFailure",
    "check_messages",
    "check_reply",
    "is_message_list",
    "not_messages",
]

DICT_HINT = " (convert provider dicts with neuron_context.formats.from_openai or from_anthropic)"
"""Added to the error when the item that is not a message is a dict."""


def check_messages(value: object, name: str, *, sequence: bool = True) -> tuple[Message, ...]:
    """``value`` as a tuple, if it is a sequence of :class:`Message` objects, else a
    :class:`~neuron_context.ConfigurationError` naming ``name`` (``"validate: messages"``,
    ``"CompletionRequest.messages"``) and the index of the first item that is not one.

    With ``sequence=False``, any iterable but a ``str``, ``bytes`` or mapping is accepted
    (a generator, for a caller that reads it once).
    """
    return require_sequence_of(
        value, name, Message, "Message objects", mapping_hint=DICT_HINT, sequence=sequence
    )


def is_message_list(value: object) -> bool:
    """Whether ``value`` is a ``list`` of :class:`Message` objects, at C speed and without
    a copy: the per-turn fast path of a check whose error :func:`check_messages` gives."""
    return type(value) is list and all(issubclass(kind, Message) for kind in set(map(type, value)))


def check_reply(value: object, name: str) -> Message:
    """``value`` if it is an assistant :class:`Message` (a model's reply), else a
    :class:`~neuron_context.ConfigurationError` naming ``name`` (``"ModelResponse.message"``).

    A tool result or a user message passed off as a reply would be recorded as the
    model's turn: an orphan result, or two user turns in a row.
    """
    if not isinstance(value, Message):
        msg = f"{name} must be an assistant Message, got {type(value).__name__} {show(value, 60)}"
        raise ConfigurationError(msg)
    if value.role is not Role.ASSISTANT:
        msg = f"{name} must be an assistant message, got a {value.role.value} message"
        raise ConfigurationError(msg)
    return value


def not_messages(value: object, name: str) -> ConfigurationError | None:
    """The error :func:`check_messages` raises for ``value`` (any iterable accepted), or
    ``None`` when it is messages: for a caller that re-raises its own failure then."""
    try:
        check_messages(value, name, sequence=False)
    except ConfigurationError as error:
        return error
    return None


class CheckOnFailure:
    """``with CheckOnFailure(messages, "SlidingWindowStrategy"): ...`` runs the work; when
    it raises ``AttributeError`` or ``TypeError`` and ``messages`` is not a sequence of
    :class:`Message`, the :class:`ConfigurationError` of :func:`check_messages` (naming
    ``"SlidingWindowStrategy: messages"``) is raised instead, chained to that error.

    Why only on failure: see the module docstring (a turn pays nothing for the check).
    """

    __slots__ = ("_messages", "_owner")

    def __init__(self, messages: object, owner: str) -> None:
        self._messages = messages
        self._owner = owner

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if isinstance(error, AttributeError | TypeError):
            check_messages(self._messages, f"{self._owner}: messages")
