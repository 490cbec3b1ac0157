"""System-prompt injection: rules that fire on turn counts or token thresholds.

Rules are code (a custom trigger is a function), so they are never serialized; what the
injector remembers about them (how often and on which turn each fired) is a plain dict.
That dict carries a fingerprint of each rule (its trigger, whether it fires once, a hash
of its content; a custom trigger by its function's qualified name), so a state taken
from an injector with other rules is refused instead of being applied to the wrong ones.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs

from .._errors import ConfigurationError, show
from .._validators import bool_, instance_of, non_negative_int, one_of, require_int, string

__all__ = ["InjectionRule", "InjectionTrigger", "SystemInjector"]

_STATE_VERSION = 2
"""Version 2 added the rule fingerprints; a version-1 state (without them) is still read."""
_KINDS = ("every_n_turns", "on_token_threshold", "custom")


def _check_predicate(
    instance: InjectionTrigger,
    _: attrs.Attribute[Any],
    value: Callable[[int, int], bool] | None,
) -> None:
    if instance.kind == "custom":
        if not callable(value):
            msg = f"InjectionTrigger.predicate must be callable, got {show(value)}"
            raise ConfigurationError(msg)
    elif value is not None:
        msg = f"InjectionTrigger.predicate is only for custom triggers, not {instance.kind}"
        raise ConfigurationError(msg)


@attrs.frozen
class InjectionTrigger:
    """When a rule fires. Build one with :meth:`every_n_turns`, :meth:`on_token_threshold`
    or :meth:`custom`."""

    kind: Literal["every_n_turns", "on_token_threshold", "custom"] = attrs.field(
        validator=one_of(_KINDS)
    )
    """Which kind of trigger this is."""
    value: int = attrs.field(default=0, validator=non_negative_int())
    """``n`` for ``every_n_turns``, the threshold for ``on_token_threshold``."""
    predicate: Callable[[int, int], bool] | None = attrs.field(
        default=None, eq=False, validator=_check_predicate
    )
    """For ``custom``: a function of ``(turn, token_count)``."""

    @classmethod
    def every_n_turns(cls, n: int) -> InjectionTrigger:
        """Fires when ``n > 0 and turn > 0 and turn % n == 0``."""
        return cls("every_n_turns", require_int(n, "InjectionTrigger.n"))

    @classmethod
    def on_token_threshold(cls, threshold: int) -> InjectionTrigger:
        """Fires when ``token_count >= threshold``."""
        return cls("on_token_threshold", require_int(threshold, "InjectionTrigger.threshold"))

    @classmethod
    def custom(cls, predicate: Callable[[int, int], bool]) -> InjectionTrigger:
        """Fires when ``predicate(turn, token_count)`` is true."""
        return cls("custom", 0, predicate)

    def fires(self, turn: int, token_count: int) -> bool:
        """Whether the trigger fires at ``turn`` with ``token_count`` tokens.

        Raises:
            ConfigurationError: ``turn`` or ``token_count`` is not an int.
        """
        require_int(turn, "InjectionTrigger.fires: turn", minimum=None)
        require_int(token_count, "InjectionTrigger.fires: token_count", minimum=None)
        if self.kind == "every_n_turns":
            n = self.value
            return n > 0 and turn > 0 and turn % n == 0
        if self.kind == "on_token_threshold":
            return token_count >= self.value
        # A custom trigger always has a predicate (checked at construction).
        return self.predicate is not None and bool(self.predicate(turn, token_count))

    def describe(self) -> str:
        """What the trigger is, as code would build it: ``every_n_turns(3)``, or
        ``custom(module.function)`` naming the predicate's qualified name."""
        if self.kind != "custom":
            return f"{self.kind}({self.value})"
        function = self.predicate
        name = getattr(function, "__qualname__", None) or type(function).__qualname__
        module = getattr(function, "__module__", None) or type(function).__module__
        return f"custom({module}.{name})"


@attrs.frozen
class InjectionRule:
    """A trigger and the content it injects."""

    trigger: InjectionTrigger = attrs.field(
        validator=instance_of(InjectionTrigger, "an InjectionTrigger")
    )
    """When the rule fires."""
    content: str = attrs.field(validator=string())
    """What it injects."""
    once: bool = attrs.field(default=False, validator=bool_())
    """Fire at most once (per injector state)."""

    def fingerprint(self) -> str:
        """The rule as a state records it: trigger, ``once`` and a hash of the content,
        e.g. ``"every_n_turns(3) once content=sha256:5d1be7e9b4b3a1c2"``."""
        digest = hashlib.sha256(self.content.encode("utf-8", "surrogatepass")).hexdigest()
        once = " once" if self.once else ""
        return f"{self.trigger.describe()}{once} content=sha256:{digest[:16]}"


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
        """Add a rule; rules are checked in the order they were added.

        Raises:
            ConfigurationError: ``trigger`` is not an :class:`InjectionTrigger`,
                ``content`` not a ``str`` or ``once`` not a ``bool``.
        """
        self.rules.append(InjectionRule(trigger, content, once))
        self._sync()

    def _sync(self) -> None:
        """Keep one entry of bookkeeping per rule, also for rules appended to
        :attr:`rules` directly."""
        missing = len(self.rules) - len(self._fired)
        if missing > 0:
            self._fired.extend([0] * missing)
            self._last_turn.extend([None] * missing)
        elif missing < 0:
            del self._fired[len(self.rules) :], self._last_turn[len(self.rules) :]

    def check(self, turn: int, token_count: int) -> list[str]:
        """The content of every rule that fires, in the order the rules were added.

        Raises:
            ConfigurationError: ``turn`` or ``token_count`` is not an int >= 0.
        """
        require_int(turn, "SystemInjector.check: turn")
        require_int(token_count, "SystemInjector.check: token_count")
        self._sync()
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
        """What the injector remembers, as a JSON-able dict (with each rule's
        :meth:`~InjectionRule.fingerprint`)."""
        self._sync()
        return {
            "version": _STATE_VERSION,
            "rules": [
                {"rule": rule.fingerprint(), "fired": fired, "last_turn": last}
                for rule, fired, last in zip(self.rules, self._fired, self._last_turn, strict=True)
            ],
        }

    def restore(self, state: Mapping[str, Any]) -> None:
        """Load a :meth:`state` taken from an injector with the same rules.

        Nothing changes when the state is refused.

        Raises:
            ConfigurationError: the state is not one :meth:`state` writes, or was taken
                from an injector with other rules (another number, another trigger,
                content or ``once``; the message names the first rule that differs).
        """
        if not isinstance(state, Mapping) or state.get("version") not in (1, _STATE_VERSION):
            msg = f"SystemInjector.restore: unsupported state {show(state)}"
            raise ConfigurationError(msg)
        self._sync()
        rules = state.get("rules")
        if not isinstance(rules, list) or len(rules) != len(self.rules):
            msg = (
                f"SystemInjector.restore: state has {len(rules) if isinstance(rules, list) else 0}"
                f" rules, the injector has {len(self.rules)}"
            )
            raise ConfigurationError(msg)
        fired: list[int] = []
        last: list[int | None] = []
        for index, (entry, rule) in enumerate(zip(rules, self.rules, strict=True)):
            count, turn = self._entry(entry, rule, index, fingerprinted=state["version"] > 1)
            fired.append(count)
            last.append(turn)
        self._fired, self._last_turn = fired, last

    @staticmethod
    def _entry(
        entry: object, rule: InjectionRule, index: int, *, fingerprinted: bool
    ) -> tuple[int, int | None]:
        """The ``(fired, last_turn)`` of one rule's state, checked."""
        if not isinstance(entry, Mapping):
            msg = f"SystemInjector.restore: bad rule state {show(entry)}"
            raise ConfigurationError(msg)
        if fingerprinted and entry.get("rule") != rule.fingerprint():
            msg = (
                f"SystemInjector.restore: rule {index} differs: the state was taken with "
                f"{show(entry.get('rule'))}, this injector has {show(rule.fingerprint())}"
            )
            raise ConfigurationError(msg)
        try:
            count = require_int(entry.get("fired"), "fired")
            raw_turn = entry.get("last_turn")
            turn = None if raw_turn is None else require_int(raw_turn, "last_turn")
        except ConfigurationError:
            msg = f"SystemInjector.restore: bad rule state {show(entry)}"
            raise ConfigurationError(msg) from None
        return count, turn
