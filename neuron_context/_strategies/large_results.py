"""Large results nobody refers to any more: cut to their head and tail.

A test run, a build log, a long file: one tool result can cost more than the rest of the
conversation, and once the model has moved on, the middle of it is dead weight. This is
the LangChain-middleware README's "truncate large tool results not referenced
recently", done with the library's one truncation primitive
(:func:`~neuron_context._messages.truncation.truncate_text`, which the loop-true
compaction uses for its hard budget too): the head says what the output is, the tail
how it ended, and a marker between says how much was cut.

*Referenced recently* is a heuristic, stated so it can be checked: a result is in use
when one of its distinctive words (six or more characters mixing letters with digits,
``_``, ``.``, ``/`` or ``-``: paths, identifiers, versions, hashes) appears in one
of the newest ``recent_turns`` assistant messages (their text, reasoning and tool
arguments), or when it is one of the ``keep_recent`` newest results. Plain words do not
count: every answer says "error" or "function".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import attrs

from .._counting.counter import compact_json
from .._log import log_compaction
from .._messages.content import ContentBlock, Image, Text, Thinking, ToolUse
from .._messages.conversation import replace_blocks, replace_content, tool_results
from .._messages.markers import is_truncated
from .._messages.message import Message, Role
from .._messages.truncation import truncate_text
from .._stores.offload import is_reference, offload
from .._stores.store import Store, optional_store
from .._validators import non_negative_int, positive_int
from .strategy import PureStrategy

__all__ = ["TruncateLargeResultsStrategy", "distinctive_words"]

_WORD = re.compile(r"[\w./-]{6,}")
_EDGES = "./-"


def distinctive_words(texts: Iterable[str]) -> set[str]:
    """The words of ``texts`` that identify something: at least six characters, with a
    letter and a digit or one of ``_./-`` (edges trimmed; ``:`` separates words, so
    ``a.py:12`` and ``a.py::test`` both hold ``a.py``)."""
    found: set[str] = set()
    for text in texts:
        for match in _WORD.finditer(text):
            word = match.group().strip(_EDGES)
            if (
                len(word) >= 6
                and any(c.isalpha() for c in word)
                and any(c.isdigit() or c in "_./-" for c in word)
            ):
                found.add(word)
    return found


def _message_texts(message: Message) -> Iterable[str]:
    for block in message.content:
        if isinstance(block, Text):
            yield block.text
        elif isinstance(block, Thinking):
            yield block.thinking
        elif isinstance(block, ToolUse):
            yield compact_json(block.input)


@attrs.define
class TruncateLargeResultsStrategy(PureStrategy):
    """Cuts tool results larger than ``max_result_tokens`` that no recent assistant
    message refers to, keeping their head and tail around a marker.

    Examples:
        >>> strategy = TruncateLargeResultsStrategy(max_result_tokens=1_000, recent_turns=2)
    """

    max_tokens: int = attrs.field(default=0, kw_only=True, validator=non_negative_int())
    """The trigger: compact when the history costs more than this (0: always)."""
    max_result_tokens: int = attrs.field(default=2_000, kw_only=True, validator=positive_int())
    """A result costing more than this is large; a cut one costs at most this."""
    keep_recent: int = attrs.field(default=1, kw_only=True, validator=non_negative_int())
    """How many of the newest tool results are never cut."""
    recent_turns: int = attrs.field(default=3, kw_only=True, validator=non_negative_int())
    """How many of the newest assistant messages count as referring recently."""
    store: Store | None = attrs.field(default=None, kw_only=True, validator=optional_store())
    """Where the whole text of a cut result goes: the marker then ends in ``recall:
    <key>`` (``[... 1,204 lines (41,802 characters, about 10,450 tokens) cut; recall: <key>
    ...]``)."""

    def _apply(self, messages: Sequence[Message]) -> list[Message]:
        counter = self.counter
        limit = self.max_result_tokens
        refs = list(tool_results(messages))
        candidates = refs[: max(0, len(refs) - self.keep_recent)]
        large = [
            (ref, cost)
            for ref in candidates
            if (cost := counter.estimate_content(ref.result.content)) > limit
        ]
        if not large:
            return list(messages)
        recent: list[str] = []
        seen = 0
        for message in reversed(messages):
            if seen >= self.recent_turns:
                break
            if message.role is Role.ASSISTANT:
                seen += 1
                recent.extend(_message_texts(message))
        referenced = distinctive_words(recent)
        replaced: dict[tuple[int, int], ContentBlock] = {}
        for ref, cost in large:
            result = ref.result
            texts = [item.text for item in result.content if isinstance(item, Text)]
            if any(is_truncated(text) for text in texts) or is_reference(result):
                continue
            if referenced and not referenced.isdisjoint(distinctive_words(texts)):
                continue
            text_cost = sum(counter.estimate_text(text) for text in texts)
            fixed = cost - text_cost  # images cannot be cut
            room = max(0, limit - fixed)
            items: list[Text | Image] = []
            for item in result.content:
                if isinstance(item, Text) and text_cost:
                    share = room * counter.estimate_text(item.text) // text_cost
                    items.append(Text(text=self._truncate(item.text, share)))
                else:
                    items.append(item)
            content = tuple(items)
            if counter.estimate_content(content) < cost:
                replaced[ref.message, ref.block] = replace_content(result, content)
        if not replaced:
            return list(messages)
        output = replace_blocks(messages, replaced)
        log_compaction(
            "TruncateLargeResultsStrategy",
            counter,
            messages,
            output,
            {"truncated": len(replaced)},
        )
        return output

    def _truncate(self, text: str, share: int) -> str:
        """``text`` cut to ``share`` tokens; with a store, the whole text is offloaded and
        the marker names its key (no key when the put failed; no cut when the marker does
        not fit)."""
        key = offload(self.store, text, "TruncateLargeResultsStrategy")
        if key is None:
            return truncate_text(text, share, self.counter)
        note = f"recall: {key}"
        cut = truncate_text(text, share, self.counter, reference=note)
        # A text too short for the marker (cut to nothing) stays whole: its key would be lost.
        return cut if note in cut or cut == text else text
