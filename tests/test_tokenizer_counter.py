"""TokenizerCounter: exact counts, the shared block rules, and its constructors."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers, processors

from neuron_context import (
    BaseCounter,
    Compaction,
    ConfigurationError,
    Document,
    Image,
    Message,
    RedactedThinking,
    Role,
    SlidingWindowStrategy,
    Text,
    Thinking,
    TokenCounter,
    TokenizerCounter,
    TokenizerError,
    ToolDefinition,
    ToolResult,
    ToolUse,
)

ENCODING_NAMES = ("cl100k_base", "o200k_base")

REFERENCE: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "tiktoken_reference.json").read_text(encoding="utf-8")
)
CASES: list[dict[str, Any]] = REFERENCE["cases"]
URL = "https://example.com/cat.png"

# The tiny tokenizer: words, each punctuation character alone, one special token.
WORDS = ["[UNK]", "[PAD]", "<|endoftext|>", "hello", "world", "<", "|", "endoftext", ">", "/"]
ENDOFTEXT_PIECES = 5  # "<", "|", "endoftext", "|", ">"


@pytest.fixture(scope="session", params=ENCODING_NAMES)
def counter(request: pytest.FixtureRequest, session_cache_dir: Path) -> TokenizerCounter:
    """A counter of each encoding (loaded once per process)."""
    return TokenizerCounter.from_encoding(request.param)


@pytest.fixture(scope="session")
def o200k(session_cache_dir: Path) -> TokenizerCounter:
    """The o200k_base counter."""
    return TokenizerCounter.from_encoding("o200k_base")


def tiny_tokenizer(*, padding: bool = True, special: bool = True) -> Tokenizer:
    """A WordLevel tokenizer with a special ``<|endoftext|>``, a BOS template, padding to 16
    and truncation to 2 (as far as asked)."""
    tokenizer = Tokenizer(
        models.WordLevel({word: i for i, word in enumerate(WORDS)}, unk_token="[UNK]")
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation()]
    )
    if special:
        tokenizer.add_special_tokens([AddedToken("<|endoftext|>", special=True), "[PAD]"])
        tokenizer.post_processor = processors.TemplateProcessing(
            single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", 2)]
        )
    if padding:
        tokenizer.enable_padding(length=16, pad_id=1, pad_token="[PAD]")
        tokenizer.enable_truncation(max_length=2)
    return tokenizer


def rule_cost(counter: TokenCounter | TokenizerCounter, message: Message) -> int:
    """A message's cost by CONTRACT §2, spelled out with the counter's text counts."""
    text = counter.estimate_text
    total = counter.message_overhead
    for block in message.content:
        if isinstance(block, Text):
            total += text(block.text)
        elif isinstance(block, Thinking):
            total += text(block.thinking)
        elif isinstance(block, RedactedThinking):
            total += text(block.data)
        elif isinstance(block, Compaction):
            total += text(block.content)
        elif isinstance(block, ToolUse):
            arguments = json.dumps(block.input, separators=(",", ":"), ensure_ascii=False)
            total += text(block.name) + text(arguments)
        elif isinstance(block, ToolResult):
            for item in block.content:
                total += text(item.text) if isinstance(item, Text) else counter.image_tokens
        elif isinstance(block, Image):
            total += counter.image_tokens
        elif isinstance(block, Document):
            total += counter.document_tokens
    return total


def sample_messages() -> list[Message]:
    """Messages with every kind of block."""
    call = ToolUse(id="toolu_1", name="get_weather", input={"city": "Zürich", "days": [1, 2]})
    return [
        Message.system("You are terse. <|endoftext|>"),
        Message.user("What's the weather in Zürich? 東京 too 🌦️"),
        Message(
            role=Role.ASSISTANT,
            content=(
                Thinking(thinking="Need the tool.", signature="sig-not-counted"),
                RedactedThinking(data="opaque=="),
                Text(text="Checking."),
                call,
            ),
        ),
        Message.tool_result("toolu_1", [Text(text="12°C, rain"), Image(url=URL)]),
        Message(role=Role.USER, content=(Image(data="aGk=", media_type="image/png"),)),
        Message(role=Role.USER, content=(Document(media_type="text/plain", text="notes"),)),
        Message(role=Role.USER, content=(Compaction(content="Earlier: greetings."),)),
        Message(role=Role.USER, content=()),
        Message.user(""),
    ]


class TestEstimateText:
    """TokenizerCounter.estimate_text."""

    @pytest.mark.parametrize("case", CASES, ids=[case["label"] for case in CASES])
    def test_reference_counts(self, counter: TokenizerCounter, case: dict[str, Any]) -> None:
        """Each reference text counts exactly what tiktoken counts."""
        assert counter.encoding is not None
        assert counter.estimate_text(case["text"]) == case[counter.encoding]["count"]

    def test_empty(self, counter: TokenizerCounter) -> None:
        """The empty text is 0 tokens."""
        assert counter.estimate_text("") == 0

    def test_special_looking_text_is_ordinary(self, counter: TokenizerCounter) -> None:
        """``<|endoftext|>`` costs the 7 tokens of its characters, not 1."""
        assert counter.estimate_text("<|endoftext|>") == 7

    def test_lone_surrogate(self, counter: TokenizerCounter) -> None:
        """A lone surrogate counts as U+FFFD, as tiktoken replaces it."""
        assert counter.estimate_text("x\ud800y") == counter.estimate_text("x\ufffdy") == 3

    def test_megabyte_text(self, o200k: TokenizerCounter) -> None:
        """A long text counts as the sum of its repeated parts when they cannot merge."""
        part = "The quick brown fox jumps over the lazy dog.\n"
        assert o200k.estimate_text(part * 20_000) == o200k.estimate_text(part) * 20_000


class TestEstimateTexts:
    """TokenizerCounter.estimate_texts, the batch path."""

    def test_matches_single_texts(self, counter: TokenizerCounter) -> None:
        """Counting in a batch gives each text's own count, in order."""
        texts = [case["text"] for case in CASES]
        assert counter.estimate_texts(texts) == [counter.estimate_text(t) for t in texts]

    def test_empty_and_repeated(self, o200k: TokenizerCounter) -> None:
        """Empty texts count 0 and repeated texts count the same each time."""
        assert o200k.estimate_texts(["", "hello world", "", "hello world", "{}"]) == [
            0,
            2,
            0,
            2,
            1,
        ]

    def test_no_texts(self, o200k: TokenizerCounter) -> None:
        """No texts, no counts."""
        assert o200k.estimate_texts([]) == []
        assert o200k.estimate_texts(["", ""]) == [0, 0]

    def test_surrogate_in_batch(self, o200k: TokenizerCounter) -> None:
        """A text with a lone surrogate does not spoil the others of its batch."""
        assert o200k.estimate_texts(["hello world", "x\udc00y"]) == [2, 3]


class TestMessageRules:
    """The block rules, identical to TokenCounter's except for counting text."""

    def test_image_only_message(self, counter: TokenizerCounter) -> None:
        """An image-only message costs 300 + 4."""
        message = Message(role=Role.USER, content=(Image(url=URL),))
        assert counter.estimate_message(message) == 304

    def test_empty_message(self, counter: TokenizerCounter) -> None:
        """A message with empty content costs the overhead, 4."""
        assert counter.estimate_message(Message(role=Role.USER, content=())) == 4

    def test_tool_use_counts_name_and_compact_json(self, counter: TokenizerCounter) -> None:
        """A get_time tool use costs 4 + "get_time" (2) + "{}" (1)."""
        message = Message.assistant(tool_uses=[ToolUse(id="toolu_1", name="get_time", input={})])
        assert counter.estimate_message(message) == 7

    def test_tool_use_input_is_compact_non_ascii_json(self, o200k: TokenizerCounter) -> None:
        """Tool input is counted as compact JSON that keeps non-ASCII characters."""
        message = Message.assistant(
            tool_uses=[ToolUse(id="t", name="get_time", input={"tz": "Europe/Zürich"})]
        )
        assert o200k.estimate_message(message) == 4 + 2 + o200k.estimate_text(
            '{"tz":"Europe/Zürich"}'
        )

    def test_every_block_kind(self, counter: TokenizerCounter) -> None:
        """Every message costs what the rules say, alone and summed."""
        messages = sample_messages()
        expected = [rule_cost(counter, m) for m in messages]
        assert [counter.estimate_message(m) for m in sample_messages()] == expected
        assert counter.estimate_messages(sample_messages()) == sum(expected)

    def test_same_rules_as_token_counter(self, o200k: TokenizerCounter) -> None:
        """The heuristic counter's costs follow the same rule spelled out here."""
        heuristic = TokenCounter()
        messages = sample_messages()
        assert [heuristic.estimate_message(m) for m in messages] == [
            rule_cost(heuristic, m) for m in messages
        ]

    def test_opt_in_pricing(self) -> None:
        """Sized images and content-priced documents follow the counter's options."""
        counter = TokenizerCounter.from_encoding(
            "o200k_base", image_pricing="anthropic", document_pricing="content"
        )
        image = Message(role=Role.USER, content=(Image(url=URL, width=750, height=100),))
        document = Message(
            role=Role.USER, content=(Document(media_type="text/plain", text="hello world"),)
        )
        assert counter.estimate_message(image) == 4 + 100
        assert counter.estimate_message(document) == 4 + 2

    def test_custom_overhead_and_fixed_costs(self) -> None:
        """image_tokens, document_tokens and message_overhead are the counter's."""
        counter = TokenizerCounter.from_encoding(
            "cl100k_base", image_tokens=85, document_tokens=1000, message_overhead=3
        )
        message = Message(
            role=Role.USER,
            content=(Image(url=URL), Document(media_type="application/pdf", url=URL)),
        )
        assert counter.estimate_message(message) == 3 + 85 + 1000


class TestEstimateTools:
    """TokenizerCounter.estimate_tools."""

    def test_name_description_and_schema(self, counter: TokenizerCounter) -> None:
        """A tool costs its name, its description and its compact JSON schema."""
        schema = {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        }
        tool = ToolDefinition(
            name="get_weather", description="Get the weather for a city.", input_schema=schema
        )
        compact = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
        expected = {"o200k_base": 2 + 7 + 19, "cl100k_base": 2 + 7 + 18}
        assert counter.encoding is not None
        assert counter.estimate_tools([tool]) == expected[counter.encoding]
        assert counter.estimate_text(compact) == expected[counter.encoding] - 9


@attrs.frozen(init=False)
class Recording(TokenizerCounter):
    """A TokenizerCounter that records each batch of texts it tokenizes (what was not cached)."""

    batches: list[list[str]] = attrs.field(factory=list, kw_only=True, eq=False, repr=False)

    def estimate_texts(self, texts: Sequence[str]) -> list[int]:
        """Record the batch, then count it."""
        self.batches.append(list(texts))
        return super().estimate_texts(texts)


class TestCacheKey:
    """Which counters share cached message costs."""

    def test_same_encoding_shares(self, session_cache_dir: Path) -> None:
        """Two counters of the same encoding and options share cached costs and the tokenizer."""
        first = Recording.from_encoding("o200k_base")
        second = Recording.from_encoding("o200k_base")
        assert first.tokenizer is second.tokenizer
        message = Message.user("shared cost")
        assert first.estimate_message(message) == second.estimate_message(message)
        assert first.batches == [["shared cost"]]
        assert second.batches == []

    def test_options_and_encodings_differ(self, session_cache_dir: Path) -> None:
        """Other options, another encoding, or the parent class never share a cost."""
        message = Message.user("counted by each")
        counters = [
            Recording.from_encoding("o200k_base"),
            Recording.from_encoding("o200k_base", message_overhead=3),
            Recording.from_encoding("cl100k_base"),
        ]
        TokenizerCounter.from_encoding("o200k_base").estimate_message(message)
        for counter in counters:
            counter.estimate_message(message)
        assert [counter.batches for counter in counters] == [[["counted by each"]]] * 3

    def test_given_tokenizers_are_unique(self) -> None:
        """Counters built from a tokenizer object never share costs, even the same object."""
        tokenizer = tiny_tokenizer(padding=False, special=False)
        first, second = Recording(tokenizer), Recording(tokenizer)
        message = Message.user("hello")
        first.estimate_message(message)
        second.estimate_message(message)
        assert first.batches == second.batches == [["hello"]]

    def test_cached_cost_is_reused(self) -> None:
        """A message counted once is not tokenized again by the same counter."""
        counter = TokenizerCounter(tiny_tokenizer())
        message = Message.user("hello world")
        assert counter.estimate_message(message) == 4 + 2
        assert counter.estimate_messages([message, message]) == 12


class TestConstructor:
    """TokenizerCounter(tokenizer, ...)."""

    def test_padding_truncation_and_specials_off(self) -> None:
        """Counts are not padded, truncated or framed, and special-looking text is plain."""
        counter = TokenizerCounter(tiny_tokenizer())
        assert counter.estimate_text("hello") == 1
        assert counter.estimate_text("hello world hello world") == 4
        assert counter.estimate_text("<|endoftext|>") == ENDOFTEXT_PIECES
        assert counter.estimate_text("hello <|endoftext|> world") == 2 + ENDOFTEXT_PIECES

    def test_callers_tokenizer_unchanged(self) -> None:
        """The caller's tokenizer keeps its padding, truncation and special tokens."""
        tokenizer = tiny_tokenizer()
        counter = TokenizerCounter(tokenizer)
        assert counter.tokenizer is not tokenizer
        assert tokenizer.padding is not None
        assert tokenizer.truncation is not None
        assert not tokenizer.encode_special_tokens
        assert len(tokenizer.encode("hello").ids) == 16
        assert tokenizer.encode("<|endoftext|>", add_special_tokens=False).ids[0] == 2

    def test_ready_tokenizer_is_not_copied(self) -> None:
        """A tokenizer that needs no change is used as it is."""
        tokenizer = tiny_tokenizer(padding=False, special=False)
        assert TokenizerCounter(tokenizer).tokenizer is tokenizer

    def test_non_special_added_tokens_apply(self) -> None:
        """Added tokens that are not special still tokenize as one, as for the model."""
        tokenizer = tiny_tokenizer()
        tokenizer.add_tokens(["hello world"])
        assert TokenizerCounter(tokenizer).estimate_text("hello world world") == 2

    @pytest.mark.parametrize("value", ["tokenizer.json", None, 3])
    def test_not_a_tokenizer(self, value: Any) -> None:
        """Anything but a tokenizers.Tokenizer is a ConfigurationError."""
        with pytest.raises(ConfigurationError, match=r"tokenizer must be a tokenizers\.Tokenizer"):
            TokenizerCounter(value)

    @pytest.mark.parametrize(
        ("option", "value"),
        [
            ("image_tokens", -1),
            ("document_tokens", 1.5),
            ("message_overhead", True),
            ("tokens_per_page", "10"),
            ("image_pricing", "google"),
            ("document_pricing", "pages"),
        ],
    )
    def test_bad_options(self, option: str, value: Any) -> None:
        """A bad option value is a ConfigurationError that names the option."""
        tokenizer = tiny_tokenizer(padding=False, special=False)
        with pytest.raises(ConfigurationError, match=option):
            TokenizerCounter(tokenizer, **{option: value})
        with pytest.raises(ConfigurationError, match=option):
            TokenizerCounter.from_encoding("o200k_base", **{option: value})

    def test_uncopyable_tokenizer(self) -> None:
        """A tokenizer that must be copied but cannot be is a TokenizerError."""
        tokenizer = tiny_tokenizer()
        tokenizer.pre_tokenizer = pre_tokenizers.PreTokenizer.custom(_Splitter())
        with pytest.raises(TokenizerError, match="cannot prepare the tokenizer"):
            TokenizerCounter(tokenizer)

    def test_encoding_failure(self) -> None:
        """A tokenizer that fails while encoding raises TokenizerError."""
        tokenizer = tiny_tokenizer(padding=False, special=False)
        tokenizer.pre_tokenizer = pre_tokenizers.PreTokenizer.custom(_Splitter(fail=True))
        counter = TokenizerCounter(tokenizer)
        with pytest.raises(TokenizerError, match="failed to encode"):
            counter.estimate_text("hello")
        with pytest.raises(TokenizerError):
            counter.estimate_messages([Message.user("hello")])

    def test_defaults_and_repr(self) -> None:
        """The defaults are TokenCounter's, and the repr leaves the tokenizer out."""
        counter = TokenizerCounter(tiny_tokenizer(padding=False, special=False))
        assert (counter.image_tokens, counter.document_tokens, counter.message_overhead) == (
            300,
            500,
            4,
        )
        assert (counter.image_pricing, counter.document_pricing) == ("fixed", "fixed")
        assert counter.tokens_per_page == 1500
        assert counter.encoding is None
        assert repr(counter).startswith("TokenizerCounter(encoding=None, image_tokens=300")


class _Splitter:
    """A custom pre-tokenizer (cannot be serialized); fails when asked to."""

    def __init__(self, *, fail: bool = False) -> None:
        self.fail = fail

    def pre_tokenize(self, pretok: Any) -> None:
        if self.fail:
            msg = "custom pre-tokenizer failed"
            raise RuntimeError(msg)


class TestFromFile:
    """TokenizerCounter.from_file."""

    def test_round_trip(self, tmp_path: Path) -> None:
        """A saved tokenizer.json counts without padding, truncation or special tokens."""
        path = tmp_path / "tokenizer.json"
        tiny_tokenizer().save(str(path))
        for source in (path, str(path)):
            counter = TokenizerCounter.from_file(source, message_overhead=2)
            assert counter.message_overhead == 2
            assert counter.estimate_text("hello world hello") == 3
            assert counter.estimate_text("<|endoftext|>") == ENDOFTEXT_PIECES
            assert counter.estimate_message(Message.user("hello </")) == 2 + 3

    def test_missing_file(self, tmp_path: Path) -> None:
        """A missing file is a TokenizerError naming the path."""
        with pytest.raises(TokenizerError, match=r"missing\.json") as info:
            TokenizerCounter.from_file(tmp_path / "missing.json")
        assert info.value.__cause__ is not None

    @pytest.mark.parametrize("content", ["", "{not json", '{"model": 3}', "[]"])
    def test_not_a_tokenizer_file(self, tmp_path: Path, content: str) -> None:
        """A file that is not a tokenizer.json is a TokenizerError."""
        path = tmp_path / "tokenizer.json"
        path.write_text(content, encoding="utf-8")
        with pytest.raises(TokenizerError, match="cannot load a tokenizer"):
            TokenizerCounter.from_file(path)

    def test_directory(self, tmp_path: Path) -> None:
        """A directory is a TokenizerError."""
        with pytest.raises(TokenizerError):
            TokenizerCounter.from_file(tmp_path)

    def test_unknown_option(self, tmp_path: Path) -> None:
        """An unknown keyword option is a ConfigurationError."""
        path = tmp_path / "tokenizer.json"
        tiny_tokenizer().save(str(path))
        with pytest.raises(ConfigurationError, match="unknown TokenizerCounter options"):
            TokenizerCounter.from_file(path, chars_per_token=4.0)  # type: ignore[call-arg]


class TestFromEncoding:
    """TokenizerCounter.from_encoding."""

    @pytest.mark.parametrize("name", ["p50k_base", "r50k_base", "gpt-4o", ""])
    def test_unknown_encoding(self, name: str) -> None:
        """An unknown encoding is a ConfigurationError."""
        with pytest.raises(ConfigurationError, match="encoding must be one of"):
            TokenizerCounter.from_encoding(name)

    def test_equality_and_repr(self, session_cache_dir: Path) -> None:
        """Counters of the same encoding and options are equal, and the repr names it."""
        first = TokenizerCounter.from_encoding("cl100k_base")
        assert first == TokenizerCounter.from_encoding("cl100k_base")
        assert hash(first) == hash(TokenizerCounter.from_encoding("cl100k_base"))
        assert first != TokenizerCounter.from_encoding("cl100k_base", image_tokens=1)
        assert first != TokenizerCounter.from_encoding("o200k_base")
        assert repr(first).startswith("TokenizerCounter(encoding='cl100k_base', image_tokens=300")

    def test_tokenizer_is_plain(self, counter: TokenizerCounter) -> None:
        """The encoding's tokenizer has no padding, truncation or added tokens."""
        tokenizer = counter.tokenizer
        assert tokenizer.padding is None
        assert tokenizer.truncation is None
        assert tokenizer.get_added_tokens_decoder() == {}

    def test_is_a_counter(self, counter: TokenizerCounter) -> None:
        """It is a BaseCounter, so every strategy accepts it."""
        assert isinstance(counter, BaseCounter)
        strategy = SlidingWindowStrategy(2, 100, counter=counter)
        assert strategy.token_estimate([Message.user("hello world")]) == 4 + 2


class TestCopyAndPickle:
    """Copying and pickling counters."""

    def test_copies_are_the_counter(self, o200k: TokenizerCounter) -> None:
        """A counter is immutable, so copy and deepcopy return it."""
        assert copy.copy(o200k) is o200k
        assert copy.deepcopy(o200k) is o200k

    def test_pickle_encoding_counter(self, session_cache_dir: Path) -> None:
        """A pickled encoding counter comes back equal and sharing the tokenizer."""
        counter = TokenizerCounter.from_encoding("o200k_base", image_tokens=85)
        restored = pickle.loads(pickle.dumps(counter))
        assert restored == counter
        assert restored.tokenizer is counter.tokenizer

    def test_pickle_file_counter(self) -> None:
        """A pickled counter of any tokenizer keeps its counts and options."""
        counter = TokenizerCounter(tiny_tokenizer(), document_tokens=7)
        restored = pickle.loads(pickle.dumps(counter))
        assert restored.document_tokens == 7
        assert restored.estimate_text("<|endoftext|> hello") == ENDOFTEXT_PIECES + 1
        assert restored.tokenizer.padding is None


class TestLazy:
    """TokenizerCounter.lazy: an encoding's counter that loads it on first use."""

    @pytest.mark.parametrize("name", ["p50k_base", "gpt-4o", "", None])
    def test_unknown_encoding(self, name: Any) -> None:
        """An unknown encoding is a ConfigurationError when the counter is made."""
        with pytest.raises(ConfigurationError, match="encoding must be one of"):
            TokenizerCounter.lazy(name)

    def test_bad_option(self) -> None:
        """Options are checked when the counter is made, as from_encoding does."""
        with pytest.raises(ConfigurationError):
            TokenizerCounter.lazy("o200k_base", image_tokens=-1)

    def test_counts_as_from_encoding(self, counter: TokenizerCounter) -> None:
        """It counts exactly as the eager counter of the same encoding, shares its
        tokenizer and its cached costs (it is equal to it)."""
        name = counter.encoding
        assert name is not None
        lazy = TokenizerCounter.lazy(name)
        assert lazy == counter
        assert hash(lazy) == hash(counter)
        messages = [Message.user("def main():\n    return 4_096 * 2"), Message.user("héllo 世界")]
        assert lazy.estimate_messages(messages) == counter.estimate_messages(messages)
        assert lazy.tokenizer is counter.tokenizer

    def test_pickle_stays_lazy(self) -> None:
        """A pickled lazy counter comes back equal (and lazy while nothing loaded it)."""
        lazy = TokenizerCounter.lazy("cl100k_base", message_overhead=3)
        restored = pickle.loads(pickle.dumps(lazy))
        assert restored == lazy
        assert restored.message_overhead == 3

    def test_made_without_importing_tokenizers(self, session_cache_dir: Path) -> None:
        """Making a lazy counter (and default_stack, whose default it is) imports nothing;
        the first count loads the encoding (tiktoken's where it is installed)."""
        import os
        import subprocess
        import sys
        import textwrap

        code = """
            import sys
            import neuron_context as nc
            stack = nc.default_stack(1_000)
            assert "tokenizers" not in sys.modules, "imported when made"
            assert "tiktoken" not in sys.modules, "imported when made"
            print(stack.counter.estimate_text("hello world"))
            assert "tiktoken" in sys.modules or "tokenizers" in sys.modules
        """
        root = Path(__file__).parents[1]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
        }
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=120,
        )
        assert done.stdout.strip() == "2"
