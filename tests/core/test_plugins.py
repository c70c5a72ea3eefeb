import asyncio
import importlib.metadata
import os
import sys
import sysconfig
import time

import pytest
from pydantic import BaseModel

import neta
import neta.errors
from neta.session_tools import resolve_session_toolsets


class EchoArgs(BaseModel):
    text: str


class Echo:
    """A well-behaved plugin with one toolset and one tool."""

    @neta.hookimpl
    def neta_toolsets(self):
        return [neta.ToolsetSpec(name="echoer", description="Echo.")]

    @neta.hookimpl
    def neta_tools(self):
        return [neta.ToolSchema(name="echo", toolset="echoer", description="Echo.", args=EchoArgs)]

    @neta.hookimpl
    def neta_build_tools(self, session):
        return [neta.Tool(name="echo", execute=lambda args: f"{session.entry}: {args.text}")]


class Rival:
    """Registers a tool whose name another plugin already took."""

    @neta.hookimpl
    def neta_toolsets(self):
        return [neta.ToolsetSpec(name="rival")]

    @neta.hookimpl
    def neta_tools(self):
        return [
            neta.ToolSchema(name="echo", toolset="rival", description="Also echo.", args=EchoArgs)
        ]


class Garbage:
    """Returns something that is not a list of schemas."""

    @neta.hookimpl
    def neta_tools(self):
        return ["not a schema"]


class Raises:
    """Raises inside a hook."""

    @neta.hookimpl
    def neta_toolsets(self):
        raise RuntimeError("boom")


class Misspelled:
    """Implements a hook that does not exist."""

    @neta.hookimpl
    def neta_toolz(self):
        return []


def test_core_alone_builds_an_empty_catalog_and_resolves_no_toolsets(make_pm, session):
    pm = make_pm()
    assert len(pm.catalog()) == 0
    resolution = resolve_session_toolsets(pm, session)
    assert resolution.enabled == ()
    assert neta.build_session_tools(pm, session, resolution.enabled) == {}
    assert pm.problems == []


def test_well_behaved_plugin_tools_run_as_closures_over_the_session(make_pm, session):
    pm = make_pm(echo=Echo())
    tools = neta.build_session_tools(pm, session, ["echoer"])
    result = asyncio.run(tools["echo"].tool.invoke(EchoArgs(text="hi")))
    assert result.content == "cli: hi"
    assert tools["echo"].schema.toolset == "echoer"


def test_conflicting_tool_names_are_reported_naming_both_plugins_and_first_kept(make_pm):
    pm = make_pm(rival=Rival(), echo=Echo())  # as in pluggy, the last registered is called first
    catalog = pm.catalog()
    assert catalog.plugin_of("echo") == "echo"
    [problem] = pm.problems
    assert isinstance(problem, neta.errors.ToolConflictError)
    assert "'echo'" in str(problem)
    assert "'rival'" in str(problem)


def test_hook_returning_garbage_is_reported_and_other_plugins_still_work(make_pm, session):
    pm = make_pm(echo=Echo(), garbage=Garbage())
    assert [s.name for s in pm.catalog()] == ["echo"]
    [problem] = pm.problems
    assert problem.plugin == "garbage"
    assert "neta_tools() returned malformed data" in str(problem)
    assert "echo" in neta.build_session_tools(pm, session, ["echoer"])


def test_hook_raising_is_reported_naming_the_plugin(make_pm):
    pm = make_pm(echo=Echo(), raises=Raises())
    assert [s.name for s in pm.toolset_specs()] == ["echoer"]
    [problem] = pm.problems
    assert str(problem) == "plugin 'raises': neta_toolsets() raised RuntimeError: boom"


def test_misspelled_hook_is_reported_at_start_up_and_the_plugin_removed(make_pm):
    pm = make_pm(echo=Echo(), typo=Misspelled())
    assert not pm.has_plugin("typo")
    assert pm.has_plugin("echo")
    [problem] = pm.problems
    assert "neta_toolz" in str(problem)


def test_schema_without_instance_is_left_out_and_reported(make_pm, session):
    class SchemaOnly(Echo):
        @neta.hookimpl
        def neta_build_tools(self, session):
            return []

    pm = make_pm(echo=SchemaOnly())
    assert neta.build_session_tools(pm, session, ["echoer"]) == {}
    assert "registered tool 'echo' but built no instance" in str(pm.problems[0])


def test_instance_without_schema_is_left_out_and_reported(make_pm, session):
    class Stray(Echo):
        @neta.hookimpl
        def neta_build_tools(self, session):
            return [neta.Tool(name="echo", execute=str), neta.Tool(name="ghost", execute=str)]

    pm = make_pm(echo=Stray())
    assert list(neta.build_session_tools(pm, session, ["echoer"])) == ["echo"]
    assert "built tool 'ghost', which has no schema" in str(pm.problems[0])


def test_tools_of_disabled_toolsets_are_not_built_into_the_session(make_pm, session):
    pm = make_pm(echo=Echo())
    assert neta.build_session_tools(pm, session, ["other"]) == {}
    assert pm.problems == []


def test_async_execute_and_tool_result_pass_through(make_pm):
    async def run(args):
        return neta.ToolResult(content=args.text, is_error=True)

    tool = neta.Tool(name="t", execute=run)
    result = asyncio.run(tool.invoke(EchoArgs(text="bad")))
    assert result == neta.ToolResult(content="bad", is_error=True)


def test_execute_returning_neither_text_nor_result_is_a_type_error():
    tool = neta.Tool(name="t", execute=lambda args: 42)
    with pytest.raises(TypeError, match="expected str or ToolResult"):
        asyncio.run(tool.invoke(EchoArgs(text="x")))


ECHO_SOURCE = """
import neta
from pydantic import BaseModel

class Args(BaseModel):
    text: str

@neta.hookimpl
def neta_toolsets():
    return [neta.ToolsetSpec(name="{toolset}", description="Temp.")]

@neta.hookimpl
def neta_tools():
    return [neta.ToolSchema(name="{tool}", toolset="{toolset}", description="Temp.", args=Args)]

@neta.hookimpl
def neta_build_tools(session):
    return [neta.Tool(name="{tool}", execute=lambda a: "{tool} says " + a.text)]
"""


def echo_source(tool: str, toolset: str) -> str:
    return ECHO_SOURCE.replace("{tool}", tool).replace("{toolset}", toolset)


def test_entry_point_plugin_is_discovered_and_a_broken_one_reported(plugin_dir):
    plugin_dir.add("neta-tools-loud", "neta_tmp_loud", echo_source("loud", "loudset"))
    plugin_dir.add("neta-tools-broken", "neta_tmp_broken", "raise ImportError('no such lib')\n")
    pm = neta.create_plugin_manager(allow=["loudset", "neta_tmp_loud", "neta_tmp_broken"])
    assert "loud" in pm.catalog()
    [problem] = pm.problems
    assert problem.plugin == "neta_tmp_broken"
    assert problem.entry_point == "neta:neta_tmp_broken = neta_tmp_broken"
    assert "failed to load: ImportError: no such lib" in str(problem)


def test_allow_list_matches_distribution_names(plugin_dir):
    plugin_dir.add("neta-tools-quiet", "neta_tmp_quiet", echo_source("quiet", "quietset"))
    pm = neta.create_plugin_manager(allow=["neta-tools-quiet"])
    assert [info.name for info in pm.plugin_infos()] == ["neta_tmp_quiet"]
    assert pm.info("neta_tmp_quiet").distribution == "neta-tools-quiet"


def test_empty_load_list_loads_no_entry_points(plugin_dir, monkeypatch):
    plugin_dir.add("neta-tools-none", "neta_tmp_none", echo_source("none1", "noneset"))
    monkeypatch.setenv("NETA_LOAD_PLUGINS", "")
    pm = neta.create_plugin_manager()
    assert pm.plugin_infos() == []


def test_disabled_plugin_is_blocked_before_import(plugin_dir, monkeypatch):
    plugin_dir.add("neta-tools-bomb", "neta_tmp_bomb", "raise SystemExit('imported!')\n")
    monkeypatch.setenv("NETA_DISABLE_PLUGINS", "neta_tmp_bomb, other")
    pm = neta.create_plugin_manager()
    assert not pm.has_plugin("neta_tmp_bomb")
    assert pm.problems == []


def counting_metadata_scans(monkeypatch) -> list[int]:
    """One item per scan of the installed distributions from here on."""
    scans: list[int] = []
    scan = importlib.metadata.distributions

    def counted(**kwargs):
        scans.append(1)
        return scan(**kwargs)

    monkeypatch.setattr(importlib.metadata, "distributions", counted)
    return scans


def only_on_the_path(monkeypatch, folder) -> None:
    """``sys.path`` holds ``folder`` and the standard library alone (neta and pydantic are
    imported), and nothing writes bytecode: no other folder's change, by another process or
    by an import, decides what a test of discovery sees."""
    stdlib = {sysconfig.get_path(name) for name in ("stdlib", "platstdlib")}
    monkeypatch.setattr(sys, "path", [str(folder), *sorted(stdlib)])
    monkeypatch.setattr(sys, "dont_write_bytecode", True)


def test_discovery_reads_the_metadata_again_only_when_a_folder_on_the_path_changes(
    plugin_dir, monkeypatch
):
    scans = counting_metadata_scans(monkeypatch)
    plugin_dir.add("neta-tools-first", "neta_tmp_first", echo_source("first", "firstset"))
    only_on_the_path(monkeypatch, plugin_dir.root)
    an_hour_ago = time.time() - 3600
    os.utime(plugin_dir.root, (an_hour_ago, an_hour_ago))  # long settled
    for _ in range(3):
        assert "first" in neta.create_plugin_manager(allow=["neta_tmp_first"]).catalog()
    assert len(scans) == 1
    plugin_dir.add("neta-tools-second", "neta_tmp_second", echo_source("second", "secondset"))
    pm = neta.create_plugin_manager(allow=["neta_tmp_first", "neta_tmp_second"])
    assert {"first", "second"} <= {schema.name for schema in pm.catalog()}
    assert len(scans) == 2


def test_discovery_in_a_folder_changed_a_moment_ago_is_not_remembered(plugin_dir, monkeypatch):
    # its timestamp may not move at its next change, if that comes within its resolution
    scans = counting_metadata_scans(monkeypatch)
    plugin_dir.add("neta-tools-fresh", "neta_tmp_fresh", echo_source("fresh", "freshset"))
    only_on_the_path(monkeypatch, plugin_dir.root)
    os.utime(plugin_dir.root)  # changed just now
    for _ in range(2):
        neta.create_plugin_manager(allow=["neta_tmp_fresh"])
    assert len(scans) == 2
    an_hour_ago = time.time() - 3600
    os.utime(plugin_dir.root, (an_hour_ago, an_hour_ago))  # the same folder, settled
    for _ in range(2):
        neta.create_plugin_manager(allow=["neta_tmp_fresh"])
    assert len(scans) == 3


def test_builtin_plugins_are_discovered_through_their_entry_points():
    pm = neta.create_plugin_manager(allow=["base", "planning", "interaction"])
    infos = {info.name: info for info in pm.plugin_infos()}
    assert set(infos) == {"base", "planning", "interaction"}
    assert all(info.builtin for info in infos.values())
    assert infos["base"].entry_point == "neta:base = neta_base.plugin"


def test_two_distributions_with_the_same_entry_point_name_are_reported(plugin_dir):
    plugin_dir.add(
        "neta-tools-twin-a", "neta_tmp_twin_a", echo_source("twin_a", "twins"), entry_name="twins"
    )
    plugin_dir.add(
        "neta-tools-twin-b", "neta_tmp_twin_b", echo_source("twin_b", "twins"), entry_name="twins"
    )
    pm = neta.create_plugin_manager(allow=["twins"])
    assert pm.info("twins").distribution == "neta-tools-twin-a"
    assert [s.name for s in pm.catalog()] == ["twin_a"]
    [problem] = pm.problems
    assert "'neta-tools-twin-b' declares the same entry-point name" in str(problem)
    assert "kept the one from 'neta-tools-twin-a'" in str(problem)


def test_distribution_without_metadata_name_is_reported_not_a_crash(plugin_dir):
    nameless = plugin_dir.root / "nameless-0.1.dist-info"
    nameless.mkdir()
    (nameless / "entry_points.txt").write_text("[neta]\ntwin = neta_tmp_nameless\n")
    plugin_dir.add(
        "neta-tools-twin", "neta_tmp_twin", echo_source("twin", "twinset"), entry_name="twin"
    )
    pm = neta.create_plugin_manager(allow=["twin"])
    assert pm.info("twin").distribution == "neta-tools-twin"
    assert "twin" in pm.catalog()
    [problem] = pm.problems
    assert "entry point neta:twin = neta_tmp_nameless" in str(problem)
    assert "failed to load: ModuleNotFoundError" in str(problem)


def test_plugin_calling_sys_exit_at_import_is_reported_and_the_others_load(plugin_dir):
    plugin_dir.add("neta-tools-exits", "neta_tmp_exits", "import sys\nsys.exit('usage: ...')\n")
    plugin_dir.add("neta-tools-stays", "neta_tmp_stays", echo_source("stays", "staysset"))
    pm = neta.create_plugin_manager(allow=["neta_tmp_exits", "neta_tmp_stays"])
    assert "stays" in pm.catalog()
    [problem] = pm.problems
    assert problem.plugin == "neta_tmp_exits"
    assert "failed to load: SystemExit: usage: ..." in str(problem)


def test_hook_calling_sys_exit_is_reported_naming_the_plugin(make_pm):
    class Exits:
        @neta.hookimpl
        def neta_toolsets(self):
            raise SystemExit(3)

    pm = make_pm(echo=Echo(), exits=Exits())
    assert [s.name for s in pm.toolset_specs()] == ["echoer"]
    [problem] = pm.problems
    assert str(problem) == "plugin 'exits': neta_toolsets() raised SystemExit: 3"


def test_load_and_disable_lists_match_distribution_names_however_spelled(plugin_dir, monkeypatch):
    plugin_dir.add("neta-tools-spelled", "neta_tmp_spelled", echo_source("spelled", "spellset"))
    monkeypatch.setenv("NETA_LOAD_PLUGINS", "Neta_Tools.Spelled")
    assert "spelled" in neta.create_plugin_manager().catalog()
    monkeypatch.setenv("NETA_DISABLE_PLUGINS", "neta_tools_spelled")
    assert not neta.create_plugin_manager().has_plugin("neta_tmp_spelled")


def test_load_list_naming_nothing_installed_is_reported_with_a_suggestion(plugin_dir, monkeypatch):
    plugin_dir.add("neta-tools-robin", "neta_tmp_robin", echo_source("robin", "robins"))
    monkeypatch.setenv("NETA_LOAD_PLUGINS", "neta_tmp_robni")
    pm = neta.create_plugin_manager()
    assert pm.plugin_infos() == []
    [problem] = pm.problems
    assert problem.plugin == "neta_tmp_robni"
    assert "NETA_LOAD_PLUGINS" in str(problem)
    assert "did you mean 'neta_tmp_robin'" in str(problem)


def test_import_failure_keeps_its_exception_as_the_cause(plugin_dir):
    plugin_dir.add("neta-tools-cause", "neta_tmp_cause", "raise KeyError('deep inside')\n")
    pm = neta.create_plugin_manager(allow=["neta_tmp_cause"])
    [problem] = pm.problems
    assert isinstance(problem.__cause__, KeyError)
    assert problem.__cause__.__traceback__ is not None


def test_tool_whose_arguments_have_no_json_schema_is_left_out_and_reported(make_pm, session):
    from collections.abc import Callable

    from pydantic import ConfigDict

    class OpaqueArgs(BaseModel):
        model_config = ConfigDict(arbitrary_types_allowed=True)
        hook: Callable[[], None]

    class Opaque(Echo):
        @neta.hookimpl
        def neta_tools(self):
            return [
                *super().neta_tools(),
                neta.ToolSchema(name="opaque", toolset="echoer", description="?", args=OpaqueArgs),
            ]

    pm = make_pm(echo=Opaque())
    assert [s.name for s in pm.catalog()] == ["echo"]
    [problem] = pm.problems
    assert problem.plugin == "echo"
    assert "tool 'opaque': its arguments have no JSON schema" in str(problem)
    assert list(neta.build_session_tools(pm, session, ["echoer"])) == ["echo"]
