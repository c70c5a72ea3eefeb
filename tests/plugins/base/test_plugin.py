"""The ``base`` plugin's wiring: one toolset, five tools with schemas and instances."""

import json

import neta_base.plugin
from tests.core.cli.cli_runner import neta_in_process
from tests.services import neta_environ

BASE_TOOLS = ["bash", "read_file", "write_file", "list_dir", "patch"]


def test_base_plugin_registers_five_tools_in_toolset_base(make_pm):
    pm = make_pm(base=neta_base.plugin)
    catalog = pm.catalog()
    assert catalog.tool_names(["base"]) == BASE_TOOLS
    assert [spec.name for spec in pm.toolset_specs()] == ["base"]
    assert pm.problems == []


def test_every_base_tool_has_guidance_and_a_when_to_use_line(make_pm):
    catalog = make_pm(base=neta_base.plugin).catalog()
    for name in BASE_TOOLS:
        schema = catalog.get(name)
        assert schema.guidance, name
        assert schema.when_to_use, name
        assert schema.openai_tool(strict=True)["function"]["name"] == name


def test_base_tools_are_built_for_a_session_and_only_bash_is_sequential(base_tools):
    assert list(base_tools) == BASE_TOOLS
    sequential = [name for name, bound in base_tools.items() if bound.tool.sequential]
    assert sequential == ["bash"]


def test_base_plugin_implements_the_toolset_schema_build_and_cleanup_hooks(make_pm):
    pm = make_pm(base=neta_base.plugin)
    assert pm.hook_names("base") == [
        "neta_build_tools",
        "neta_run_end",
        "neta_session_end",
        "neta_tools",
        "neta_toolsets",
    ]


def test_neta_tools_list_only_base_lists_the_five_tools(tmp_path):
    done = neta_in_process(
        "tools", "list", "--only", "base", "--json", env=neta_environ(), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert sorted(row["name"] for row in rows) == sorted(BASE_TOOLS)
    assert {(row["toolset"], row["plugin"], row["enabled"]) for row in rows} == {
        ("base", "base", True)
    }


def test_neta_tools_call_read_file_runs_in_the_given_workspace(tmp_path):
    (tmp_path / "hello.txt").write_text("hello\n")
    done = neta_in_process(
        *("tools", "call", "read_file"),
        *("--args", json.dumps({"path": "hello.txt"}), "--workspace", str(tmp_path)),
        env=neta_environ(),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "     1\thello\n"
