"""How many workers ``-n auto`` starts (``workers.py``)."""

from __future__ import annotations

import os

import pytest

from tests.suite_speed import workers


@pytest.mark.parametrize(("cores", "count"), [(1, 3), (2, 6), (3, 8), (4, 8), (16, 8)])
def test_n_auto_starts_three_workers_per_core_at_most_eight(cores, count, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    assert workers.auto_count("auto", {}) == count


def test_n_auto_leaves_an_explicit_count_to_xdist():
    assert workers.auto_count("auto", {"PYTEST_XDIST_AUTO_NUM_WORKERS": "3"}) is None


def test_a_number_given_to_n_is_left_to_xdist():
    assert workers.auto_count(4, {}) is None
