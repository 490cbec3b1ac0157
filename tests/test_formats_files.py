"""formats.load, load_transcripts, dumps and dump: transcript files as a library."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from strategies import well_formed_conversations

from neuron_context import ConfigurationError, Message, Role, Text
from neuron_context.data import load_record
from neuron_context.formats import (
    TRANSCRIPT_FORMATS,
    Transcript,
    dump,
    dumps,
    from_anthropic,
    from_openai,
    load,
    load_transcripts,
    to_anthropic,
    to_json,
    to_openai,
)

DATA = Path(__file__).parent / "data" / "transcripts"
SAMPLES = {
    # file: its format
    "agents-sdk-items.json": "openai-agents",
    "claude-code-agent-a1b2c3d.jsonl": "claude-code",
    "claude-code-session.jsonl": "claude-code",
    "codex-rollout.jsonl": "codex",
    "langchain-dump.json": "langchain",
    "pydantic-ai-dump.json": "pydantic-ai",
}
DEMO = "sweagent-pydicom__pydicom-1458"


def _wire_files(folder: Path) -> dict[str, Path]:
    """The bundled demo transcript written in the three wire formats, by format name."""
    messages = from_openai(load_record(DEMO)["messages"])
    system, turns = to_anthropic(messages)
    files = {
        "openai": ({"messages": to_openai(messages)}, "openai.json"),
        "anthropic": ({"system": system, "messages": turns}, "anthropic.json"),
    }
    out = {}
    for fmt, (document, name) in files.items():
        out[fmt] = folder / name
        out[fmt].write_text(json.dumps(document), encoding="utf-8")
    out["neuron-context"] = folder / "ours.json"
    out["neuron-context"].write_text(to_json(messages), encoding="utf-8")
    return out


def _every_file(folder: Path) -> dict[str, Path]:
    """Every format's file: the framework samples and the wire formats, by name."""
    files = {name: DATA / name for name in SAMPLES}
    files.update({f"{fmt}.json": path for fmt, path in _wire_files(folder).items()})
    return files


EVERY_FILE = sorted([*SAMPLES, "openai.json", "anthropic.json", "neuron-context.json"])


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every format's file, by name (written once for the module)."""
    return _every_file(tmp_path_factory.mktemp("wire"))


def _format(name: str) -> str:
    return SAMPLES.get(name) or name.removesuffix(".json")


class TestLoad:
    """load reads every format the command line reads, detecting it."""

    def test_formats(self) -> None:
        """TRANSCRIPT_FORMATS names the eight formats, the command line's --format values."""
        assert set(TRANSCRIPT_FORMATS) == {
            "openai",
            "anthropic",
            "neuron-context",
            "claude-code",
            "codex",
            "langchain",
            "pydantic-ai",
            "openai-agents",
        }

    def test_detects_every_format(self, tmp_path: Path) -> None:
        """Each file is detected as its format, and reads the same when the format is
        named; load gives the messages of load_transcripts."""
        files = _every_file(tmp_path)
        assert {_format(name) for name in files} == set(TRANSCRIPT_FORMATS)
        for name, path in files.items():
            (transcript,) = load_transcripts(path)
            assert transcript.format == _format(name), name
            messages = load(path)
            assert messages == list(transcript.messages)
            assert load(str(path), format=transcript.format) == messages
            assert all(isinstance(m, Message) for m in messages)

    def test_wire_formats_read_as_their_readers(self, tmp_path: Path) -> None:
        """A Chat Completions or Messages API file reads as from_openai / from_anthropic
        read its messages."""
        files = _wire_files(tmp_path)
        document = json.loads(files["openai"].read_text(encoding="utf-8"))
        assert load(files["openai"]) == from_openai(document["messages"])
        request = json.loads(files["anthropic"].read_text(encoding="utf-8"))
        expected = from_anthropic(request["messages"], system=request["system"])
        assert load(files["anthropic"]) == expected

    @settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(messages=well_formed_conversations())
    def test_our_json_round_trips(self, tmp_path: Path, messages: list[Message]) -> None:
        """Any conversation written as our JSON loads back equal, detected or named."""
        path = tmp_path / "ours.json"
        path.write_text(to_json(messages), encoding="utf-8")
        assert load(path) == messages
        assert load(path, format="neuron-context") == messages

    @settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(messages=well_formed_conversations(min_turns=1), lines=st.booleans())
    def test_chat_completions_round_trip(
        self, tmp_path: Path, messages: list[Message], lines: bool
    ) -> None:
        """Chat Completions messages load as from_openai reads them, from a JSON list or
        from JSONL (one message per line)."""
        try:
            wire = to_openai(messages)
        except ConfigurationError:  # what Chat Completions cannot carry (untyped image data)
            assume(False)
        path = tmp_path / ("chat.jsonl" if lines else "chat.json")
        text = "".join(json.dumps(m) + "\n" for m in wire) if lines else json.dumps(wire)
        path.write_text(text, encoding="utf-8")
        assert load(path, format="openai") == from_openai(wire)

    def test_records_are_several_conversations(self, tmp_path: Path) -> None:
        """A JSONL file of records is several conversations: load_transcripts reads each,
        load refuses it, naming load_transcripts."""
        one = {"messages": to_openai([Message.user("a"), Message.assistant("b")])}
        two = {"messages": to_openai([Message.user("c")])}
        path = tmp_path / "runs.jsonl"
        path.write_text(json.dumps(one) + "\n" + json.dumps(two) + "\n", encoding="utf-8")
        found = load_transcripts(path)
        assert [len(t.messages) for t in found] == [2, 1]
        assert [t.name for t in found] == [f"{path}:1", f"{path}:2"]
        with pytest.raises(ConfigurationError, match=r"holds 2 conversations.*load_transcripts"):
            load(path)

    def test_not_checked_well_formed(self, tmp_path: Path) -> None:
        """load returns the conversation as read: a result without its call is kept, for
        the caller to validate or repair."""
        wire = [{"role": "tool", "tool_call_id": "call_9", "content": "orphan"}]
        path = tmp_path / "orphan.json"
        path.write_text(json.dumps(wire), encoding="utf-8")
        (message,) = load(path)
        assert message.role is Role.TOOL

    def test_reads_the_tools(self, tmp_path: Path) -> None:
        """A transcript's tool definitions are on its Transcript."""
        record = load_record("spotter-tool-heavy")
        path = tmp_path / "record.json"
        path.write_text(json.dumps(record), encoding="utf-8")
        (transcript,) = load_transcripts(path)
        assert len(transcript.tools) == len(record.get("tools", []))


class TestLoadErrors:
    """What no reader takes is a ConfigurationError naming what was tried."""

    def test_no_reader_takes_it(self, tmp_path: Path) -> None:
        """Objects no format recognises are read as each format they could be, and the
        error names the path of what is wrong and every format tried."""
        path = tmp_path / "odd.json"
        path.write_text(json.dumps([{"speaker": "me", "said": "hi"}]), encoding="utf-8")
        with pytest.raises(ConfigurationError) as info:
            load(path)
        message = str(info.value)
        assert message == (
            f"{path}: messages[0].role is missing (read as OpenAI Chat Completions; "
            "also tried Anthropic Messages; format= chooses another)"
        )

    def test_read_as_one_names_the_others_tried(self, tmp_path: Path) -> None:
        """A file that looks like one format but is broken names the path of what is
        wrong, the format it was read as and the others tried."""
        path = tmp_path / "broken.json"
        path.write_text(json.dumps({"messages": [{"content": "hi"}]}), encoding="utf-8")
        with pytest.raises(ConfigurationError, match=r"messages\[0\]\.role.*also tried"):
            load(path)

    def test_named_format_that_does_not_fit(self, tmp_path: Path) -> None:
        """With format named, the error says it was read as that format."""
        path = DATA / "langchain-dump.json"
        with pytest.raises(ConfigurationError, match=r"read as Anthropic Messages, as format="):
            load(path, format="anthropic")

    @pytest.mark.parametrize("fmt", ["yaml", "", "OpenAI", 3])
    def test_unknown_format(self, fmt: object) -> None:
        """format must be None or a known name; the error lists the names."""
        with pytest.raises(ConfigurationError, match=r"format must be None.*claude-code"):
            load(DATA / "langchain-dump.json", format=fmt)  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        ("content", "problem"),
        [
            (b"", "is empty"),
            (b"\x00\x01binary", "binary"),
            (b"[1, 2", "truncated"),
            (b"\xff\xfe{}", "not UTF-8"),
            (b"42", "must be a list of messages or an object"),
        ],
    )
    def test_not_a_transcript(self, tmp_path: Path, content: bytes, problem: str) -> None:
        """An empty, binary, broken or non-UTF-8 file is one line naming the file."""
        path = tmp_path / "bad.json"
        path.write_bytes(content)
        with pytest.raises(ConfigurationError, match=problem) as info:
            load(path)
        assert "\n" not in str(info.value)

    def test_missing_file_and_bad_path(self, tmp_path: Path) -> None:
        """A missing file, a folder or a path that is not a path is a ConfigurationError."""
        with pytest.raises(ConfigurationError, match="no such file"):
            load(tmp_path / "nope.json")
        with pytest.raises(ConfigurationError, match="folder"):
            load(tmp_path)
        with pytest.raises(ConfigurationError, match="must be a path"):
            load(42)  # type: ignore[arg-type]

    def test_no_framework_needed(self) -> None:
        """A process that cannot import any framework loads every sample."""
        script = f"""
import sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {{"langchain", "langchain_core", "langgraph", "pydantic_ai",
                                  "agents", "openai", "anthropic", "httpx"}}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Block())
from neuron_context import formats
for name in {sorted(SAMPLES)!r}:
    assert formats.load({str(DATA)!r} + "/" + name), name
print("ok")
"""
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == "ok"


def _cut(message: Message, keep: int) -> Message:
    """``message`` with each text cut to its first ``keep`` characters plus a mark."""
    content = tuple(
        Text(text=b.text[:keep] + " [cut]") if isinstance(b, Text) else b for b in message.content
    )
    return attrs.evolve(message, content=content)


class TestDump:
    """dumps and dump write a transcript back in its own format, losslessly."""

    def test_unchanged_is_byte_for_byte(self, tmp_path: Path) -> None:
        """The messages read come back as the file's text, byte for byte."""
        for name, path in _every_file(tmp_path).items():
            (transcript,) = load_transcripts(path)
            assert dumps(transcript, transcript.messages) == path.read_text("utf-8"), name

    def test_dump_over_the_input(self, tmp_path: Path) -> None:
        """dump may write over the file read; the file then loads as the messages given."""
        path = tmp_path / "session.jsonl"
        path.write_bytes((DATA / "claude-code-session.jsonl").read_bytes())
        (transcript,) = load_transcripts(path)
        shorter = [m for m in transcript.messages if m.role is not Role.ASSISTANT or m.tool_uses]
        shorter = [shorter[0], *shorter[-3:]]
        dump(transcript, shorter, path)
        assert load(path) == shorter
        assert [p.name for p in tmp_path.iterdir()] == ["session.jsonl"]  # no temporary left

    @pytest.mark.parametrize("name", EVERY_FILE)
    @settings(
        max_examples=12,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )
    @given(data=st.data())
    def test_changed_texts_read_back_as_written(
        self, tmp_path: Path, files: dict[str, Path], name: str, data: st.DataObject
    ) -> None:
        """In every format, messages whose texts were cut are written as they are now:
        the file reads back as exactly the messages given (never the old text beside the
        new one)."""
        (transcript,) = load_transcripts(files[name])
        messages = list(transcript.messages)
        texts = [i for i, m in enumerate(messages) if m.role is not Role.TOOL and m.text]
        chosen = data.draw(st.sets(st.sampled_from(texts), min_size=1), label="cut")
        for index in chosen:
            keep = data.draw(st.integers(0, len(messages[index].text)), label="keep")
            messages[index] = _cut(messages[index], keep)
        out = tmp_path / f"out{''.join(files[name].suffixes)}"
        dump(transcript, messages, out)
        assert load(out, format=transcript.format) == messages

    def test_refuses_what_is_not_a_transcript(self, tmp_path: Path) -> None:
        """dumps needs a Transcript and messages; dump refuses a folder."""
        (transcript,) = load_transcripts(DATA / "langchain-dump.json")
        with pytest.raises(ConfigurationError, match="transcript must be a Transcript"):
            dumps([], transcript.messages)  # type: ignore[arg-type]
        with pytest.raises(ConfigurationError, match=r"messages\[0\]"):
            dumps(transcript, [{"role": "user"}])  # type: ignore[list-item]
        with pytest.raises(ConfigurationError, match="folder"):
            dump(transcript, transcript.messages, tmp_path)
        assert isinstance(transcript, Transcript)
        assert "source" not in repr(transcript)
