"""Neta's per-plugin hook calls follow pluggy's order; wrappers and misspelled hooks are refused."""

import pytest
from pydantic import BaseModel

import neta


class NoArgs(BaseModel):
    pass


def announcer(label: str, *, tryfirst: bool = False, trylast: bool = False) -> object:
    """A plugin announcing toolset ``shared`` (description ``label``) and tool ``same``."""

    class Announcer:
        @neta.hookimpl(tryfirst=tryfirst, trylast=trylast)
        def neta_toolsets(self):
            return [neta.ToolsetSpec(name="shared", description=label)]

        @neta.hookimpl(tryfirst=tryfirst, trylast=trylast)
        def neta_tools(self):
            return [neta.ToolSchema(name="same", toolset="shared", description=label, args=NoArgs)]

    return Announcer()


def named(label: str, calls: list[str], *, tryfirst: bool = False, trylast: bool = False):
    """A plugin announcing toolset ``label`` and noting ``label`` when a session starts."""

    class Named:
        @neta.hookimpl(tryfirst=tryfirst, trylast=trylast)
        def neta_toolsets(self):
            return [neta.ToolsetSpec(name=label)]

        @neta.hookimpl(tryfirst=tryfirst, trylast=trylast)
        def neta_session_start(self, session):
            calls.append(label)

    return Named()


def test_tryfirst_plugin_wins_a_duplicate_toolset_and_tool_name(make_pm):
    pm = make_pm(override=announcer("override", tryfirst=True), plain=announcer("plain"))
    [spec] = pm.toolset_specs()
    assert spec.description == "override"
    assert pm.catalog().plugin_of("same") == "override"
    assert {problem.plugin for problem in pm.problems} == {"plain"}


def test_trylast_plugin_loses_a_duplicate_toolset_and_tool_name(make_pm):
    pm = make_pm(plain=announcer("plain"), fallback=announcer("fallback", trylast=True))
    [spec] = pm.toolset_specs()
    assert spec.description == "plain"
    assert pm.catalog().plugin_of("same") == "plain"
    assert {problem.plugin for problem in pm.problems} == {"fallback"}


def test_of_two_plain_plugins_the_later_registered_is_called_first_and_kept(make_pm):
    pm = make_pm(early=announcer("early"), late=announcer("late"))
    [spec] = pm.toolset_specs()
    assert spec.description == "late"
    assert pm.catalog().plugin_of("same") == "late"


def test_collect_and_notify_calls_follow_the_order_of_pluggy_hook_calls(make_pm, session):
    calls: list[str] = []
    pm = make_pm(
        last=named("last", calls, trylast=True),
        one=named("one", calls),
        first=named("first", calls, tryfirst=True),
        two=named("two", calls),
        three=named("three", calls),
    )
    pluggy_order = [specs[0].name for specs in pm.hook.neta_toolsets(host=pm.host)]
    assert pluggy_order == ["first", "three", "two", "one", "last"]
    assert [spec.name for spec in pm.toolset_specs()] == pluggy_order

    pm.hook.neta_session_start(session=session, host=pm.host)
    pluggy_calls, calls[:] = list(calls), []
    pm.notify("neta_session_start", session=session)
    assert calls == pluggy_calls == pluggy_order


def test_provider_names_follow_pluggy_order_and_the_first_called_is_kept(make_pm):
    def offers(label: str, **order: bool) -> object:
        class Offers:
            @neta.hookimpl(**order)
            def neta_providers(self):
                return [neta.ProviderSpec(name="mine", description=label, factory=lambda: None)]

        return Offers()

    from neta.providers.registry import provider_specs

    pm = make_pm(plain=offers("plain"), eager=offers("eager", tryfirst=True))
    assert provider_specs(pm)["mine"].description == "eager"
    assert [problem.plugin for problem in pm.problems] == ["plain"]


@pytest.mark.parametrize("marker", [{"wrapper": True}, {"hookwrapper": True}])
def test_wrapper_hook_is_refused_at_registration_naming_the_plugin(make_pm, marker):
    class Wraps:
        @neta.hookimpl(**marker)
        def neta_toolsets(self):
            return (yield)

    with pytest.raises(neta.PluginError, match="wrapper") as caught:
        make_pm(wraps=Wraps())
    assert caught.value.plugin == "wraps"
    assert "neta_toolsets" in str(caught.value)


def test_wrapper_hook_refused_leaves_the_manager_without_the_plugin():
    class Wraps:
        @neta.hookimpl(wrapper=True)
        def neta_tools(self):
            return (yield)

    pm = neta.create_plugin_manager(load_entrypoints=False)
    with pytest.raises(neta.PluginError):
        pm.register(Wraps(), name="wraps")
    assert not pm.has_plugin("wraps")
    assert pm.hook.neta_tools.get_hookimpls() == []


WRAPPER_SOURCE = """
import neta

@neta.hookimpl(wrapper=True)
def neta_toolsets():
    return (yield)
"""


def test_entry_point_plugin_with_a_wrapper_is_reported_and_left_out(plugin_dir):
    plugin_dir.add("neta-tools-wraps", "neta_tmp_wraps", WRAPPER_SOURCE)
    pm = neta.create_plugin_manager(allow=["neta_tmp_wraps"])
    assert not pm.has_plugin("neta_tmp_wraps")
    [problem] = pm.problems
    assert problem.plugin == "neta_tmp_wraps"
    assert "wrapper" in problem.reason
    assert "failed to load" not in str(problem)


class Misspelled:
    @neta.hookimpl
    def neta_tool(self):
        return []


def test_misspelled_hook_suggests_the_hook_meant(make_pm):
    pm = make_pm(typo=Misspelled())
    assert not pm.has_plugin("typo")
    [problem] = pm.problems
    assert problem.plugin == "typo"
    assert problem.reason == "unknown hook 'neta_tool'; did you mean 'neta_tools'?"


MISSPELLED_SOURCE = """
import neta

@neta.hookimpl
def neta_tool():
    return []
"""


def test_misspelled_hook_names_the_entry_point_and_distribution_not_a_module(plugin_dir):
    plugin_dir.add("neta-tools-typo", "neta_tmp_typo", MISSPELLED_SOURCE)
    pm = neta.create_plugin_manager(allow=["neta_tmp_typo"])
    assert not pm.has_plugin("neta_tmp_typo")
    [problem] = pm.problems
    message = str(problem)
    assert message == (
        "plugin 'neta_tmp_typo' (entry point neta:neta_tmp_typo = neta_tmp_typo, "
        "distribution neta-tools-typo 0.1): unknown hook 'neta_tool'; did you mean 'neta_tools'?"
    )
    assert "<module" not in message
    assert problem.distribution == "neta-tools-typo"


def test_optional_unknown_hook_is_accepted(make_pm):
    class Optional:
        @neta.hookimpl(optionalhook=True)
        def neta_someday(self):
            return []

    pm = make_pm(maybe=Optional())
    assert pm.has_plugin("maybe")
    assert pm.problems == []
