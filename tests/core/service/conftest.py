"""Fixtures for the host tests."""

from tests.core.hosting.server_harness import serve  # noqa: F401
