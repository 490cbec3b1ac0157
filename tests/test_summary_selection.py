"""What an extractive summary chooses to hold in its space (issue 32: selection by content)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from neuron_context import (
    CompletionRequest,
    ExtractiveSummarizer,
    Message,
    ToolUse,
)


def summarize(messages: Sequence[Message], max_tokens: int) -> str:
    """The extractive summary of ``messages`` (handed to it as they are)."""
    request = CompletionRequest(list(messages), max_tokens=max_tokens)
    return ExtractiveSummarizer().summarize(request)


def call(use_id: str, name: str, **arguments: object) -> Message:
    """An assistant message calling ``name`` once."""
    return Message.assistant(tool_uses=[ToolUse(id=use_id, name=name, input=arguments)])


class TestQueries:
    def test_a_call_of_a_few_short_values_is_indexed_by_all_of_them(self) -> None:
        """A search by origin, destination and date touched all three: the index line,
        the facts' label and the last action name each of them with its key."""
        session = [
            Message.user("Find me a flight from Chicago to Philadelphia on May 10."),
            call("s1", "search_direct_flight", origin="ORD", destination="PHL", date="2024-05-10"),
            Message.tool_result("s1", json.dumps([{"flight_number": "HAT271", "price": 155}])),
            Message.assistant("HAT271 is available."),
        ]
        text = summarize(session, 1_000)
        query = "origin=ORD, destination=PHL, date=2024-05-10"
        assert f"- search_direct_flight {query}: flight_number=HAT271" in text
        assert f"Last action: search_direct_flight {query}" in text

    def test_other_calls_keep_their_key_argument(self) -> None:
        """A call with a path, or with a long or nested argument, is indexed as before:
        by its key argument, or its first argument."""
        session = [
            Message.user("Fix the config and tell Bob."),
            call("r1", "read_file", path="conf/a.toml", encoding="utf-8"),
            Message.tool_result("r1", "port = 8081\n"),
            call(
                "m1",
                "send_message",
                to="bob",
                text="The config on alpha now listens on port 8081, as agreed.",
            ),
            Message.tool_result("m1", "sent"),
            call("b1", "book", user_id="mia_li_3668", flights=[{"number": "HAT170"}]),
            Message.tool_result("b1", "booked"),
            Message.assistant("Done."),
        ]
        text = summarize(session, 1_000)
        assert "- conf/a.toml: read_file" in text or "read_file conf/a.toml:" in text
        assert "to=bob: send_message" in text
        assert "text=" not in text.split("## Artifacts")[1].split("\n\n")[0]
        assert "user_id=mia_li_3668: book" in text


class TestFilling:
    def test_an_older_result_is_read_beside_a_long_newer_one(self) -> None:
        """A long listing's facts alone would fill the summary, but a summary takes the
        first chunks of the results before it ahead of the listing's further chunks: the
        older result is read, and its first facts make it."""
        listing = "\n".join(
            f"{n:>6}\u2192def handler_{n}(request_{n}): pass" for n in range(1, 400)
        )
        session = [
            Message.user("Where is the reservation handled?"),
            call("u1", "get_user_details", user_id="mia_li_3668"),
            Message.tool_result("u1", json.dumps({"user_id": "mia_li_3668", "membership": "gold"})),
            call("r1", "read_file", path="app/handlers.py"),
            Message.tool_result("r1", listing),
            Message.assistant("Reading done."),
        ]
        text = summarize(session, 600)
        assert "membership=gold" in text

    def test_an_item_too_big_for_the_room_left_is_passed_over(self) -> None:
        """When a section's next item does not fit in the room left, a smaller one after
        it still may: the space is filled, not left empty."""
        wide = ", ".join(f"field_{n}=VALUE{n:03d}X" for n in range(12))
        session = [
            Message.user("Look both up."),
            call("a1", "lookup", key="small"),
            Message.tool_result("a1", "code: ZX81Q"),
            call("b1", "lookup", key="wide"),
            Message.tool_result("b1", "\n".join(wide.split(", "))),
            Message.assistant("Both looked up."),
        ]
        full = summarize(session, 2_000)
        assert "field_0=VALUE000X" in full
        assert "code=ZX81Q" in full
        # Room for the small result's facts, not for the wide one's first chunk.
        text = summarize(session, 60)
        assert "field_0=VALUE000X" not in text
        assert "code=ZX81Q" in text
