"""Turn a pytest-benchmark JSON file into the ratio tables of docs/performance.md.

Usage::

    nox -s bench                      # writes benchmark.json
    python benches/report.py benchmark.json

Each group holds our benchmarks and what they are measured against: the peer
(LangChain) or, for the exact counter, the raw tokenizer on the same texts, and the warm
turn against the cold count. A speed-up is the other's time divided by ours (above 1: we
are faster), from the medians and, in brackets, from the fastest rounds.
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

_NAME = re.compile(r"^(?:.*::)?(?:Test(?P<cls>\w+)::)?test_(?P<name>\w+)\[.*\]$")

BASELINES = ("peer", "raw_unique", "raw_all")
"""The rows that are not ours."""

COMPARED: dict[str, tuple[str, ...]] = {
    "ours_cold": ("raw_unique", "raw_all"),
    "ours_warm_turn": ("ours_cold",),
}
"""What a row is measured against when not against the peer."""


def _label(fullname: str) -> str:
    match = _NAME.match(fullname)
    return match.group("name") if match else fullname


def _order(group: str) -> tuple[str, str, int]:
    kind, dataset, size = group.rsplit(" ", 2)
    return kind, dataset, int(size)


def table(data: dict[str, Any]) -> str:
    """The markdown tables, one row per benchmark, grouped as the benchmarks are."""
    groups: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    for bench in data["benchmarks"]:
        contender = (bench.get("params") or {}).get("contender")
        label = contender.replace("-", "_") if contender else _label(bench["fullname"])
        groups[bench["group"]][label] = bench["stats"]
    lines: list[str] = []
    kind_seen = ""
    for group in sorted(groups, key=_order):
        kind = group.rsplit(" ", 2)[0]
        if kind != kind_seen:
            lines += ["", f"### {kind}", ""]
            lines += ["| history | benchmark | median | min | speed-up: median [min] |"]
            lines += ["|---|---|---:|---:|---:|"]
            kind_seen = kind
        rows = groups[group]
        _, dataset, size = _order(group)
        for name, stats in sorted(rows.items(), key=lambda item: item[1]["median"]):
            ratios = []
            if name not in BASELINES:
                for other in COMPARED.get(name, ("peer",)):
                    if other in rows:
                        base = rows[other]
                        ratios.append(
                            f"{base['median'] / stats['median']:.1f}x "
                            f"[{base['min'] / stats['min']:.1f}x] vs {other.replace('_', '-')}"
                        )
            lines.append(
                f"| {dataset} {size:,} | {name.replace('_', '-')} | "
                f"{_duration(stats['median'])} | {_duration(stats['min'])} | "
                f"{'; '.join(ratios)} |"
            )
    return "\n".join(lines).strip() + "\n"


def _duration(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def main(argv: list[str]) -> int:
    """Print the tables for the JSON file named in ``argv``."""
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    data = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    machine = data.get("machine_info", {})
    print(
        f"Python {machine.get('python_version', '?')}, "
        f"{machine.get('cpu', {}).get('brand_raw', '?')}, "
        f"{machine.get('cpu', {}).get('count', '?')} CPUs\n"
    )
    print(table(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
