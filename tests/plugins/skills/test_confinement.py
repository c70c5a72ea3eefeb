"""Skill paths stay inside the real skills directories, whatever symlinks say."""

import os

import pytest

import neta
from tests.plugins.skills.conftest import write_skill


@pytest.fixture
def outside(tmp_path):
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def listing(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_create_with_the_skills_directory_linked_out_of_the_workspace_writes_nothing_outside(
    call, session, outside
):
    (session.workspace / ".neta").mkdir()
    os.symlink(outside, session.workspace / ".neta" / "skills")
    with pytest.raises(neta.ToolError, match="outside"):
        call("skill_manage", action="create", name="x", description="When x.", body="Do x.\n")
    assert listing(outside) == []


def test_skill_folder_linked_out_is_neither_read_nor_written(call, workspace_skills, outside):
    write_skill(outside, "deploy", body="outside steps\n")
    (outside / "deploy" / "notes.md").write_text("outside notes\n")
    workspace_skills.mkdir(parents=True)
    os.symlink(outside / "deploy", workspace_skills / "deploy")
    before = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}

    with pytest.raises(neta.ToolError):
        call("read_skill_file", name="deploy", path="notes.md")
    with pytest.raises(neta.ToolError):
        call("read_skill", name="deploy")
    with pytest.raises(neta.ToolError):
        call("skill_manage", action="write_file", name="deploy", path="new.md", content="x\n")
    with pytest.raises(neta.ToolError):
        call("skill_manage", action="patch", name="deploy", old_string="outside", new_string="in")
    assert listing(outside) == ["deploy", "deploy/SKILL.md", "deploy/notes.md"]
    assert {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()} == before


def test_skill_folder_linked_inside_the_skills_directory_works(call, workspace_skills):
    write_skill(workspace_skills, "real", body="real steps\n")
    os.symlink("real", workspace_skills / "alias")
    (workspace_skills / "real" / "notes.md").write_text("notes\n")
    assert call("read_skill_file", name="real", path="notes.md").content == "notes\n"
