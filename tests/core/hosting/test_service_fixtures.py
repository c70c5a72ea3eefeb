"""The shared Redis/PostgreSQL fixtures: a missing server binary skips, or fails under CI."""

import pytest

from tests.services import require


def test_a_missing_binary_skips_with_its_reason(monkeypatch):
    monkeypatch.delenv("NETA_REQUIRE_SERVICES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="redis-server is not installed"):
        require(None, "redis-server")


def test_a_missing_binary_fails_when_services_are_required(monkeypatch):
    monkeypatch.setenv("NETA_REQUIRE_SERVICES", "1")
    with pytest.raises(pytest.fail.Exception, match="NETA_REQUIRE_SERVICES=1 but redis-server"):
        require(None, "redis-server")


def test_a_present_binary_is_used():
    assert require("/usr/bin/redis-server", "redis-server") == "/usr/bin/redis-server"
