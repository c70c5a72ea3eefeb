"""Each built-in toolset plugin's wiring: its hooks, its toolsets, its tools, built per session."""

import importlib

import pytest

import neta

WIRING = {
    "base": (
        "neta_base.plugin",
        ["neta_build_tools", "neta_run_end", "neta_session_end", "neta_tools", "neta_toolsets"],
        {"base": (None, ["bash", "read_file", "write_file", "list_dir", "patch"])},
    ),
    "planning": (
        "neta_planning.plugin",
        ["neta_build_tools", "neta_tools", "neta_toolsets"],
        {"planning": ("todo_store", ["todo"])},
    ),
    "interaction": (
        "neta_interaction.plugin",
        ["neta_build_tools", "neta_tools", "neta_toolsets"],
        {"interaction": ("user_channel", ["clarify"])},
    ),
    "memory": (
        "neta_memory.plugin",
        ["neta_build_tools", "neta_session_start", "neta_tools", "neta_toolsets"],
        {"memory": ("memory_store", ["memory_save", "memory_recall", "memory_forget"])},
    ),
    "skill": (
        "neta_skills.plugin",
        ["neta_build_tools", "neta_session_start", "neta_tools", "neta_toolsets"],
        {"skill": ("skills", ["read_skill", "read_skill_file", "skill_manage"])},
    ),
    "crew": (
        "neta_crew.plugin",
        ["neta_build_tools", "neta_tools", "neta_toolsets"],
        {
            "crew": ("crew_runner", ["delegate_task", "delegate_parallel"]),
            "crew_child": ("crew_parent", ["escalate"]),
        },
    ),
}
"""Entry-point name: (module, hooks it implements, {toolset: (capability required, tools)})."""


def plugin_manager(name):
    module = importlib.import_module(WIRING[name][0])
    return neta.create_plugin_manager(load_entrypoints=False, plugins=[(name, module)])


@pytest.mark.parametrize("name", sorted(WIRING))
def test_builtin_plugin_module_implements_its_hooks(name):
    assert plugin_manager(name).hook_names(name) == WIRING[name][1]


@pytest.mark.parametrize("name", sorted(WIRING))
def test_builtin_plugin_announces_its_toolsets_with_their_capabilities(name):
    pm = plugin_manager(name)
    toolsets = WIRING[name][2]
    announced = {spec.name: spec.requires for spec in pm.toolset_specs()}
    assert announced == {toolset: required for toolset, (required, _) in toolsets.items()}
    assert all(spec.default and spec.description for spec in pm.toolset_specs())
    assert pm.problems == []


@pytest.mark.parametrize("name", sorted(WIRING))
def test_builtin_plugin_registers_its_tools_in_order_under_its_toolsets(name):
    catalog = plugin_manager(name).catalog()
    for toolset, (_, tools) in WIRING[name][2].items():
        assert catalog.tool_names([toolset]) == tools


@pytest.mark.parametrize("name", sorted(WIRING))
def test_builtin_plugin_builds_new_instances_for_each_session(name, tmp_path):
    pm = plugin_manager(name)
    toolsets = list(WIRING[name][2])
    first, second = (
        neta.build_session_tools(pm, neta.SessionContext(workspace=tmp_path), toolsets)
        for _ in range(2)
    )
    expected = [tool for _, tools in WIRING[name][2].values() for tool in tools]
    assert sorted(first) == sorted(second) == sorted(expected)
    assert all(first[tool].tool is not second[tool].tool for tool in expected)
    assert pm.problems == []
