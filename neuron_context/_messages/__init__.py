"""Messages: content blocks, the message type, and the conversation boundary API."""
