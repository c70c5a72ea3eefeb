"""The REST service: request and response, no live channel (clarify degrades)."""
