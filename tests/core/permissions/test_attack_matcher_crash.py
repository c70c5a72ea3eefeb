"""ROBUSTNESS: an exception in the matcher escapes the gate and ends the run (no bypass, but
the brief asks for a denial, not a crash). A lone surrogate in a redirection target reaches
os.path.realpath in _commands._redirect_problem unguarded (_paths guards the same case)."""

import asyncio

import neta
import neta_base.plugin
from neta.permissions import answer_from_text


def test_a_surrogate_in_a_redirection_target_is_decided_not_raised(decide):
    decision = decide("echo x > \ud800")
    assert decision.action in {"ask", "deny"}


def test_the_run_survives_a_surrogate_in_a_redirection_target(workspace):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("base", neta_base.plugin)])
    call = {"name": "bash", "arguments": {"command": "echo x > \ud800"}}
    agent = neta.Agent(
        provider=neta.ScriptedProvider({"turns": [{"tool_calls": [call]}, {"text": "ok"}]}),
        plugin_manager=pm,
        preset=["base"],
        workspace=workspace,
        sandbox="off",
        permissions={"allow": ["bash(echo *)"]},
    )
    result = asyncio.run(agent.run("go"))
    assert result.outcome == "completed", result.reason


def test_a_superscript_digit_answer_is_a_denial_not_an_exception():
    assert answer_from_text("\u00b9", ("allow_once", "deny")).choice == "deny"
