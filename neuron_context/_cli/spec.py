"""Stack specs: the readable strings (and TOML files) that name a strategy stack.

A user compares stacks from the command line, so a stack must be writable in one
argument and readable in a table row. A spec is a comma-separated list of steps, each
``kind`` or ``kind:value`` or ``kind:key=value``; a ``key=value`` item after a comma
belongs to the step before it::

    default                          the recommended stack (default_stack)
    default:target=0.6               the same, compacting down to 60% of the budget
    default:schedule=anthropic       the same, with a cache schedule priced for Anthropic
                                     (anthropic, anthropic-1h or openai; true: openai)
    window:40                        a sliding window of 40 messages
    clear-tools:keep=3,window:40     clear old tool results, then a window
    summarize:keep=10,max-summary=800,window:20

Several steps make a :class:`~neuron_context.CompositeStrategy` (cheapest first: it
stops as soon as the history fits). Every step gets the budget and the counter of the
run; ``summarize`` and ``default`` get the summarizer chosen with ``--provider``.

A TOML file (read with the standard library's ``tomllib``) says the same with names::

    name = "clear, then a window"
    [[steps]]
    kind = "clear-tools"
    keep = 3
    [[steps]]
    kind = "window"
    keep = 40

or ``stack = "clear-tools:keep=3,window:40"`` in place of the steps.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

import attrs

from .._counting.counter import BaseCounter
from .._counting.pricing import cost_model
from .._errors import ConfigurationError, show
from .._strategies.clearing import ToolResultClearingStrategy
from .._strategies.composite import CompositeStrategy
from .._strategies.default.schedule import CacheSchedule
from .._strategies.strategy import ContextStrategy
from .._strategies.strip import StripToolCallsStrategy
from .._strategies.summarization import SummarizationStrategy
from .._strategies.window import SlidingWindowStrategy
from ..formats._transcripts.storage import printable, read_bytes
from ..providers._base import Provider

__all__ = ["KINDS", "StackSpec", "Step", "parse_spec"]

Value = int | float | bool | str

KINDS: Mapping[str, tuple[str, ...]] = {
    "default": ("target", "recent", "schedule"),
    "window": ("keep", "start-on-user"),
    "clear-tools": ("keep", "min-reclaim", "placeholder"),
    "summarize": ("keep", "max-summary"),
    "strip-tools": (),
}
"""Each step kind and its options; the first option is the one ``kind:value`` sets."""

_DEFAULT_KEEP = {"window": 20, "clear-tools": 3, "summarize": 10}


@attrs.frozen
class Step:
    """One strategy of a stack: its kind and options."""

    kind: str
    """A key of :data:`KINDS`."""
    options: Mapping[str, Value] = attrs.field(factory=dict)
    """Its options by name (``keep``, ``min-reclaim``, ...)."""

    def _int(self, key: str, default: int) -> int:
        value = self.options.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            msg = f"{self.kind}: {key} must be a whole number >= 0, got {show(value)}"
            raise ConfigurationError(msg)
        return value

    def _share(self, key: str) -> float:
        value = self.options[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
            msg = f"{self.kind}: {key} must be a number in (0, 1], got {show(value)}"
            raise ConfigurationError(msg)
        return float(value)

    def _schedule(self) -> CacheSchedule | None:
        """The ``default`` step's cache schedule: ``schedule=`` a preset's name, ``true``
        (the openai preset) or ``false``; ``false`` when not given. Its
        clock is off: a replay tells it the gap between calls."""
        value = self.options.get("schedule", False)
        if value is False:
            return None
        name = "openai" if value is True else value
        if not isinstance(name, str):
            msg = f"default: schedule must be true, false or a cost model's name, got {show(value)}"
            raise ConfigurationError(msg)
        return CacheSchedule(cost_model(name), clock=None)

    def build(self, budget: int, counter: BaseCounter, provider: Provider) -> ContextStrategy:
        """The strategy this step names, for ``budget`` tokens."""
        keep = self._int("keep", _DEFAULT_KEEP.get(self.kind, 0))
        if self.kind == "default":
            from .._strategies.default import default_stack
            from .._summary.extractive import ExtractiveSummarizer

            offline = isinstance(provider, ExtractiveSummarizer)  # default_stack's own default
            stack = default_stack(budget, counter=counter, summarizer=None if offline else provider)
            if "target" in self.options:
                stack = attrs.evolve(stack, target=self._share("target"))
            if "recent" in self.options:
                stack = attrs.evolve(stack, recent=self._share("recent"))
            if "schedule" in self.options:
                stack = attrs.evolve(stack, schedule=self._schedule())
            return stack
        if self.kind == "window":
            start = self.options.get("start-on-user", False)
            if not isinstance(start, bool):
                msg = f"window: start-on-user must be true or false, got {show(start)}"
                raise ConfigurationError(msg)
            return SlidingWindowStrategy(keep, budget, counter=counter, start_on_user=start)
        if self.kind == "clear-tools":
            placeholder = self.options.get("placeholder", "[tool result cleared]")
            return ToolResultClearingStrategy(
                keep,
                budget,
                counter=counter,
                placeholder=str(placeholder),
                min_reclaim_tokens=self._int("min-reclaim", 0),
            )
        if self.kind == "summarize":
            summary = self._int("max-summary", max(1, budget // 4))
            return SummarizationStrategy(
                provider, keep, budget, counter=counter, max_summary_tokens=max(1, summary)
            )
        return StripToolCallsStrategy(budget, counter=counter)


@attrs.frozen
class StackSpec:
    """A stack named by a spec: its label and steps."""

    label: str
    """What the reports call it (the spec as written, or a TOML file's ``name``)."""
    steps: tuple[Step, ...]
    """Its strategies, in order."""

    @property
    def summarizes(self) -> bool:
        """Whether the stack calls a summarizer."""
        return any(step.kind in ("default", "summarize") for step in self.steps)

    def build(self, budget: int, counter: BaseCounter, provider: Provider) -> ContextStrategy:
        """The stack for ``budget`` tokens: one strategy, or a composite of the steps."""
        built = [step.build(budget, counter, provider) for step in self.steps]
        if len(built) == 1:
            return built[0]
        return CompositeStrategy(built, budget, counter=counter)


def _value(text: str) -> Value:
    lowered = text.strip().lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    for kind in (int, float):
        try:
            return kind(text.replace("_", ""))
        except ValueError:
            continue
    return text.strip()


def _check_step(kind: str, options: Mapping[str, Value], where: str) -> Step:
    if kind not in KINDS:
        msg = f"{where}: unknown step {show(kind)}; choose from {', '.join(KINDS)}"
        raise ConfigurationError(msg)
    for key in options:
        if key not in KINDS[kind]:
            allowed = ", ".join(KINDS[kind]) or "none"
            msg = f"{where}: {kind} has no option {show(key)} (options: {allowed})"
            raise ConfigurationError(msg)
    return Step(kind, dict(options))


def _parse_text(text: str, where: str) -> tuple[Step, ...]:
    steps: list[tuple[str, dict[str, Value]]] = []
    for raw in text.split(","):
        item = raw.strip()
        if not item:
            msg = f"{where}: empty step"
            raise ConfigurationError(msg)
        head, sep, rest = item.partition(":")
        head = head.strip()
        if not sep and "=" in head and steps:  # an option of the step before
            key, _, value = head.partition("=")
            steps[-1][1][key.strip()] = _value(value)
            continue
        if head not in KINDS:
            msg = f"{where}: unknown step {show(head)}; choose from {', '.join(KINDS)}"
            raise ConfigurationError(msg)
        options: dict[str, Value] = {}
        if sep:
            key, eq, value = rest.partition("=")
            if eq:
                options[key.strip()] = _value(value)
            elif KINDS[head]:
                options[KINDS[head][0]] = _value(rest)
            else:
                msg = f"{where}: {head} takes no value, got {show(rest)}"
                raise ConfigurationError(msg)
        steps.append((head, options))
    return tuple(_check_step(kind, options, where) for kind, options in steps)


def _parse_toml(path: Path) -> StackSpec:
    where = printable(str(path))
    raw = read_bytes(path)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        msg = f"{where}: cannot read the stack: {exc}"
        raise ConfigurationError(msg) from exc
    except RecursionError:
        msg = f"{where}: cannot read the stack: it is nested too deeply"
        raise ConfigurationError(msg) from None
    label = data.get("name", path.stem)
    if "stack" in data:
        return StackSpec(str(label), _parse_text(str(data["stack"]), where))
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        msg = f"{where}: needs a 'stack' string or a list of [[steps]]"
        raise ConfigurationError(msg)
    steps: list[Step] = []
    for index, raw in enumerate(raw_steps):
        if not isinstance(raw, dict) or not isinstance(raw.get("kind"), str):
            msg = f"{where}: steps[{index}].kind is missing"
            raise ConfigurationError(msg)
        options = {k.replace("_", "-"): v for k, v in raw.items() if k != "kind"}
        for key, value in options.items():
            if not isinstance(value, int | float | bool | str):
                msg = f"{where}: steps[{index}].{key} must be a number, boolean or string"
                raise ConfigurationError(msg)
        steps.append(_check_step(raw["kind"], options, f"{where}: steps[{index}]"))
    return StackSpec(str(label), tuple(steps))


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # a spec too long to be a file name
        return False


def parse_spec(text: str) -> StackSpec:
    """The stack that ``text`` names: a spec string, or the path of a ``.toml`` file.

    Raises:
        ConfigurationError: an unknown step or option, or an unreadable TOML file; the
            message names the spec and what is wrong.
    """
    if text.endswith(".toml") or _is_file(text):
        return _parse_toml(Path(text))
    return StackSpec(text, _parse_text(text, f"--strategy {show(text)}"))
