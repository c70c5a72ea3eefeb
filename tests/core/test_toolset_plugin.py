"""``neta.ToolsetPlugin``: the toolset, schema and build hooks of a plugin, written once."""

import asyncio
import importlib
import types

from pydantic import BaseModel

import neta
from neta.session_tools import resolve_session_toolsets


class NoteArgs(BaseModel):
    """Arguments of ``note``."""

    text: str


NOTES = neta.ToolsetSpec(name="notes", description="Take notes.", requires="notebook")
NOTE = neta.ToolSchema(
    name="note", toolset="notes", description="Take a note.", args=NoteArgs, effect="reads"
)
PEEK = neta.ToolSchema(
    name="peek", toolset="notes", description="Peek.", args=NoteArgs, effect="reads"
)


def build_note(session: neta.SessionContext) -> neta.Tool:
    return neta.Tool(name="note", execute=lambda args: f"{session.session_id}: {args.text}")


def build_peek(session: neta.SessionContext) -> neta.Tool:
    return neta.Tool(name="peek", execute=lambda args: f"peeked at {args.text}")


def notes_plugin():
    return neta.ToolsetPlugin(NOTES, tools=[(NOTE, build_note), (PEEK, build_peek)])


def with_notebook(session: neta.SessionContext) -> neta.SessionContext:
    session.extras["notebook"] = object()
    return session


def call(tools, name, **arguments):
    bound = tools[name]
    return asyncio.run(bound.tool.invoke(bound.schema.args.model_validate(arguments))).content


def test_toolset_plugin_implements_the_toolset_schema_and_build_hooks(make_pm):
    pm = make_pm(notes=notes_plugin())
    assert pm.hook_names("notes") == ["neta_build_tools", "neta_tools", "neta_toolsets"]
    assert pm.toolset_specs() == [NOTES]
    assert pm.catalog().tool_names(["notes"]) == ["note", "peek"]
    assert pm.problems == []


def test_toolset_plugin_builds_its_tools_anew_for_every_session(make_pm, tmp_path):
    built = []

    def counted(session):
        built.append(session.session_id)
        return build_note(session)

    pm = make_pm(notes=neta.ToolsetPlugin(NOTES, tools=[(NOTE, counted), (PEEK, build_peek)]))
    first, second = (neta.SessionContext(workspace=tmp_path) for _ in range(2))
    first_tools = neta.build_session_tools(pm, first, ["notes"])
    second_tools = neta.build_session_tools(pm, second, ["notes"])
    assert built == [first.session_id, second.session_id]
    assert call(first_tools, "note", text="hi") == f"{first.session_id}: hi"
    assert call(second_tools, "note", text="hi") == f"{second.session_id}: hi"
    assert call(second_tools, "peek", text="it") == "peeked at it"
    assert pm.problems == []


def test_toolset_plugin_toolset_is_off_while_the_session_lacks_its_capability(make_pm, session):
    pm = make_pm(notes=notes_plugin())
    decision = resolve_session_toolsets(pm, session).decision("notes")
    assert not decision.enabled
    assert decision.reason == "needs capability 'notebook', which the session lacks"
    assert resolve_session_toolsets(pm, with_notebook(session)).enabled == ("notes",)


def test_toolset_plugin_announces_several_toolsets_each_with_its_own_tools(make_pm, session):
    drafts = neta.ToolsetSpec(name="drafts", default=False)
    draft = neta.ToolSchema(name="draft", toolset="drafts", description="Draft.", args=NoteArgs)

    def build_draft(session):
        return neta.Tool(name="draft", execute=lambda args: f"draft: {args.text}")

    plugin = neta.ToolsetPlugin(NOTES, drafts, tools=[(NOTE, build_note), (draft, build_draft)])
    pm = make_pm(notes=plugin)
    assert [spec.name for spec in pm.toolset_specs()] == ["notes", "drafts"]
    assert pm.catalog().tool_names(["drafts"]) == ["draft"]
    resolution = resolve_session_toolsets(pm, with_notebook(session), requested=["drafts"])
    tools = neta.build_session_tools(pm, session, resolution.enabled)
    assert set(tools) == {"note", "draft"}
    assert call(tools, "draft", text="x") == "draft: x"
    assert pm.problems == []


def notes_module() -> types.ModuleType:
    """A plugin module as a built-in's ``plugin.py`` reads: the helper's hooks bound by name,
    and a hook of its own that equips the capability the toolset requires."""
    module = types.ModuleType("neta_tmp_notes_plugin")
    plugin = notes_plugin()
    module.neta_toolsets = plugin.neta_toolsets
    module.neta_tools = plugin.neta_tools
    module.neta_build_tools = plugin.neta_build_tools

    @neta.hookimpl
    def neta_session_start(session):
        with_notebook(session)

    module.neta_session_start = neta_session_start
    return module


def test_module_with_the_helpers_hooks_and_one_of_its_own_registers_all_four(make_pm):
    pm = make_pm(notes=notes_module())
    assert pm.hook_names("notes") == [
        "neta_build_tools",
        "neta_session_start",
        "neta_tools",
        "neta_toolsets",
    ]
    assert pm.problems == []


def test_module_with_the_helpers_hooks_and_one_of_its_own_runs_end_to_end(make_pm, tmp_path):
    model = neta.ScriptedProvider(
        [
            {
                "tool_calls": [{"name": "peek", "arguments": {"text": "page one"}}],
                "expect": {"tools_include": ["note", "peek"]},
            },
            {"text": "Done.", "expect": {"last_message_contains": "peeked at page one"}},
        ]
    )
    pm = make_pm(notes=notes_module())
    agent = neta.Agent(provider=model, plugin_manager=pm, workspace=tmp_path)
    result = asyncio.run(agent.run("peek at page one"))
    assert result.outcome == "completed", result.reason
    assert result.text == "Done."
    assert pm.problems == []


NOTES_SOURCE = """
import neta
from pydantic import BaseModel


class Args(BaseModel):
    text: str


plugin = neta.ToolsetPlugin(
    neta.ToolsetSpec(name="jotter", description="Jot."),
    tools=[
        (
            neta.ToolSchema(name="jot", toolset="jotter", description="Jot.", args=Args),
            lambda session: neta.Tool(name="jot", execute=lambda args: "jotted " + args.text),
        )
    ],
)
"""


def test_toolset_plugin_object_named_by_an_entry_point_is_loaded(plugin_dir, tmp_path):
    plugin_dir.add("neta-tools-jotter", "neta_tmp_jotter", NOTES_SOURCE, entry_name="jotter")
    [entry_points] = plugin_dir.root.glob("neta_tools_jotter-*.dist-info/entry_points.txt")
    entry_points.write_text("[neta]\njotter = neta_tmp_jotter:plugin\n")
    importlib.invalidate_caches()
    pm = neta.create_plugin_manager(allow=["jotter"])
    assert pm.info("jotter").entry_point == "neta:jotter = neta_tmp_jotter:plugin"
    tools = neta.build_session_tools(pm, neta.SessionContext(workspace=tmp_path), ["jotter"])
    assert call(tools, "jot", text="it down") == "jotted it down"
    assert pm.problems == []


def test_toolset_plugin_says_which_toolsets_it_offers():
    assert repr(notes_plugin()) == "ToolsetPlugin('notes')"
