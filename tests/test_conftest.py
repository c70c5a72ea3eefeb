"""What the suite's own conftest gives every test: its own NETA_HOME."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

HOMES: list[str] = []


@pytest.mark.parametrize("turn", [1, 2])
def test_each_test_has_its_own_neta_home_not_made_beforehand(turn, tmp_path_factory):
    home = Path(os.environ["NETA_HOME"])
    assert not home.exists()  # Neta makes it, as for a new user
    assert home.is_relative_to(tmp_path_factory.getbasetemp())
    assert home.as_posix() not in HOMES
    HOMES.append(home.as_posix())
