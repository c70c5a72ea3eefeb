"""The system prompt names only the tools a session has."""

import datetime as dt
import re

from pydantic import BaseModel

import neta
import neta_base.plugin
from neta.runtime.prompt_builder import build_system_prompt, collect_available_tool_names
from neta.runtime.prompt_guidance import DISCIPLINE_RULES, get_tool_use_enforcement


class NoArgs(BaseModel):
    pass


class Gadget:
    """A third-party plugin whose guidance mentions another plugin's tool."""

    @neta.hookimpl
    def neta_toolsets(self):
        return [neta.ToolsetSpec(name="gadgets", default=False)]

    @neta.hookimpl
    def neta_tools(self):
        return [
            neta.ToolSchema(
                name="gizmo",
                toolset="gadgets",
                description="Turn the gizmo.",
                args=NoArgs,
                guidance="Turn the gizmo gently, one notch at a time.\n"
                "After turning, confirm with read_file that the dial moved.",
                when_to_use="When the dial must move, use gizmo.",
            )
        ]

    @neta.hookimpl
    def neta_build_tools(self, session):
        return [neta.Tool(name="gizmo", execute=lambda a: "turned")]


def prompt_for(pm, toolsets, session):
    names = collect_available_tool_names(pm.catalog(), toolsets)
    return build_system_prompt(
        catalog=pm.catalog(), tool_names=names, session=session, today=dt.date(2026, 1, 2)
    )


def mentions(text, name):
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def test_enforcement_starts_with_the_discipline_rules(make_pm):
    text = get_tool_use_enforcement([], make_pm().catalog())
    for rule in DISCIPLINE_RULES:
        assert f"- {rule}" in text
    assert "When you must use a tool" not in text


def test_base_alone_has_its_scenarios_and_the_read_and_workdir_rules(make_pm, session):
    pm = make_pm(base=neta_base.plugin)
    text = prompt_for(pm, ["base"], session)
    assert "Read before you modify" in text
    assert "Check the working directory" in text
    assert "## patch\n" in text
    assert text.count("## When you must use a tool") == 1
    for schema in pm.catalog().schemas_by_toolset("base"):
        assert schema.when_to_use in text
    assert not mentions(text, "todo")
    assert not mentions(text, "clarify")


def test_without_read_file_and_bash_their_rules_are_absent(make_pm, session):
    pm = make_pm(gadget=Gadget(), base=neta_base.plugin)
    text = prompt_for(pm, ["gadgets"], session)
    assert "Read before you modify" not in text
    assert "Check the working directory" not in text
    assert not mentions(text, "read_file")
    assert not mentions(text, "bash")


def test_third_party_guidance_and_scenario_appear(make_pm, session):
    pm = make_pm(gadget=Gadget(), base=neta_base.plugin)
    text = prompt_for(pm, ["base", "gadgets"], session)
    assert "## gizmo\nTurn the gizmo gently, one notch at a time." in text
    assert "- When the dial must move, use gizmo." in text
    assert "confirm with read_file that the dial moved" in text


def test_guidance_line_naming_a_missing_tool_is_dropped(make_pm, session):
    pm = make_pm(gadget=Gadget(), base=neta_base.plugin)
    text = prompt_for(pm, ["gadgets"], session)
    assert "Turn the gizmo gently" in text
    assert "confirm with" not in text


def test_no_prompt_names_a_catalog_tool_the_session_lacks(make_pm, session):
    pm = make_pm(gadget=Gadget(), base=neta_base.plugin)
    catalog = pm.catalog()
    for toolsets in (["base"], ["gadgets"], ["base", "gadgets"], []):
        available = set(catalog.tool_names(toolsets))
        text = prompt_for(pm, toolsets, session)
        for schema in catalog:
            if schema.name not in available:
                assert not mentions(text, schema.name), (toolsets, schema.name)


def test_environment_section_names_workspace_and_date(make_pm, session):
    text = prompt_for(make_pm(), [], session)
    assert f"- Workspace: {session.workspace}" in text
    assert "- Today: 2026-01-02" in text


def test_host_extras_are_appended(make_pm, session):
    pm = make_pm()
    text = build_system_prompt(
        catalog=pm.catalog(), tool_names=[], session=session, extras=["Answer in French."]
    )
    assert text.rstrip().endswith("Answer in French.")


class Lens:
    """A plugin whose when-to-use line names another plugin's tool."""

    @neta.hookimpl
    def neta_toolsets(self):
        return [neta.ToolsetSpec(name="lenses")]

    @neta.hookimpl
    def neta_tools(self):
        return [
            neta.ToolSchema(
                name="lens",
                toolset="lenses",
                description="Look closely.",
                args=NoArgs,
                when_to_use="If unclear, look with lens, then read it with read_file.",
            )
        ]


def test_when_to_use_line_naming_a_missing_tool_is_left_out_of_the_rules(make_pm):
    catalog = make_pm(lens=Lens(), base=neta_base.plugin).catalog()
    without = get_tool_use_enforcement(["lens"], catalog)
    assert not mentions(without, "read_file")
    with_read = get_tool_use_enforcement(["lens", "read_file"], catalog)
    assert "- If unclear, look with lens, then read it with read_file." in with_read
