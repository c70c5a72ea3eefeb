import pytest

import neta

SPECS = [
    neta.ToolsetSpec(name="base"),
    neta.ToolsetSpec(name="planning"),
    neta.ToolsetSpec(name="interaction", requires="user_channel"),
    neta.ToolsetSpec(name="crew", requires="crew_runner"),
    neta.ToolsetSpec(name="hello", default=False),
]


def test_defaults_are_the_specs_marked_default_with_their_capability():
    result = neta.resolve_toolsets(SPECS, capabilities={"user_channel"})
    assert result.enabled == ("base", "planning", "interaction")
    assert result.decision("hello").reason == "off unless requested"
    assert "crew_runner" in result.decision("crew").reason


def test_toolset_defaults_constant_names_the_builtin_defaults():
    assert neta.TOOLSET_DEFAULTS == ("base", "planning", "interaction")


def test_requested_toolset_is_added():
    result = neta.resolve_toolsets(SPECS, requested=["hello"], capabilities={"user_channel"})
    assert "hello" in result.enabled
    assert result.decision("hello").reason == "requested"


def test_deny_wins_over_request_and_default():
    result = neta.resolve_toolsets(
        SPECS, requested=["hello"], denied=["hello", "base"], capabilities={"user_channel"}
    )
    assert "hello" not in result.enabled
    assert "base" not in result.enabled
    assert result.decision("base").reason == "denied"


def test_preset_replaces_the_defaults():
    result = neta.resolve_toolsets(SPECS, preset=["base", "hello"], capabilities={"user_channel"})
    assert result.enabled == ("base", "hello")
    assert result.decision("planning").reason == "not in preset"


def test_missing_capability_drops_even_a_requested_toolset():
    result = neta.resolve_toolsets(SPECS, requested=["crew", "interaction"], capabilities=())
    assert result.enabled == ("base", "planning")
    assert result.decision("interaction").reason == (
        "needs capability 'user_channel', which the session lacks"
    )


def test_conditional_toolset_turns_on_when_the_session_has_its_capability():
    result = neta.resolve_toolsets(SPECS, capabilities={"user_channel", "crew_runner"})
    assert "crew" in result.enabled


def test_unknown_requested_toolset_is_a_config_error_with_a_suggestion():
    with pytest.raises(neta.ConfigError, match="did you mean 'planning'"):
        neta.resolve_toolsets(SPECS, requested=["planing"])


def test_unknown_denied_toolset_is_a_config_error_too():
    with pytest.raises(neta.ConfigError, match="denied toolsets"):
        neta.resolve_toolsets(SPECS, denied=["bsae"])


def test_crew_child_session_lacks_the_user_channel(tmp_path):
    child = neta.SessionContext(workspace=tmp_path, entry="crew")
    top = neta.SessionContext(workspace=tmp_path, entry="gateway")
    assert "user_channel" not in child.capabilities
    assert "user_channel" in top.capabilities


def test_denying_a_toolset_that_is_not_installed_is_accepted():
    result = neta.resolve_toolsets(SPECS, denied=["kubernetes"], capabilities={"user_channel"})
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
