"""System-prompt injection: rules that fire on turn counts or token thresholds."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs

from .._errors import ConfigurationError

__all__ = ["InjectionRule", "InjectionTrigger", "SystemInjector"]

_STATE_VERSION = 1


def _check_positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        msg = f"InjectionTrigger.{name} must be a non-negative int, got {value!r}"
        raise ConfigurationError(msg)
    return value


@attrs.frozen
class InjectionTrigger:
    """When a rule fires. Build one with :meth:`every_n_turns`, :meth:`on_token_threshold`
    or :meth:`custom`."""

    kind: Literal["every_n_turns", "on_token_threshold", "custom"]
    """Which kind of trigger this is."""
    value: int = 0
    """``n`` for ``every_n_turns``, the threshold for ``on_token_threshold``."""
    predicate: Callable[[int, int], bool] | None = attrs.field(default=None, eq=False)
    """For ``custom``: a function of ``(turn, token_count)``."""

    @classmethod
    def every_n_turns(cls, n: int) -> InjectionTrigger:
        """Fires when ``n > 0 and turn > 0 and turn % n == 0``."""
        return cls("every_n_turns", _check_positive_int("n", n))

    @classmethod
    def on_token_threshold(cls, threshold: int) -> InjectionTrigger:
        """Fires when ``token_count >= threshold``."""
        return cls("on_token_threshold", _check_positive_int("threshold", threshold))

    @classmethod
    def custom(cls, predicate: Callable[[int, int], bool]) -> InjectionTrigger:
        """Fires when ``predicate(turn, token_count)`` is true."""
        if not callable(predicate):
            msg = f"InjectionTrigger.predicate must be callable, got {predicate!r}"
            raise ConfigurationError(msg)
        return cls("custom", 0, predicate)

    def fires(self, turn: int, token_count: int) -> bool:
        """Whether the trigger fires at ``turn`` with ``token_count`` tokens."""
        if self.kind == "every_n_turns":
            n = self.value
            return n > 0 and turn > 0 and turn % n == 0
        if self.kind == "on_token_threshold":
            return token_count >= self.value
        assert self.predicate is not None
        return bool(self.predicate(turn, token_count))


@attrs.frozen
class InjectionRule:
    """A trigger and the content it injects."""

    trigger: InjectionTrigger
    content: str
    once: bool = False
    """Fire at most once (per injector state)."""


@attrs.define
class SystemInjector:
    """Holds injection rules and tells which fire on a turn.

    The rules are code and are not serialized; what the injector remembers (how often
    and when each rule fired) is a plain dict: :meth:`state` and :meth:`restore` move it
    to another worker.

    Examples:
        >>> injector = SystemInjector()
        >>> injector.add_rule(InjectionTrigger.every_n_turns(5), "Re-read the plan.")
        >>> injector.check(turn=10, token_count=0)
        ['Re-read the plan.']
    """

    rules: list[InjectionRule] = attrs.field(factory=list, init=False)
    _fired: list[int] = attrs.field(factory=list, init=False, repr=False)
    _last_turn: list[int | None] = attrs.field(factory=list, init=False, repr=False)

    def add_rule(self, trigger: InjectionTrigger, content: str, *, once: bool = False) -> None:
        """Add a rule; rules are checked in the order they were added."""
        if not isinstance(trigger, InjectionTrigger):
            msg = f"SystemInjector.add_rule: trigger must be an InjectionTrigger, got {trigger!r}"
            raise ConfigurationError(msg)
        if not isinstance(content, str):
            msg = f"SystemInjector.add_rule: content must be a str, got {content!r}"
            raise ConfigurationError(msg)
        self.rules.append(InjectionRule(trigger, content, once))
        self._fired.append(0)
        self._last_turn.append(None)

    def check(self, turn: int, token_count: int) -> list[str]:
        """The content of every rule that fires, in the order the rules were added."""
        fired: list[str] = []
        for index, rule in enumerate(self.rules):
            if rule.once and self._fired[index]:
                continue
            if rule.trigger.fires(turn, token_count):
                fired.append(rule.content)
                self._fired[index] += 1
                self._last_turn[index] = turn
        return fired

    def state(self) -> dict[str, Any]:
        """What the injector remembers, as a JSON-able dict."""
        return {
            "version": _STATE_VERSION,
            "rules": [
                {"fired": fired, "last_turn": last}
                for fired, last in zip(self._fired, self._last_turn, strict=True)
            ],
        }

    def restore(self, state: Mapping[str, Any]) -> None:
        """Load a :meth:`state` taken from an injector with the same rules."""
        if not isinstance(state, Mapping) or state.get("version") != _STATE_VERSION:
            msg = f"SystemInjector.restore: unsupported state {state!r}"
            raise ConfigurationError(msg)
        rules = state.get("rules")
        if not isinstance(rules, list) or len(rules) != len(self.rules):
            msg = (
                f"SystemInjector.restore: state has {len(rules) if isinstance(rules, list) else 0}"
                f" rules, the injector has {len(self.rules)}"
            )
            raise ConfigurationError(msg)
        fired: list[int] = []
        last: list[int | None] = []
        for entry in rules:
            # Fix (tests/test_injection.py): a non-mapping entry raised AttributeError, and a
            # negative or bool count was accepted.
            if not isinstance(entry, Mapping):
                msg = f"SystemInjector.restore: bad rule state {entry!r}"
                raise ConfigurationError(msg)
            count, turn = entry.get("fired"), entry.get("last_turn")
            if (
                isinstance(count, bool)
                or not isinstance(count, int)
                or count < 0
                or not (turn is None or (isinstance(turn, int) and not isinstance(turn, bool)))
            ):
                msg = f"SystemInjector.restore: bad rule state {entry!r}"
                raise ConfigurationError(msg)
            fired.append(count)
            last.append(turn)
        self._fired, self._last_turn = fired, last
