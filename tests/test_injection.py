"""Examples for InjectionTrigger and SystemInjector (CONTRACT §4)."""

from __future__ import annotations

import json

import pytest

from neuron_context import ConfigurationError, InjectionTrigger, SystemInjector


def _fires_at(trigger: InjectionTrigger, turns: range, token_count: int = 0) -> list[int]:
    return [turn for turn in turns if trigger.fires(turn, token_count)]


class TestInjectionTrigger:
    """InjectionTrigger."""

    def test_every_n_turns(self) -> None:
        """every_n_turns(3) fires on turns 3, 6 and 9 of 0..10."""
        assert _fires_at(InjectionTrigger.every_n_turns(3), range(11)) == [3, 6, 9]

    def test_every_turn(self) -> None:
        """every_n_turns(1) fires on every turn but turn 0."""
        assert _fires_at(InjectionTrigger.every_n_turns(1), range(5)) == [1, 2, 3, 4]

    def test_zero_never_fires(self) -> None:
        """every_n_turns(0) never fires."""
        assert _fires_at(InjectionTrigger.every_n_turns(0), range(-3, 50)) == []

    def test_turn_zero_never_fires(self) -> None:
        """No every_n_turns trigger fires on turn 0."""
        for n in range(1, 6):
            assert InjectionTrigger.every_n_turns(n).fires(0, 10**9) is False

    def test_negative_turns_never_fire(self) -> None:
        """A negative turn never fires, even when divisible."""
        assert InjectionTrigger.every_n_turns(2).fires(-4, 0) is False

    def test_every_n_turns_ignores_tokens(self) -> None:
        """The token count does not matter to every_n_turns."""
        trigger = InjectionTrigger.every_n_turns(2)
        assert trigger.fires(4, 0) is True
        assert trigger.fires(3, 10**9) is False

    def test_on_token_threshold_is_inclusive(self) -> None:
        """on_token_threshold fires when token_count >= threshold."""
        trigger = InjectionTrigger.on_token_threshold(100)
        assert trigger.fires(1, 99) is False
        assert trigger.fires(1, 100) is True
        assert trigger.fires(1, 101) is True
        assert trigger.fires(0, 100) is True

    def test_threshold_zero_always_fires(self) -> None:
        """A threshold of zero fires at zero tokens."""
        assert InjectionTrigger.on_token_threshold(0).fires(0, 0) is True

    def test_custom_predicate(self) -> None:
        """A custom trigger calls its predicate with (turn, token_count)."""
        calls: list[tuple[int, int]] = []

        def predicate(turn: int, tokens: int) -> bool:
            calls.append((turn, tokens))
            return turn == 2 and tokens > 10

        trigger = InjectionTrigger.custom(predicate)
        assert trigger.fires(2, 11) is True
        assert trigger.fires(2, 10) is False
        assert trigger.fires(3, 11) is False
        assert calls == [(2, 11), (2, 10), (3, 11)]

    @pytest.mark.parametrize("bad", [-1, 1.5, "3", True, None])
    def test_bad_n(self, bad: object) -> None:
        """A bad n raises naming it."""
        with pytest.raises(ConfigurationError, match=r"InjectionTrigger\.n"):
            InjectionTrigger.every_n_turns(bad)  # type: ignore[arg-type]

    @pytest.mark.parametrize("bad", [-1, 0.5, None])
    def test_bad_threshold(self, bad: object) -> None:
        """A bad threshold raises naming it."""
        with pytest.raises(ConfigurationError, match=r"InjectionTrigger\.threshold"):
            InjectionTrigger.on_token_threshold(bad)  # type: ignore[arg-type]

    def test_bad_predicate(self) -> None:
        """A non-callable predicate raises naming it."""
        with pytest.raises(ConfigurationError, match=r"InjectionTrigger\.predicate"):
            InjectionTrigger.custom("always")  # type: ignore[arg-type]

    def test_equality(self) -> None:
        """Triggers of the same kind and value are equal."""
        assert InjectionTrigger.every_n_turns(3) == InjectionTrigger.every_n_turns(3)
        assert InjectionTrigger.every_n_turns(3) != InjectionTrigger.on_token_threshold(3)


def _injector() -> SystemInjector:
    injector = SystemInjector()
    injector.add_rule(InjectionTrigger.every_n_turns(2), "every two")
    injector.add_rule(InjectionTrigger.on_token_threshold(1000), "big", once=True)
    injector.add_rule(InjectionTrigger.every_n_turns(3), "every three")
    injector.add_rule(InjectionTrigger.every_n_turns(1), "first turn", once=True)
    return injector


def _run(injector: SystemInjector, turns: range) -> list[list[str]]:
    return [injector.check(turn, turn * 200) for turn in turns]


class TestSystemInjector:
    """SystemInjector."""

    def test_no_rules(self) -> None:
        """An injector without rules returns nothing."""
        assert SystemInjector().check(5, 10**6) == []

    def test_returns_contents_in_rule_order(self) -> None:
        """The contents of the firing rules come in the order the rules were added."""
        injector = SystemInjector()
        injector.add_rule(InjectionTrigger.every_n_turns(3), "third")
        injector.add_rule(InjectionTrigger.on_token_threshold(10), "tokens")
        injector.add_rule(InjectionTrigger.every_n_turns(1), "always")
        injector.add_rule(InjectionTrigger.every_n_turns(2), "even")
        assert injector.check(6, 10) == ["third", "tokens", "always", "even"]
        assert injector.check(6, 9) == ["third", "always", "even"]
        assert injector.check(1, 0) == ["always"]
        assert injector.check(0, 0) == []

    def test_same_content_twice(self) -> None:
        """Two rules with the same content both appear when both fire."""
        injector = SystemInjector()
        injector.add_rule(InjectionTrigger.every_n_turns(1), "x")
        injector.add_rule(InjectionTrigger.every_n_turns(1), "x")
        assert injector.check(1, 0) == ["x", "x"]

    def test_rules_fire_again(self) -> None:
        """A rule without once fires every time its trigger does."""
        injector = SystemInjector()
        injector.add_rule(InjectionTrigger.on_token_threshold(5), "over")
        assert [injector.check(t, 5) for t in range(3)] == [["over"], ["over"], ["over"]]

    def test_once_rules_fire_once(self) -> None:
        """A once rule fires the first time its trigger does and never again."""
        injector = SystemInjector()
        injector.add_rule(InjectionTrigger.on_token_threshold(100), "warn", once=True)
        injector.add_rule(InjectionTrigger.on_token_threshold(100), "always")
        assert injector.check(1, 50) == []
        assert injector.check(2, 150) == ["warn", "always"]
        assert injector.check(3, 200) == ["always"]
        assert injector.check(4, 50) == []

    def test_rules_are_listed(self) -> None:
        """The rules keep their trigger, content and once flag."""
        injector = SystemInjector()
        trigger = InjectionTrigger.every_n_turns(4)
        injector.add_rule(trigger, "plan", once=True)
        assert [(r.trigger, r.content, r.once) for r in injector.rules] == [(trigger, "plan", True)]

    def test_bad_rule(self) -> None:
        """A non-trigger or a non-str content raises ConfigurationError."""
        injector = SystemInjector()
        with pytest.raises(ConfigurationError, match="trigger"):
            injector.add_rule("every turn", "x")  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="content"):
            injector.add_rule(InjectionTrigger.every_n_turns(1), 3)  # type: ignore[arg-type]
        assert injector.rules == []

    def test_state_is_json_serializable(self) -> None:
        """state() survives a json.dumps/json.loads round trip unchanged."""
        injector = _injector()
        _run(injector, range(1, 6))
        state = injector.state()
        assert json.loads(json.dumps(state)) == state

    def test_fresh_state_round_trips(self) -> None:
        """The state of an injector that never checked also round-trips."""
        state = _injector().state()
        restored = _injector()
        restored.restore(json.loads(json.dumps(state)))
        assert restored.state() == state

    def test_restore_continues_identically(self) -> None:
        """A fresh injector with the same rules, restored from the state, continues the same."""
        original = _injector()
        assert _run(original, range(1, 7)) == [
            ["first turn"],
            ["every two"],
            ["every three"],
            ["every two"],
            ["big"],
            ["every two", "every three"],
        ]
        restored = _injector()
        restored.restore(json.loads(json.dumps(original.state())))
        assert restored.state() == original.state()
        assert _run(restored, range(7, 20)) == _run(original, range(7, 20))
        assert restored.state() == original.state()

    def test_restore_remembers_once_rules(self) -> None:
        """A once rule that fired before the state was taken does not fire after restore."""
        original = SystemInjector()
        original.add_rule(InjectionTrigger.every_n_turns(1), "hello", once=True)
        assert original.check(1, 0) == ["hello"]
        restored = SystemInjector()
        restored.add_rule(InjectionTrigger.every_n_turns(1), "hello", once=True)
        restored.restore(original.state())
        assert restored.check(2, 0) == []

    @pytest.mark.parametrize(
        "bad",
        [
            None,
            [],
            "state",
            {},
            {"version": 99, "rules": []},
            {"version": 1},
            {"version": 1, "rules": "x"},
            {"version": 1, "rules": []},
            {"version": 1, "rules": [{"fired": 0, "last_turn": None}]},
            {"version": 1, "rules": [{"fired": "0", "last_turn": None}] * 4},
            {"version": 1, "rules": [{"fired": 0, "last_turn": "3"}] * 4},
            {"version": 1, "rules": [5, 5, 5, 5]},
            {"version": 1, "rules": [None] * 4},
            {"version": 1, "rules": [{"fired": -1, "last_turn": None}] * 4},
        ],
    )
    def test_bad_state(self, bad: object) -> None:
        """A state that does not fit the injector raises ConfigurationError."""
        injector = _injector()
        before = injector.state()
        with pytest.raises(ConfigurationError, match=r"SystemInjector\.restore"):
            injector.restore(bad)  # type: ignore[arg-type]
        assert injector.state() == before
