"""read_skill and read_skill_file: reading skills, confined to the skill's folder."""

import asyncio
import os

import pytest

import neta
from neta_skills import read_skill, read_skill_file
from tests.plugins.skills.conftest import write_skill


def test_read_skill_as_a_function_returns_the_body_and_the_files(started, workspace_skills):
    write_skill(workspace_skills, "deploy", "Ship the site.", "1. build\n2. upload\n")
    (workspace_skills / "deploy" / "scripts").mkdir()
    (workspace_skills / "deploy" / "scripts" / "upload.sh").write_text("rsync ...\n")
    result = asyncio.run(read_skill.build(started).invoke(read_skill.ReadSkillArgs(name="deploy")))
    assert result.content == (
        "Skill deploy: Ship the site.\n\n1. build\n2. upload\n\n"
        "Files in this skill (read them with read_skill_file): scripts/upload.sh"
    )
    assert "---" not in result.content


def test_read_skill_through_the_catalog_prefers_the_users_home_copy(
    call, workspace_skills, home_skills
):
    write_skill(home_skills, "lint", "Home version.", "home body\n")
    write_skill(workspace_skills, "lint", "Workspace version.", "workspace body\n")
    write_skill(workspace_skills, "only-workspace", "From the repository.", "workspace only\n")
    result = call("read_skill", name="lint")
    assert "home body" in result.content
    assert "workspace body" not in result.content
    assert result.data["folder"] == str(home_skills / "lint")
    assert "workspace only" in call("read_skill", name="only-workspace").content


def test_read_skill_file_of_a_name_in_home_and_workspace_reads_only_the_home_copy(
    call, workspace_skills, home_skills
):
    write_skill(home_skills, "lint")
    (home_skills / "lint" / "notes.md").write_text("home notes\n")
    write_skill(workspace_skills, "lint")
    (workspace_skills / "lint" / "notes.md").write_text("workspace notes\n")
    (workspace_skills / "lint" / "payload.md").write_text("planted\n")
    assert call("read_skill_file", name="lint", path="notes.md").content == "home notes\n"
    with pytest.raises(neta.ToolError, match="no such file"):
        call("read_skill_file", name="lint", path="payload.md")


def test_read_skill_unknown_name_suggests_close_ones(call, workspace_skills):
    write_skill(workspace_skills, "deploy-docs")
    with pytest.raises(neta.ToolError, match=r"no skill 'deploy-doc'\. Did you mean 'deploy-docs'"):
        call("read_skill", name="deploy-doc")


def test_read_skill_malformed_skill_md_gives_the_reason(call, workspace_skills):
    folder = workspace_skills / "broken"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: broken\n---\nbody\n")
    with pytest.raises(neta.ToolError, match=r"malformed SKILL\.md: .*lacks the 'description'"):
        call("read_skill", name="broken")


def test_read_skill_file_as_a_function_reads_a_file_inside_the_skill(started, workspace_skills):
    write_skill(workspace_skills, "deploy")
    (workspace_skills / "deploy" / "notes.md").write_text("remember the VPN\n")
    result = asyncio.run(
        read_skill_file.build(started).invoke(
            read_skill_file.ReadSkillFileArgs(name="deploy", path="notes.md")
        )
    )
    assert result.content == "remember the VPN\n"
    assert result.data == {"name": "deploy", "path": "notes.md"}


def test_read_skill_file_through_the_catalog_reads_nested_files(call, workspace_skills):
    write_skill(workspace_skills, "deploy")
    (workspace_skills / "deploy" / "ref").mkdir()
    (workspace_skills / "deploy" / "ref" / "api.md").write_text("GET /health\n")
    assert call("read_skill_file", name="deploy", path="ref/api.md").content == "GET /health\n"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../other/SKILL.md", "contains '..'"),
        ("ref/../../other/SKILL.md", "contains '..'"),
        ("/etc/passwd", "is absolute"),
        ("", "the path is empty"),
    ],
)
def test_read_skill_file_escaping_path_is_refused(call, workspace_skills, path, reason):
    write_skill(workspace_skills, "deploy")
    write_skill(workspace_skills, "other")
    with pytest.raises(neta.ToolError, match=reason):
        call("read_skill_file", name="deploy", path=path)


def test_read_skill_file_symlink_escape_is_refused(call, workspace_skills, tmp_path):
    write_skill(workspace_skills, "deploy")
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret\n")
    os.symlink(secret, workspace_skills / "deploy" / "link.txt")
    os.symlink(tmp_path, workspace_skills / "deploy" / "outside")
    with pytest.raises(neta.ToolError, match="leads outside the skill 'deploy'"):
        call("read_skill_file", name="deploy", path="link.txt")
    with pytest.raises(neta.ToolError, match="leads outside the skill 'deploy'"):
        call("read_skill_file", name="deploy", path="outside/secret.txt")


def test_read_skill_file_symlink_inside_the_skill_is_allowed(call, workspace_skills):
    write_skill(workspace_skills, "deploy")
    (workspace_skills / "deploy" / "real.md").write_text("real\n")
    os.symlink("real.md", workspace_skills / "deploy" / "alias.md")
    assert call("read_skill_file", name="deploy", path="alias.md").content == "real\n"


@pytest.mark.timeout(10)
def test_read_skill_file_of_a_fifo_is_refused_without_blocking(call, workspace_skills):
    write_skill(workspace_skills, "deploy")
    os.mkfifo(workspace_skills / "deploy" / "pipe")
    with pytest.raises(neta.ToolError, match="not a regular file"):
        call("read_skill_file", name="deploy", path="pipe")


def test_read_skill_file_missing_file_is_a_tool_error(call, workspace_skills):
    write_skill(workspace_skills, "deploy")
    with pytest.raises(neta.ToolError, match="no such file"):
        call("read_skill_file", name="deploy", path="nope.md")


def test_read_skill_with_skill_md_linking_outside_the_skill_is_refused(
    call, workspace_skills, tmp_path
):
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: sneaky\ndescription: d\n---\nsecret\n")
    (workspace_skills / "sneaky").mkdir(parents=True)
    os.symlink(outside, workspace_skills / "sneaky" / "SKILL.md")
    with pytest.raises(neta.ToolError, match="leads outside the skill 'sneaky'"):
        call("read_skill", name="sneaky")
