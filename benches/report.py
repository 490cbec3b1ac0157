"""Turn a pytest-benchmark JSON file into the ratio tables of docs/performance.md.

Usage::

    nox -s bench                      # writes benchmark.json
    python benches/report.py benchmark.json

Paired benchmarks (those that ran through ``workloads.paired``) give one row each: the
baseline's median CPU time, each other contender's, and the median of the per-round
ratios ``other / baseline``. The baseline is ours where we are compared with a peer
(above 1: we are faster); in the agent-loop groups it is the bare framework (above 1:
what our middleware adds) or our loop at the smallest history (above 1: how its cost
grows with the history). The other benchmarks (the strategies) give one row per
contender with wall-clock medians; a speed-up there is the other's median divided by
ours, and in brackets the same from the fastest rounds.
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


def _is_paired(bench: dict[str, Any]) -> bool:
    info = bench.get("extra_info", {})
    return "baseline" in info or "cpu_ours" in info


def paired_table(data: dict[str, Any]) -> str:
    """The markdown tables of the paired benchmarks, one per kind of group."""
    rows: dict[str, list[str]] = defaultdict(list)
    baselines: dict[str, set[str]] = defaultdict(set)
    for bench in sorted(filter(_is_paired, data["benchmarks"]), key=lambda b: _order(b["group"])):
        info = bench["extra_info"]
        baseline = info.get("baseline", "ours")
        kind, dataset, size = _order(bench["group"])
        others = sorted(key.removeprefix("cpu_") for key in info if key.startswith("cpu_"))
        cells = [
            f"{name}: {_duration(info[f'cpu_{name}'])}, **{info[f'ratio_{name}']:.2f}x**"
            for name in others
            if name != baseline
        ]
        baselines[kind].add(baseline)
        rows[kind].append(
            f"| {dataset} {size:,} | {info.get('rounds', '?')} | {baseline}: "
            f"{_duration(info[f'cpu_{baseline}'])} | {'; '.join(cells)} |"
        )
    lines: list[str] = []
    for kind, body in rows.items():
        base = "/".join(sorted(baselines[kind]))
        lines += ["", f"### {kind}", ""]
        lines += [f"| history | rounds | {base} (CPU) | other: CPU, its time / {base} |"]
        lines += ["|---|---:|---:|---|", *body]
    return "\n".join(lines).strip() + "\n"


def table(data: dict[str, Any]) -> str:
    """The markdown tables, one row per benchmark, grouped as the benchmarks are."""
    groups: dict[str, dict[str, dict[str, float]]] = defaultdict(dict)
    for bench in data["benchmarks"]:
        if _is_paired(bench):
            continue
        contender = (bench.get("params") or {}).get("contender")
        label = contender.replace("-", "_") if contender else _label(bench["fullname"])
        groups[bench["group"]][label] = bench["stats"]
    lines: list[str] = []
    kind_seen = ""
    if not groups:
        return ""
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
    print(paired_table(data))
    print(table(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
