"""Offloading: where compacted-away content goes, and how an agent gets it back."""
