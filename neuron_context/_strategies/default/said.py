"""No user message left with an empty text: where a
:class:`~neuron_context._strategies.default.DefaultStack` compaction has no room for a
request's cut with words, nor for the marker of its cut, the request is its first words
and a ``…``, else its marker alone in the shortest form that fits, never an empty text.

A cut to a goal under the cost of its own marker used to leave the message's texts empty
(``""``: a provider such as Anthropic rejects an empty text block, and an agent reads
nothing of what the user asked); the newest request beside system messages that fill
the budget was such a message. :func:`unblanked` mends the last resort's output: a
pinned request it left empty takes its first words and a ``…`` (:func:`headed`), else
the first of the marker's shorter forms (:func:`alone`: its tokens alone,
``[... 1 line cut ...]``, ``[... cut ...]``, a ``…``) that fits the room the other parts
leave; a task kept whole that leaves it no such room gives way (the output still
starting on a user message); where none fits, the output is over the budget whatever
the request keeps (the budget cannot hold the system messages and a ``…``: logged, or
:class:`BudgetExceededError` with ``strict=True``), and the request keeps its floor
(:func:`cut_said` at :data:`~.water.MIN_TRUNCATED` tokens, as beside a step kept over
the budget): a few tokens less over the budget are worth less than what the user asked.
A request the cut left as its marker alone, without a store's key, takes its first words
too where they fit its room, so a bigger budget keeps no fewer of its words. The cuts
before it are left as they were (a marker in place of an empty text there costs tokens
that move how the task and the request share their room). The newest request is never
dropped entirely, so the output still starts on a user message where the input did; a
task left empty beside the newest request goes where a user message follows it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from ..._counting.counter import BaseCounter
from ..._messages.content import Text
from ..._messages.markers import SHORT_GAP, marker
from ..._messages.message import Message, Role
from ..._stores.offload import references_in
from .earlier_markers import has_markers
from .water import MIN_TRUNCATED
from .words import cut_words, says

if TYPE_CHECKING:  # only the types: the parts are copied with attrs.evolve
    from .plan import Part, Plan

__all__ = ["alone", "blank", "cut_said", "headed", "unblanked"]


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
    it (the output still starts on one); any other takes its first words and a ``…``
    (:func:`headed`), else the first form of :func:`alone` (of its original), that fits
    the room the other parts leave below ``limit``; a request that has no such room
    beside a task kept whole takes the task's room where that makes one fit; else its
    floor's cut, over ``limit`` (a budget that cannot hold the system messages and the
    request: the stack logs it, or raises with ``strict``)."""
    requests = [i for i, p in enumerate(parts) if p.kind == "request"]
    originals = {"task": plan.task, "request": plan.newest}
    output = list(parts)
    gone: set[int] = set()
    for index, part in enumerate(parts):
        if part.kind not in originals:
            continue
        at = originals[part.kind]
        pinned = at is not None and (part.kind == "task" or index == requests[-1])
        original = messages[at] if at is not None and pinned else None
        room = limit - sum(part_cost(p) for i, p in enumerate(output) if i not in gone)
        room += part_cost(part)
        if not blank(part.message):
            if original is not None and _wordless(part.message, original):
                # A marker alone where the user's first words fit its room: a smaller
                # budget, whose cut was empty, would keep words this one does not.
                forms = _forms(part, original, room, counter, part_cost)
                if part_cost(forms[0]) <= room and says(forms[0].message):
                    output[index] = forms[0]
            continue
        if original is not None and blank(original):
            continue  # empty in the input: kept as it was
        if part.kind == "task" and requests and _user_after(output, index):
            gone.add(index)  # it says nothing beside the newest request
            continue
        forms = _forms(part, original, room, counter, part_cost)
        if part.kind == "request" and all(part_cost(f) > room for f in forms):
            # A task kept whole may leave the request less than a "…": it gives way
            # where that lets the request say something within the budget (the last
            # resort's own rule), and the output still starts on a user message.
            tasks = [i for i, p in enumerate(output) if p.kind == "task" and i not in gone]
            if tasks and all(_user_after(output, i) for i in tasks):
                freed = room + sum(part_cost(output[i]) for i in tasks)
                wider = _forms(part, original, freed, counter, part_cost)
                if any(part_cost(f) <= freed for f in wider):
                    gone.update(tasks)
                    room, forms = freed, wider
        if original is not None and all(part_cost(f) > room for f in forms):
            # over the budget all the same: the request keeps its floor
            floor = cut_said(original, MIN_TRUNCATED, counter)
            forms.append(attrs.evolve(part, message=floor))
        output[index] = next((f for f in forms if part_cost(f) <= room), forms[-1])
    return [p for i, p in enumerate(output) if i not in gone]


def headed(message: Message, room: int, cost: Callable[[Message], int]) -> Message | None:
    """``message``'s first words and a ``…``, as many as ``cost`` keeps within ``room``
    (at least one), or ``None``: the user's own words before a marker that says only
    what was cut. Not for a text holding an earlier cut's marker (its key stays whole
    in the marker forms) nor for one with other blocks (images)."""
    texts = [b.text for b in message.content if isinstance(b, Text)]
    if len(texts) != len(message.content) or has_markers("\n".join(texts)):
        return None
    words = "\n".join(texts).split()

    def form(count: int) -> Message:
        return attrs.evolve(
            message, content=(Text(text=" ".join(words[:count]) + " " + SHORT_GAP),)
        )

    if len(words) < 2 or cost(form(1)) > room:
        return None
    low, high = 1, len(words) - 1  # the whole text is not a cut: cut_words had no room for it
    while low < high:
        middle = (low + high + 1) // 2
        if cost(form(middle)) <= room:
            low = middle
        else:
            high = middle - 1
    return form(low)


def _forms(
    part: Part,
    original: Message | None,
    room: int,
    counter: BaseCounter,
    part_cost: Callable[[Part], int],
) -> list[Part]:
    """What an empty ``part`` may become, the first that fits ``room`` taken: its
    ``original``'s first words (:func:`headed`), then its marker's forms; a kept step's
    opener (``original`` not known) its two shortest forms."""
    if original is None:
        return [attrs.evolve(part, message=m) for m in alone(part.message, counter)[2:]]

    def cost(message: Message) -> int:
        return part_cost(attrs.evolve(part, message=message))

    head = headed(original, room, cost)
    forms = [*([head] if head is not None else []), *alone(original, counter)]
    return [attrs.evolve(part, message=m) for m in forms]


def _wordless(cut: Message, original: Message) -> bool:
    """Whether ``cut`` is its marker alone (no line of the user's words, no key a store
    can give the whole back by) of an ``original`` that says something."""
    return not says(cut) and says(original) and not references_in(cut.text)


def _user_after(parts: Sequence[Part], index: int) -> bool:
    """Whether the first part after ``index`` that is not a system message is a user
    message: the output still starts on one without the part at ``index``."""
    after = (p.message for p in parts[index + 1 :] if p.message.role is not Role.SYSTEM)
    return next((m.role is Role.USER for m in after), False)
