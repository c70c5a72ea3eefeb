"""Where the run keeps its throwaway files: in memory (tmpfs) when the machine has room."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest

from tests.suite_speed import scratch

SHM = scratch.SHM


def shm_with_room() -> bool:
    return scratch.filesystem(SHM) == "tmpfs" and os.statvfs(SHM).f_bavail > 0


def test_a_tmpdir_the_user_set_is_kept():
    assert scratch.memory_tmpdir({"TMPDIR": "/var/tmp"}) is None


def test_a_folder_not_in_memory_is_not_used():
    assert scratch.filesystem(Path("/proc")) == "proc"
    assert scratch.memory_tmpdir({}, Path("/proc")) is None


def test_filesystem_names_the_mount_holding_a_path():
    assert scratch.filesystem(Path("/proc/self")) == "proc"
    roots = [
        line.split()[2]
        for line in Path("/proc/self/mounts").read_text().splitlines()
        if line.split()[1] == "/"
    ]
    assert scratch.filesystem(Path("/")) == roots[-1]  # the last mounted there is what shows


@pytest.mark.skipif(not shm_with_room(), reason="/dev/shm is not a tmpfs with free space")
def test_a_tmpfs_with_too_little_room_is_not_used(monkeypatch):
    monkeypatch.setattr(scratch, "MIN_FREE_BYTES", 1 << 60)
    assert scratch.memory_tmpdir({}, SHM) is None


@pytest.mark.skipif(not shm_with_room(), reason="/dev/shm is not a tmpfs with free space")
def test_the_folder_is_the_users_own_and_others_may_only_pass_through(monkeypatch):
    monkeypatch.setattr(scratch, "MIN_FREE_BYTES", 0)
    monkeypatch.setattr(scratch, "FOLDER", f"neta-tests-check-{os.getpid()}-{{uid}}")
    made = scratch.memory_tmpdir({}, SHM)
    try:
        assert made == SHM / f"neta-tests-check-{os.getpid()}-{os.getuid()}"
        mode = made.lstat()
        assert stat.S_ISDIR(mode.st_mode)
        assert mode.st_uid == os.getuid()
        # others may reach a folder in it (PostgreSQL's, run as another user) but not list it
        assert stat.S_IMODE(mode.st_mode) == 0o711
        assert scratch.memory_tmpdir({}, SHM) == made  # the next run takes it again
    finally:
        made.rmdir()


@pytest.mark.skipif(not shm_with_room(), reason="/dev/shm is not a tmpfs with free space")
@pytest.mark.parametrize("planted", ["writable", "symlink"])
def test_a_folder_someone_else_could_change_is_not_used(monkeypatch, tmp_path, planted):
    monkeypatch.setattr(scratch, "MIN_FREE_BYTES", 0)
    name = f"neta-tests-planted-{os.getpid()}-{{uid}}"
    monkeypatch.setattr(scratch, "FOLDER", name)
    path = SHM / name.format(uid=os.getuid())
    if planted == "writable":
        path.mkdir()
        path.chmod(0o777)
    else:
        path.symlink_to(tmp_path)
    try:
        assert scratch.memory_tmpdir({}, SHM) is None
    finally:
        path.unlink() if path.is_symlink() else path.rmdir()


def test_use_points_tmpdir_and_the_tempfile_module_at_the_folder(monkeypatch, tmp_path):
    environ: dict[str, str] = {}
    monkeypatch.setattr(tempfile, "tempdir", "/somewhere/else")
    scratch.use(tmp_path, environ)
    assert environ == {"TMPDIR": str(tmp_path)}
    assert tempfile.tempdir is None  # asked again, it reads TMPDIR
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert tempfile.gettempdir() == str(tmp_path)


def test_this_runs_temporary_files_are_in_memory_unless_the_user_chose_a_folder():
    # the controller chose before any worker started, and the workers inherited TMPDIR
    memory = scratch.memory_tmpdir({})
    given = os.environ.get("TMPDIR")
    if memory is None:
        pytest.skip("no tmpfs with room at /dev/shm: the run keeps the usual temp folder")
    if given not in (None, str(memory)):
        pytest.skip(f"the run was given TMPDIR={given}")
    assert given == str(memory)
    assert tempfile.gettempdir() == given
    with tempfile.TemporaryDirectory() as made:
        assert scratch.filesystem(Path(made)) == "tmpfs"
