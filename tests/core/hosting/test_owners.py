"""Lease owner names: a process of this machine whose pid is gone is provably dead."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from neta.hosting.cluster.owners import new_owner_name, owner_is_gone


def test_an_owner_of_this_machine_whose_process_ended_is_gone():
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    me = new_owner_name()
    place = me.partition("@")[2]
    assert place  # this machine names the place its pids mean something in
    assert owner_is_gone(f"{ended.stdout.strip()}-0a1b2c@{place}", me)


def test_a_running_process_or_this_one_is_never_gone():
    me = new_owner_name()
    place = me.partition("@")[2]
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as running:
        try:
            assert not owner_is_gone(f"{running.pid}-0a1b2c@{place}", me)
        finally:
            running.kill()
    assert not owner_is_gone(me, me)
    assert not owner_is_gone(f"{os.getpid()}-0a1b2c@{place}", me)  # another hub of this process


def test_an_owner_elsewhere_or_without_a_place_cannot_be_proved_gone():
    me = new_owner_name()
    assert not owner_is_gone("99999999-0a1b2c@elsewhere.0123456789ab", me)
    assert not owner_is_gone("99999999-0a1b2c", me)  # a name from an older Neta
    assert not owner_is_gone("not-a-pid@" + me.partition("@")[2], me)


def test_a_zombie_is_gone():
    me = new_owner_name()
    place = me.partition("@")[2]
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        while True:  # it exits; nobody waits for it yet: a zombie
            stat = Path(f"/proc/{zombie.pid}/stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                break
        assert owner_is_gone(f"{zombie.pid}-0a1b2c@{place}", me)
    finally:
        zombie.wait()
