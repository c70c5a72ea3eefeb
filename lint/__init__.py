"""Checks of the code base that run beside the tests (import-linter contract types)."""
