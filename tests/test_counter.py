"""Examples for the heuristic token counter (CONTRACT §2)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs
import pytest

from neuron_context import (
    Compaction,
    ConfigurationError,
    Document,
    Image,
    Message,
    RedactedThinking,
    Role,
    Text,
    Thinking,
    TokenCounter,
    ToolDefinition,
    ToolResult,
    ToolUse,
)

URL = "https://example.com/cat.png"


def _message(*blocks: object, role: Role = Role.ASSISTANT) -> Message:
    return Message(role=role, content=blocks)


class TestWorkedValues:
    """The worked values of CONTRACT §2."""

    def test_abcde_is_two(self) -> None:
        """estimate_text("abcde") is 2."""
        assert TokenCounter().estimate_text("abcde") == 2

    def test_image_only_message(self) -> None:
        """An image-only message costs 304."""
        message = _message(Image(url=URL), role=Role.USER)
        assert TokenCounter().estimate_message(message) == 304

    def test_get_time_tool_use_message(self) -> None:
        """A message holding ToolUse(name="get_time", input={}) costs 7."""
        message = Message.assistant(tool_uses=[ToolUse(id="toolu_1", name="get_time", input={})])
        assert TokenCounter().estimate_message(message) == 7

    def test_empty_message(self) -> None:
        """A message with empty content costs 4."""
        assert TokenCounter().estimate_message(_message()) == 4

    def test_twenty_characters_at_two_per_token(self) -> None:
        """TokenCounter(2.0) prices a 20-character user text message at 14."""
        assert TokenCounter(2.0).estimate_message(Message.user("a" * 20)) == 14


class TestEstimateText:
    """TokenCounter.estimate_text."""

    def test_empty_is_zero(self) -> None:
        """The empty string costs nothing."""
        assert TokenCounter().estimate_text("") == 0

    @pytest.mark.parametrize(("text", "expected"), [("a", 1), ("abcd", 1), ("abcdefgh", 2)])
    def test_rounds_up(self, text: str, expected: int) -> None:
        """Bytes divided by four, rounded up."""
        assert TokenCounter().estimate_text(text) == expected

    @pytest.mark.parametrize(
        ("text", "expected"),
        [("日本", 2), ("é", 1), ("ééé", 2), ("🙂🙂", 2), ("🙂🙂a", 3)],
    )
    def test_counts_utf8_bytes(self, text: str, expected: int) -> None:
        """Non-ASCII text is priced by its UTF-8 bytes ("日本" is 6 bytes, so 2)."""
        assert TokenCounter().estimate_text(text) == expected

    @pytest.mark.parametrize("ratio", [2.5, 3.3, 0.7, 1.0, 4.0, 3.7, 1e-3, 1e6])
    def test_non_integral_ratios(self, ratio: float) -> None:
        """Any ratio gives math.ceil(len(bytes) / ratio) in Python floats."""
        counter = TokenCounter(ratio)
        for text in ["", "a", "abc", "abcdefghij" * 7, "日本語", "🙂 x", "x" * 1001, "é" * 33]:
            expected = math.ceil(len(text.encode("utf-8")) / ratio)
            assert counter.estimate_text(text) == expected, (ratio, text)

    def test_integer_ratio_given_as_int(self) -> None:
        """An int ratio counts like the same float."""
        assert TokenCounter(3).estimate_text("abcdefg") == TokenCounter(3.0).estimate_text(
            "abcdefg"
        )
        assert TokenCounter(3).estimate_text("abcdefg") == 3

    @pytest.mark.parametrize(
        "bad", [0, 0.0, -1, -4.0, math.inf, -math.inf, math.nan, True, False, "4", None]
    )
    def test_invalid_chars_per_token(self, bad: object) -> None:
        """A ratio that is not a finite number > 0 raises naming chars_per_token."""
        with pytest.raises(ConfigurationError, match="chars_per_token"):
            TokenCounter(bad)  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        "field", ["image_tokens", "document_tokens", "message_overhead", "tokens_per_page"]
    )
    @pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
    def test_invalid_counts(self, field: str, bad: object) -> None:
        """A fixed cost that is not a non-negative int raises naming the field."""
        with pytest.raises(ConfigurationError, match=field):
            TokenCounter(**{field: bad})  # type: ignore[arg-type]

    @pytest.mark.parametrize("field", ["image_pricing", "document_pricing"])
    def test_invalid_pricing(self, field: str) -> None:
        """An unknown pricing raises naming the field."""
        with pytest.raises(ConfigurationError, match=field):
            TokenCounter(**{field: "free"})  # type: ignore[arg-type]


class TestBlockRules:
    """The cost of each kind of block."""

    def test_text(self) -> None:
        """A Text costs its text."""
        assert TokenCounter().estimate_message(_message(Text(text="a" * 9))) == 4 + 3

    def test_texts_are_rounded_each_on_its_own(self) -> None:
        """Two one-byte texts cost one token each."""
        message = _message(Text(text="a"), Text(text="b"))
        assert TokenCounter().estimate_message(message) == 4 + 2

    def test_thinking_signature_not_counted(self) -> None:
        """A Thinking costs its thinking; the signature is free."""
        message = _message(Thinking(thinking="abcdefgh", signature="s" * 400))
        assert TokenCounter().estimate_message(message) == 4 + 2

    def test_redacted_thinking(self) -> None:
        """A RedactedThinking costs its data."""
        assert TokenCounter().estimate_message(_message(RedactedThinking(data="d" * 40))) == 14

    def test_compaction(self) -> None:
        """A Compaction costs its content."""
        message = _message(Compaction(content="c" * 17), role=Role.USER)
        assert TokenCounter().estimate_message(message) == 4 + 5

    def test_tool_use_is_name_plus_compact_json(self) -> None:
        """A ToolUse costs its name plus the compact, non-ASCII-keeping JSON of its input."""
        use = ToolUse(id="x" * 100, name="search", input={"q": "é", "n": [1, 2]})
        # name "search": 6 bytes -> 2; '{"q":"é","n":[1,2]}': 20 bytes -> 5; the id is free.
        assert TokenCounter().estimate_message(Message.assistant(tool_uses=[use])) == 4 + 2 + 5

    def test_tool_use_non_ascii_input(self) -> None:
        """Non-ASCII input is priced as UTF-8, not as \\u escapes."""
        use = ToolUse(id="t", name="a", input={"k": "日本語"})
        # '{"k":"日本語"}' is 8 + 9 = 17 bytes -> 5 (escaped it would be 26 bytes -> 7).
        assert TokenCounter().estimate_message(Message.assistant(tool_uses=[use])) == 4 + 1 + 5

    def test_tool_result_items_rounded_each(self) -> None:
        """A ToolResult costs each text item rounded on its own; id and flag are free."""
        result = ToolResult(
            tool_use_id="i" * 80, content=(Text(text="a"), Text(text="b")), is_error=True
        )
        message = Message(role=Role.TOOL, content=(result,))
        assert TokenCounter().estimate_message(message) == 4 + 1 + 1

    def test_tool_result_image_item(self) -> None:
        """An image in a ToolResult costs image_tokens."""
        message = Message.tool_result("t", [Text(text="abcd"), Image(url=URL)])
        assert TokenCounter().estimate_message(message) == 4 + 1 + 300
        assert TokenCounter(image_tokens=7).estimate_message(message) == 4 + 1 + 7

    def test_empty_tool_result(self) -> None:
        """An empty ToolResult costs nothing beyond the overhead."""
        message = Message(role=Role.TOOL, content=(ToolResult(tool_use_id="t"),))
        assert TokenCounter().estimate_message(message) == 4

    def test_several_tool_results(self) -> None:
        """A TOOL message costs the sum of its results."""
        message = Message(
            role=Role.TOOL,
            content=(
                ToolResult(tool_use_id="a", content="abcde"),
                ToolResult(tool_use_id="b", content="abc"),
            ),
        )
        assert TokenCounter().estimate_message(message) == 4 + 2 + 1

    def test_image_fixed_whatever_its_size(self) -> None:
        """By default an image costs image_tokens whatever its size or data."""
        big = Image(media_type="image/png", data="A" * 100_000, width=4000, height=3000)
        assert TokenCounter().estimate_message(_message(big, role=Role.USER)) == 304
        assert TokenCounter(image_tokens=50).estimate_message(_message(big)) == 54

    def test_document_fixed_whatever_its_size(self) -> None:
        """By default a document costs document_tokens, whatever its text or pages."""
        document = Document(media_type="text/plain", text="x" * 100_000, pages=90)
        assert TokenCounter().estimate_message(_message(document)) == 504
        assert TokenCounter(document_tokens=10).estimate_message(_message(document)) == 14

    def test_message_overhead(self) -> None:
        """message_overhead is added once per message; zero is allowed."""
        message = Message.user("abcd")
        assert TokenCounter(message_overhead=10).estimate_message(message) == 11
        assert TokenCounter(message_overhead=0).estimate_message(message) == 1

    def test_mixed_message(self) -> None:
        """A message costs the overhead plus the sum of its blocks."""
        message = Message.assistant(
            "abcdefgh", tool_uses=[ToolUse(id="t", name="get_time", input={})]
        )
        assert TokenCounter().estimate_message(message) == 4 + 2 + 2 + 1

    def test_estimate_content(self) -> None:
        """estimate_content prices blocks without the overhead."""
        assert TokenCounter().estimate_content([Text(text="abcde"), Image(url=URL)]) == 302


class TestSums:
    """estimate_messages and estimate_tools."""

    def test_estimate_messages_is_the_sum(self) -> None:
        """estimate_messages is the sum of estimate_message."""
        counter = TokenCounter()
        messages = [
            Message.system("You are helpful."),
            Message.user("What time is it?"),
            Message.assistant(tool_uses=[ToolUse(id="t", name="get_time", input={})]),
            Message.tool_result("t", "12:00"),
            Message.assistant("It is noon."),
        ]
        fresh = [Message(role=m.role, content=m.content) for m in messages]
        assert counter.estimate_messages(messages) == sum(
            counter.estimate_message(m) for m in fresh
        )
        assert counter.estimate_messages(messages) == 8 + 8 + 7 + 6 + 7

    def test_estimate_messages_empty(self) -> None:
        """No messages cost nothing."""
        assert TokenCounter().estimate_messages([]) == 0

    def test_estimate_messages_accepts_an_iterator(self) -> None:
        """Any iterable of messages is accepted."""
        assert TokenCounter().estimate_messages(iter([Message.user("abcd")])) == 5

    def test_estimate_tools(self) -> None:
        """A tool costs its name, description and compact JSON schema."""
        tool = ToolDefinition(
            name="get_time", description="Get the time.", input_schema={"type": "object"}
        )
        # 8 bytes -> 2, 13 bytes -> 4, '{"type":"object"}' 17 bytes -> 5.
        assert TokenCounter().estimate_tools([tool]) == 11
        assert TokenCounter().estimate_tools([tool, tool]) == 22
        assert TokenCounter().estimate_tools([]) == 0

    def test_estimate_tools_non_ascii_schema(self) -> None:
        """The schema JSON keeps non-ASCII characters and has no spaces."""
        tool = ToolDefinition(name="t", description="", input_schema={"d": "é"})
        # '{"d":"é"}' is 10 bytes -> 3.
        assert TokenCounter().estimate_tools([tool]) == 1 + 0 + 3


class TestOptInPricing:
    """image_pricing and document_pricing."""

    @pytest.mark.parametrize(
        ("width", "height", "expected"),
        [(1024, 1024, 765), (2048, 4096, 1105), (512, 512, 255), (100, 100, 255)],
    )
    def test_openai_images(self, width: int, height: int, expected: int) -> None:
        """With image_pricing="openai", a sized image costs 85 + 170 per 512px tile."""
        counter = TokenCounter(image_pricing="openai")
        image = Image(url=URL, width=width, height=height)
        assert counter.estimate_message(_message(image, role=Role.USER)) == 4 + expected

    @pytest.mark.parametrize(
        ("width", "height", "expected"), [(1000, 1000, 1334), (200, 200, 54), (750, 1, 1)]
    )
    def test_anthropic_images(self, width: int, height: int, expected: int) -> None:
        """With image_pricing="anthropic", a sized image costs width * height / 750."""
        counter = TokenCounter(image_pricing="anthropic")
        image = Image(url=URL, width=width, height=height)
        assert counter.estimate_message(_message(image, role=Role.USER)) == 4 + expected

    @pytest.mark.parametrize("pricing", ["openai", "anthropic"])
    @pytest.mark.parametrize(("width", "height"), [(None, None), (100, None), (None, 100)])
    def test_unsized_images_cost_the_fixed_price(
        self, pricing: str, width: int | None, height: int | None
    ) -> None:
        """An image without both sizes costs image_tokens under any pricing."""
        counter = TokenCounter(image_pricing=pricing)  # type: ignore[arg-type]
        image = Image(url=URL, width=width, height=height)
        assert counter.estimate_message(_message(image, role=Role.USER)) == 304

    def test_sized_image_in_a_tool_result(self) -> None:
        """Size-aware pricing also applies to images inside tool results."""
        counter = TokenCounter(image_pricing="openai")
        message = Message.tool_result("t", [Image(url=URL, width=512, height=512)])
        assert counter.estimate_message(message) == 4 + 255

    def test_document_by_text(self) -> None:
        """With document_pricing="content", a document with text costs its text."""
        counter = TokenCounter(document_pricing="content")
        document = Document(media_type="text/plain", text="x" * 40, pages=99)
        assert counter.estimate_message(_message(document)) == 4 + 10

    def test_document_by_pages(self) -> None:
        """With document_pricing="content", a document without text costs its pages."""
        document = Document(media_type="application/pdf", url=URL, pages=3)
        assert TokenCounter(document_pricing="content").estimate_message(_message(document)) == (
            4 + 3 * 1500
        )
        counter = TokenCounter(document_pricing="content", tokens_per_page=10)
        assert counter.estimate_message(_message(document)) == 4 + 30

    def test_document_without_text_or_pages(self) -> None:
        """With document_pricing="content", a document with neither costs document_tokens."""
        document = Document(media_type="application/pdf", url=URL)
        counter = TokenCounter(document_pricing="content")
        assert counter.estimate_message(_message(document)) == 504


class _CountingTexts:
    """Counts calls of TokenCounter.estimate_texts."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        original = TokenCounter.estimate_texts

        def counting(counter: TokenCounter, texts: Sequence[str]) -> list[int]:
            self.calls += 1
            return original(counter, texts)

        monkeypatch.setattr(TokenCounter, "estimate_texts", counting)


@attrs.frozen
class RecordingCounter(TokenCounter):
    """A TokenCounter that records each batch of texts it counts.

    Changing how texts are counted takes it off the heuristic's size walk onto the general
    rules, which cache each message's cost: what it records shows what was not cached.
    """

    batches: list[list[str]] = attrs.field(factory=list, kw_only=True, eq=False, repr=False)

    def estimate_texts(self, texts: Sequence[str]) -> list[int]:
        """Record the batch, then count it as the heuristic does."""
        self.batches.append(list(texts))
        return super().estimate_texts(texts)


class TestCostCache:
    """The per-message cost cache (of counters on the general rules)."""

    def test_second_count_hits_the_cache(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Counting the same message twice counts its texts once."""
        spy = _CountingTexts(monkeypatch)
        counter = TokenCounter()
        message = Message.user("hello there")
        assert counter.estimate_message(message) == 7
        assert counter.estimate_message(message) == 7
        assert counter.estimate_messages([message, message]) == 14
        assert spy.calls == 1

    def test_estimate_messages_counts_only_new_messages(self) -> None:
        """A history that grew by one message counts one message's texts."""
        counter = RecordingCounter()
        history = [Message.user("a" * 8), Message.assistant("b" * 12)]
        assert counter.estimate_messages(history) == 6 + 7
        counter.batches.clear()
        history.append(Message.user("c" * 4))
        assert counter.estimate_messages(history) == 6 + 7 + 5
        assert counter.batches == [["c" * 4]]

    def test_equal_counters_share_the_cache(self) -> None:
        """A second, equal counter reads the cost cached by the first."""
        message = Message.user("hello there")
        RecordingCounter().estimate_message(message)
        second, third = RecordingCounter(4.0), RecordingCounter(4)
        assert second.estimate_message(message) == 7
        assert third.estimate_message(message) == 7
        assert second.batches == third.batches == []

    def test_different_counters_do_not_mix(self) -> None:
        """Counters with different rules keep their own costs for the same message."""
        message = Message.user("a" * 20)
        assert TokenCounter(4.0).estimate_message(message) == 9
        assert TokenCounter(2.0).estimate_message(message) == 14
        assert TokenCounter(4.0, message_overhead=0).estimate_message(message) == 5
        assert TokenCounter(4.0).estimate_message(message) == 9
        assert TokenCounter(2.0).estimate_messages([message]) == 14

    def test_image_pricing_is_part_of_the_key(self) -> None:
        """A fixed-price and a size-priced counter do not share costs."""
        message = _message(Image(url=URL, width=512, height=512), role=Role.USER)
        assert TokenCounter().estimate_message(message) == 304
        assert TokenCounter(image_pricing="openai").estimate_message(message) == 259

    def test_cache_holds_at_most_four_keys(self) -> None:
        """Counting with many different counters keeps at most four cached costs."""
        message = Message.user("a" * 60)
        pool = [RecordingCounter(ratio) for ratio in (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)]
        for counter in pool:
            assert counter.estimate_message(message) == 4 + math.ceil(60 / counter.chars_per_token)
        # The newest four are read from the cache; the oldest were evicted and recomputed.
        for counter in pool:
            counter.batches.clear()
        assert [counter.estimate_message(message) for counter in pool[2:]] == [24, 19, 16, 14]
        assert all(counter.batches == [] for counter in pool)
        assert pool[0].estimate_message(message) == 64
        assert pool[0].batches == [["a" * 60]]

    def test_cache_does_not_affect_equality(self) -> None:
        """A counted message still equals an uncounted one."""
        counted = Message.user("abc")
        TokenCounter().estimate_message(counted)
        assert counted == Message.user("abc")

    def test_counters_compare_by_configuration(self) -> None:
        """Counters with the same configuration are equal."""
        assert TokenCounter() == TokenCounter(4.0)
        assert TokenCounter() != TokenCounter(2.0)
        assert TokenCounter() != TokenCounter(image_tokens=1)
