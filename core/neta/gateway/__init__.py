"""The WebSocket gateway: a live, two-way channel to a session."""
