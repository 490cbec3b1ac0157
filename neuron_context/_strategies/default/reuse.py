"""What an agent may reuse of a segment of a tool result: the weight by which
``default_stack`` chooses the segments of a recent result too big for its share
(:func:`~neuron_context._messages.segments.choose_segments`).

A segment holds names; a name is worth something once (the first segment kept that
holds it), so a choice covers many facts rather than one fact many times. An agent's
next steps quote what its tools told it: the ids and numbers it books and
adds, the paths it edits, the function it calls, the error it fixes. So a segment weighs
what it holds of those, read with the facts index's own rules
(:mod:`neuron_context._summary.facts_text`): each salient token (an id, a date, a
version, a code name, a path, the code names of a call through an object) weighs one; a
number of three digits or more counts a half
where something labels it (``"price": 1286``, ``total: 1286``, a row of a table) and
nothing where nothing does (``step 100 ok``); a segment that labels its values counts
half as much again; a line that defines something (``def
make_pattern_type``) and a line that reports an error add two. A key is not a value
(``"flight_number":`` weighs nothing: every record has it). Every scan is linear in
the segment (a run of token characters found by one character class, each checked by
an anchored pattern bounded by its length, as :mod:`neuron_context._summary.scan` does).
"""

from __future__ import annotations

import functools
import re

from ..._summary.facts_text import calls, definition, is_code_name, is_salient, key_value
from ..._summary.scan import is_file_name

__all__ = ["reuse"]

_RUN = re.compile(r"[\w$.@#+/-]+")
_TRIM = ".,;:!?'\"`()[]{}<>-+#@$"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_JSON_KEY = re.compile(r'"[A-Za-z_][\w .-]{0,39}"\s{0,4}:')
_ERROR = re.compile(r"(?:Error|Exception|Failure)\b|\b(?:error|fatal|ERROR|FATAL|FAILED|failed)\b")
_GUTTER = re.compile(r"\s*\d{1,7}(?:→|\t|:| {1,2}(?=\S)|\| ?)")
"""A numbered listing's line number, before the line a definition is read from (SWE-agent's
``150:    def run(self):`` too, its indent after the colon)."""
_KEY_ENDS = ('":', "=", ": ")
"""What follows a key (``"price":``, ``price=``, ``price: ``)."""
_SHOWN = 120
"""The characters of an error's line that tell it from another error."""
_GUTTERS = re.compile(r"^[ \t]*\d{1,7}(?:→|\t)", re.MULTILINE)
"""A numbered listing's line numbers (``   47→``, ``47\t``): not values of the text."""
_LINE = 2_000
"""The longest first line read for a definition or a key/value pair."""
_WORD = 100
"""The longest token weighed (a longer run is data, not a name)."""


_NAME, _NUMBERED, _DOTTED, _OTHER = range(4)


@functools.lru_cache(maxsize=8192)
def _kind(word: str) -> int:
    """What a token is: a name (a path, a salient token), a number of three digits or
    more, a dotted word that may be a call, or nothing to note (cached: a result
    repeats its values from record to record)."""
    if "/" in word:
        last = word.rsplit("/", 1)[-1]
        return _NAME if word.count("/") >= 2 or is_file_name(last) else _OTHER
    if is_salient(word):
        return _NAME
    if _NUMBER.fullmatch(word) is not None:
        return _NUMBERED if sum(c.isdigit() for c in word) >= 3 else _OTHER
    return _DOTTED if "." in word else _OTHER


def reuse(segment: str) -> dict[str, float]:
    """The names an agent may reuse of ``segment``, each with its weight (``{}`` for
    nothing it would quote)."""
    found: dict[str, float] = {}
    numbers: list[str] = []
    text = _GUTTERS.sub("", segment)
    for match in _RUN.finditer(text):
        word = match.group().strip(_TRIM)
        if not 3 <= len(word) <= _WORD or text.startswith(_KEY_ENDS, match.end()):
            continue  # a key names a value, it is not one
        kind = _kind(word)
        if kind == _NAME:
            found[word] = 1.0
        elif kind == _NUMBERED:
            numbers.append(word)
        elif kind == _DOTTED and calls(word, text, match.start()):
            # A call through an object: its code names (getElementById).
            found.update((part, 1.0) for part in word.split(".") if is_code_name(part))
    end = segment.find("\n", 0, _LINE)
    line = segment[: end if end >= 0 else _LINE]
    gutter = _GUTTER.match(line)
    body = line[gutter.end() :] if gutter is not None else line
    labelled = _JSON_KEY.search(segment, 0, _LINE) is not None or bool(key_value(body.strip()))
    if labelled or "|" in line or "\t" in line:  # a row of a table: its header labels it
        found.update(dict.fromkeys(numbers, 0.5))
    if labelled:
        found = {name: weight * 1.5 for name, weight in found.items()}
    name = definition(body)
    if name:
        found[f"def {name}"] = 2.0
    if _ERROR.search(segment) is not None:
        found[f"error {line.strip()[:_SHOWN]}"] = 2.0
    return found
