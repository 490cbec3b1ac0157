"""Offloading in the strategies: what they remove goes to the store, a reference stays;
without a store every output is what it was before stores existed."""

from __future__ import annotations

import json

from no_store_outputs import GOLDEN, outputs
from transcripts import requires_transcripts


@requires_transcripts
class TestWithoutStore:
    """``store=None`` changes nothing."""

    def test_outputs_unchanged(self) -> None:
        """Every offloading strategy's output on the shared transcripts at 10%, 25% and
        50% of their size hashes as it did before stores existed."""
        expected = json.loads(GOLDEN.read_text())
        found = outputs()
        assert found.keys() == expected.keys()
        changed = sorted(key for key in expected if found[key] != expected[key])
        assert changed == [], f"{len(changed)} outputs changed, e.g. {changed[:3]}"
