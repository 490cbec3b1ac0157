"""Hostile input at the wire: formats, provider values, the injector, the SDK providers.

Every public entry point of :mod:`neuron_context.formats`, the provider request and
response values, :class:`~neuron_context.SystemInjector` and
:class:`~neuron_context.PersistentContext` is fed Hypothesis-generated hostile values —
wrong types, huge and non-finite numbers, lone surrogates, deep nesting, cycles, Python
objects that are not JSON, and real wire payloads with one subtree replaced or deleted.
The oracle is always the same: a :class:`~neuron_context.NeuronContextError`, or a
correct result (never a raw ``TypeError``, ``AttributeError``, ``KeyError`` or
``RecursionError``). The SDK providers get hostile HTTP bodies from the loopback server
and must answer with a :class:`~neuron_context.ProviderError` or a usable reply.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
from collections.abc import Callable
from typing import Any

import pytest
from fake_llm_server import ANTHROPIC, OPENAI, FakeLLMServer, Flavour, Reply
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import tool_definitions, well_formed_conversations

from neuron_context import (
    CompletionRequest,
    CompletionResponse,
    ConfigurationError,
    ContextSection,
    InjectionTrigger,
    Message,
    NeuronContextError,
    PersistentContext,
    Role,
    SystemInjector,
    TokenUsage,
    ToolDefinition,
    formats,
)
from neuron_context.errors import ProviderError
from neuron_context.providers import AnthropicProvider, OpenAIProvider

# -- hostile values --------------------------------------------------------------------

_DELETE = object()
"""A mutation that deletes the chosen key or item instead of replacing it."""


def _nested(depth: int, leaf: object = 1) -> object:
    value: object = leaf
    for index in range(depth):
        value = [value] if index % 2 else {"k": value}
    return value


def _cyclic() -> object:
    cycle: dict[str, object] = {"type": "text"}
    cycle["text"] = cycle
    return cycle


_ODD_SCALARS: st.SearchStrategy[object] = st.sampled_from(
    [
        10**400,
        -(10**400),
        2**63,
        math.nan,
        math.inf,
        -math.inf,
        -0.0,
        5e-324,
        "\ud800",
        "\x00",
        "\u200b\ufeff",
        "",
        "<|endoftext|>",
        "[Summary of earlier conversation]\n",
        "data:;base64,",
        b"bytes",
        bytearray(b"x"),
        decimal.Decimal("1.5"),
        complex(1, 2),
        datetime.date(2024, 1, 1),
        frozenset({1}),
        {1, 2},
        (1, 2),
        object(),
        Ellipsis,
        Role.USER,
        Message.user("a message"),
    ]
)


def json_scalars() -> st.SearchStrategy[object]:
    """What ``json.loads`` can return as a leaf, NaN and infinities included."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=8),
        st.sampled_from(["text", "tool_use", "image", "user", "assistant", "tool", "function"]),
    )


def hostile_json() -> st.SearchStrategy[object]:
    """JSON-shaped values that are wrong in every way but syntax, plus deep nesting."""
    tree = st.recursive(
        json_scalars(),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.text(max_size=8), children, max_size=3)
        ),
        max_leaves=8,
    )
    return st.one_of(tree, st.integers(90, 3_000).map(_nested))


def hostile() -> st.SearchStrategy[object]:
    """Anything: hostile JSON, odd Python objects, non-str keys, cycles."""
    odd_trees = st.recursive(
        _ODD_SCALARS | json_scalars(),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.one_of(st.text(max_size=4), st.integers()), children, max_size=3)
            | st.tuples(children, children)
        ),
        max_leaves=6,
    )
    return st.one_of(hostile_json(), odd_trees, st.builds(_cyclic))


def _paths(value: object) -> list[tuple[object, ...]]:
    """The paths into ``value`` down to a few levels (it may already hold deep or cyclic
    parts from an earlier mutation)."""
    found: list[tuple[object, ...]] = []
    stack: list[tuple[object, tuple[object, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        found.append(path)
        if len(path) >= 12:
            continue
        if isinstance(item, dict):
            stack.extend((child, (*path, key)) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, (*path, index)) for index, child in enumerate(item))
    return found


def _replace(value: Any, path: tuple[object, ...], new: object) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    if not rest and new is _DELETE:
        del copy[head]
    else:
        copy[head] = _replace(value[head], rest, new)
    return copy


@st.composite
def mutated(draw: st.DrawFn, seeds: st.SearchStrategy[Any]) -> Any:
    """A valid payload from ``seeds`` with one to three subtrees replaced or deleted."""
    value = draw(seeds)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(value)))
        replacement = draw(st.just(_DELETE) | hostile()) if path else draw(hostile())
        value = _replace(value, path, replacement)
    return value


def _renderable(write: Callable[[list[Message]], Any]) -> st.SearchStrategy[Any]:
    def render(messages: list[Message]) -> Any:
        try:
            return write(messages)
        except ConfigurationError:  # a block the format cannot hold (a URL document)
            return None

    return well_formed_conversations(max_turns=6).map(render).filter(lambda x: x is not None)


OPENAI_WIRE = _renderable(formats.to_openai)
ANTHROPIC_WIRE = _renderable(lambda messages: formats.to_anthropic(messages)[1])
OUR_WIRE = _renderable(formats.to_dict)


def _outcome(call: Callable[[], object]) -> object:
    """``call()``'s result, or the NeuronContextError it raised; anything else fails."""
    try:
        return call()
    except NeuronContextError as exc:
        return exc


def _assert_messages(result: object) -> None:
    """A reader's correct result: a list of Message that writes back to plain JSON."""
    if isinstance(result, NeuronContextError):
        return
    assert isinstance(result, list)
    assert all(isinstance(message, Message) for message in result)
    formats.to_dict(result)


# -- formats ---------------------------------------------------------------------------


class TestReadersWithHostileInput:
    """from_openai, from_anthropic, from_dict, from_json and the tool readers."""

    @given(value=hostile())
    def test_any_value(self, value: object) -> None:
        """Any value given to a reader is read or refused with a NeuronContextError."""
        for read in (formats.from_openai, formats.from_anthropic):
            _assert_messages(_outcome(lambda read=read: read(value)))  # type: ignore[misc]
        _assert_messages(_outcome(lambda: formats.from_dict(value)))  # type: ignore[arg-type]
        _assert_messages(_outcome(lambda: formats.from_anthropic([], system=value)))  # type: ignore[arg-type]
        for read_tools in (formats.tools_from_openai, formats.tools_from_anthropic):
            _outcome(lambda read_tools=read_tools: read_tools(value))  # type: ignore[misc]

    @given(messages=st.lists(hostile(), max_size=4))
    def test_lists_of_anything(self, messages: list[object]) -> None:
        """A list of arbitrary values is read or refused with a NeuronContextError."""
        _assert_messages(_outcome(lambda: formats.from_openai(messages)))  # type: ignore[arg-type]
        _assert_messages(_outcome(lambda: formats.from_anthropic(messages)))  # type: ignore[arg-type]

    @given(payload=mutated(OPENAI_WIRE))
    def test_mutated_openai_messages(self, payload: object) -> None:
        """Real Chat Completions messages with a subtree replaced are read or refused."""
        _assert_messages(_outcome(lambda: formats.from_openai(payload)))  # type: ignore[arg-type]

    @given(payload=mutated(ANTHROPIC_WIRE))
    def test_mutated_anthropic_messages(self, payload: object) -> None:
        """Real Messages API messages with a subtree replaced are read or refused."""
        _assert_messages(_outcome(lambda: formats.from_anthropic(payload)))  # type: ignore[arg-type]

    @given(payload=mutated(OUR_WIRE))
    def test_mutated_our_json(self, payload: object) -> None:
        """Our own JSON with a subtree replaced is read or refused, as a dict and as text."""
        _assert_messages(_outcome(lambda: formats.from_dict(payload)))  # type: ignore[arg-type]
        try:
            text = json.dumps(payload)
        except (TypeError, ValueError, RecursionError):
            return  # not JSON: only from_dict can be given it
        _assert_messages(_outcome(lambda: formats.from_json(text)))

    @given(text=st.text(max_size=200) | st.binary(max_size=200))
    def test_from_json_any_text(self, text: str | bytes) -> None:
        """Any text or bytes is read or refused."""
        _assert_messages(_outcome(lambda: formats.from_json(text)))

    @given(depth=st.integers(100, 200_000))
    def test_deep_text(self, depth: int) -> None:
        """Text nested arbitrarily deep is a ConfigurationError, never a RecursionError."""
        wire = '{"format": "neuron-context", "version": 1, "messages": ' + "[" * depth
        result = _outcome(lambda: formats.from_json(wire + "]" * depth + "}"))
        assert isinstance(result, ConfigurationError)


def _assert_wire(result: object) -> None:
    """A writer's correct result: plain JSON."""
    if not isinstance(result, NeuronContextError):
        json.dumps(result)


class TestWritersWithHostileInput:
    """to_openai, to_anthropic, to_dict, to_json and the tool writers."""

    @given(messages=hostile(), system=hostile() | st.none())
    def test_any_value(self, messages: object, system: object) -> None:
        """Any messages or system argument is written or refused with a NeuronContextError."""
        _assert_wire(_outcome(lambda: formats.to_openai(messages, system=system)))  # type: ignore[arg-type]
        _assert_wire(_outcome(lambda: formats.to_anthropic(messages, system=system)))  # type: ignore[arg-type]
        _assert_wire(_outcome(lambda: formats.to_dict(messages)))  # type: ignore[arg-type]
        _outcome(lambda: formats.to_json(messages, indent=system))  # type: ignore[arg-type]
        _assert_wire(_outcome(lambda: formats.tools_to_openai(messages)))  # type: ignore[arg-type]
        _assert_wire(_outcome(lambda: formats.tools_to_anthropic(messages)))  # type: ignore[arg-type]

    @given(messages=well_formed_conversations(max_turns=4), extra=hostile())
    def test_one_bad_element(self, messages: list[Message], extra: object) -> None:
        """A valid list with one foreign element is refused, naming the element."""
        position = len(messages) // 2
        mixed = [*messages[:position], extra, *messages[position:]]
        for write in (formats.to_openai, formats.to_dict):
            result = _outcome(lambda write=write: write(mixed))  # type: ignore[misc]
            if isinstance(extra, Message):
                continue
            assert isinstance(result, ConfigurationError)
            assert str(result).startswith(f"messages[{position}] must be a Message")


# -- provider values, injector, persistent context ---------------------------------------


class TestValuesWithHostileInput:
    """CompletionRequest, CompletionResponse, TokenUsage, ProviderError, ContextSection."""

    @given(
        messages=hostile(),
        system=hostile(),
        tools=hostile(),
        model=hostile(),
        max_tokens=hostile(),
        temperature=hostile(),
    )
    def test_completion_request(self, **fields: object) -> None:
        """A request is built from valid fields only; anything else is a ConfigurationError."""
        messages = fields.pop("messages")
        result = _outcome(lambda: CompletionRequest(messages, **fields))  # type: ignore[arg-type]
        if isinstance(result, CompletionRequest):
            assert all(isinstance(m, Message) for m in result.messages)
            assert all(isinstance(t, ToolDefinition) for t in result.tools)
            assert result.temperature is None or math.isfinite(result.temperature)

    @given(message=hostile(), stop_reason=hostile(), usage=hostile())
    def test_completion_response(self, message: object, stop_reason: object, usage: object) -> None:
        """A response holds an assistant message, a StopReason and a TokenUsage or None."""
        result = _outcome(
            lambda: CompletionResponse(message, stop_reason=stop_reason, usage=usage)  # type: ignore[arg-type]
        )
        if isinstance(result, CompletionResponse):
            assert result.message.role is Role.ASSISTANT

    @given(input_tokens=hostile() | st.integers(), output_tokens=hostile() | st.integers())
    def test_token_usage(self, input_tokens: object, output_tokens: object) -> None:
        """Token counts are ints >= 0; the total never overflows."""
        result = _outcome(lambda: TokenUsage(input_tokens, output_tokens))  # type: ignore[arg-type]
        if isinstance(result, TokenUsage):
            assert result.total_tokens >= 0

    @given(retryable=hostile(), status_code=hostile(), retry_after=hostile() | st.floats())
    def test_provider_error(
        self, retryable: object, status_code: object, retry_after: object
    ) -> None:
        """A ProviderError carries a bool, an HTTP status and a finite wait >= 0, or refuses."""
        result = _outcome(
            lambda: ProviderError(
                "x",
                retryable=retryable,  # type: ignore[arg-type]
                status_code=status_code,  # type: ignore[arg-type]
                retry_after=retry_after,  # type: ignore[arg-type]
            )
        )
        if isinstance(result, ProviderError) and not isinstance(result, ConfigurationError):
            assert isinstance(result.retryable, bool)
            wait = result.retry_after
            assert wait is None or (math.isfinite(wait) and wait >= 0)

    @given(label=hostile(), content=hostile(), priority=hostile() | st.integers())
    def test_context_section(self, label: object, content: object, priority: object) -> None:
        """A section renders, or was refused at construction."""
        result = _outcome(lambda: ContextSection(label, content, priority))  # type: ignore[arg-type]
        if isinstance(result, ContextSection):
            context = PersistentContext()
            context.add_section(result)
            assert context.render().startswith("## ")
        refused = _outcome(lambda: PersistentContext().add_section(label))  # type: ignore[arg-type]
        assert isinstance(refused, NeuronContextError)
        _outcome(lambda: PersistentContext().remove_section(label))  # type: ignore[arg-type]


def _injector() -> SystemInjector:
    injector = SystemInjector()
    injector.add_rule(InjectionTrigger.every_n_turns(2), "two")
    injector.add_rule(InjectionTrigger.on_token_threshold(100), "big", once=True)
    injector.add_rule(InjectionTrigger.custom(lambda turn, tokens: turn == 3), "three")
    return injector


class TestInjectorWithHostileInput:
    """SystemInjector and InjectionTrigger."""

    @given(calls=st.lists(st.tuples(hostile() | st.integers(), hostile() | st.integers())))
    def test_check(self, calls: list[tuple[object, object]]) -> None:
        """check() answers or refuses; whatever was accepted, restore(state()) round-trips."""
        injector = _injector()
        for turn, tokens in calls:
            result = _outcome(lambda turn=turn, tokens=tokens: injector.check(turn, tokens))  # type: ignore[misc]
            assert isinstance(result, NeuronContextError | list)
        copy = _injector()
        copy.restore(json.loads(json.dumps(injector.state())))
        assert copy.state() == injector.state()

    @given(state=hostile() | mutated(st.builds(lambda: _injector().state())))
    def test_restore(self, state: object) -> None:
        """restore() accepts a state it can continue from, or refuses it and changes nothing."""
        injector = _injector()
        before = injector.state()
        result = _outcome(lambda: injector.restore(state))  # type: ignore[arg-type]
        if isinstance(result, NeuronContextError):
            assert injector.state() == before
        else:
            assert injector.check(4, 200) is not None
            json.dumps(injector.state())

    @given(kind=hostile(), value=hostile() | st.integers(), predicate=hostile())
    def test_trigger(self, kind: object, value: object, predicate: object) -> None:
        """A trigger that is built can be asked whether it fires."""
        builders = [
            lambda: InjectionTrigger(kind, value, predicate),  # type: ignore[arg-type]
            lambda: InjectionTrigger.every_n_turns(value),  # type: ignore[arg-type]
            lambda: InjectionTrigger.on_token_threshold(value),  # type: ignore[arg-type]
            lambda: InjectionTrigger.custom(predicate),  # type: ignore[arg-type]
        ]
        for build in builders:
            trigger = _outcome(build)
            if isinstance(trigger, InjectionTrigger) and trigger.kind != "custom":
                assert isinstance(trigger.fires(4, 200), bool)
            _outcome(lambda trigger=trigger: SystemInjector().add_rule(trigger, kind))  # type: ignore[misc, arg-type]


# -- SDK providers over HTTP -----------------------------------------------------------


class TestProviderRequestBodies:
    """What an SDK provider would send, for any conversation it is given."""

    @pytest.fixture
    def provider(self, flavour: Flavour) -> OpenAIProvider | AnthropicProvider:
        """The flavour's provider, built once for every example (an SDK client costs
        tens of milliseconds to build, more than an example)."""
        return flavour.provider("m", base_url="http://127.0.0.1:9", api_key="k")

    @settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        messages=well_formed_conversations(max_turns=6),
        tools=st.lists(tool_definitions(), max_size=2),
        system=st.none() | st.text(max_size=20),
    )
    def test_request_body_is_json(
        self,
        provider: OpenAIProvider | AnthropicProvider,
        messages: list[Message],
        tools: list[ToolDefinition],
        system: str | None,
    ) -> None:
        """The body is plain JSON, or the request is refused with a ConfigurationError."""
        request = CompletionRequest(messages, system=system, tools=tools)
        body = _outcome(lambda: provider.request_body(request))
        if not isinstance(body, NeuronContextError):
            json.dumps(body)
            assert isinstance(body, dict)


_PROVIDER_SETTINGS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _seed_replies() -> list[dict[str, object]]:
    """Valid replies of both APIs: text, empty, and with tool calls (and thinking)."""
    replies: list[dict[str, object]] = []
    for flavour in (OPENAI, ANTHROPIC):
        with_calls = flavour.reply("ok")
        if flavour is OPENAI:
            call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            with_calls["choices"][0]["message"]["tool_calls"] = [call]  # type: ignore[index]
        else:
            with_calls["content"] = [
                {"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "tool_use", "id": "c", "name": "f", "input": {"a": [1]}},
            ]
        replies += [flavour.reply("ok"), flavour.reply(None), with_calls]
    return replies


def _body(value: object) -> bytes:
    """``value`` as JSON text, iteratively (it may nest thousands of levels, or hold
    things JSON cannot, which are written as their type's name in a string; a cyclic
    value is cut off, which leaves text that is not JSON)."""
    out: list[str] = []
    stack: list[object] = [value]
    while stack and len(out) < 100_000:
        item = stack.pop()
        parts: list[object] = []
        if isinstance(item, _Literal):
            out.append(item.text)
        elif isinstance(item, dict):
            parts.append(_Literal("{"))
            for index, (key, child) in enumerate(item.items()):
                parts += [_Literal(("," if index else "") + json.dumps(str(key)) + ":"), child]
            parts.append(_Literal("}"))
        elif isinstance(item, list | tuple):
            parts.append(_Literal("["))
            for index, child in enumerate(item):
                parts += [_Literal(","), child] if index else [child]
            parts.append(_Literal("]"))
        elif item is None or isinstance(item, bool | int | float | str):
            out.append(json.dumps(item))
        else:
            out.append(json.dumps(type(item).__name__))
        stack.extend(reversed(parts))
    return "".join(out).encode("utf-8", "surrogatepass")


class _Literal:
    """Text :func:`_body` writes as it is."""

    def __init__(self, text: str) -> None:
        self.text = text


# Drawn by @given, not st.data(): describing a drawn strategy parses the source of its
# lambdas, which CPython 3.11 can fail at after a caught RecursionError.
_BODIES = st.one_of(
    mutated(st.sampled_from(_seed_replies())).map(_body),
    hostile_json().map(_body),
    st.binary(min_size=1, max_size=64),
)


class TestProvidersWithHostileBodies:
    """A 200 whose body is hostile is a ProviderError (or, when it is still a reply, read)."""

    @pytest.mark.anyio
    @_PROVIDER_SETTINGS
    @given(body=_BODIES)
    async def test_hostile_body(self, flavour: Flavour, server: FakeLLMServer, body: bytes) -> None:
        """Mutated replies (of either API), arbitrary JSON and raw bytes never leak a raw
        exception."""
        server.enqueue(Reply(body=body, headers=(("content-type", "application/json"),)))
        async with flavour.make(server) as provider:
            try:
                response: object = await provider.complete(CompletionRequest([Message.user("hi")]))
            except ProviderError as exc:
                response = exc
        if isinstance(response, ProviderError):
            assert response.retryable is False
        else:
            assert isinstance(response, CompletionResponse)
            assert response.message.role is Role.ASSISTANT
