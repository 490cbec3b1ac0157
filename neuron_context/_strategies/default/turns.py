"""What the next call of a :class:`~neuron_context._strategies.default.DefaultStack`
acts on, found from the end of the history: a user's request (:func:`is_request`), the
step in progress (:func:`step_in_progress`: the last assistant message's calls and the
results the model has not answered yet) and the exchange the newest request answers
(:func:`answered_exchange`: the proposal, question or options the user's answer is
to). The plan pins the first, and levels the other two first, with the room above the
target (see :mod:`.water`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..._messages.conversation import opens_exchange
from ..._messages.message import Message, Role
from ..._summary.scan import is_notice

__all__ = ["answered_exchange", "is_request", "step_in_progress"]


def is_request(message: Message) -> bool:
    """Whether ``message`` is a user's request: a user message that is neither a summary
    nor a harness notice. A message with no text (empty, whitespace, or only images and
    documents) is a request: a notice is text, and a user's blank turn is still the turn
    the model answers."""
    if message.role is not Role.USER or message.is_compaction:
        return False
    text = message.text
    return not text.strip() or not is_notice(text)


def step_in_progress(messages: Sequence[Message]) -> list[int]:
    """The indices of the step in progress: the last assistant message when it called
    tools, and the tool messages after it (results the model has not answered yet);
    ``[]`` when the last assistant message called none. Reads from the end."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role is Role.ASSISTANT:
            if not opens_exchange(message):
                return []
            after = range(index + 1, len(messages))
            return [index, *(i for i in after if messages[i].role is Role.TOOL)]
    return []


def answered_exchange(messages: Sequence[Message]) -> list[int]:
    """The indices of the exchange the newest request answers: when the last message
    (system messages aside) is a request and the message just before it (system
    messages aside) is an assistant message that called no tools, that message (its
    last words: a proposal, a question, options to pick from); ``[]`` otherwise (two
    user messages in a row: the answer is to no one message). Reads from the end."""
    index = len(messages) - 1
    while index >= 0 and messages[index].role is Role.SYSTEM:
        index -= 1
    if index < 0 or not is_request(messages[index]):
        return []
    for before in range(index - 1, -1, -1):
        message = messages[before]
        if message.role is Role.ASSISTANT:
            return [] if opens_exchange(message) else [before]
        if message.role is not Role.SYSTEM:
            return []
    return []
