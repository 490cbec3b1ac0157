"""System-prompt injection and persistent context."""
