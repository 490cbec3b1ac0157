"""What ``import neuron_context`` costs: CPU over a bare interpreter, bytecode cached.

Each round runs a bare interpreter (``python -c pass``) and one that imports the package,
back to back in rotating order, and reads their CPU time from ``getrusage`` of the
children; the figure is the median of the per-round differences (``extra_info``:
``cpu_bare``, ``cpu_import``, ``import_over_bare``, seconds). Target: at most 0.10 s.
The test suite guards the same target with the least of a few runs
(``tests/test_exports.py``).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from workloads import Benchmark

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 15


def _child_cpu(code: str, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=ROOT)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def test_import(benchmark: Benchmark, tmp_path: Path) -> None:
    """``import neuron_context`` beside a bare interpreter, in child CPU time."""
    benchmark.group = "import"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONPYCACHEPREFIX": str(tmp_path)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    _child_cpu("import neuron_context", env)  # writes the bytecode
    rounds = ROUNDS if benchmark.enabled else 1
    bare: list[float] = []
    loaded: list[float] = []
    for index in range(rounds):
        order = [("pass", bare), ("import neuron_context", loaded)]
        for code, into in order if index % 2 else order[::-1]:
            into.append(_child_cpu(code, env))
    over = statistics.median(b - a for a, b in zip(bare, loaded, strict=True))
    benchmark.extra_info.update(
        cpu_bare=statistics.median(bare),
        cpu_import=statistics.median(loaded),
        import_over_bare=over,
    )
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    print(f"\nimport neuron_context: {over * 1000:.0f} ms CPU over a bare interpreter")
    if benchmark.enabled:
        assert over <= 0.10
