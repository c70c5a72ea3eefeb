import weakref
from dataclasses import replace

import pytest

import neta
from neta.toolsets import TOOLSET_DEFAULTS, resolve_toolsets

SPECS = [
    neta.ToolsetSpec(name="base"),
    neta.ToolsetSpec(name="planning"),
    neta.ToolsetSpec(name="interaction", requires="user_channel"),
    neta.ToolsetSpec(name="crew", requires="crew_runner"),
    neta.ToolsetSpec(name="hello", default=False),
]


def test_defaults_are_the_specs_marked_default_with_their_capability():
    result = resolve_toolsets(SPECS, capabilities={"user_channel"})
    assert result.enabled == ("base", "planning", "interaction")
    assert result.decision("hello").reason == "off unless requested"
    assert "crew_runner" in result.decision("crew").reason


def test_toolset_defaults_constant_names_the_builtin_defaults():
    assert TOOLSET_DEFAULTS == ("base", "planning", "interaction")


def test_requested_toolset_is_added():
    result = resolve_toolsets(SPECS, requested=["hello"], capabilities={"user_channel"})
    assert "hello" in result.enabled
    assert result.decision("hello").reason == "requested"


def test_deny_wins_over_request_and_default():
    result = resolve_toolsets(
        SPECS, requested=["hello"], denied=["hello", "base"], capabilities={"user_channel"}
    )
    assert "hello" not in result.enabled
    assert "base" not in result.enabled
    assert result.decision("base").reason == "denied"


def test_preset_replaces_the_defaults():
    result = resolve_toolsets(SPECS, preset=["base", "hello"], capabilities={"user_channel"})
    assert result.enabled == ("base", "hello")
    assert result.decision("planning").reason == "not in preset"


def test_missing_capability_drops_even_a_requested_toolset():
    result = resolve_toolsets(SPECS, requested=["crew", "interaction"], capabilities=())
    assert result.enabled == ("base", "planning")
    assert result.decision("interaction").reason == (
        "needs capability 'user_channel', which the session lacks"
    )


def test_conditional_toolset_turns_on_when_the_session_has_its_capability():
    result = resolve_toolsets(SPECS, capabilities={"user_channel", "crew_runner"})
    assert "crew" in result.enabled


def test_unknown_requested_toolset_is_a_config_error_with_a_suggestion():
    with pytest.raises(neta.ConfigError, match="did you mean 'planning'"):
        resolve_toolsets(SPECS, requested=["planing"])


def test_unknown_denied_toolset_is_a_config_error_too():
    with pytest.raises(neta.ConfigError, match="denied toolsets"):
        resolve_toolsets(SPECS, denied=["bsae"])


def test_crew_child_session_lacks_the_user_channel(tmp_path):
    child = neta.SessionContext(workspace=tmp_path, entry="crew")
    top = neta.SessionContext(workspace=tmp_path, entry="gateway")
    assert "user_channel" not in child.capabilities
    assert "user_channel" in top.capabilities


def test_denying_a_toolset_that_is_not_installed_is_accepted():
    result = resolve_toolsets(SPECS, denied=["kubernetes"], capabilities={"user_channel"})
    assert result.enabled == ("base", "planning", "interaction")


@pytest.mark.parametrize(
    "options",
    [{"preset": ["nosuch"]}, {"toolsets": ["nosuch"]}, {"deny": ["plannig"]}],
    ids=["preset", "requested", "denied typo"],
)
def test_an_agent_refuses_an_unknown_toolset_when_made_not_per_session(options, tmp_path):
    with pytest.raises(neta.ConfigError, match="unknown toolset"):
        neta.Agent(workspace=tmp_path, **options)


def test_an_agent_may_deny_a_toolset_nothing_installs(tmp_path):
    agent = neta.Agent(workspace=tmp_path, deny=["kubernetes"])
    assert "kubernetes" not in agent.new_session().toolsets.enabled


class ServerKeeper:
    """A plugin that starts something per host (as MCP does its servers) and stops it with it."""

    def __init__(self) -> None:
        self.started = 0
        self.stopped = 0

    @neta.hookimpl
    def neta_toolsets(self, host):
        self.started += 1
        weakref.finalize(host, self._stop)
        return [neta.ToolsetSpec(name="kept", description="per-host servers", default=False)]

    def _stop(self) -> None:
        self.stopped += 1


def test_an_unknown_provider_is_told_before_the_plugins_start_anything(make_pm, tmp_path):
    keeper = ServerKeeper()
    with pytest.raises(neta.ConfigError, match="unknown provider"):
        neta.Agent(provider="nosuch", plugin_manager=make_pm(keeper=keeper), workspace=tmp_path)
    assert keeper.started == 0


def test_released_host_state_is_let_go_and_made_again_on_next_use(make_pm, tmp_path):
    keeper = ServerKeeper()
    pm = make_pm(keeper=keeper)
    neta.Agent(plugin_manager=pm, workspace=tmp_path, toolsets=["kept"])
    assert (keeper.started, keeper.stopped) == (1, 0)
    pm.release_host()
    assert keeper.stopped == 1
    assert [spec.name for spec in pm.toolset_specs()] == ["kept"]
    assert keeper.started == 2


def test_checking_a_host_config_leaves_nothing_the_plugins_started(make_pm, tmp_path):
    from neta.hosting.config import HostConfig
    from neta.hosting.hub import check_config

    keeper = ServerKeeper()
    script = tmp_path / "script.json"
    script.write_text('{"turns": [{"text": "ok"}]}')
    config = HostConfig(
        provider="scripted",
        provider_options={"script": str(script)},
        workspace=tmp_path,
        home=tmp_path / "home",
        toolsets=["kept"],
        plugin_manager=make_pm(keeper=keeper),
    )
    check_config(config)
    assert (keeper.started, keeper.stopped) == (1, 1)
    with pytest.raises(neta.ConfigError, match="unknown toolset 'nosuch'"):
        check_config(replace(config, toolsets=["nosuch"]))
    assert keeper.stopped == 2
