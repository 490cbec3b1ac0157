"""Token counting: the counter interface, the block rules, the cost cache, and each counter."""
