"""Hostile input to the messages and the counters: a library error early, or a right result.

Every public constructor and entry point of the message values and the counters is fed
Hypothesis-generated hostile values (wrong types, values that are not JSON, extreme
numbers, deep nesting, cycles, OpenAI-style dicts where messages belong). Each must either
raise a :class:`~neuron_context.NeuronContextError` (never a raw ``TypeError``,
``AttributeError``, ``RecursionError`` or ``OverflowError``) or give a correct result.
Last, one large text is counted exactly in bounded memory.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import json
import math
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import json_values, tool_inputs

from neuron_context import (
    BaseCounter,
    CalibratedCounter,
    ConfigurationError,
    Image,
    Message,
    NeuronContextError,
    Role,
    Text,
    TokenCounter,
    TokenizerCounter,
    ToolDefinition,
    ToolResult,
    ToolUse,
)

URL = "https://example.com/cat.png"


class _Opaque:
    """An arbitrary object."""


def _cycle() -> dict[str, object]:
    value: dict[str, object] = {"a": [1]}
    value["self"] = value
    return value


def _list_cycle() -> list[object]:
    value: list[object] = [1]
    value.append(value)
    return value


NOT_JSON: list[object] = [
    float("nan"),
    float("inf"),
    -float("inf"),
    {1, 2},
    frozenset({"a"}),
    b"bytes",
    bytearray(b"x"),
    decimal.Decimal("1.5"),
    1 + 2j,
    datetime.date(2024, 1, 1),
    datetime.datetime(2024, 1, 1, 12, 0),
    uuid.UUID(int=1),
    _Opaque(),
    object(),
    print,
    10**5000,
]
"""Values that are not JSON, each on its own."""


def not_json() -> st.SearchStrategy[object]:
    """A value that is not JSON, or a container holding one, or with a non-str key."""
    leaf = st.sampled_from(NOT_JSON)
    keys = st.one_of(st.integers(), st.tuples(st.integers()), st.none(), st.booleans())
    return st.one_of(
        leaf,
        st.builds(_cycle),
        st.builds(_list_cycle),
        st.builds(lambda key, value: {key: value}, keys, json_values()),
    )


@st.composite
def hostile_inputs(draw: st.DrawFn) -> dict[str, object]:
    """A tool input with one hostile value somewhere inside."""
    base = draw(tool_inputs())
    path = draw(st.lists(st.sampled_from(["k", 0]), max_size=4))
    value: object = draw(not_json())
    for step in reversed(path):
        value = {"k": value} if step == "k" else [value]
    return {**base, "bad": value}


def hostile() -> st.SearchStrategy[object]:
    """Anything at all: wrong types, extreme numbers, not-JSON values, containers of them."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.sampled_from([10**400, -(10**400), 2**63, 2**53 + 1, -1, 0]),
        st.floats(),
        st.sampled_from([5e-324, 1e308, -1e308, 1e-320, float("nan"), float("inf")]),
        st.text(max_size=8),
        st.binary(max_size=4),
        st.sampled_from(NOT_JSON),
    )
    return st.one_of(
        scalars,
        st.lists(scalars, max_size=3),
        st.tuples(scalars),
        st.dictionaries(st.text(max_size=3), scalars, max_size=2),
        st.just({"role": "user", "content": "hi"}),
    )


def library_error_or(call: Callable[[], object]) -> object:
    """Run ``call``: it may raise only a NeuronContextError; returns its result or None."""
    try:
        return call()
    except NeuronContextError:
        return None


# -- JSON values ---------------------------------------------------------------------


class TestJsonValues:
    """A ToolUse input and a ToolDefinition schema are JSON values, checked at construction."""

    @given(value=hostile_inputs())
    def test_tool_use_input_that_is_not_json(self, value: dict[str, object]) -> None:
        """A value that is not JSON anywhere in the input is a ConfigurationError naming the
        field and the path."""
        with pytest.raises(ConfigurationError, match=r"ToolUse\.input\['bad'\]") as error:
            ToolUse(id="c1", name="f", input=value)
        assert "RecursionError" not in str(error.value)

    @given(value=hostile_inputs())
    def test_schema_that_is_not_json(self, value: dict[str, object]) -> None:
        """The same for ToolDefinition.input_schema."""
        with pytest.raises(ConfigurationError, match=r"ToolDefinition\.input_schema\['bad'\]"):
            ToolDefinition(name="f", input_schema=value)

    @pytest.mark.parametrize("value", NOT_JSON, ids=lambda value: type(value).__name__)
    def test_each_kind_is_named(self, value: object) -> None:
        """Each kind of non-JSON value is rejected with the path to it."""
        with pytest.raises(ConfigurationError, match=r"ToolUse\.input\['a'\]\[1\]"):
            ToolUse(id="c1", name="f", input={"a": [0, value]})

    def test_tuple_and_int_keys(self) -> None:
        """Keys must be str, also deep inside."""
        with pytest.raises(ConfigurationError, match=r"ToolUse\.input\['x'\] keys must be str"):
            ToolUse(id="c1", name="f", input={"x": {(1, 2): 3}})
        with pytest.raises(ConfigurationError, match=r"ToolUse\.input keys must be str"):
            ToolUse(id="c1", name="f", input={1: 2})

    def test_cycles(self) -> None:
        """A value that contains itself is rejected, not recursed into."""
        with pytest.raises(ConfigurationError, match="cycle"):
            ToolUse(id="c1", name="f", input=_cycle())
        with pytest.raises(ConfigurationError, match="cycle"):
            ToolUse(id="c1", name="f", input={"a": _list_cycle()})

    @pytest.mark.parametrize("depth", [101, 500, 5_000, 50_000])
    def test_deep_nesting_is_a_library_error(self, depth: int) -> None:
        """Nesting beyond the documented limit (100) is a ConfigurationError, never a
        RecursionError."""
        value: object = 1
        for index in range(depth):
            value = {"k": value} if index % 2 else [value]
        with pytest.raises(ConfigurationError, match="deeper than 100"):
            ToolUse(id="c1", name="f", input={"a": value})
        with pytest.raises(ConfigurationError, match="deeper than 100"):
            ToolDefinition(name="f", input_schema={"a": value})

    def test_nesting_up_to_the_limit_is_fine(self) -> None:
        """A value nested exactly 100 levels constructs and counts."""
        value: object = 1
        for _ in range(99):
            value = [value]
        use = ToolUse(id="c1", name="f", input={"a": value})
        message = Message.assistant(tool_uses=[use])
        compact = "{" + '"a":' + "[" * 99 + "1" + "]" * 99 + "}"
        assert TokenCounter().estimate_message(message) == 4 + 1 + math.ceil(len(compact) / 4)

    @given(value=tool_inputs())
    def test_json_values_are_copied_and_kept(self, value: dict[str, object]) -> None:
        """A JSON input is kept equal, copied, and priced as its compact JSON."""
        use = ToolUse(id="c1", name="f", input=value)
        assert use.input == value
        compact = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        expected = 4 + 1 + -(-len(compact.encode("utf-8", "surrogatepass")) // 4)
        assert TokenCounter().estimate_message(Message.assistant(tool_uses=[use])) == expected


# -- constructors --------------------------------------------------------------------


class TestMessageConstructors:
    """Message and block constructors given anything."""

    @given(text=hostile(), uses=hostile())
    def test_assistant(self, text: object, uses: object) -> None:
        """Message.assistant: a ConfigurationError, or a message holding what was given."""
        message = library_error_or(lambda: Message.assistant(text, tool_uses=uses))  # type: ignore[arg-type]
        if message is not None:
            assert isinstance(text, str)
            assert isinstance(message, Message)

    def test_assistant_none(self) -> None:
        """None as text or tool uses is an error, not an empty message."""
        with pytest.raises(ConfigurationError, match="text must be a str, got NoneType"):
            Message.assistant(None)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="tool_uses"):
            Message.assistant("x", tool_uses=None)  # type: ignore[arg-type]

    def test_tool_result_of_a_dict_says_dict(self) -> None:
        """A dict as tool result content is named as a dict."""
        with pytest.raises(ConfigurationError, match="got dict"):
            Message.tool_result("c1", {"a": 1})  # type: ignore[arg-type]

    @given(tool_use_id=hostile(), content=hostile(), is_error=hostile())
    def test_tool_result(self, tool_use_id: object, content: object, is_error: object) -> None:
        """Message.tool_result: a ConfigurationError, or a tool message."""
        message = library_error_or(
            lambda: Message.tool_result(tool_use_id, content, is_error=is_error)  # type: ignore[arg-type]
        )
        if message is not None:
            assert isinstance(message, Message)
            assert message.role is Role.TOOL

    @given(role=hostile(), content=hostile())
    def test_message(self, role: object, content: object) -> None:
        """Message(role=..., content=...): a ConfigurationError, or a message."""
        library_error_or(lambda: Message(role=role, content=content))

    @given(fields=st.fixed_dictionaries({"id": hostile(), "name": hostile(), "input": hostile()}))
    def test_tool_use(self, fields: dict[str, object]) -> None:
        """ToolUse(...): a ConfigurationError, or a tool use whose input is JSON."""
        use = library_error_or(lambda: ToolUse(**fields))  # type: ignore[arg-type]
        if isinstance(use, ToolUse):
            json.dumps(use.input, allow_nan=False)

    @given(
        fields=st.dictionaries(
            st.sampled_from(["media_type", "data", "url", "width", "height"]), hostile()
        )
    )
    def test_image(self, fields: dict[str, object]) -> None:
        """Image(...): a ConfigurationError, or an image every pricing can count."""
        image = library_error_or(lambda: Image(**fields))  # type: ignore[arg-type]
        if isinstance(image, Image):
            for pricing in ("fixed", "openai", "anthropic"):
                cost = TokenCounter(image_pricing=pricing).estimate_content([image])
                assert isinstance(cost, int)
                assert cost >= 0

    @pytest.mark.parametrize("pricing", ["openai", "anthropic"])
    def test_image_extremes(self, pricing: str) -> None:
        """A width of 10**400 is refused at construction; the largest accepted sizes count."""
        with pytest.raises(ConfigurationError, match=r"Image\.width"):
            Image(url=URL, width=10**400, height=1)
        counter = TokenCounter(image_pricing=pricing)  # type: ignore[arg-type]
        for width, height in [(2**53, 1), (1, 2**53), (2**53, 2**53), (0, 0), (0, 2**53)]:
            cost = counter.estimate_content([Image(url=URL, width=width, height=height)])
            assert 0 <= cost <= 1_600 or pricing == "openai"


# -- counters ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exact() -> TokenizerCounter:
    """The o200k_base counter."""
    return TokenizerCounter.from_encoding("o200k_base")


def _counters(exact: TokenizerCounter) -> list[BaseCounter]:
    return [TokenCounter(), TokenCounter(2.5), exact, CalibratedCounter(TokenCounter())]


class TestCounterEntryPoints:
    """Every estimate method of every counter, given anything."""

    @settings(max_examples=40)
    @given(value=hostile())
    def test_estimate_text(self, exact: TokenizerCounter, value: object) -> None:
        """estimate_text: a ConfigurationError unless given a str, then a count."""
        for counter in _counters(exact):
            result = library_error_or(functools.partial(counter.estimate_text, value))  # type: ignore[arg-type]
            assert (result is None) != isinstance(value, str)

    @settings(max_examples=40)
    @given(value=hostile(), position=st.integers(0, 2))
    def test_estimate_messages(self, exact: TokenizerCounter, value: object, position: int) -> None:
        """estimate_messages and estimate_message: a ConfigurationError for anything that
        is not a Message where one belongs."""
        history: list[object] = [Message.user("hi"), Message.assistant("there")]
        history.insert(position, value)
        for counter in _counters(exact):
            with pytest.raises(ConfigurationError, match="Message"):
                counter.estimate_messages(history)  # type: ignore[arg-type]
            if value in ([], ()):
                assert counter.estimate_messages(value) == 0
            else:
                with pytest.raises(ConfigurationError, match="Message"):
                    counter.estimate_messages(value)  # type: ignore[arg-type]
            with pytest.raises(ConfigurationError, match="Message"):
                counter.estimate_message(value)  # type: ignore[arg-type]
            library_error_or(functools.partial(counter.estimate_content, value))  # type: ignore[arg-type]
            library_error_or(functools.partial(counter.estimate_tools, value))  # type: ignore[arg-type]

    def test_openai_dicts_point_to_from_openai(self) -> None:
        """OpenAI-style dicts are refused with a pointer to formats.from_openai."""
        dicts = [{"role": "user", "content": "hi"}] * 70
        with pytest.raises(ConfigurationError, match=r"formats\.from_openai"):
            TokenCounter().estimate_messages(dicts)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match=r"formats\.from_openai"):
            TokenCounter().estimate_messages(dicts[:1])  # type: ignore[arg-type]

    @given(ratio=hostile(), option=st.sampled_from(["image_tokens", "message_overhead"]))
    def test_token_counter_numbers(self, ratio: object, option: str) -> None:
        """TokenCounter with extreme numbers: a ConfigurationError, or a counter that counts
        a long text without overflow."""
        counter = library_error_or(lambda: TokenCounter(ratio))  # type: ignore[arg-type]
        if isinstance(counter, TokenCounter):
            assert counter.estimate_text("x" * 10_000) >= 1
            assert counter.estimate_messages([Message.user("y" * 1_000)] * 3) >= 3
        other = library_error_or(lambda: TokenCounter(**{option: ratio}))  # type: ignore[arg-type]
        if isinstance(other, TokenCounter):
            assert other.estimate_message(Message.user("x")) >= 0

    @pytest.mark.parametrize("ratio", [5e-324, 1e-320, 10**400, float("nan"), -1, 0, True])
    def test_token_counter_extremes_refused(self, ratio: object) -> None:
        """The ratios that used to overflow later are refused at construction."""
        with pytest.raises(ConfigurationError, match=r"TokenCounter\.chars_per_token"):
            TokenCounter(ratio)  # type: ignore[arg-type]

    def test_token_counter_largest_ratio(self) -> None:
        """A huge (finite) ratio counts every non-empty text as one token."""
        assert TokenCounter(1e300).estimate_text("x" * 10_000) == 1

    @given(
        options=st.dictionaries(
            st.sampled_from(["alpha", "min_factor", "max_factor", "initial_factor"]), hostile()
        ),
        reported=hostile(),
    )
    def test_calibrated_counter(self, options: dict[str, object], reported: object) -> None:
        """CalibratedCounter and observe with extreme numbers: a ConfigurationError, or
        counts that stay ints."""
        counter = library_error_or(lambda: CalibratedCounter(TokenCounter(), **options))  # type: ignore[arg-type]
        if not isinstance(counter, CalibratedCounter):
            return
        history = [Message.user("x" * 400)]
        library_error_or(lambda: counter.observe(history, reported))  # type: ignore[arg-type]
        for _ in range(3):
            counter.observe(history, 10**15)
            counter.observe(history, 1)
            count = counter.estimate_messages(history)
            assert isinstance(count, int)
            assert count >= 1

    @pytest.mark.parametrize(
        "options",
        [
            {"alpha": 10**400},
            {"max_factor": 1e308, "initial_factor": 1e308},
            {"min_factor": 10**400},
        ],
    )
    def test_calibrated_extremes_refused(self, options: dict[str, object]) -> None:
        """The calibration options that used to overflow are refused."""
        with pytest.raises(ConfigurationError, match="CalibratedCounter"):
            CalibratedCounter(TokenCounter(), **options)  # type: ignore[arg-type]

    def test_tiny_factor_never_prices_a_message_at_zero(self) -> None:
        """With min_factor=1e-320 a message still costs at least one token."""
        counter = CalibratedCounter(TokenCounter(), min_factor=1e-320, initial_factor=1e-320)
        image = Message(role=Role.USER, content=(Image(url=URL),))
        assert counter.estimate_message(image) == 1

    def test_observe_extremes(self) -> None:
        """A report of any size is clamped to max_factor (10**400 is no float overflow);
        a negative one is a ConfigurationError."""
        history = [Message.user("x" * 400)]
        for reported in (2**53, 2**64 - 1, 10**400):
            counter = CalibratedCounter(TokenCounter())
            assert counter.observe(history, reported)
            assert counter.factor == counter.max_factor
        with pytest.raises(ConfigurationError, match="reported_input_tokens"):
            counter.observe(history, -1)

    @given(path=hostile())
    def test_from_file(self, path: object) -> None:
        """TokenizerCounter.from_file: a library error for anything but a readable file."""
        with pytest.raises(NeuronContextError):
            TokenizerCounter.from_file(path)  # type: ignore[arg-type]

    @given(name=hostile())
    def test_from_encoding(self, name: object) -> None:
        """TokenizerCounter.from_encoding: a ConfigurationError for anything but a known name."""
        with pytest.raises(ConfigurationError, match="encoding must be one of"):
            TokenizerCounter.from_encoding(name)  # type: ignore[arg-type]

    def test_from_file_none_and_encoding_list(self) -> None:
        """The two examples of the issue."""
        with pytest.raises(ConfigurationError, match="from_file"):
            TokenizerCounter.from_file(None)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match="encoding"):
            TokenizerCounter.from_encoding(["x"])  # type: ignore[arg-type]


# -- large texts ---------------------------------------------------------------------

_PIECES = [
    "a",
    "B",
    "7",
    "123",
    " ",
    "  ",
    "\n",
    "\n\n",
    " \n",
    "\r\n",
    "\t",
    ".",
    "/",
    "'s",
    "é",
    "中",
    "😀",
    "-",
    "=",
    " A",
    "\u0301",
    "word",
    " word",
]


class TestLargeTexts:
    """One large text is counted in pieces with exactly the whole text's count."""

    @settings(max_examples=12, deadline=None)
    @given(
        pieces=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=400),
        name=st.sampled_from(["o200k_base", "cl100k_base"]),
    )
    def test_pieces_sum_to_the_whole(self, pieces: list[str], name: str) -> None:
        """A text longer than the piece size counts as the tokenizer counts it whole."""
        counter = TokenizerCounter.from_encoding(name)
        unit = "".join(pieces)
        text = unit * (80_000 // len(unit) + 1)
        whole = len(counter.tokenizer.encode(text, add_special_tokens=False))
        assert counter.estimate_text(text) == whole
        assert counter.estimate_texts(["x", text, text]) == [1, whole, whole]
        message = Message(role=Role.TOOL, content=(ToolResult(tool_use_id="c", content=text),))
        assert counter.estimate_message(message) == 4 + whole

    def test_a_large_log_in_bounded_memory(self, session_cache_dir: Path) -> None:
        """A 10 MB log counts with under 100 MB of extra memory and its whole count."""
        script = textwrap.dedent(
            """
            import resource
            from neuron_context import TokenizerCounter
            counter = TokenizerCounter.from_encoding("o200k_base")
            counter.estimate_text("warm up " * 1000)
            line = "2024-05-01 12:00:{:02d} INFO worker-{} request id={} took {}ms ok\\n"
            text = "".join(line.format(i % 60, i % 7, i, i % 1000) for i in range(160_000))
            assert len(text) > 10_000_000
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            count = counter.estimate_text(text)
            after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            # Every line starts with a digit after a newline, where the pre-tokenizer
            # splits anyway: the whole log counts as the sum of its lines, and so as the
            # sum of runs of 300 lines (20 kB each), which the tokenizer encodes whole.
            lines = text.splitlines(keepends=True)
            runs = ["".join(lines[i : i + 300]) for i in range(0, len(lines), 300)]
            encoded = counter.tokenizer.encode_batch_fast(runs, add_special_tokens=False)
            print(count, (after - before) // 1024, sum(len(e) for e in encoded))
            """
        )
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=False, env=env
        )
        assert done.returncode == 0, done.stderr
        output = done.stdout.split()
        count, extra_mb, by_lines = map(int, output)
        assert extra_mb < 100
        assert count == by_lines
        # The same holds for a sample small enough to tokenize whole.
        line = "2024-05-01 12:00:{:02d} INFO worker-{} request id={} took {}ms ok\n"
        sample = "".join(line.format(i % 60, i % 7, i, i % 1000) for i in range(2_000))
        counter = TokenizerCounter.from_encoding("o200k_base")
        whole = len(counter.tokenizer.encode(sample, add_special_tokens=False))
        assert whole == sum(counter.estimate_texts(sample.splitlines(keepends=True)))

    def test_text_blocks_know_their_size(self) -> None:
        """A text block prices the same as its text, however it was built."""
        for text in ["", "abc", "é" * 7, "\ud83d", "😀" * 3]:
            block = Text(text=text)
            expected = math.ceil(len(text.encode("utf-8", "surrogatepass")) / 4)
            assert TokenCounter().estimate_content([block]) == expected
