"""Fixtures of the core's tests that several folders share."""

import pytest

from tests.core.approval_edit import BEFORE


@pytest.fixture
def app_py(tmp_path):
    """The ``serve`` fixture's workspace's ``app.py`` (in ``tmp_path / "ws"``), as ``BEFORE``."""
    path = tmp_path / "ws" / "app.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(BEFORE)
    return path
