"""Examples for InjectionTrigger and SystemInjector (CONTRACT §4)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neuron_context import ConfigurationError, InjectionRule, InjectionTrigger, SystemInjector


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


def _always(turn: int, token_count: int) -> bool:
    """A custom predicate that always fires."""
    return True


def _never(turn: int, token_count: int) -> bool:
    """A custom predicate that never fires."""
    return False


class TestInjectionTriggerValidation:
    """InjectionTrigger built directly, and its arguments."""

    @pytest.mark.parametrize(
        ("args", "field"),
        [
            (("bogus",), "kind"),
            (("every_n_turns", -1), "value"),
            (("every_n_turns", 1.5), "value"),
            (("custom",), "predicate"),
            (("custom", 0, "always"), "predicate"),
            (("every_n_turns", 3, _always), "predicate"),
        ],
    )
    def test_bad_construction(self, args: tuple[object, ...], field: str) -> None:
        """A trigger that could not fire correctly is not built (no failing assert later)."""
        with pytest.raises(ConfigurationError, match=rf"InjectionTrigger\.{field}"):
            InjectionTrigger(*args)  # type: ignore[arg-type]

    @pytest.mark.parametrize(("turn", "tokens"), [(2.0, 0), (True, 0), (None, 0), (1, "5")])
    def test_fires_takes_ints(self, turn: object, tokens: object) -> None:
        """fires() takes ints, not floats, bools or None."""
        with pytest.raises(ConfigurationError, match=r"InjectionTrigger\.fires"):
            InjectionTrigger.every_n_turns(2).fires(turn, tokens)  # type: ignore[arg-type]

    def test_describe(self) -> None:
        """describe() says what the trigger is, a custom one by its qualified name."""
        assert InjectionTrigger.every_n_turns(3).describe() == "every_n_turns(3)"
        assert InjectionTrigger.on_token_threshold(9).describe() == "on_token_threshold(9)"
        assert InjectionTrigger.custom(_always).describe() == "custom(test_injection._always)"


class TestSystemInjectorValidation:
    """SystemInjector.check arguments and states from other injectors."""

    @pytest.mark.parametrize(
        ("turn", "tokens"),
        [(2.0, 0), (True, 0), (None, 0), (1, None), (1, 2.5), (-1, 0), (0, -1), (-(10**20), 0)],
    )
    def test_bad_check_arguments(self, turn: object, tokens: object) -> None:
        """check() takes ints >= 0 (of any size) and records nothing when refused."""
        injector = _injector()
        before = injector.state()
        with pytest.raises(ConfigurationError, match=r"SystemInjector\.check"):
            injector.check(turn, tokens)  # type: ignore[arg-type]
        assert injector.state() == before

    @given(
        rules=st.lists(
            st.tuples(
                st.sampled_from(["every", "threshold", "always"]),
                st.integers(0, 5),
                st.text(max_size=5),
                st.booleans(),
            ),
            max_size=5,
        ),
        turns=st.lists(st.tuples(st.integers(0, 50), st.integers(0, 2_000)), max_size=10),
    )
    def test_state_always_round_trips(
        self, rules: list[tuple[str, int, str, bool]], turns: list[tuple[int, int]]
    ) -> None:
        """restore(state()) works after any accepted checks, and the copy continues the same."""

        def build() -> SystemInjector:
            injector = SystemInjector()
            for kind, value, content, once in rules:
                trigger = {
                    "every": InjectionTrigger.every_n_turns(value),
                    "threshold": InjectionTrigger.on_token_threshold(value * 400),
                    "always": InjectionTrigger.custom(_always),
                }[kind]
                injector.add_rule(trigger, content, once=once)
            return injector

        original = build()
        for turn, tokens in turns:
            original.check(turn, tokens)
        copy = build()
        copy.restore(json.loads(json.dumps(original.state())))
        assert copy.state() == original.state()
        assert [copy.check(t, 10 * t) for t in range(5)] == [
            original.check(t, 10 * t) for t in range(5)
        ]

    @pytest.mark.parametrize(
        "change",
        [
            (InjectionTrigger.every_n_turns(5), "plan", False),
            (InjectionTrigger.on_token_threshold(3), "plan", False),
            (InjectionTrigger.every_n_turns(3), "other content", False),
            (InjectionTrigger.every_n_turns(3), "plan", True),
            (InjectionTrigger.custom(_always), "plan", False),
        ],
        ids=["n", "kind", "content", "once", "custom"],
    )
    def test_state_of_other_rules_is_refused(
        self, change: tuple[InjectionTrigger, str, bool]
    ) -> None:
        """A state taken with different rules (same count) is refused, naming the rule."""
        original = SystemInjector()
        original.add_rule(InjectionTrigger.on_token_threshold(0), "first")
        original.add_rule(InjectionTrigger.every_n_turns(3), "plan")
        original.check(3, 0)
        other = SystemInjector()
        other.add_rule(InjectionTrigger.on_token_threshold(0), "first")
        trigger, content, once = change
        other.add_rule(trigger, content, once=once)
        before = other.state()
        with pytest.raises(ConfigurationError, match=r"SystemInjector\.restore: rule 1 differs"):
            other.restore(original.state())
        assert other.state() == before

    def test_custom_triggers_by_name(self) -> None:
        """Custom triggers are told apart by their function's qualified name."""
        original = SystemInjector()
        original.add_rule(InjectionTrigger.custom(_always), "x")
        other = SystemInjector()
        other.add_rule(InjectionTrigger.custom(_never), "x")
        with pytest.raises(ConfigurationError, match="differs"):
            other.restore(original.state())
        same = SystemInjector()
        same.add_rule(InjectionTrigger.custom(_always), "x")
        same.restore(original.state())

    def test_version_one_state_is_read(self) -> None:
        """A state written before fingerprints (version 1) is still restored by count."""
        injector = SystemInjector()
        injector.add_rule(InjectionTrigger.every_n_turns(1), "hello", once=True)
        injector.restore({"version": 1, "rules": [{"fired": 1, "last_turn": 4}]})
        assert injector.check(5, 0) == []
        assert injector.state()["rules"][0]["last_turn"] == 4

    def test_rules_appended_directly(self) -> None:
        """A rule appended to ``rules`` directly is checked and kept in the state."""
        injector = SystemInjector()
        injector.rules.append(InjectionRule(InjectionTrigger.every_n_turns(1), "direct"))
        assert injector.check(1, 0) == ["direct"]
        assert injector.state()["rules"][0]["fired"] == 1

    @pytest.mark.parametrize(
        ("args", "field"),
        [
            (("every turn", "x"), "trigger"),
            ((InjectionTrigger.every_n_turns(1), None), "content"),
        ],
    )
    def test_rule_fields(self, args: tuple[object, object], field: str) -> None:
        """InjectionRule names the bad field."""
        with pytest.raises(ConfigurationError, match=rf"InjectionRule\.{field}"):
            InjectionRule(*args)  # type: ignore[arg-type]

    def test_once_must_be_a_bool(self) -> None:
        """``once`` is a bool."""
        with pytest.raises(ConfigurationError, match=r"InjectionRule\.once"):
            SystemInjector().add_rule(InjectionTrigger.every_n_turns(1), "x", once=1)  # type: ignore[arg-type]
