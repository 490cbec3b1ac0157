"""Context strategies: the interface and every built-in strategy."""
