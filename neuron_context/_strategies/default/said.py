"""No user message left with an empty text: where a
:class:`~neuron_context._strategies.default.DefaultStack` compaction has no room for a
request's words, nor for the marker of its cut, the request is its marker alone in the
shortest form that fits, never an empty text.

A cut to a goal under the cost of its own marker used to leave the message's texts empty
(``""``: a provider such as Anthropic rejects an empty text block, and an agent reads
nothing of what the user asked); the newest request beside system messages that fill
the budget was such a message. :func:`unblanked` mends the last resort's output: a
pinned request it left empty takes the first of the marker's shorter forms
(:func:`alone`: its tokens alone, ``[... 1 line cut ...]``, ``[... cut ...]``, a ``…``)
that fits the room the other parts leave; where none does, the output is over the
budget whatever the request keeps (the budget cannot hold the system messages and the
newest request: logged, or :class:`BudgetExceededError` with ``strict=True``), and the
request keeps its floor (:func:`cut_said` at :data:`~.water.MIN_TRUNCATED` tokens, as
beside a step kept over the budget): a few tokens less over the budget are worth less
than what the user asked. The cuts before it are left as they were (a marker in place
of an empty text there costs tokens that move how the task and the request share their
room). The newest request is never dropped entirely, so the output still starts on a
user message where the input did; a task left empty beside the newest request goes (it
says nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from ..._counting.counter import BaseCounter
from ..._messages.content import Text
from ..._messages.markers import SHORT_GAP, marker
from ..._messages.message import Message, Role
from .water import MIN_TRUNCATED
from .words import cut_words

if TYPE_CHECKING:  # only the types: the parts are copied with attrs.evolve
    from .plan import Part, Plan

__all__ = ["alone", "blank", "cut_said", "unblanked"]


def blank(message: Message) -> bool:
    """Whether ``message`` is a user or assistant message that holds nothing: every block
    a text of whitespace alone, no tool use, no image or other block."""
    if message.role not in (Role.USER, Role.ASSISTANT) or message.is_compaction:
        return False
    return all(isinstance(b, Text) and not b.text.strip() for b in message.content)


def alone(message: Message, counter: BaseCounter) -> list[Message]:
    """``message`` cut to its marker alone, in each form from the fullest to the
    shortest: what was cut in tokens (``[... 1 line (about 69 tokens) cut ...]``), in
    lines, ``[... cut ...]``, then a ``…``. Its other blocks (images) are kept; its
    texts become the marker's one text."""
    text = "\n".join(b.text for b in message.content if isinstance(b, Text))
    lines = sum(1 for line in text.split("\n") if line.strip()) or 1
    tokens = counter.estimate_text(text)
    forms = (
        marker(len(text), tokens, lines=lines, short=True).strip("\n"),
        f"[... {lines:,} line{'s' if lines != 1 else ''} cut ...]",
        "[... cut ...]",
        SHORT_GAP,
    )
    others = tuple(b for b in message.content if not isinstance(b, Text))
    return [attrs.evolve(message, content=(Text(text=form), *others)) for form in forms]


def cut_said(message: Message, goal: int, counter: BaseCounter) -> Message:
    """``message`` cut to ``goal`` tokens as :func:`~.words.cut_words` cuts it, except
    that where that cut leaves its texts empty, its marker alone in the first form of
    :func:`alone` that fits ``goal`` (the empty cut where none does)."""
    cut = cut_words(message, goal, counter)
    if not blank(cut) or blank(message):
        return cut
    return next((m for m in alone(message, counter) if counter.estimate_message(m) <= goal), cut)


def unblanked(
    parts: list[Part],
    messages: Sequence[Message],
    plan: Plan,
    limit: int,
    *,
    part_cost: Callable[[Part], int],
    counter: BaseCounter,
) -> list[Part]:
    """``parts`` (the last resort's output) with no pinned request left empty where its
    original was not: a task beside the newest request goes where a user message follows
    it (the output still starts on one); any other takes the first
    form of :func:`alone` (of its original) that fits the room the other parts leave
    below ``limit``, else its floor's cut, over ``limit`` (a budget that cannot hold the
    system messages and the request: the stack logs it, or raises with ``strict``)."""
    requests = [i for i, p in enumerate(parts) if p.kind == "request"]
    originals = {"task": plan.task, "request": plan.newest}
    output = list(parts)
    gone: set[int] = set()
    for index, part in enumerate(parts):
        if part.kind not in originals or not blank(part.message):
            continue
        at = originals[part.kind]
        pinned = at is not None and (part.kind == "task" or index == requests[-1])
        if pinned and blank(messages[at]):
            continue  # empty in the input: kept as it was
        if part.kind == "task" and requests and _user_after(output, index):
            gone.add(index)  # it says nothing beside the newest request
            continue
        if pinned:
            forms = alone(messages[at], counter)
        else:  # the opener of a kept step: what it was cut from is not known here
            forms = alone(part.message, counter)[2:]
        room = limit - sum(part_cost(p) for i, p in enumerate(output) if i not in gone)
        room += part_cost(part)
        tried = [attrs.evolve(part, message=m) for m in forms]
        if at is not None and part_cost(tried[-1]) > room:  # over the budget all the same
            tried.append(attrs.evolve(part, message=cut_said(messages[at], MIN_TRUNCATED, counter)))
        output[index] = next((f for f in tried if part_cost(f) <= room), tried[-1])
    return [p for i, p in enumerate(output) if i not in gone]


def _user_after(parts: Sequence[Part], index: int) -> bool:
    """Whether the first part after ``index`` that is not a system message is a user
    message: the output still starts on one without the part at ``index``."""
    after = (p.message for p in parts[index + 1 :] if p.message.role is not Role.SYSTEM)
    return next((m.role is Role.USER for m in after), False)
